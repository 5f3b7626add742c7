import fs from "node:fs";
import { messages } from "@electric-sql/pglite";
import { log } from "../logger.js";

/** SQLSTATE disk_full: PostgreSQL could not write a file for want of space. */
export const DISK_FULL = "53100";

/** Bytes free to this process on the disk holding `dir`. */
export function freeBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

/** How long a reading of the free space is used before the disk is asked again, in ms. */
const FREE_SPACE_READ_MS = 250;

/**
 * The embedded database's disk, kept from filling up. PGlite is PostgreSQL in this process: when
 * a write finds the disk full while it extends the write-ahead log, the database cannot go on, and
 * the next statement sent to it runs without end, holding the process's only thread (seen here:
 * `could not write to file "pg_wal/xlogtemp…": No space left on device`, then the next SELECT
 * never returned, even once space was freed). So:
 *
 * - Writes are refused while the data folder's disk has less than `reserveBytes` free (the
 *   STORAGE_RESERVE_BYTES setting, 64 MiB by default: a new write-ahead log segment is 16 MiB):
 *   every statement but a plain read fails with PostgreSQL's own disk_full error (53100), which
 *   requests answer 507 (core/db/db-faults.ts). Reads go on; writes are accepted again as soon as
 *   space is freed.
 * - Should the disk fill anyway (another program's files), the database's disk_full error on its
 *   log means it cannot go on: `onWedged` is told (the gateway logs it and exits, so that whatever
 *   supervises it starts it again once there is space: the log replays every acknowledged write)
 *   and no statement is sent to it again. A disk_full on a table file alone leaves the database
 *   whole: that write fails and the others go on.
 */
export class StorageGuard {
  private freeAt = 0;
  private freeBytes = Number.POSITIVE_INFINITY;
  private wedged: Error | null = null;
  private refusing = false;

  constructor(
    private readonly dir: string,
    /** Free bytes below which writes are refused (0: never). */
    public reserveBytes: number,
    private readonly onWedged: (error: Error) => void,
    private readonly freeIn: (dir: string) => number = freeBytes,
  ) {}

  /** Bytes free on the data folder's disk (read at most every FREE_SPACE_READ_MS). */
  free(): number {
    const now = performance.now();
    if (now - this.freeAt >= FREE_SPACE_READ_MS) {
      try {
        this.freeBytes = this.freeIn(this.dir);
      } catch {
        this.freeBytes = Number.POSITIVE_INFINITY; // unknown: the database's own errors still tell
      }
      this.freeAt = now;
    }
    return this.freeBytes;
  }

  /** Throws PostgreSQL's disk_full error for a statement that may write while space is short, and for any statement once the database cannot go on. */
  before(sql: string): void {
    if (this.wedged) throw this.wedged;
    if (this.reserveBytes <= 0 || readOnly(sql)) return;
    const free = this.free();
    if (free >= this.reserveBytes) {
      if (this.refusing) log.info(`Storage: ${mib(free)} free again in ${this.dir}; writes are accepted.`);
      this.refusing = false;
      return;
    }
    if (!this.refusing)
      log.warn(
        `Storage: ${mib(free)} free in ${this.dir}, below the ${mib(this.reserveBytes)} kept free (STORAGE_RESERVE_BYTES): writes are refused (507) until space is freed; reads go on.`,
      );
    this.refusing = true;
    throw diskFull(
      `The server's storage is almost full (${mib(free)} free where the embedded database keeps its data, at least ${mib(this.reserveBytes)} kept free): ` +
        "nothing is written until space is freed; reads go on.",
    );
  }

  /** Looks at a statement's failure: a disk_full on the write-ahead log means the database cannot go on. */
  after(error: unknown): void {
    const e = error as { code?: unknown; message?: unknown } | null;
    if (this.wedged || e?.code !== DISK_FULL || typeof e.message !== "string" || !/pg_wal/.test(e.message)) return;
    this.wedged = diskFull(
      `The embedded database's disk filled up while it wrote its log (${e.message}); it cannot go on in this process. Free space and start the server again: it recovers every acknowledged write.`,
    );
    this.onWedged(this.wedged);
  }
}

/** A plain read or a session setting: writes nothing, not even a row lock (which PostgreSQL logs). */
function readOnly(sql: string): boolean {
  return (
    /^\s*(SELECT|SHOW|EXPLAIN|BEGIN|COMMIT|ROLLBACK|SET|RESET)\b/i.test(sql) &&
    !/\bFOR\s+(NO\s+KEY\s+)?UPDATE\b|\bFOR\s+(KEY\s+)?SHARE\b|\bnextval\s*\(/i.test(sql)
  );
}

export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** PostgreSQL's disk_full error, as PGlite raises it (the Prisma adapter passes it on as a database error). */
function diskFull(message: string): Error {
  return Object.assign(new messages.DatabaseError(message, 0, "error"), { code: DISK_FULL, severity: "ERROR" });
}
