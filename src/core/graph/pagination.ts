import { badInput } from "../errors.js";
import { textProblem } from "../validate.js";
import { readOnce, type ModelReads } from "./loaders.js";
import { keptCount, keptPage } from "../cache/list-cache.js";

/** Query arguments of every documented list operation. */
export interface PageArgs {
  page?: string | null;
  limit?: number | null;
}

/** The documented list envelope: `{ next?: { page }, count, items }`. */
export interface ListPage<T> {
  items: T[];
  count: number;
  next: { page: string } | null;
}

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;

export function checkLimit(limit: number | null | undefined): number {
  if (limit === null || limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw badInput(`limit must be an integer between 1 and ${MAX_LIMIT} (got ${limit}).`);
  }
  return limit;
}

type Direction = "asc" | "desc";
/** Sort keys, the last of which must be unique (usually the id). */
export type OrderSpec = [field: string, direction: Direction][];

function encodeCursor(values: unknown[]): string {
  const plain = values.map((v) => (v instanceof Date ? { d: v.toISOString() } : v));
  return Buffer.from(JSON.stringify(plain)).toString("base64url");
}

const INVALID_CURSOR = "page is not a valid cursor: pass the `next.page` value of a previous response.";

/** A cursor's values as the server wrote them (encodeCursor): strings, numbers, booleans and dates. */
function decodeCursor(page: string, length: number): unknown[] {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(page, "base64url").toString("utf8"));
  } catch {
    throw badInput(INVALID_CURSOR);
  }
  if (!Array.isArray(values) || values.length !== length) throw badInput(INVALID_CURSOR);
  return values.map(cursorValue);
}

/** Years a cursor's date may name: those of the dates the server stores (PostgreSQL refuses some that JavaScript holds). */
const CURSOR_YEARS = [1, 9999] as const;

/**
 * One value of a cursor, checked: a client may send any JSON in its place, and a value of
 * another kind would reach the query as a filter of its own (`{ "not": … }`) or fail in it.
 */
function cursorValue(value: unknown): unknown {
  if (typeof value === "string" && textProblem(value) === null) return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "boolean") return value;
  if (value && typeof value === "object" && Object.keys(value).length === 1 && typeof (value as { d?: unknown }).d === "string") {
    const date = new Date((value as { d: string }).d);
    const year = date.getUTCFullYear();
    if (year >= CURSOR_YEARS[0] && year <= CURSOR_YEARS[1]) return date;
  }
  throw badInput(INVALID_CURSOR);
}

/** The JavaScript kind of each Prisma scalar type a list may be ordered by, and the values it takes. */
const CURSOR_KINDS: Record<string, (value: unknown) => boolean> = {
  String: (v) => typeof v === "string",
  DateTime: (v) => v instanceof Date,
  Int: (v) => Number.isInteger(v) && (v as number) >= -(2 ** 31) && (v as number) < 2 ** 31,
  Float: (v) => typeof v === "number",
  Boolean: (v) => typeof v === "boolean",
};

/** The cursor's values, each of the type of the field it stands for (when the model tells them). */
function typedCursor(values: unknown[], order: OrderSpec, fields: ModelReads<unknown>["fields"]): unknown[] {
  if (!fields) return values;
  const types = fields as Readonly<Record<string, { typeName?: string } | undefined>>;
  order.forEach(([field], i) => {
    const kind = CURSOR_KINDS[types[field]?.typeName ?? ""];
    if (!kind?.(values[i])) throw badInput(INVALID_CURSOR);
  });
  return values;
}

/**
 * Prisma `where` selecting rows strictly after the cursor in the given order: the rows past it on
 * the first sort key, or equal on the keys before one and past it on that one. The first key's
 * bound (`>=`, `<=` when descending) is stated on its own as well, although the alternatives
 * imply it: PostgreSQL cannot start an index scan from an OR, but can from that bound, so a page
 * deep in a long list reads from its cursor on in the list's index (prisma/schema.prisma), not
 * every row before it.
 */
function afterCursor(order: OrderSpec, values: unknown[]): object {
  const or: object[] = [];
  for (let i = 0; i < order.length; i++) {
    const clause: Record<string, unknown> = {};
    for (let j = 0; j < i; j++) clause[order[j]![0]] = values[j];
    const [field, dir] = order[i]!;
    clause[field] = { [dir === "asc" ? "gt" : "lt"]: values[i] };
    or.push(clause);
  }
  if (order.length === 1) return { OR: or };
  const [first, dir] = order[0]!;
  return { AND: [{ [first]: { [dir === "asc" ? "gte" : "lte"]: values[0] } }, { OR: or }] };
}

/**
 * Keyset pagination over a Prisma model (`from`: `ctx.prisma.space`): stable under inserts. One
 * query for the page (with `include` when given), then one for the count unless the page already
 * tells it: a first page that is not full holds every row. Identical pages and counts asked by
 * requests under way together are read once (core/graph/loaders.ts `readOnce`); on the embedded
 * database both are kept until a write changes what they read (core/cache/list-cache.ts).
 */
export async function paginate<T extends Record<string, any>>(opts: {
  args: PageArgs;
  where: object;
  order: OrderSpec;
  from: ModelReads<T>;
  include?: object;
}): Promise<ListPage<T>> {
  const limit = checkLimit(opts.args.limit);
  const where = opts.args.page
    ? {
        AND: [
          opts.where,
          afterCursor(opts.order, typedCursor(decodeCursor(opts.args.page, opts.order.length), opts.order, opts.from.fields)),
        ],
      }
    : opts.where;
  const query = {
    where,
    orderBy: opts.order.map(([f, d]) => ({ [f]: d })),
    take: limit + 1,
    ...(opts.include ? { include: opts.include } : {}),
  };
  // The page, and the count of the list, kept between the writes that change them (core/cache/list-cache.ts).
  const rows = await keptPage(opts.from, query, () => readOnce(opts.from, "findMany", query));
  // A first page that holds every row counts them; else the count of the list.
  const count =
    !opts.args.page && rows.length <= limit
      ? rows.length
      : await keptCount(opts.from, opts.where, () => readOnce(opts.from, "count", { where: opts.where }));
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const next = rows.length > limit && last ? { page: encodeCursor(opts.order.map(([f]) => last[f])) } : null;
  return { items, count, next };
}

/** The same envelope over items already in memory (computed lists), with an offset cursor. */
export function paginateArray<T>(all: T[], args: PageArgs): ListPage<T> {
  const limit = checkLimit(args.limit);
  const offset = args.page ? Number(decodeCursor(args.page, 1)[0]) : 0;
  if (!Number.isInteger(offset) || offset < 0) throw badInput("page is not a valid cursor.");
  const items = all.slice(offset, offset + limit);
  const next = offset + limit < all.length ? { page: encodeCursor([offset + limit]) } : null;
  return { items, count: all.length, next };
}
