import { types, type ParserOptions, type RowMode } from "@electric-sql/pglite";

/**
 * Rows of a PGlite read carried as one JSON value when a statement returns many.
 *
 * PGlite decodes a result field by field in JavaScript, copying each field's bytes into a buffer
 * of its own before decoding them: most of the cost of a list of 50 spaces. Postgres itself builds
 * a JSON array of the same rows in far less, and V8 parses it in one call.
 *
 * So a SELECT that returned MANY_ROWS rows or more the last time it ran is sent as
 *
 *   SELECT json_agg(ARRAY[t.c0::text, t.c1::text, …])::text FROM (<the statement>) AS t(c0, c1, …)
 *
 * and each value is then parsed by the very parser PGlite applies to that column's type. A value
 * cast to text is the text its type's output function writes — the text PGlite would have
 * received — so the rows are those of the statement run as it is: same values, same order (an
 * aggregate over a subquery with nothing else in the outer query takes the rows in the
 * subquery's order), same nulls. The first run of a statement is always plain: it tells the
 * columns and their types, remembered per statement text. A result of more than LARGE characters
 * sends its statement back to plain (one value holds the whole result).
 *
 * Left as they are: statements other than a single SELECT (a `;`, a locking clause, a statement
 * starting with WITH), results holding a type whose cast to text is not its output (NOT_CARRIED)
 * or a type of the database's own, results without columns, and results in object form (only the
 * Prisma adapter's array form is carried this way).
 */

/** Rows from which a statement's next run is carried as JSON (below it, plain is as fast). */
export const MANY_ROWS = 4;
/**
 * Characters of text past which a result is read plain: one JSON value holds all of a result,
 * and a string holds at most 2^29 characters in V8 (a value of PostgreSQL at most 1 GB).
 */
const LARGE = 16 * 1024 * 1024;
/** Statement texts remembered; past it, the memory starts again. */
const REMEMBERED = 2_000;

interface Field {
  name: string;
  dataTypeID: number;
}
interface Results {
  rows: unknown[];
  fields: Field[];
  affectedRows?: number;
  rowCount?: number;
}
export type QueryOptions = { rowMode?: RowMode; parsers?: ParserOptions } & Record<string, unknown>;
export type Query = (sql: string, params?: unknown[], options?: QueryOptions) => Promise<unknown>;

interface Learned {
  fields: Field[];
  /** The statement that reads its rows as JSON, or null when its result cannot be carried so. */
  wrapped: string | null;
  /** Whether its next run is carried: its last returned MANY_ROWS rows or more, of LARGE characters at most. */
  carry: boolean;
}

const SINGLE_SELECT = /^\s*SELECT\b[^;]*$/i;
const LOCKING = /\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE|KEY\s+SHARE)\b/i;
/** A single SELECT without a locking clause: a statement that only reads (and that a JSON value or a prepared statement may carry). */
export const plainRead = (sql: string) => SINGLE_SELECT.test(sql) && !LOCKING.test(sql);
/**
 * Types whose cast to text is not their output function (PostgreSQL's pg_cast: "char", name, cidr,
 * inet, bpchar — which drops trailing spaces) or which are large and read one at a time (bytea).
 * A boolean's cast says 'true' where its output says 't': `wrap` writes that text out.
 */
const NOT_CARRIED = new Set([17, 1001, 18, 19, 650, 869, 1042, 1014]);
const BOOLEAN = 16;
/** The first type of a database's own (enums, domains): not carried (a domain's cast is its base type's). Prisma reads enums as text. */
const FIRST_USER_TYPE = 16384;

/**
 * Statement memory shared by a database's connections (its transactions included). `parsers`
 * returns the parsers PGlite applies to every statement (its own table, which the Prisma
 * adapter's parsers join: core/db/db.ts `adoptingParsers`).
 */
export function jsonRows(parsers: () => ParserOptions, { large = LARGE }: { large?: number } = {}) {
  const learned = new Map<string, Learned>();

  /** Runs `sql` as it is, and learns from its result whether to carry its next run. */
  const plain = async (query: Query, sql: string, params: unknown[] | undefined, options: QueryOptions) => {
    const result = (await query(sql, params, options)) as Results;
    if (!Array.isArray(result?.fields) || !Array.isArray(result.rows)) return result;
    let entry = learned.get(sql);
    if (!entry) {
      if (learned.size >= REMEMBERED) learned.clear();
      entry = { fields: result.fields, wrapped: wrap(sql, result.fields), carry: false };
      learned.set(sql, entry);
    }
    entry.carry = entry.wrapped !== null && result.rows.length >= MANY_ROWS && textLength(result.rows, large) <= large;
    return result;
  };

  /** `query` as it is, but for a SELECT known to return many rows in array form. */
  return (query: Query): Query =>
    async (sql, params, options) => {
      if (options?.rowMode !== "array" || !plainRead(sql)) return query(sql, params, options);
      const known = learned.get(sql);
      if (!known?.carry) return plain(query, sql, params, options);
      const {
        rows: [[json]],
      } = (await query(known.wrapped!, params, options)) as { rows: [[string | null]] };
      let rows: unknown[][];
      try {
        const table = options.parsers ? { ...parsers(), ...options.parsers } : parsers();
        const fields = known.fields;
        const values = (json === null ? [] : JSON.parse(json)) as (string | null)[][];
        rows = values.map((row) => row.map((value, i) => (value === null ? null : types.parseType(value, fields[i]!.dataTypeID, table))));
      } catch {
        // Past what one string holds (the statement itself ran: its transaction goes on).
        known.carry = false;
        known.wrapped = null;
        return plain(query, sql, params, options);
      }
      known.carry = rows.length >= MANY_ROWS && (json?.length ?? 0) <= large;
      return { rows, fields: known.fields, affectedRows: 0, rowCount: rows.length, command: "SELECT" };
    };
}

/** The characters of a result's text values (its strings, and strings in arrays), counted up to past `large`. */
function textLength(rows: unknown[], large: number): number {
  let length = 0;
  for (const row of rows as unknown[][]) {
    for (const value of row) {
      if (typeof value === "string") length += value.length;
      else if (Array.isArray(value)) for (const item of value) if (typeof item === "string") length += item.length;
    }
    if (length > large) break;
  }
  return length;
}

function wrap(sql: string, fields: Field[]): string | null {
  if (fields.length === 0 || fields.some((f) => NOT_CARRIED.has(f.dataTypeID) || f.dataTypeID >= FIRST_USER_TYPE)) return null;
  const names = fields.map((_, i) => `c${i}`);
  const texts = fields.map((f, i) =>
    f.dataTypeID === BOOLEAN ? `CASE t.c${i} WHEN true THEN 't' WHEN false THEN 'f' END` : `t.c${i}::text`,
  );
  return `SELECT json_agg(ARRAY[${texts.join(", ")}])::text FROM (${sql}) AS t(${names.join(", ")})`;
}
