import { AsyncLocalStorage } from "node:async_hooks";
import { Prisma } from "../generated/prisma/client.js";

/**
 * What an HTTP request's answer was made from, for the response cache (src/server/response-cache.ts):
 * the database tables its statements read, and whether anything made the answer one that may not
 * be kept (the request wrote, or read from outside the database).
 *
 * A read statement's tables are added to every request under way, not only to the one whose code
 * sent it: a statement may serve several requests (Prisma joins concurrent `findUnique` calls into
 * one), and a table too many only costs an answer dropped too early.
 */
export interface RequestReads {
  tables: Set<string>;
  /** The answer may not be kept: the request wrote, or depended on something outside the database. */
  uncacheable: boolean;
  /** Filled by the response cache: the write counters when the request started (see response-cache.ts). */
  versions?: unknown;
  /** The last response-cache key the request looked up (its hits and misses are counted once). */
  lookedUp?: string;
}

const current = new AsyncLocalStorage<RequestReads>();
const underWay = new Set<RequestReads>();

/** Runs `run` as a request whose reads are tracked; `done` is called once it is over (the answer sent). */
export function trackRequest<T>(run: (reads: RequestReads) => T): { result: T; reads: RequestReads; done: () => void } {
  const reads: RequestReads = { tables: new Set(), uncacheable: false };
  underWay.add(reads);
  const result = current.run(reads, () => run(reads));
  return { result, reads, done: () => void underWay.delete(reads) };
}

/** The reads of the request the caller runs in (undefined outside one: background work, WebSockets). */
export function currentReads(): RequestReads | undefined {
  return current.getStore();
}

/** The request the caller runs in depends on something the database does not hold: its answer is not kept. */
export function readsOutsideDatabase(): void {
  const reads = current.getStore();
  if (reads) reads.uncacheable = true;
}

const TABLES = new Set<string>(Object.values(Prisma.ModelName));
const QUOTED = /"([^"]+)"/g;

/** The tables a statement names: every quoted identifier that is a table of the schema. */
export function tablesOf(sql: string): string[] {
  const tables = new Set<string>();
  for (const m of sql.matchAll(QUOTED)) if (TABLES.has(m[1]!)) tables.add(m[1]!);
  return [...tables];
}

/**
 * Notes a statement sent to the database: a read adds its tables to every request under way, a
 * write makes the request that sent it uncacheable.
 */
export function noteStatement(sql: string, write: boolean): void {
  if (write) {
    readsOutsideDatabase();
    return;
  }
  if (underWay.size === 0) return;
  const verb = sql.trimStart().slice(0, 6).toUpperCase();
  if (verb !== "SELECT" && !verb.startsWith("WITH")) return;
  const tables = tablesOf(sql);
  for (const reads of underWay) for (const table of tables) reads.tables.add(table);
}
