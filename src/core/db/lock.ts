import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";

/** What the process holding an embedded data folder writes about itself. */
export interface LockInfo {
  pid: number;
  /** Port of the running server, when the holder is a server; admin commands go through it. */
  port?: number;
  /** Secret that authorizes local admin commands sent to the running server. */
  adminSecret?: string;
}

export class DataDirLockedError extends Error {
  constructor(public readonly holder: LockInfo, dataDir: string) {
    super(
      `The data folder ${dataDir} is in use by another process (pid ${holder.pid}). ` +
        `Two processes on one embedded database would corrupt it: stop the other process or set DATA_DIR to another folder.`,
    );
  }
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function lockPath(dataDir: string): string {
  return path.join(dataDir, "server.lock");
}

/** Reads the lock of a data folder; null when no live process holds it. */
export function readLock(dataDir: string): LockInfo | null {
  try {
    const info = JSON.parse(fs.readFileSync(lockPath(dataDir), "utf8")) as LockInfo;
    return typeof info.pid === "number" && alive(info.pid) ? info : null;
  } catch {
    return null;
  }
}

export interface DataDirLock {
  info: LockInfo;
  update(extra: Partial<LockInfo>): void;
  release(): void;
}

/** Takes the data folder for this process, or throws DataDirLockedError naming the holder. */
export function acquireLock(dataDir: string): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = lockPath(dataDir);
  const info: LockInfo = { pid: process.pid };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(info), { flag: "wx", mode: 0o600 });
      let released = false;
      return {
        info,
        update(extra) {
          Object.assign(info, extra);
          fs.writeFileSync(file, JSON.stringify(info), { mode: 0o600 });
        },
        release() {
          if (released) return;
          released = true;
          try {
            const current = JSON.parse(fs.readFileSync(file, "utf8")) as LockInfo;
            if (current.pid === process.pid) fs.unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = readLock(dataDir);
      if (holder) throw new DataDirLockedError(holder, dataDir);
      fs.rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not take the lock ${file}`);
}

export function newAdminSecret(): string {
  return crypto.randomBytes(32).toString("base64url");
}
