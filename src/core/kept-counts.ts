import { getDatamodel } from "../generated/pothos-types.js";
import type { Database } from "./db.js";
import { typedValue, type ModelReads } from "./loaders.js";
import { WriteClock } from "./write-clock.js";

/**
 * Kept counts: the `count` of a documented list (core/pagination.ts) kept between requests on the
 * embedded database, until a committed write touches a table its filter reads.
 *
 * Every page of a list answers how many rows its filter selects: a COUNT over all of them, on every
 * page — as long as reading the page itself for a list of 50, and most of a page's time in an
 * organization of 20,000 spaces. The count of a filter changes only when rows of the tables it reads
 * change, and on the embedded database every write goes through this process (the data folder's
 * lock), whose database layer reports each one with the tables it wrote (core/db.ts
 * `onCommittedWrite`: after the statement, or after the commit of a transaction; triggers and
 * foreign-key cascades included). So:
 *
 * - a count is kept by its model and filter (`where`, as JSON with its dates told apart), with the
 *   tables the filter reads (the model's and those of the relations it
 *   filters on, from the schema: a guest's spaces read SpaceAccess, Team and TeamMember too;
 *   tables are named as their models, as core/request-reads.ts also takes them — a test fails on
 *   a model mapped to a table of another name);
 * - it is answered again while none of those tables was written since it was read
 *   (core/write-clock.ts: the clock is noted before the count is read), and COUNT_CACHE_TTL_MS at
 *   most (a safety net only) — so a count made from rows a write has since changed cannot outlive
 *   that write; one whose tables were written while it was read is not even stored;
 * - only counts asked of the top-level client: inside a transaction (whose own writes are not yet
 *   committed) a count is always read;
 * - a filter naming something the schema does not tell (an implicit many-to-many table, a field
 *   not found) is never kept;
 * - at most MAX_ENTRIES, the least recently used dropped first.
 *
 * On PostgreSQL other gateways (and `npm run admin`) write the same database without this process
 * seeing it: counts are not kept there. COUNT_CACHE=off turns it off (config.ts).
 */

/** Counts kept; past it the least recently used go. */
const MAX_ENTRIES = 10_000;
/** Longest key (the filter as JSON) of a count that is kept; a longer one is read each time. */
const MAX_KEY = 4_096;
/** Longest a count is answered without being read again, whatever the writes (a safety net). */
export const COUNT_CACHE_TTL_MS = 60_000;

interface Entry {
  count: number;
  tables: readonly string[];
  /** The write clock before the count was read. */
  mark: number;
  at: number;
}

/** The kept counts of each top-level model delegate (`prisma.space`…) of an embedded database. */
const keptBy = new WeakMap<object, { counts: KeptCounts; model: string }>();

export class KeptCounts {
  private readonly entries = new Map<string, Entry>();
  /** Committed writes by table, as the database layer reported them. */
  private readonly clock = new WriteClock();
  readonly stats = { hits: 0, misses: 0 };

  constructor(private readonly ttlMs = COUNT_CACHE_TTL_MS) {}

  /**
   * Keeps the counts of `db`'s lists when it is the embedded database (no other process writes it);
   * null on PostgreSQL.
   */
  static attach(db: Pick<Database, "kind" | "prisma" | "onCommittedWrite">, ttlMs?: number): KeptCounts | null {
    if (db.kind !== "pglite") return null;
    const counts = new KeptCounts(ttlMs);
    db.onCommittedWrite((writes, rows) => counts.clock.written([...writes.keys(), ...rows.keys()]));
    const client = db.prisma as unknown as Record<string, unknown>;
    for (const model of modelShapes().keys()) {
      const delegate = client[model.charAt(0).toLowerCase() + model.slice(1)];
      if (delegate && typeof delegate === "object") keptBy.set(delegate, { counts, model });
    }
    return counts;
  }

  /** The count of `model`'s rows that `where` selects: kept, or `read` (and kept when it may be). */
  async count(model: string, where: object, read: () => Promise<number>): Promise<number> {
    let key: string;
    try {
      key = `${model}\u0000${JSON.stringify(where, typedValue)}`;
    } catch {
      return read(); // a value JSON cannot write (a BigInt)
    }
    if (key.length > MAX_KEY) return read();
    const kept = this.entries.get(key);
    if (kept && Date.now() - kept.at < this.ttlMs && !this.clock.writtenSince(kept.tables, kept.mark)) {
      this.stats.hits++;
      // Least recently used last: the first entry is the next to go.
      this.entries.delete(key);
      this.entries.set(key, kept);
      return kept.count;
    }
    const tables = tablesOf(model, where);
    if (!tables) return read();
    this.stats.misses++;
    const mark = this.clock.mark();
    const count = await read();
    if (!this.clock.writtenSince(tables, mark)) {
      this.entries.delete(key);
      this.entries.set(key, { count, tables, mark, at: Date.now() });
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    }
    return count;
  }

  /** Forgets every count (tests compare answers with and without them). */
  clear(): void {
    this.entries.clear();
  }
}

/**
 * The count of the rows `where` selects in `from`: from the kept counts of its database when
 * `from` is a top-level model delegate of an embedded database, else `read`.
 */
export function keptCount(from: ModelReads<unknown>, where: object, read: () => Promise<number>): Promise<number> {
  const kept = keptBy.get(from);
  return kept ? kept.counts.count(kept.model, where, read) : read();
}

/** What the schema tells of each model: its relation fields, each with the model it names (null: a relation through a table of its own, which no model names), and its other fields. */
interface ModelShape {
  relations: Map<string, string | null>;
  columns: Set<string>;
}

let shapes: Map<string, ModelShape> | undefined;

function modelShapes(): Map<string, ModelShape> {
  if (shapes) return shapes;
  const models = getDatamodel().datamodel.models as Record<string, { fields: readonly { name: string; kind: string; type: string; isList: boolean; relationName?: string | null }[] }>;
  // An implicit many-to-many relation (lists on both sides) reads a join table of its own.
  const listSides = new Map<string, number>();
  for (const model of Object.values(models)) {
    for (const f of model.fields) if (f.kind === "object" && f.isList && f.relationName) listSides.set(f.relationName, (listSides.get(f.relationName) ?? 0) + 1);
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
