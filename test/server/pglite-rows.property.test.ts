import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PGlite, type ParserOptions } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { MANY_ROWS, jsonRows, type QueryOptions } from "../../src/core/pglite-rows.js";

/**
 * Rows carried as one JSON value (src/core/pglite-rows.ts) are the rows of the statement run as it
 * is: random rows of every column type the schema uses (and a few more: int8, numeric, timestamptz,
 * date, bool[]; and bytea, bpchar, inet and an enum as it is, which are left plain), read by random SELECTs — orders both ways,
 * filters, limits, a parameter — through the carrying reader and through PGlite directly with the
 * Prisma adapter's own parsers: the same values (-0, NaN and infinities, nulls, arrays holding
 * quotes, braces and nulls, JSON, text with any character PostgreSQL stores), the same order, the
 * same fields. And a statement that returned many rows is in fact sent as JSON the next time.
 */
const RUNS = Number(process.env.PGLITE_ROWS_RUNS || 100);

let pg: PGlite;
let adapterOptions: QueryOptions;

beforeAll(async () => {
  pg = await PGlite.create();
  await pg.exec(`
    CREATE TYPE "Mood" AS ENUM ('calm', 'busy', 'share-link');
    CREATE TABLE "Row" (
      k integer PRIMARY KEY,
      txt text NOT NULL,
      maybe text,
      mood "Mood",
      at timestamp(3) NOT NULL,
      n integer,
      f double precision,
      b boolean,
      tags text[] NOT NULL DEFAULT '{}',
      doc jsonb,
      big bigint,
      dec numeric,
      tz timestamptz,
      day date,
      raw bytea,
      pad char(4)
    );
  `);
  // The options the Prisma adapter passes to every statement (its parsers: timestamps, int8 and
  // numeric as text, bytes as arrays, JSON as text), taken from the adapter itself.
  const capturing = {
    query: async (sql: string, params: unknown[], options: QueryOptions) => {
      adapterOptions = options;
      return pg.query(sql, params, options);
    },
  };
  const adapter = await new PrismaPGlite(capturing as unknown as PGlite).connect();
  await adapter.queryRaw({ sql: "SELECT 1", args: [], argTypes: [] } as never);
  expect(adapterOptions.rowMode).toBe("array");
}, 60_000);
afterAll(async () => {
  await pg?.close();
});

/** Text PostgreSQL stores: anything but NUL (lone surrogates are sent as U+FFFD by the driver, to both readers alike). */
const text = fc.string({ unit: fc.constantFrom("a", "Z", " ", '"', "'", ",", "{", "}", "\\", "\n", "\t", "\u2028", "é", "😀", "\u0001", "\uFFFF", "NULL", "null") , maxLength: 12 });
const json: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v).includes("\\u0000"));
const row = fc.record({
  txt: text,
  maybe: fc.option(text),
  mood: fc.option(fc.constantFrom("calm", "busy", "share-link")),
  at: fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }),
  n: fc.option(fc.integer()),
  f: fc.option(fc.double()),
  b: fc.option(fc.boolean()),
  tags: fc.array(fc.option(text), { maxLength: 4 }),
  doc: fc.option(json),
  big: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })),
  dec: fc.option(fc.tuple(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.nat(12)).map(([d, s]) => (s ? `${d}e-${s}` : `${d}`))),
  tz: fc.option(fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true })),
  day: fc.option(fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true })),
  raw: fc.option(fc.uint8Array({ maxLength: 8 })),
  pad: fc.option(fc.stringMatching(/^[a-z ]{0,4}$/)),
});

/** As a statement selects them (an enum as Prisma reads it, as text). */
const COLUMNS = ["k", "txt", "maybe", "mood::text", "at", "n", "f", "b", "tags", "doc", "big", "dec", "tz", "day", "'{t,f}'::bool[]"];
/** Columns whose type is not carried (an enum as it is), in one statement of five. */
const LEFT = ["mood", "raw", "pad", "'10.0.0.1/32'::inet"];

type Generated = typeof row extends fc.Arbitrary<infer R> ? R : never;

async function insert(rows: Generated[]) {
  await pg.exec(`DELETE FROM "Row"`);
  for (const [k, r] of rows.entries()) {
    await pg.query(
      `INSERT INTO "Row" VALUES ($1, $2, $3, $4::"Mood", $5, $6, $7, $8, $9, $10::jsonb, $11, $12::numeric, $13, $14, $15, $16)`,
      [k, r.txt, r.maybe, r.mood, r.at.toISOString().replace("Z", ""), r.n, r.f, r.b, r.tags, r.doc === null ? null : JSON.stringify(r.doc), r.big?.toString() ?? null, r.dec, r.tz?.toISOString() ?? null, r.day?.toISOString().slice(0, 10) ?? null, r.raw, r.pad],
    );
  }
}

describe("rows carried as JSON", () => {
  it("are the rows of the statement as it is, for every column type, order and filter", async () => {
    const statement = fc.record({
      columns: fc.tuple(fc.shuffledSubarray(COLUMNS, { minLength: 1 }), fc.option(fc.constantFrom(...LEFT), { freq: 4 })).map(([c, left]) => (left ? [...c, left] : c)),
      order: fc.constantFrom("k ASC", "k DESC", "txt DESC, k", "at, k DESC", "f NULLS FIRST, k"),
      where: fc.constantFrom("", "WHERE k >= $1", "WHERE mood IS NOT NULL OR k > $1", "WHERE array_length(tags, 1) > 1 OR k <> $1"),
      limit: fc.option(fc.integer({ min: 0, max: 40 })),
    });
    await fc.assert(
      // As many runs with a few rows (read plain) as with many (carried from the second read).
      fc.asyncProperty(fc.oneof(fc.array(row, { maxLength: MANY_ROWS - 1 }), fc.array(row, { minLength: MANY_ROWS, maxLength: 30 })), statement, fc.integer({ min: 0, max: 10 }), async (rows, s, param) => {
        await insert(rows);
        const sql = `SELECT ${s.columns.map((c) => (c.startsWith("'") ? c : `"Row".${c}`)).join(", ")} FROM "Row" ${s.where} ORDER BY ${s.order}${s.limit === null ? "" : ` LIMIT ${s.limit}`}`;
        const params = s.where ? [param] : [];
        const sent: string[] = [];
        const read = jsonRows(() => pg.parsers)((text, values, options) => {
          sent.push(text);
          return pg.query(text, values, options);
        });
        const plain = (await pg.query(sql, params, adapterOptions)) as { rows: unknown[][]; fields: unknown[] };
        // The first run learns the statement's columns; the next are carried when it returned many rows.
        for (let run = 0; run < 3; run++) {
          const got = (await read(sql, params, adapterOptions)) as { rows: unknown[][]; fields: unknown[] };
          expect(got.rows).toStrictEqual(plain.rows);
          expect(got.fields).toStrictEqual(plain.fields);
        }
        const left = s.columns.some((c) => LEFT.includes(c));
        const carried = sent.filter((t) => t.startsWith("SELECT json_agg")).length;
        expect(carried).toBe(!left && plain.rows.length >= MANY_ROWS ? 2 : 0);
      }),
      { numRuns: RUNS },
    );
  }, 300_000);

  it("leaves alone what it cannot carry: object rows, locking reads, several statements", async () => {
    await insert(fc.sample(row, 6));
    const sent: string[] = [];
    const read = jsonRows(() => pg.parsers)((text, values, options) => {
      sent.push(text);
      return pg.query(text, values, options);
    });
    for (let run = 0; run < 2; run++) {
      await read(`SELECT k FROM "Row" ORDER BY k`, [], { parsers: adapterOptions.parsers as ParserOptions });
      await pg.transaction(async (tx) => {
        const locked = jsonRows(() => pg.parsers)((t, v, o) => {
          sent.push(t);
          return tx.query(t, v, o);
        });
        await locked(`SELECT k FROM "Row" ORDER BY k FOR UPDATE`, [], adapterOptions);
      });
      await read(`WITH r AS (SELECT k FROM "Row") SELECT k FROM r`, [], adapterOptions);
    }
    expect(sent.some((t) => t.startsWith("SELECT json_agg"))).toBe(false);
    // The same reads in array form are carried from their second run.
    await read(`SELECT k FROM "Row" ORDER BY k`, [], adapterOptions);
    await read(`SELECT k FROM "Row" ORDER BY k`, [], adapterOptions);
    expect(sent.filter((t) => t.startsWith("SELECT json_agg"))).toHaveLength(1);
  });

  it("reads a large result plain, and goes back to plain when a carried one grows large or cannot be read", async () => {
    await pg.exec(`DELETE FROM "Row"`);
    const at = "2026-01-01 00:00:00";
    for (let k = 0; k < 5; k++) await pg.query(`INSERT INTO "Row" (k, txt, at) VALUES ($1, $2, $3)`, [k, "x".repeat(300), at]);
    const sent: string[] = [];
    let corrupt = false;
    const read = jsonRows(() => pg.parsers, { large: 1000 })(async (text, values, options) => {
      sent.push(text);
      const result = (await pg.query(text, values, options)) as { rows: unknown[][] };
      if (corrupt && text.startsWith("SELECT json_agg")) return { ...result, rows: [["[[not json"]] };
      return result;
    });
    const carried = () => sent.filter((t) => t.startsWith("SELECT json_agg")).length;
    const expectSame = async (sql: string) => {
      const plain = (await pg.query(sql, [], adapterOptions)) as { rows: unknown[][] };
      expect(((await read(sql, [], adapterOptions)) as { rows: unknown[][] }).rows).toStrictEqual(plain.rows);
    };
    // 1,500 characters of text: never carried.
    for (let run = 0; run < 3; run++) await expectSame(`SELECT k, txt FROM "Row" ORDER BY k`);
    expect(carried()).toBe(0);
    // Small, then carried; grown past the bound while carried: plain again.
    await pg.exec(`UPDATE "Row" SET txt = 'small'`);
    await expectSame(`SELECT k, txt FROM "Row" WHERE k >= 0 ORDER BY k`);
    await expectSame(`SELECT k, txt FROM "Row" WHERE k >= 0 ORDER BY k`);
    expect(carried()).toBe(1);
    await pg.exec(`UPDATE "Row" SET txt = repeat('y', 5000)`);
    await expectSame(`SELECT k, txt FROM "Row" WHERE k >= 0 ORDER BY k`);
    expect(carried()).toBe(2);
    await expectSame(`SELECT k, txt FROM "Row" WHERE k >= 0 ORDER BY k`);
    expect(carried()).toBe(2);
    // A carried result that cannot be read is read plain, and its statement is not carried again.
    await expectSame(`SELECT k, left(txt, 20) FROM "Row" ORDER BY k`);
    corrupt = true;
    await expectSame(`SELECT k, left(txt, 20) FROM "Row" ORDER BY k`);
    expect(carried()).toBe(3);
    corrupt = false;
    await expectSame(`SELECT k, left(txt, 20) FROM "Row" ORDER BY k`);
    expect(carried()).toBe(3);
  });
});
