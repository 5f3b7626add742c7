import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { Prisma } from "../../generated/prisma/client.js";
import { keyConjuncts, pickRestriction, type KeyConjunct, type RowChange } from "./row-keys.js";

/**
 * What an HTTP request's answer was made from, for the response cache (src/server/response-cache.ts):
 * the database tables its statements read, which of their rows (`tags`, see `readTags`), and
 * whether anything made the answer one that may not be kept (the request wrote, or read from
 * outside the database).
 *
 * A read statement's tables are added to every request under way, not only to the one whose code
 * sent it: a statement may serve several requests (Prisma joins concurrent `findUnique` calls into
 * one), and a table too many only costs an answer dropped too early.
 */
export interface RequestReads {
  tables: Set<string>;
  /** What the answer was read from, as tags (`readTags`): a write drops the answers whose tags its `writeTags` name. */
  tags: Set<string>;
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
  const reads: RequestReads = { tables: new Set(), tags: new Set(), uncacheable: false };
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
export function tablesOf(sql: string): readonly string[] {
  return readShape(sql).tables;
}

/** What a SELECT's text tells of what it reads, whatever its parameters: its tables and, for each, its key conjuncts. */
interface ReadShape {
  readonly tables: readonly string[];
  readonly conjuncts: readonly (readonly KeyConjunct[] | null)[];
}

/**
 * Read shapes by statement text. Prisma sends a few hundred distinct texts, each many times, and
 * reading one (every quoted identifier, the WHERE clause of each table) allocates tens of
 * kilobytes; at most SHAPES_KEPT are kept, the oldest dropped first.
 */
const shapes = new Map<string, ReadShape>();
const SHAPES_KEPT = 2_000;

function readShape(sql: string): ReadShape {
  let shape = shapes.get(sql);
  if (shape) return shape;
  const tables = new Set<string>();
  for (const m of sql.matchAll(QUOTED)) if (TABLES.has(m[1]!)) tables.add(m[1]!);
  shape = { tables: [...tables], conjuncts: [...tables].map((table) => keyConjuncts(sql, table)) };
  if (shapes.size >= SHAPES_KEPT) shapes.delete(shapes.keys().next().value!);
  shapes.set(sql, shape);
  return shape;
}

/**
 * The tags of what a SELECT read (core/cache/row-keys.ts `keyConjuncts`), for each table it names:
 * - `T`: every reader of table T (a write whose rows are not known drops them all);
 * - `T.col=v` and `T.col=*`: a reader of the rows of T whose key column `col` is one of the values
 *   (`T.col=*`: every such reader, whatever the value — for a write that changes `col` from a
 *   value it does not know);
 * - `T.*`: a reader of any row of T (a list, a count, a search by another predicate).
 */
export function readTags(sql: string, args?: readonly unknown[]): string[] {
  const tags: string[] = [];
  const shape = readShape(sql);
  shape.tables.forEach((table, i) => {
    const restriction = args ? pickRestriction(shape.conjuncts[i]!, args) : null;
    tags.push(table);
    if (!restriction) tags.push(`${table}.*`);
    else {
      tags.push(`${table}.${restriction.column}=*`);
      for (const v of restriction.values) tags.push(`${table}.${restriction.column}=${tagValue(v)}`);
    }
  });
  return tags;
}

/**
 * The tags of the answers a write may have changed (see `readTags`), from the rows it changed in
 * each table (core/db/db.ts `onCommittedWrite`): its rows unknown, every reader of the table (`T`);
 * else the readers of any row (`T.*`), those of the written rows by each key column
 * (`T.col=v`), and every reader by a key column whose old values are not known (`T.col=*`).
 * An insert or a delete is a change of rows like any other: the lists and counts (`T.*`) and the
 * readers by a parent key (`T.spaceId=v`) that could see it are dropped with it.
 */
export function writeTags(rows: ReadonlyMap<string, RowChange>): string[] {
  const tags: string[] = [];
  for (const [table, change] of rows) {
    if (change === "table") {
      tags.push(table);
      continue;
    }
    tags.push(`${table}.*`);
    for (const column of change.unknown) tags.push(`${table}.${column}=*`);
    for (const [column, values] of change.values) for (const v of values) tags.push(`${table}.${column}=${tagValue(v)}`);
  }
  return tags;
}

/**
 * A key value as a tag names it: a long one (an id as a client sent it may be 200,000 characters)
 * by its hash, so tags stay small in the cache's index and in Redis; reads and writes name a
 * value alike.
 */
function tagValue(v: unknown): string {
  const text = String(v);
  return text.length > 64 ? `#${createHash("sha256").update(text).digest("base64url")}` : text;
}

/** Tags one request may collect; an answer read from more rows than that is not kept. */
const MAX_TAGS_PER_REQUEST = 5_000;

/**
 * Notes a statement sent to the database: a read adds its tables and tags to every request under
 * way, a write makes the request that sent it uncacheable.
 */
export function noteStatement(sql: string, write: boolean, args?: readonly unknown[]): void {
  if (write) {
    readsOutsideDatabase();
    return;
  }
  if (underWay.size === 0) return;
  const verb = sql.trimStart().slice(0, 6).toUpperCase();
  if (verb !== "SELECT" && !verb.startsWith("WITH")) return;
  addReads(tablesOf(sql), readTags(sql, args));
}

/** Adds tables and tags read to every request under way. */
function addReads(tables: Iterable<string>, tags: Iterable<string>): void {
  for (const reads of underWay) {
    for (const table of tables) reads.tables.add(table);
    if (reads.uncacheable) continue;
    for (const tag of tags) reads.tags.add(tag);
    if (reads.tags.size > MAX_TAGS_PER_REQUEST) {
      reads.uncacheable = true;
      reads.tags.clear();
    }
  }
}

/** What the statements of a read read: its tables and tags (`readTags`). */
export interface NotedReads {
  readonly tables: readonly string[];
  readonly tags: readonly string[];
}

/**
 * Runs `read` and tells what the statements sent while it ran read (those of other work under way
 * included: a tag too many only drops an answer too early), for a value kept from it: whenever the
 * value is answered again without a statement, `noteReads` tells the requests under way what it
 * was read from, as its statements did. `noted` is null when more was read than a request may note.
 */
export async function readNoting<T>(read: () => Promise<T>): Promise<{ value: T; noted: NotedReads | null }> {
  const reads: RequestReads = { tables: new Set(), tags: new Set(), uncacheable: false };
  underWay.add(reads);
  let value: T;
  try {
    value = await read();
  } finally {
    underWay.delete(reads);
  }
  return { value, noted: reads.uncacheable ? null : { tables: [...reads.tables], tags: [...reads.tags] } };
}

/** Tells the requests under way that they read what `noted` names (a kept value answered: see readNoting). */
export function noteReads(noted: NotedReads): void {
  if (underWay.size > 0) addReads(noted.tables, noted.tags);
}
