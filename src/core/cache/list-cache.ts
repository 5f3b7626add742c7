import { getDatamodel } from "../../generated/pothos-types.js";
import type { Database } from "../db/db.js";
import { copyOf, typedValue, type ModelReads } from "../graph/loaders.js";
import { WriteClock } from "./write-clock.js";
import { noteReads, readNoting, type NotedReads } from "./request-reads.js";

/**
 * Kept lists: the pages and counts of the documented lists (core/graph/pagination.ts) kept between
 * requests on the embedded database, until a committed write touches a table they read.
 *
 * Every page of a list reads its rows and, unless it holds them all, counts every row its filter
 * selects. Rows and counts change only when rows of the tables read change, and on the embedded
 * database every write goes through this process (the data folder's lock), whose database layer
 * reports each one with the tables it wrote (core/db/db.ts `onCommittedWrite`: after the statement,
 * or after the commit of a transaction; triggers and foreign-key cascades included). So:
 *
 * - a page is kept by its model and its whole read (filter, cursor, order, size, included
 *   relations: as JSON with its dates told apart), a count by its model and filter, each with the
 *   tables it reads: the model's, those of the relations its filter names and those it includes,
 *   from the schema (a guest's spaces read SpaceAccess, Team and TeamMember too; tables are named
 *   as their models, as core/cache/request-reads.ts also takes them — a test fails on a model mapped to
 *   a table of another name);
 * - it is answered again while none of those tables was written since it was read
 *   (core/cache/write-clock.ts: the clock is noted before the read), and LIST_CACHE_TTL_MS at most (a
 *   safety net only) — so an answer made from rows a write has since changed cannot outlive that
 *   write; one whose tables were written while it was read is not even stored;
 * - a kept page's rows are never handed out: each reader gets its own copy (core/graph/loaders.ts
 *   `copyOf`), the one whose read was kept included (a page read and not kept is its reader's own);
 * - a request answered from a kept value is told what it was read from, as the statements that
 *   read it told the requests under way then (core/cache/request-reads.ts `readNoting`): the response
 *   cache drops an answer made from a kept page with the writes that change its rows, as it does
 *   one made from the statement;
 * - only reads of the top-level client: inside a transaction (whose own writes are not yet
 *   committed) a list is always read;
 * - a read naming something the schema does not tell (an implicit many-to-many table, a field not
 *   found, an order by a relation) is never kept;
 * - at most MAX_ENTRIES, and pages of MAX_BYTES in all as sizeOf estimates them (none over
 *   MAX_PAGE_BYTES), the least recently used dropped first.
 *
 * On PostgreSQL other gateways (and `npm run admin`) write the same database without this process
 * seeing it: nothing is kept there. LIST_CACHE=off turns it off (config.ts).
 */

/** Pages and counts kept; past it the least recently used go. */
const MAX_ENTRIES = 10_000;
/** Kept pages' estimated size in all (sizeOf); past it the least recently used go. */
const MAX_BYTES = 32 * 1024 * 1024;
/** Estimated size of the largest page kept; a larger one is read each time. */
const MAX_PAGE_BYTES = 2 * 1024 * 1024;
/** Longest key (the read as JSON) kept; a longer one is read each time. */
const MAX_KEY = 4_096;
/** Longest a page or count is answered without being read again, whatever the writes (a safety net). */
export const LIST_CACHE_TTL_MS = 60_000;

interface Entry {
  value: unknown;
  tables: readonly string[];
  /** The write clock before the value was read. */
  mark: number;
  at: number;
  /** Estimated size (pages; 0 for a count). */
  bytes: number;
  /** What its statements read, told to the requests it is answered to (their answers' dependencies: server/response-cache.ts). */
  noted: NotedReads;
}

/** A page's read: what core/graph/pagination.ts asks of a model's findMany. */
export interface PageRead {
  where: object;
  orderBy?: unknown;
  take?: number;
  include?: object;
}

type Kind = "count" | "page";

/** The kept lists of each top-level model delegate (`prisma.space`…) of an embedded database. */
const keptBy = new WeakMap<object, { lists: ListCache; model: string }>();

export class ListCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Committed writes by table, as the database layer reported them. */
  private readonly clock = new WriteClock();
  readonly stats = { count: { hits: 0, misses: 0 }, page: { hits: 0, misses: 0 } };

  constructor(private readonly ttlMs = LIST_CACHE_TTL_MS) {}

  /**
   * Keeps the pages and counts of `db`'s lists when it is the embedded database (no other process
   * writes it); null on PostgreSQL.
   */
  static attach(db: Pick<Database, "kind" | "prisma" | "onCommittedWrite">, ttlMs?: number): ListCache | null {
    if (db.kind !== "pglite") return null;
    const lists = new ListCache(ttlMs);
    db.onCommittedWrite((writes, rows) => lists.clock.written([...writes.keys(), ...rows.keys()]));
    const client = db.prisma as unknown as Record<string, unknown>;
    for (const model of modelShapes().keys()) {
      const delegate = client[model.charAt(0).toLowerCase() + model.slice(1)];
      if (delegate && typeof delegate === "object") keptBy.set(delegate, { lists, model });
    }
    return lists;
  }

  /** The count of `model`'s rows that `where` selects: kept, or `read` (and kept when it may be). */
  async count(model: string, where: object, read: () => Promise<number>): Promise<number> {
    return (await this.kept("count", model, where, () => tablesOf(model, where), read)).value as number;
  }

  /** The rows of a page of `model`: kept (each caller gets a copy of them), or `read` (and kept when they may be). */
  async page<T>(model: string, args: PageRead, read: () => Promise<T[]>): Promise<T[]> {
    const { value, shared } = await this.kept("page", model, args, () => tablesOfRead(model, args), read);
    return shared ? copyOf(value as T[]) : (value as T[]);
  }

  /** The value of a read: kept or read, and whether it is the kept one (then the caller must not hand it out as it is). */
  private async kept(
    kind: Kind,
    model: string,
    args: object,
    tables: () => string[] | null,
    read: () => Promise<unknown>,
  ): Promise<{ value: unknown; shared: boolean }> {
    const alone = async () => ({ value: await read(), shared: false });
    let key: string;
    try {
      key = `${kind}\u0000${model}\u0000${JSON.stringify(args, typedValue)}`;
    } catch {
      return alone(); // a value JSON cannot write (a BigInt)
    }
    if (key.length > MAX_KEY) return alone();
    const stats = this.stats[kind];
    const kept = this.entries.get(key);
    if (kept && Date.now() - kept.at < this.ttlMs && !this.clock.writtenSince(kept.tables, kept.mark)) {
      stats.hits++;
      // Least recently used last: the first entry is the next to go.
      this.entries.delete(key);
      this.entries.set(key, kept);
      noteReads(kept.noted);
      return { value: kept.value, shared: true };
    }
    const reads = tables();
    if (!reads) return alone();
    stats.misses++;
    const mark = this.clock.mark();
    const { value, noted } = await readNoting(read);
    if (!noted || this.clock.writtenSince(reads, mark)) return { value, shared: false };
    const bytes = kind === "page" ? sizeOf(value) : 0;
    if (bytes > MAX_PAGE_BYTES) return { value, shared: false };
    this.drop(key);
    this.entries.set(key, { value, tables: reads, mark, at: Date.now(), bytes, noted });
    this.bytes += bytes;
    while (this.entries.size > MAX_ENTRIES || this.bytes > MAX_BYTES) this.drop(this.entries.keys().next().value!);
    return { value, shared: true };
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** Forgets every page and count (tests compare answers with and without them). */
  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}

/**
 * The count of the rows `where` selects in `from`: from the kept lists of its database when
 * `from` is a top-level model delegate of an embedded database, else `read`.
 */
export function keptCount(from: ModelReads<unknown>, where: object, read: () => Promise<number>): Promise<number> {
  const kept = keptBy.get(from);
  return kept ? kept.lists.count(kept.model, where, read) : read();
}

/** The rows of a page of `from` (its findMany with `args`): kept, as keptCount, else `read`. */
export function keptPage<T>(from: ModelReads<T>, args: PageRead, read: () => Promise<T[]>): Promise<T[]> {
  const kept = keptBy.get(from);
  return kept ? kept.lists.page(kept.model, args, read) : read();
}

/**
 * The memory a value holds, roughly (bytes): two a character of its strings, eight a number, and
 * the objects, arrays and keys holding them. It bounds what the kept pages hold, not exactly.
 */
export function sizeOf(value: unknown): number {
  if (typeof value === "string") return 16 + 2 * value.length;
  if (value === null || typeof value !== "object") return 8;
  if (value instanceof Date) return 32;
  if (ArrayBuffer.isView(value)) return 32 + value.byteLength;
  let size = 32;
  if (Array.isArray(value)) {
    for (const item of value) size += 8 + sizeOf(item);
    return size;
  }
  for (const key in value) size += 8 + 2 * key.length + sizeOf((value as Record<string, unknown>)[key]);
  return size;
}

/** What the schema tells of each model: its relation fields, each with the model it names (null: a relation through a table of its own, which no model names), and its other fields. */
interface ModelShape {
  relations: Map<string, string | null>;
  columns: Set<string>;
}

let shapes: Map<string, ModelShape> | undefined;

function modelShapes(): Map<string, ModelShape> {
  if (shapes) return shapes;
  const models = getDatamodel().datamodel.models as Record<
    string,
    { fields: readonly { name: string; kind: string; type: string; isList: boolean; relationName?: string | null }[] }
  >;
  // An implicit many-to-many relation (lists on both sides) reads a join table of its own.
  const listSides = new Map<string, number>();
  for (const model of Object.values(models)) {
    for (const f of model.fields)
      if (f.kind === "object" && f.isList && f.relationName) listSides.set(f.relationName, (listSides.get(f.relationName) ?? 0) + 1);
  }
  shapes = new Map();
  for (const [name, model] of Object.entries(models)) {
    const shape: ModelShape = { relations: new Map(), columns: new Set() };
    for (const f of model.fields) {
      if (f.kind === "object") shape.relations.set(f.name, (listSides.get(f.relationName ?? "") ?? 0) > 1 ? null : f.type);
      else shape.columns.add(f.name);
    }
    shapes.set(name, shape);
  }
  return shapes;
}

const LOGICAL = new Set(["AND", "OR", "NOT"]);
const RELATION_FILTERS = new Set(["some", "every", "none", "is", "isNot"]);

/**
 * The tables a Prisma filter of `model` reads: the model's, and those of every relation it filters
 * on, at any depth; null when it names a relation through a table of its own, or anything the
 * schema does not tell.
 */
export function tablesOf(model: string, where: object): string[] | null {
  const tables = new Set<string>();
  return walk(model, where, tables) ? [...tables].sort() : null;
}

/**
 * The tables a page's read of `model` reads (tablesOf its filter, and the tables of the relations
 * it includes, with their own filters, at any depth); null when it orders by anything but the
 * model's columns or names anything the schema does not tell.
 */
export function tablesOfRead(model: string, args: PageRead): string[] | null {
  const tables = new Set<string>();
  if (!walk(model, args.where, tables) || !byColumns(model, args.orderBy)) return null;
  if (args.include !== undefined && !related(model, args.include, tables, false)) return null;
  return [...tables].sort();
}

/** Whether an `orderBy` (an object or a list of them) names only columns of `model`, each `asc` or `desc`. */
function byColumns(model: string, orderBy: unknown): boolean {
  if (orderBy === undefined) return true;
  const shape = modelShapes().get(model);
  return (
    !!shape &&
    (Array.isArray(orderBy) ? orderBy : [orderBy]).every(
      (order) =>
        !!order &&
        typeof order === "object" &&
        Object.entries(order).every(([field, direction]) => shape.columns.has(field) && (direction === "asc" || direction === "desc")),
    )
  );
}

/** What a relation's `include` or `select` may hold besides its fields. */
const NESTED_READ = new Set(["select", "include", "where", "orderBy", "take", "skip"]);

/**
 * Adds the tables of the relations an `include` (or, with `columns`, a `select`) of `model` names,
 * and of their own reads; false when it names anything else than those relations (and, in a
 * `select`, the model's columns).
 */
function related(model: string, selection: unknown, tables: Set<string>, columns: boolean): boolean {
  const shape = modelShapes().get(model);
  if (!shape || !selection || typeof selection !== "object" || Array.isArray(selection)) return false;
  for (const [field, value] of Object.entries(selection)) {
    if (value === undefined || value === false) continue;
    if (columns && shape.columns.has(field) && value === true) continue;
    const target = shape.relations.get(field);
    if (!target) return false;
    tables.add(target);
    if (value === true) continue;
    if (!value || typeof value !== "object" || Array.isArray(value)) return false;
    for (const [key, nested] of Object.entries(value)) {
      if (nested === undefined) continue;
      if (!NESTED_READ.has(key)) return false;
      if (key === "where" && !walk(target, nested, tables)) return false;
      if (key === "orderBy" && !byColumns(target, nested)) return false;
      if ((key === "select" || key === "include") && !related(target, nested, tables, key === "select")) return false;
    }
  }
  return true;
}

function walk(model: string, where: unknown, tables: Set<string>): boolean {
  const shape = modelShapes().get(model);
  if (!shape) return false;
  tables.add(model);
  if (where === null || where === undefined) return true;
  if (typeof where !== "object" || Array.isArray(where)) return false;
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) continue;
    if (LOGICAL.has(key)) {
      for (const part of Array.isArray(value) ? value : [value]) if (!walk(model, part, tables)) return false;
      continue;
    }
    // A column's filter reads this table only.
    if (shape.columns.has(key)) continue;
    const related = shape.relations.get(key);
    if (!related) return false;
    if (value === null) {
      tables.add(related);
      continue;
    }
    if (typeof value !== "object" || Array.isArray(value)) return false;
    const keys = Object.keys(value);
    const filters = keys.filter((k) => RELATION_FILTERS.has(k));
    // `{ is: … }`, `{ some: … }`…, or the related row's own filter (a to-one relation's shorthand).
    if (filters.length === 0) {
      if (!walk(related, value, tables)) return false;
    } else {
      if (filters.length !== keys.length) return false;
      for (const filter of filters) if (!walk(related, (value as Record<string, unknown>)[filter], tables)) return false;
    }
  }
  return true;
}
