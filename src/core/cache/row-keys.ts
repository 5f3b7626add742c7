import { Prisma } from "../../generated/prisma/client.js";

/**
 * Which rows a statement read or wrote, as far as its text and parameters prove it: the response
 * cache (src/server/response-cache.ts) tags an answer with the rows it read and drops it when a
 * write changes one of them, instead of when anything in their tables changes.
 *
 * Rows are named by their key columns: `id`, and every column whose name ends in `Id` (the foreign
 * keys), when their values are strings (the ids). Anything this module cannot read for certain —
 * raw SQL, an alias, an OR, a predicate on another column, a value that is not a string —
 * answers "any row of the table" (a read) or "the table" (a write): never a row too few.
 */

/** The key columns of each table (the model's scalar fields named `id` or `…Id`). */
export const KEY_COLUMNS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.values(Prisma.ModelName).map((model) => {
    const fields = Object.values((Prisma as unknown as Record<string, Record<string, string>>)[`${model}ScalarFieldEnum`] ?? {});
    return [model, fields.filter((f) => f === "id" || /Id$/.test(f))] as const;
  }),
);

const WRITE = /^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:"[^"]+"\.)?"([^"]+)"/i;
/** A write inside a statement that starts with WITH: a data-modifying `name AS (…)`, or the statement that follows them. */
const WITH_WRITE = /(?:\bAS\s*\(|\))\s*(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:"[^"]+"\.)?"([^"]+)"/gi;

/** The table an INSERT, UPDATE or DELETE statement writes (null for other statements, WITH … included: see statementParts). */
export function writtenTable(sql: string): string | null {
  const c = sql.charCodeAt(sql.search(/\S/));
  // I, U, D (either case): anything else is not a write, without running the expression.
  if (c !== 73 && c !== 85 && c !== 68 && c !== 105 && c !== 117 && c !== 100) return null;
  return WRITE.exec(sql)?.[1] ?? null;
}

/** One write of a statement: its verb, its table, and its own text (null when it cannot be taken out). */
export interface StatementPart {
  verb: "INSERT" | "UPDATE" | "DELETE";
  table: string;
  text: string | null;
}

/**
 * The writes of a statement: the statement itself for an INSERT, UPDATE or DELETE; for one that
 * starts with WITH, each data-modifying part (the text of `name AS (…)` within its parentheses)
 * and the statement after the parts; none for a read.
 */
export function statementParts(sql: string): StatementPart[] {
  const one = writtenTable(sql);
  if (one) return [{ verb: verbOf(sql), table: one, text: sql }];
  if (!/^\s*WITH\b/i.test(sql)) return [];
  return [...sql.matchAll(WITH_WRITE)].map((m) => {
    const start = m.index! + m[0].search(/INSERT|UPDATE|DELETE/i);
    let text: string | null = sql.slice(start);
    if (/^AS/i.test(m[0])) {
      const close = closing(sql, m.index! + m[0].indexOf("("));
      text = close < 0 ? null : sql.slice(start, close);
    }
    return { verb: verbOf(m[1]!), table: m[2]!, text: text !== null && writtenTable(text) === m[2] ? text : null };
  });
}

const verbOf = (sql: string) => sql.trimStart().slice(0, 6).toUpperCase() as StatementPart["verb"];

/** A read of a table limited to the rows whose key column `column` has one of `values`. */
export interface Restriction {
  column: string;
  values: string[];
}

/**
 * What a write changed in a table: every row it wrote (before and after the write) has, for each
 * key column not in `unknown`, null or one of `values[column]`; for a column in `unknown` the
 * values are not known (a reader that filtered on it may see a change). "table": rows not known.
 */
export type RowChange = { values: Map<string, Set<string>>; unknown: Set<string> } | "table";

/** A driver's answer to a statement with RETURNING (or a SELECT). */
interface ResultSet {
  columnNames?: string[];
  rows?: unknown[][];
}

const ref = (table: string) => `"public"."${table}"`;

/** Whether every mention of the table in `sql` is schema-qualified (Prisma's own statements, not raw SQL). */
function qualifiedOnly(sql: string, table: string): boolean {
  const bare = sql.split(`"${table}"`).length - 1;
  const qualified = sql.split(ref(table)).length - 1;
  return bare === qualified;
}

/** Positions where the table itself (not one of its columns) is named. */
function tableMentions(sql: string, table: string): number[] {
  const r = ref(table);
  const at: number[] = [];
  for (let i = sql.indexOf(r); i >= 0; i = sql.indexOf(r, i + 1)) if (sql[i + r.length] !== ".") at.push(i);
  return at;
}

const AWKWARD = /'|\b(?:UNION|INTERSECT|EXCEPT|BETWEEN|ON CONFLICT|USING)\b/i;

/**
 * The WHERE clause that applies to the table's only mention (from FROM / UPDATE / DELETE FROM on),
 * up to where that query ends; null when there is none or the statement is not of a shape read here.
 */
function whereOf(sql: string, table: string): string | null {
  if (AWKWARD.test(sql) || !qualifiedOnly(sql, table)) return null;
  const at = tableMentions(sql, table);
  if (at.length !== 1) return null;
  const before = sql.slice(0, at[0]).trimEnd().toUpperCase();
  if (!before.endsWith("FROM") && !before.endsWith("UPDATE")) return null;
  let depth = 0;
  let start = -1;
  const rest = sql.slice(at[0]! + ref(table).length);
  for (let i = 0; i < rest.length; i++) {
    const ch = rest[i];
    if (ch === "(") depth++;
    else if (ch === ")") {
      depth--;
      if (depth < 0) return start < 0 ? null : rest.slice(start, i);
    } else if (depth === 0 && ch === " ") {
      const word = rest.slice(i, i + 12).toUpperCase();
      if (start < 0) {
        if (word.startsWith(" WHERE ")) start = i + 7;
      } else if (/^ (?:ORDER BY|GROUP BY|LIMIT|OFFSET|HAVING|FOR|RETURNING) /.test(word)) {
        return rest.slice(start, i);
      }
    }
  }
  return start < 0 ? null : rest.slice(start);
}

/** The parts of a condition joined by AND at its top level (null when an OR joins them there). */
function conjuncts(where: string): string[] | null {
  let w = where.trim();
  // Strip parentheses that enclose the whole condition.
  while (w.startsWith("(") && closing(w, 0) === w.length - 1) w = w.slice(1, -1).trim();
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < w.length; i++) {
    const ch = w[i];
    if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (depth === 0 && ch === " ") {
      const word = w.slice(i, i + 5).toUpperCase();
      if (word === " AND ") {
        parts.push(w.slice(from, i).trim());
        from = i + 5;
      } else if (word.startsWith(" OR ")) return null;
    }
  }
  parts.push(w.slice(from).trim());
  return parts;
}

function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return i;
  }
  return -1;
}

/** A top-level key conjunct of a statement: `column` equals one of the parameters `params` (1-based). */
export interface KeyConjunct {
  column: string;
  params: number[];
}

/**
 * The top-level conjuncts `"public"."T"."col" = $n` or `… IN ($n,…)` on a key column of `table`
 * in `sql`, in the order they appear; null when the statement is not of a shape read here. They
 * depend on the text alone (the parameters decide which one restricts: see `pickRestriction`).
 */
export function keyConjuncts(sql: string, table: string): KeyConjunct[] | null {
  const keys = KEY_COLUMNS.get(table);
  if (!keys?.length) return null;
  const where = whereOf(sql, table);
  if (where === null) return null;
  const parts = conjuncts(where);
  if (!parts) return null;
  const prefix = `${ref(table)}."`;
  const found: KeyConjunct[] = [];
  for (const part of parts) {
    if (!part.startsWith(prefix)) continue;
    const m = /^"(\w+)" (?:= \$(\d+)|IN \((\$\d+(?:,\s*\$\d+)*)\))$/.exec(part.slice(prefix.length - 1));
    if (!m || !keys.includes(m[1]!)) continue;
    found.push({ column: m[1]!, params: (m[2] ? [m[2]] : m[3]!.split(",").map((p) => p.trim().slice(1))).map(Number) });
  }
  return found;
}

/** The restriction the conjuncts make with these parameters: those whose values are all strings; `id` preferred, else the last. */
export function pickRestriction(conjuncts: readonly KeyConjunct[] | null, args: readonly unknown[]): Restriction | null {
  let found: Restriction | null = null;
  for (const c of conjuncts ?? []) {
    const values = c.params.map((n) => args[n - 1]);
    if (!values.every((v): v is string => typeof v === "string")) continue;
    found = { column: c.column, values };
    if (found.column === "id") break;
  }
  return found;
}

/**
 * The key restriction of the rows of `table` that `sql` reads (or writes), from a top-level
 * conjunct `"public"."T"."col" = $n` or `… IN ($n,…)` whose values are strings; `id` preferred.
 */
export function restrictionOf(sql: string, table: string, args: readonly unknown[]): Restriction | null {
  return pickRestriction(keyConjuncts(sql, table), args);
}

/** The columns an UPDATE's SET assigns. */
function assigned(sql: string): string[] {
  const set = sql.search(/\sSET\s/i);
  const where = sql.search(/\s(?:WHERE|RETURNING)\s/i);
  const clause = sql.slice(set, where > set ? where : undefined);
  return [...clause.matchAll(/"(\w+)"\s*=/g)].map((m) => m[1]!);
}

/** The key values of the rows a RETURNING answered, or null when it lacks a key column. */
function returnedRows(table: string, result: unknown): RowChange | null {
  const keys = KEY_COLUMNS.get(table)!;
  const set = result as ResultSet | undefined;
  if (!set || !Array.isArray(set.columnNames) || !Array.isArray(set.rows)) return null;
  const index = keys.map((k) => set.columnNames!.indexOf(k));
  if (index.some((i) => i < 0)) return null;
  const change = { values: new Map<string, Set<string>>(), unknown: new Set<string>() };
  for (const row of set.rows) {
    keys.forEach((k, j) => {
      const v = row[index[j]!];
      if (v === null || v === undefined) return;
      if (typeof v !== "string") change.unknown.add(k);
      else addValue(change.values, k, v);
    });
  }
  return change;
}

/**
 * The key values of the rows an INSERT … VALUES (…) names in its parameters, or null. Also an
 * INSERT … SELECT of values FROM a part of the same statement (`SELECT $1, $2 FROM "head"`):
 * every row it stores has those values, however many rows that part answered.
 */
function insertedRows(sql: string, table: string, args: readonly unknown[]): RowChange | null {
  const keys = KEY_COLUMNS.get(table)!;
  const m = /^\s*INSERT\s+INTO\s+"public"\."\w+"\s*\(([^)]*)\)\s*/i.exec(sql);
  if (!m) return null;
  const columns = [...m[1]!.matchAll(/"(\w+)"/g)].map((c) => c[1]!);
  const change = { values: new Map<string, Set<string>>(), unknown: new Set(keys.filter((k) => !columns.includes(k))) };
  /** Notes one row's items (in column order); false when they are not one per column. */
  const note = (items: string[]): boolean => {
    if (items.length !== columns.length) return false;
    items.forEach((item, i) => {
      const k = columns[i]!;
      if (!keys.includes(k)) return;
      const params = [...item.matchAll(/\$(\d+)/g)];
      const v = params.length === 1 ? args[Number(params[0]![1]) - 1] : undefined;
      if (v === null && params.length === 1) return;
      if (typeof v !== "string") change.unknown.add(k);
      else addValue(change.values, k, v);
    });
    return true;
  };
  let rest = sql.slice(m[0].length);
  const selected = /^SELECT\s([\s\S]*)\sFROM\s+"\w+"\s*$/i.exec(rest);
  if (selected) return !/\b(?:SELECT|FROM)\b/i.test(selected[1]!) && note(splitTop(selected[1]!)) ? change : null;
  const values = /^VALUES\s*/i.exec(rest);
  if (!values) return null;
  rest = rest.slice(values[0].length);
  for (;;) {
    if (!rest.startsWith("(")) return null;
    const end = closing(rest, 0);
    if (end < 0) return null;
    if (!note(splitTop(rest.slice(1, end)))) return null;
    rest = rest.slice(end + 1).trimStart();
    if (rest.startsWith(",")) rest = rest.slice(1).trimStart();
    else break;
  }
  // Nothing but a RETURNING may follow.
  return rest === "" || /^RETURNING\s/i.test(rest) ? change : null;
}

function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth--;
    else if (text[i] === "," && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

function addValue(values: Map<string, Set<string>>, column: string, value: string) {
  let set = values.get(column);
  if (!set) values.set(column, (set = new Set()));
  set.add(value);
}

/** What an INSERT, UPDATE or DELETE of `table` changed in it (not counting triggers and cascades). */
export function rowChangeOf(sql: string, table: string, args: readonly unknown[] | undefined, result: unknown): RowChange {
  const keys = KEY_COLUMNS.get(table);
  if (!keys || !args || AWKWARD.test(sql) || !qualifiedOnly(sql, table) || tableMentions(sql, table).length !== 1) return "table";
  const verb = sql.trimStart().slice(0, 6).toUpperCase();
  if (verb === "INSERT") return returnedRows(table, result) ?? insertedRows(sql, table, args) ?? "table";
  const set = verb === "UPDATE" ? assigned(sql).filter((c) => keys.includes(c)) : [];
  if (set.includes("id")) return "table";
  // An UPDATE … FROM reads other rows to decide: not read here.
  if (verb === "UPDATE" && /\sFROM\s/i.test(sql.slice(0, sql.search(/\s(?:WHERE|RETURNING)\s/i) >>> 0))) return "table";
  const returned = /\sRETURNING\s/i.test(sql) ? returnedRows(table, result) : null;
  if (returned && returned !== "table") {
    // The new values are known; the old ones of the columns it assigned are not.
    for (const c of set) returned.unknown.add(c);
    return returned;
  }
  const restriction = restrictionOf(sql, table, args);
  if (!restriction) return "table";
  const values = new Map([[restriction.column, new Set(restriction.values)]]);
  const unknown = new Set(keys.filter((k) => k !== restriction.column || set.includes(k)));
  return { values, unknown };
}

/** `change` merged into `into` (a table written by several statements). */
export function mergeChange(into: Map<string, RowChange>, table: string, change: RowChange): void {
  const before = into.get(table);
  if (before === "table") return;
  if (change === "table" || !before) {
    into.set(
      table,
      change === "table"
        ? "table"
        : { values: new Map([...change.values].map(([k, v]) => [k, new Set(v)])), unknown: new Set(change.unknown) },
    );
    return;
  }
  for (const [k, vs] of change.values) for (const v of vs) addValue(before.values, k, v);
  for (const k of change.unknown) before.unknown.add(k);
}

/** A change of the rows of `table` known by their ids only (a counter a trigger updated). */
export function rowsById(table: string, ids: Iterable<string>): RowChange {
  const keys = KEY_COLUMNS.get(table) ?? [];
  if (!keys.includes("id")) return "table";
  return { values: new Map([["id", new Set(ids)]]), unknown: new Set(keys.filter((k) => k !== "id")) };
}
