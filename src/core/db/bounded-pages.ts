/**
 * Bounds what a page of a to-many relation read under several parents costs.
 *
 * Prisma reads such a page (a nested `include` with `take`: `spaces → changeRequests(first: 10)`)
 * with one statement for all the parents, which has no LIMIT: it reads every child of every parent
 * and keeps each parent's first `skip + take` in memory (its plan's `process` step, grouped by the
 * relation's linking fields). A space with 5,000 change requests cost 5,000 rows for a page of 10.
 *
 * Each such statement of a plan is rewritten to number the rows of each parent in the page's order
 * (`ROW_NUMBER() OVER (PARTITION BY <linking columns> ORDER BY <the page's order>)`) and return only
 * the first `skip + take` of each, in the statement's own order. The rows the in-memory step then
 * keeps are the same: per parent, the first `skip + take` rows in the same order are all there.
 *
 * Only a statement of the exact form Prisma writes for it is rewritten — `SELECT <columns of the
 * table> FROM <table> … ORDER BY <columns of the table> OFFSET $n`, ordered by columns it selects
 * without a cast — and only for a page without a cursor (its start is found in memory) or a
 * `distinct` (applied before the page). Any other plan is left as Prisma wrote it.
 */

const ALIAS = "prisma_page";
const ROW_NUMBER = "prisma_page_row";

interface Fragment {
  type: string;
  chunk?: string;
}

/** Rewrites, in place, every statement of `plan` that reads a nested page unbounded; returns `plan`. */
export function boundNestedPages<T>(plan: T): T {
  walk(plan, 0);
  return plan;
}

function walk(node: unknown, depth: number): void {
  if (!node || typeof node !== "object" || depth > 200) return;
  if (Array.isArray(node)) {
    for (const item of node) walk(item, depth + 1);
    return;
  }
  const record = node as Record<string, unknown>;
  // Values hold no plan nodes, only data — a statement's parameters, a constant, a field's new
  // value — which may be a client's JSON document: never walked (its look-alike of a plan node is
  // not one), nor paid for (a document written can be large).
  if (typeof record.type === "string" && DATA_NODES.has(record.type)) return;
  if (record.type === "process") {
    const args = record.args as { expr?: unknown; operations?: unknown } | undefined;
    if (args) bound(args.expr, args.operations);
    walk(args?.expr, depth + 1);
    return;
  }
  for (const [key, value] of Object.entries(record)) if (key !== "value" && value && typeof value === "object") walk(value, depth + 1);
}

/** Plan nodes whose contents are data (Prisma's `value`, statements, generator calls). */
const DATA_NODES = new Set(["value", "templateSql", "rawSql", "generatorCall"]);

const TABLE = String.raw`"[^"]+"\."[^"]+"`;
const HEAD = new RegExp(String.raw`^SELECT (.+?) FROM (${TABLE})((?: [\s\S]*)?)$`);
const TAIL = /^([\s\S]*) ORDER BY ([^()]+) OFFSET $/;
const COLUMN = new RegExp(String.raw`^(${TABLE})\."([^"]+)"(::[a-z_]+(?:\[\])?)?$`);
const ORDER_TERM = new RegExp(String.raw`^(${TABLE})\."([^"]+)" (ASC|DESC)( NULLS (?:FIRST|LAST))?$`);

function bound(expr: unknown, operations: unknown): boolean {
  const ops = operations as
    | { pagination?: { cursor: unknown; take: unknown; skip: unknown } | null; distinct?: unknown; linkingFields?: unknown }
    | undefined;
  const page = ops?.pagination;
  if (!page || page.cursor !== null || (ops.distinct !== null && ops.distinct !== undefined)) return false;
  const take = page.take;
  const skip = page.skip ?? 0;
  if (typeof take !== "number" || !Number.isSafeInteger(take) || take <= 0) return false;
  if (typeof skip !== "number" || !Number.isSafeInteger(skip) || skip < 0) return false;
  const linking = ops.linkingFields;
  if (!Array.isArray(linking) || linking.length === 0 || !linking.every((f) => typeof f === "string")) return false;

  const query = expr as { type?: string; args?: { type?: string; fragments?: Fragment[] } } | undefined;
  if (query?.type !== "query" || query.args?.type !== "templateSql") return false;
  const fragments = query.args.fragments;
  if (!Array.isArray(fragments) || fragments.length < 3) return false;
  const first = fragments[0]!;
  const last = fragments[fragments.length - 2]!;
  if (first.type !== "stringChunk" || last.type !== "stringChunk" || fragments[fragments.length - 1]!.type !== "parameter") return false;

  const head = HEAD.exec(first.chunk ?? "");
  const tail = TAIL.exec(last.chunk ?? "");
  if (!head || !tail) return false;
  const [, selectList, table, rest] = head as unknown as [string, string, string, string];
  const [, beforeOrder, order] = tail as unknown as [string, string, string];

  // The columns selected: each a column of the table, some cast (enums are read as text).
  const columns = new Map<string, { cast: boolean }>();
  for (const item of selectList.split(", ")) {
    const column = COLUMN.exec(item);
    if (!column || column[1] !== table || columns.has(column[2]!)) return false;
    columns.set(column[2]!, { cast: !!column[3] });
  }
  if (!linking.every((field) => columns.has(field as string))) return false;
  // The order: columns of the table that are selected as they are (a cast would order the text instead).
  const terms: { column: string; rest: string }[] = [];
  for (const term of order.split(", ")) {
    const parsed = ORDER_TERM.exec(term);
    if (!parsed || parsed[1] !== table || columns.get(parsed[2]!)?.cast !== false) return false;
    terms.push({ column: parsed[2]!, rest: ` ${parsed[3]}${parsed[4] ?? ""}` });
  }

  const partition = (linking as string[]).map((field) => `${table}."${field}"`).join(", ");
  const outer = [...columns.keys()].map((name) => `"${ALIAS}"."${name}"`).join(", ");
  const outerOrder = terms.map((t) => `"${ALIAS}"."${t.column}"${t.rest}`).join(", ");
  first.chunk = `SELECT ${outer} FROM (SELECT ${selectList}, ROW_NUMBER() OVER (PARTITION BY ${partition} ORDER BY ${order}) AS "${ROW_NUMBER}" FROM ${table}${rest}`;
  last.chunk = `${beforeOrder}) AS "${ALIAS}" WHERE "${ALIAS}"."${ROW_NUMBER}" <= ${skip + take} ORDER BY ${outerOrder} OFFSET `;
  return true;
}
