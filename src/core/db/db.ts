import path from "node:path";
import fs from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../../generated/prisma/client.js";
import { applyMigrations } from "./migrate.js";
import { jsonRows, type QueryOptions } from "./pglite-rows.js";
import { preparedStatements } from "./pglite-prepared.js";
import { StorageGuard, freeBytes, mib } from "./storage-guard.js";
import { installCompilerHooks } from "./query-plan-cache.js";
import { acquireLock, type DataDirLock } from "./lock.js";
import { log } from "../logger.js";
import { DEFAULT_STORAGE_RESERVE_BYTES, type Config } from "../../config.js";
import { mergeChange, rowChangeOf, rowsById, statementParts, writtenTable, type RowChange, type StatementPart } from "../cache/row-keys.js";

export type Prisma = PrismaClient;

export interface Database {
  kind: "pglite" | "postgres";
  prisma: PrismaClient;
  /** Counts SQL statements sent by Prisma (for tests and benchmarks). */
  stats: { statements: number };
  /** Has every statement's duration reported to `observer` from now on (the gateway's metrics). */
  observeStatements(observer: StatementObserver): void;
  /**
   * Has `listener` told the tables written by each write that took effect: after the statement,
   * or for a transaction after its commit, with every table its statements wrote (none for a
   * rollback), and which of their rows (core/cache/row-keys.ts), the rows the database's triggers and
   * foreign-key cascades wrote with them included. The access cache (core/access/access-cache.ts) drops
   * what such writes change; the response cache the answers made from those rows.
   */
  onCommittedWrite(listener: WriteListener): void;
  /** The lock on the embedded data folder (absent on PostgreSQL). */
  lock?: DataDirLock;
  /** The embedded database's disk, kept from filling up (core/db/storage-guard.ts; absent on PostgreSQL). */
  storage?: StorageGuard;
  /** A statement sent straight to the driver, past Prisma and uncounted (the benchmarks' baseline). */
  driverQuery(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export interface OpenOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Skip the data-folder lock (the caller already holds it). */
  lockHeld?: DataDirLock;
  /** Log every statement Prisma sends, with its parameters, at debug level (LOG_SQL=1). */
  logSql?: boolean;
  /** Told what start-up is doing (npm start prints it). */
  progress?: (message: string) => void;
  /** Keep Prisma's query plans by shape (core/db/query-plan-cache.ts), for every client of the process; default on (QUERY_PLAN_CACHE). */
  queryPlanCache?: boolean;
  /** PostgreSQL: bounds of each statement's lock waits and run time, in ms (core/db/pg-pool.ts); 0 or unset: none. */
  lockTimeoutMs?: number;
  statementTimeoutMs?: number;
  /** Embedded database: free bytes below which writes are refused (core/db/storage-guard.ts); 0 or unset: none. */
  storageReserveBytes?: number;
  /** Embedded database: told when its disk filled up while it wrote its log and it cannot go on. */
  onStorageWedged?: (error: Error) => void;
}

/** The options of the gateway's database as its configuration sets them. */
export function databaseOptions(
  config: Pick<
    Config,
    "dataDir" | "databaseUrl" | "logSql" | "queryPlanCache" | "dbLockTimeoutMs" | "dbStatementTimeoutMs" | "storageReserveBytes"
  >,
): OpenOptions {
  return {
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    logSql: config.logSql,
    queryPlanCache: config.queryPlanCache,
    lockTimeoutMs: config.dbLockTimeoutMs,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    storageReserveBytes: config.storageReserveBytes,
  };
}

/**
 * Called after each SQL statement Prisma sends, in the caller's asynchronous context: its duration,
 * whether it failed, its text and its parameters.
 */
export type StatementObserver = (seconds: number, ok: boolean, sql: string, args?: readonly unknown[]) => void;

/**
 * A write that took effect: each table written, with the SQL of the statements that wrote it, and
 * for each table written (by a statement, a trigger or a cascade) which rows changed. The write's
 * call returns once the listener's promise settles (its failure does not fail the write).
 */
export type WriteListener = (writes: ReadonlyMap<string, readonly string[]>, rows: ReadonlyMap<string, RowChange>) => void | Promise<void>;

/**
 * The tables whose rows the database changes when rows of a table are deleted (or their id
 * changes): foreign keys ON DELETE CASCADE / SET NULL, read from the catalog once migrated.
 */
export type Cascades = ReadonlyMap<string, readonly string[]>;

const CASCADES_SQL = `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
  FROM pg_constraint c WHERE c.contype = 'f' AND (c.confdeltype IN ('c', 'n', 'd') OR c.confupdtype IN ('c', 'n', 'd'))`;

function cascadesFrom(rows: Record<string, unknown>[]): Cascades {
  const out = new Map<string, string[]>();
  const name = (v: unknown) => String(v).replace(/^(?:public\.)?"?|"?$/g, "");
  for (const row of rows) {
    const parent = name(row.parent);
    const child = name(row.child);
    out.set(parent, [...(out.get(parent) ?? []), child]);
  }
  return out;
}

/** The tables a statement writes, as (verb, table): see row-keys.ts `statementParts`. */
export function writtenTables(sql: string): { verb: StatementPart["verb"]; table: string }[] {
  return statementParts(sql).map(({ verb, table }) => ({ verb, table }));
}

/**
 * What the database's own triggers write when a table is written (prisma/migrations/*_counters):
 * the counts kept on the parent rows. Told to write listeners with the statement's own table, so
 * that whatever keeps answers made from those rows (a response cache) hears of the change too.
 */
const TRIGGER_WRITES: Record<string, { columns: RegExp; statements: readonly string[] }> = {
  ChangeRequest: {
    columns: /"(?:spaceId|status)"\s*=/,
    statements: [
      'UPDATE "Space" SET "changeRequestsCount" = …, "openChangeRequestsCount" = …, "draftChangeRequestsCount" = … WHERE "id" = … (trigger)',
    ],
  },
  Comment: {
    columns: /"(?:spaceId|changeRequestId|parentId|status)"\s*=/,
    statements: [
      'UPDATE "Space" SET "openCommentsCount" = … WHERE "id" = … (trigger)',
      'UPDATE "ChangeRequest" SET "openCommentsCount" = … WHERE "id" = … (trigger)',
      'UPDATE "Comment" SET "repliesCount" = … WHERE "id" = … (trigger)',
    ],
  },
};

/** The `SET …` of an UPDATE statement, without its WHERE (the whole rest when it has none). */
function setClause(sql: string): string {
  const set = sql.search(/\sSET\s/i);
  const where = sql.search(/\sWHERE\s/i);
  return sql.slice(set, where > set ? where : undefined);
}

/** Whether a statement of a table with counting triggers changed counts (an UPDATE only when it set a counted column). */
function counts(table: string, sql: string): boolean {
  const trigger = TRIGGER_WRITES[table];
  return !!trigger && (!/^\s*UPDATE/i.test(sql) || trigger.columns.test(setClause(sql)));
}

/** The rows whose counts the triggers change, by the column of the written row that names them. */
const TRIGGER_ROWS: Record<string, Record<string, string>> = {
  ChangeRequest: { spaceId: "Space" },
  Comment: { spaceId: "Space", changeRequestId: "ChangeRequest", parentId: "Comment" },
};

/**
 * What one write statement changed: the rows of its table (core/cache/row-keys.ts), the rows whose
 * counts the triggers changed with them (the parents the written rows name; their tables when a
 * parent is not known), and for a DELETE (or a new id) every table a foreign key cascades to.
 */
export function statementChanges(
  sql: string,
  args: readonly unknown[] | undefined,
  result: unknown,
  cascades: Cascades,
): Map<string, RowChange> {
  if (/^\s*WITH\b/i.test(sql)) return partsChanges(sql, args, cascades);
  const table = writtenTable(sql)!;
  const out = new Map<string, RowChange>();
  const change = rowChangeOf(sql, table, args, result);
  mergeChange(out, table, change);
  if (counts(table, sql)) {
    for (const [column, parent] of Object.entries(TRIGGER_ROWS[table] ?? {})) {
      if (change === "table" || change.unknown.has(column)) mergeChange(out, parent, "table");
      else {
        const ids = change.values.get(column);
        if (ids?.size) mergeChange(out, parent, rowsById(parent, ids));
      }
    }
  }
  const verb = sql.trimStart().slice(0, 6).toUpperCase();
  if (verb === "DELETE" || (verb === "UPDATE" && change === "table") || (verb === "UPDATE" && /"id"\s*=/.test(setClause(sql)))) {
    visitCascades(out, table, cascades);
  }
  return out;
}

/** Adds the tables a foreign key cascades to from `table` (their rows not known), and the parents their triggers count on. */
function visitCascades(out: Map<string, RowChange>, table: string, cascades: Cascades): void {
  const seen = new Set<string>();
  const visit = (t: string) => {
    for (const child of cascades.get(t) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      mergeChange(out, child, "table");
      // The rows the cascade removed (or changed) fire their triggers too: on parents not known.
      for (const parent of Object.values(TRIGGER_ROWS[child] ?? {})) mergeChange(out, parent, "table");
      visit(child);
    }
  };
  visit(table);
}

/**
 * What a statement made of data-modifying parts (WITH … AS (INSERT …) UPDATE …) changed: each
 * part read as a statement of its own (the text of `name AS (…)` within its parentheses, and the
 * statement after the parts), with the statement's parameters — so rows stay known where the
 * part's text and parameters prove them; a part whose text cannot be taken out counts as the
 * whole table, with its cascades.
 */
function partsChanges(sql: string, args: readonly unknown[] | undefined, cascades: Cascades): Map<string, RowChange> {
  const out = new Map<string, RowChange>();
  for (const { verb, table, text } of statementParts(sql)) {
    if (text === null) {
      mergeChange(out, table, "table");
      if (TRIGGER_WRITES[table]) for (const parent of Object.values(TRIGGER_ROWS[table] ?? {})) mergeChange(out, parent, "table");
      if (verb !== "INSERT") visitCascades(out, table, cascades);
      continue;
    }
    for (const [t, change] of statementChanges(text, args, undefined, cascades)) mergeChange(out, t, change);
  }
  return out;
}

/**
 * `writes` with the tables the triggers wrote because of them (an UPDATE only when it set a
 * counted column; in a statement of data-modifying parts, a part that does), as statements whose
 * SET clause names the counts they change.
 */
export function withTriggerWrites(writes: ReadonlyMap<string, readonly string[]>): ReadonlyMap<string, readonly string[]> {
  let out: Map<string, readonly string[]> | undefined;
  for (const [table, statements] of writes) {
    const trigger = TRIGGER_WRITES[table];
    if (!trigger) continue;
    // Each write of the table: the statement itself, or its parts that write the table (WITH …).
    const counted = statements.some((sql) => {
      const parts = statementParts(sql).filter((p) => p.table === table);
      return parts.length === 0 || parts.some((p) => p.text === null || counts(table, p.text));
    });
    if (!counted) continue;
    out ??= new Map(writes);
    for (const sql of trigger.statements) {
      const written = writtenTable(sql)!;
      const before = out.get(written) ?? [];
      if (!before.includes(sql)) out.set(written, [...before, sql]);
    }
  }
  return out ?? writes;
}

/**
 * Wraps a driver adapter factory so that every statement Prisma sends through it (queries and
 * commands, in transactions too) is counted and timed, at the cost of a clock read: no query text
 * is built or logged unless LOG_SQL asks for it (Prisma's query events, below).
 */
function instrumented<F extends object>(
  factory: F,
  observe: StatementObserver,
  written: (writes: ReadonlyMap<string, readonly string[]>, rows: ReadonlyMap<string, RowChange>) => Promise<void>,
  cascades: () => Cascades,
): F {
  interface Pending {
    writes: Map<string, string[]>;
    rows: Map<string, RowChange>;
  }
  /** `pending` collects a transaction's writes until its commit; outside one they are told at once. */
  const timed = <T extends object>(queryable: T, pending?: Pending): T =>
    new Proxy(queryable, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop === "queryRaw" || prop === "executeRaw") {
          return async (...args: unknown[]) => {
            const query = args[0] as { sql?: string; args?: unknown[] } | undefined;
            const sql = query?.sql ?? "";
            const start = performance.now();
            let result: unknown;
            try {
              result = await value.apply(target, args);
              observe((performance.now() - start) / 1000, true, sql, query?.args);
            } catch (err) {
              observe((performance.now() - start) / 1000, false, sql, query?.args);
              throw err;
            }
            const tables = writtenTables(sql);
            if (tables.length) {
              const into = pending ?? { writes: new Map<string, string[]>(), rows: new Map<string, RowChange>() };
              for (const { table } of tables) into.writes.set(table, [...(into.writes.get(table) ?? []), sql]);
              // A statement run by executeRaw answers no rows: only its text and parameters tell.
              for (const [t, change] of statementChanges(sql, query?.args, prop === "queryRaw" ? result : undefined, cascades()))
                mergeChange(into.rows, t, change);
              if (!pending) await written(into.writes, into.rows);
            }
            return result;
          };
        }
        if (pending && prop === "commit") {
          return async (...args: unknown[]) => {
            const result = await value.apply(target, args);
            if (pending.writes.size) await written(pending.writes, pending.rows);
            return result;
          };
        }
        if (prop === "startTransaction") {
          return async (...args: unknown[]) => timed(await value.apply(target, args), { writes: new Map(), rows: new Map() });
        }
        if (prop === "connect" || prop === "connectToShadowDb") {
          return async (...args: unknown[]) => timed(await value.apply(target, args));
        }
        return value.bind(target);
      },
    });
  return timed(factory);
}

function createPrisma(
  adapter: object,
  stats: { statements: number },
  observers: Set<StatementObserver>,
  writeListeners: Set<WriteListener>,
  opts: OpenOptions,
  cascades: Cascades,
): PrismaClient {
  const observe: StatementObserver = (seconds, ok, sql, args) => {
    stats.statements++;
    for (const observer of observers) observer(seconds, ok, sql, args);
  };
  const written = async (statements: ReadonlyMap<string, readonly string[]>, rows: ReadonlyMap<string, RowChange>) => {
    const writes = withTriggerWrites(statements);
    for (const listener of writeListeners) {
      try {
        await listener(writes, rows);
      } catch (err) {
        log.warn(`After a write: ${(err as Error).message}`);
      }
    }
  };
  const prisma = new PrismaClient({
    adapter: instrumented(adapter, observe, written, () => cascades),
    ...(opts.logSql ? { log: [{ emit: "event", level: "query" }] } : {}),
  } as any);
  if (opts.logSql) {
    (prisma as any).$on("query", (e: { query: string; params: string; duration: number }) => {
      log.debug({ sql: e.query, params: e.params, durationMs: e.duration }, "sql");
    });
  }
  return prisma;
}

/**
 * The embedded database's buffer cache. PGlite runs PostgreSQL's default of 128 MB inside its
 * WebAssembly memory, which never shrinks, while the kernel's page cache already holds the data
 * folder's files: a smaller cache keeps the process's resident memory near the database's floor,
 * and pages read past it come from the kernel's cache. Measured with `npm run bench -- footprint`
 * (docs/performance-log.md).
 */
const EMBEDDED_SHARED_BUFFERS = "32MB";
/** PGlite's own start parameters, which `startParams` replaces: ours are added to them. */
const PGLITE_START_PARAMS: string[] = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams;

/**
 * Opens the database: PostgreSQL when a URL is given, else the embedded PGlite in
 * `<dataDir>/pglite`, guarded by a lock file. Pending migrations are applied first.
 */
export async function openDatabase(opts: OpenOptions): Promise<Database> {
  installCompilerHooks({ planCache: opts.queryPlanCache !== false });
  const stats = { statements: 0 };
  const observers = new Set<StatementObserver>();
  const observeStatements = (observer: StatementObserver) => void observers.add(observer);
  const writeListeners = new Set<WriteListener>();
  const onCommittedWrite = (listener: WriteListener) => void writeListeners.add(listener);
  if (opts.databaseUrl) {
    // The PostgreSQL driver and adapter load only for PostgreSQL: the embedded database's start skips them.
    const [{ createPool, retryStartup, retryingReads }, { PrismaPg }] = await Promise.all([
      import("./pg-pool.js"),
      import("@prisma/adapter-pg"),
    ]);
    // Migrations on a connection of their own, without the requests' bounds (an index built on a
    // large table, another gateway's migrations awaited).
    const label = describeUrl(opts.databaseUrl);
    const cascades = await retryStartup(
      async () => {
        const setup = createPool(opts.databaseUrl!);
        try {
          const client = await setup.connect();
          opts.progress?.(`Database: PostgreSQL at ${label} connected`);
          try {
            // Serialize migrations between gateway instances sharing one database (the lock goes with the session).
            await client.query("SELECT pg_advisory_lock(7340051)");
            const applied = await applyMigrations(
              (sql) => client.query(sql),
              async (sql) => (await client.query(sql)).rows,
            );
            opts.progress?.(migrationsMessage(applied));
            const found = cascadesFrom((await client.query(CASCADES_SQL)).rows);
            await client.query("SELECT pg_advisory_unlock(7340051)");
            return found;
          } finally {
            client.release();
          }
        } finally {
          await setup.end().catch(() => undefined);
        }
      },
      { label, progress: opts.progress },
    );
    // Lost connections are survived, and each statement is bounded: see core/db/pg-pool.ts.
    const pool = createPool(opts.databaseUrl, { lockTimeoutMs: opts.lockTimeoutMs, statementTimeoutMs: opts.statementTimeoutMs });
    const prisma = createPrisma(
      retryingReads(new PrismaPg(pool), () => pool.discardIdle()),
      stats,
      observers,
      writeListeners,
      opts,
      cascades,
    );
    return {
      kind: "postgres",
      prisma,
      stats,
      observeStatements,
      onCommittedWrite,
      driverQuery: async (sql, params) => (await pool.query(sql, params)).rows,
      async close() {
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }

  const lock = opts.lockHeld ?? (await acquireLock(opts.dataDir));
  let pglite: PGlite;
  let cascades: Cascades;
  try {
    const dir = path.join(opts.dataDir, "pglite");
    fs.mkdirSync(dir, { recursive: true });
    const started = performance.now();
    pglite = await PGlite.create(dir, { startParams: [...PGLITE_START_PARAMS, "-c", `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`] }).catch(
      (err: unknown) => {
        throw lowOnSpace(dir, err, opts.storageReserveBytes || DEFAULT_STORAGE_RESERVE_BYTES);
      },
    );
    opts.progress?.(`Database: embedded (PGlite) in ${dir} opened in ${Math.round(performance.now() - started)} ms`);
    const applied = await applyMigrations(
      (sql) => pglite.exec(sql),
      async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows,
    );
    opts.progress?.(migrationsMessage(applied));
    cascades = cascadesFrom((await pglite.query<Record<string, unknown>>(CASCADES_SQL)).rows);
  } catch (err) {
    if (!opts.lockHeld) lock.release();
    throw err;
  }
  const storage = new StorageGuard(opts.dataDir, opts.storageReserveBytes ?? 0, (error) => opts.onStorageWedged?.(error));
  const guarded = guardedBy(storage);
  const prisma = createPrisma(new PrismaPGlite(adoptingParsers(pglite, guarded)), stats, observers, writeListeners, opts, cascades);
  let closed = false;
  return {
    kind: "pglite",
    prisma,
    stats,
    observeStatements,
    onCommittedWrite,
    lock,
    storage,
    driverQuery: (sql, params) => guarded(sql, async () => (await pglite.query<Record<string, unknown>>(sql, params)).rows),
    async close() {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await pglite.close();
      if (!opts.lockHeld) lock.release();
    },
  };
}

type Queryable = { query(sql: string, params?: unknown[], options?: QueryOptions): Promise<unknown> };

/**
 * The error of an embedded database that could not open, naming the disk when it is short of
 * space: PostgreSQL replays its log at start and needs room for a new segment (16 MiB), and PGlite
 * then says only that it "failed to initialize properly".
 */
function lowOnSpace(dir: string, err: unknown, reserve: number): unknown {
  let free: number;
  try {
    free = freeBytes(dir);
  } catch {
    return err;
  }
  if (free >= reserve) return err;
  return new Error(
    `The embedded database in ${dir} could not open (${(err as Error)?.message ?? err}), and its disk has ${mib(free)} free: ` +
      `it needs room to replay its log (${mib(reserve)} is best). Free space and start again: every acknowledged write is kept.`,
    { cause: err },
  );
}

/** Runs a statement past the storage guard: refused while space is short, its failure looked at. */
type Guarded = <T>(sql: string, run: () => Promise<T>) => Promise<T>;

function guardedBy(storage: StorageGuard): Guarded {
  return async (sql, run) => {
    storage.before(sql);
    try {
      return await run();
    } catch (err) {
      storage.after(err);
      throw err;
    }
  };
}

/**
 * PGlite as the Prisma adapter is given it. The adapter asks for its own parsers on every
 * statement (timestamps and numerics as text, bytes as arrays), and PGlite merges them into its
 * table of every type it knows, several hundred entries, for each statement. The adapter's
 * parsers are made PGlite's own on its first statement, and its statements then run without
 * them: the same rows, without the merge. A statement that returns many rows has them carried as one JSON value (core/db/pglite-rows.ts).
 * (The rows of `driverQuery` are parsed the adapter's way too: timestamps and int8 as text.)
 */
function adoptingParsers(pglite: PGlite, guarded: Guarded): PGlite {
  let adopted: object | undefined;
  const options = (given: QueryOptions | undefined): QueryOptions | undefined => {
    if (!given?.parsers) return given;
    if (adopted === undefined) {
      pglite.parsers = { ...pglite.parsers, ...(given.parsers as typeof pglite.parsers) };
      adopted = given.parsers;
    }
    if (given.parsers !== adopted) return given;
    const { parsers: _, ...rest } = given;
    return rest;
  };
  const carried = jsonRows(() => pglite.parsers);
  // Outside transactions, a statement run again is a prepared statement (core/db/pglite-prepared.ts).
  const prepared = preparedStatements(pglite, (sql, params, given) => pglite.query(sql, params, given));
  const adopting = <T extends Queryable>(client: T): T => {
    const read = carried((client as unknown) === pglite ? prepared.run : (sql, params, given) => client.query(sql, params, given));
    const query = (sql: string, params?: unknown[], given?: QueryOptions) => guarded(sql, () => read(sql, params, options(given)));
    const exec = (sql: string, given?: QueryOptions) => guarded(sql, () => (client as unknown as PGlite).exec(sql, given));
    const transaction = (callback: (tx: Queryable) => Promise<unknown>) =>
      (client as unknown as PGlite).transaction((tx) => callback(adopting(tx as Queryable)));
    return new Proxy(client, {
      get(target, prop) {
        if (prop === "query") return query;
        if (prop === "exec") return exec;
        if (prop === "transaction") return transaction;
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return adopting(pglite as unknown as Queryable) as unknown as PGlite;
}

function migrationsMessage(applied: string[]): string {
  return applied.length ? `Migrations: applied ${applied.length} (${applied.join(", ")})` : "Migrations: the schema is up to date";
}

/** A connection string without its password, to print. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ""}${u.pathname}`;
  } catch {
    return "(DATABASE_URL)";
  }
}
