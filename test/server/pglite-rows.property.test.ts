import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PGlite, type ParserOptions } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { MANY_ROWS, jsonRows, type QueryOptions } from "../../src/core/db/pglite-rows.js";
import { preparedStatements } from "../../src/core/db/pglite-prepared.js";

/**
 * Rows carried as one JSON value (src/core/pglite-rows.ts) are the rows of the statement run as it
 * is: random rows of every column type the schema uses (and a few more: int8, numeric, timestamptz,
 * date, bool[]; and bytea, bpchar, inet and an enum as it is, which are left plain), read by random SELECTs — orders both ways,
 * filters, limits, a parameter — through the carrying reader and through PGlite directly with the
 * Prisma adapter's own parsers: the same values (-0, NaN and infinities, nulls, arrays holding
 * quotes, braces and nulls, JSON, text with any character PostgreSQL stores), the same order, the
 * same fields. And a statement that returned many rows is in fact sent as JSON the next time.
 *
 * Reads through prepared statements (src/core/pglite-prepared.ts), alone and under the carrying
 * reader as the gateway chains them, are the rows of `query` too: random rows, random SELECTs with
 * parameters of several types (text with any character, integers, timestamps, booleans, arrays),
 * run three times (the second and third prepared); a statement whose result type a migration
 * changed, one PostgreSQL refuses, a parameter it refuses, and more statements than are kept.
 * Writes through them (UPDATE, DELETE, INSERT … ON CONFLICT, data-modifying WITH, with and
 * without RETURNING, one that breaks a key) answer what `query` answers (rows, fields, the count
 * of rows changed, or the same error) and leave the same rows.
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
const text = fc.string({
  unit: fc.constantFrom("a", "Z", " ", '"', "'", ",", "{", "}", "\\", "\n", "\t", "\u2028", "é", "😀", "\u0001", "\uFFFF", "NULL", "null"),
  maxLength: 12,
});
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
      [
        k,
        r.txt,
        r.maybe,
        r.mood,
        r.at.toISOString().replace("Z", ""),
        r.n,
        r.f,
        r.b,
        r.tags,
        r.doc === null ? null : JSON.stringify(r.doc),
        r.big?.toString() ?? null,
        r.dec,
        r.tz?.toISOString() ?? null,
        r.day?.toISOString().slice(0, 10) ?? null,
        r.raw,
        r.pad,
      ],
    );
  }
}

describe("rows carried as JSON", () => {
  it("are the rows of the statement as it is, for every column type, order and filter", async () => {
    const statement = fc.record({
      columns: fc
        .tuple(fc.shuffledSubarray(COLUMNS, { minLength: 1 }), fc.option(fc.constantFrom(...LEFT), { freq: 4 }))
        .map(([c, left]) => (left ? [...c, left] : c)),
      order: fc.constantFrom("k ASC", "k DESC", "txt DESC, k", "at, k DESC", "f NULLS FIRST, k"),
      where: fc.constantFrom("", "WHERE k >= $1", "WHERE mood IS NOT NULL OR k > $1", "WHERE array_length(tags, 1) > 1 OR k <> $1"),
      limit: fc.option(fc.integer({ min: 0, max: 40 })),
    });
    await fc.assert(
      // As many runs with a few rows (read plain) as with many (carried from the second read).
      fc.asyncProperty(
        fc.oneof(fc.array(row, { maxLength: MANY_ROWS - 1 }), fc.array(row, { minLength: MANY_ROWS, maxLength: 30 })),
        statement,
        fc.integer({ min: 0, max: 10 }),
        async (rows, s, param) => {
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
        },
      ),
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

describe("statements through prepared statements", () => {
  // As the gateway reads: the adapter's parsers made PGlite's own (core/db/db.ts adoptingParsers), statements in array form.
  const arrays: QueryOptions = { rowMode: "array" };
  beforeAll(() => {
    pg.parsers = { ...pg.parsers, ...(adapterOptions.parsers as typeof pg.parsers) };
  });
  const PARAM_WHERE = [
    ["WHERE k >= $1", (v: Params) => [v.k]],
    ["WHERE txt <> $1 OR k = $2", (v: Params) => [v.txt, v.k]],
    ["WHERE at > $1::timestamp OR maybe IS NULL", (v: Params) => [v.at.toISOString().replace("Z", "")]],
    ["WHERE b IS NOT DISTINCT FROM $1 OR k < $2", (v: Params) => [v.b, v.k]],
    ["WHERE NOT (tags && $1::text[]) AND k <> $2", (v: Params) => [v.tags, v.k]],
    ["WHERE (doc IS NULL) = $1", (v: Params) => [v.b ?? false]],
  ] as const;
  type Params = { k: number; txt: string; at: Date; b: boolean | null; tags: string[] };
  const params = fc.record({
    k: fc.integer({ min: -2, max: 12 }),
    txt: text,
    at: fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }),
    b: fc.option(fc.boolean()),
    tags: fc.array(text, { maxLength: 3 }),
  });

  it("are the rows of `query`, alone and carried as JSON, from their second run", async () => {
    const statement = fc.record({
      columns: fc.shuffledSubarray([...COLUMNS, ...LEFT], { minLength: 1 }),
      order: fc.constantFrom("k ASC", "k DESC", "txt DESC, k", "at, k DESC", "f NULLS FIRST, k"),
      where: fc.nat(PARAM_WHERE.length - 1),
      limit: fc.option(fc.integer({ min: 0, max: 40 })),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 20 }), statement, params, params, async (rows, s, first, second) => {
        await insert(rows);
        const [where, values] = PARAM_WHERE[s.where]!;
        const sql = `SELECT ${s.columns.map((c) => (c.startsWith("'") ? c : `"Row".${c}`)).join(", ")} FROM "Row" ${where} ORDER BY ${s.order}${s.limit === null ? "" : ` LIMIT ${s.limit}`}`;
        const prepared = preparedStatements(pg, (t, v, o) => pg.query(t, v, o));
        const chained = jsonRows(() => pg.parsers)(preparedStatements(pg, (t, v, o) => pg.query(t, v, o)).run);
        for (const read of [prepared.run, chained]) {
          for (const given of [first, second, first]) {
            const args = values(given) as unknown[];
            const plain = (await pg.query(sql, args, adapterOptions)) as { rows: unknown[][]; fields: unknown[] };
            const got = (await read(sql, args, arrays)) as { rows: unknown[][]; fields: unknown[] };
            expect(got.rows).toStrictEqual(plain.rows);
            expect(got.fields).toStrictEqual(plain.fields);
          }
        }
        expect(prepared.stats).toMatchObject({ prepared: 1, runs: 2 });
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  }, 300_000);

  it("a changed result type, a refused statement or parameter, more statements than kept: the same answers as `query`", async () => {
    await insert(fc.sample(row, 5));
    const kept = async () =>
      (await pg.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'stmt_%'`)).rows[0]!.n;
    const keptBefore = await kept();
    await pg.exec(`CREATE TABLE "Shifting" (k integer PRIMARY KEY, v integer); INSERT INTO "Shifting" VALUES (1, 10), (2, 20);`);
    const prepared = preparedStatements(pg, (t, v, o) => pg.query(t, v, o), { max: 3 });
    const same = async (sql: string, args: unknown[] = []) => {
      const plain = await pg.query(sql, args, adapterOptions).then(
        (r) => ({ ok: r }),
        (e: { code?: string; message?: string }) => ({ error: [e.code, e.message] }),
      );
      const got = await prepared.run(sql, args, arrays).then(
        (r) => ({ ok: r }),
        (e: { code?: string; message?: string }) => ({ error: [e.code, e.message] }),
      );
      expect(got).toStrictEqual(plain);
    };
    for (let run = 0; run < 3; run++) await same(`SELECT * FROM "Shifting" WHERE k >= $1 ORDER BY k`, [1]);
    // A migration changes the column's type: the prepared statement is stale, the read is right.
    await pg.exec(`ALTER TABLE "Shifting" ALTER COLUMN v TYPE text`);
    for (let run = 0; run < 3; run++) await same(`SELECT * FROM "Shifting" WHERE k >= $1 ORDER BY k`, [1]);
    await pg.exec(`DROP TABLE "Shifting"`);
    // Gone: the error of `query`, word for word; a statement PostgreSQL refuses; a parameter it refuses (NUL in text).
    for (let run = 0; run < 3; run++) {
      await same(`SELECT * FROM "Shifting" WHERE k >= $1 ORDER BY k`, [1]);
      await same(`SELECT nope FROM "Row"`);
      await same(`SELECT k FROM "Row" WHERE txt = $1`, ["a\u0000b"]);
    }
    // Past `max` statements kept, the oldest are closed; every read stays right.
    for (let run = 0; run < 3; run++)
      for (let k = 0; k < 8; k++) await same(`SELECT k, txt FROM "Row" WHERE k >= $1 AND ${k} = ${k} ORDER BY k`, [run]);
    expect(prepared.stats.closed).toBeGreaterThan(0);
    expect((await kept()) - keptBefore).toBeLessThanOrEqual(4);
  });

  it("writes answer what `query` answers and leave the same rows, from their second run", async () => {
    const AT = "2026-05-01 12:00:00";
    const WRITES = [
      [`UPDATE "Row" SET txt = $1, n = coalesce(n, 0) + 1 WHERE k >= $2 RETURNING k, txt, n`, (v: Params) => [v.txt, v.k]],
      [`UPDATE "Row" SET tags = $1::text[], b = $2 WHERE k = $3`, (v: Params) => [v.tags, v.b, v.k]],
      [`DELETE FROM "Row" WHERE k < $1 RETURNING k, txt, doc`, (v: Params) => [v.k]],
      [
        `INSERT INTO "Row" (k, txt, at) VALUES ($1, $2, $3::timestamp) ON CONFLICT (k) DO UPDATE SET txt = EXCLUDED.txt RETURNING k, txt, at`,
        (v: Params) => [v.k, v.txt, AT],
      ],
      // Breaks the key when row k exists: the same error.
      [`INSERT INTO "Row" (k, txt, at) VALUES ($1, $2, $3::timestamp)`, (v: Params) => [v.k, v.txt, AT]],
      [`WITH moved AS (UPDATE "Row" SET b = $1 WHERE k <> $2 RETURNING k) SELECT count(*)::int AS n FROM moved`, (v: Params) => [v.b, v.k]],
      [
        `WITH gone AS (DELETE FROM "Row" WHERE k <= $1 RETURNING k, txt) INSERT INTO "Row" (k, txt, at) SELECT k + 1000, txt || $2, $3::timestamp FROM gone RETURNING k, txt`,
        (v: Params) => [v.k, v.txt, AT],
      ],
    ] as const;
    const rowsNow = async () => (await pg.query(`SELECT ${COLUMNS.join(", ")} FROM "Row" ORDER BY k`, [], adapterOptions)).rows;
    const outcome = (p: Promise<unknown>) =>
      p.then(
        (r) => {
          const { rows, fields, affectedRows } = r as { rows: unknown[]; fields: unknown[]; affectedRows?: number };
          // In no particular order: a write returns its rows as it met them, wherever the rows of each run were stored.
          const key = (row: unknown) => JSON.stringify(row, (_k, v) => (typeof v === "bigint" ? `${v}n` : v));
          return {
            rows: rows
              .map((row) => [key(row), row] as const)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([, row]) => row),
            fields,
            affectedRows,
          };
        },
        (e: { code?: string; message?: string }) => ({ error: [e.code, e.message] }),
      );
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 8 }), fc.nat(WRITES.length - 1), params, params, async (rows, w, first, second) => {
        const [sql, values] = WRITES[w]!;
        const prepared = preparedStatements(pg, (t, v, o) => pg.query(t, v, o));
        let answered = 0;
        for (const [run, given] of [first, second, first].entries()) {
          const args = values(given) as unknown[];
          await insert(rows);
          const plain = await outcome(pg.query(sql, args, adapterOptions));
          const plainRows = await rowsNow();
          await insert(rows);
          const got = await outcome(prepared.run(sql, args, arrays));
          expect(got).toStrictEqual(plain);
          expect(await rowsNow()).toStrictEqual(plainRows);
          if (run > 0 && !("error" in got)) answered++;
        }
        // The second and third runs went through the prepared statement (those that broke the key too).
        expect(prepared.stats).toMatchObject({ prepared: 1, runs: answered });
      }),
      { numRuns: RUNS },
    );
  }, 300_000);

  it("keeps the statements run most recently: one run often stays prepared among many run once", async () => {
    await insert(fc.sample(row, 3));
    const prepared = preparedStatements(pg, (t, v, o) => pg.query(t, v, o), { max: 3 });
    const hot = `SELECT k, txt FROM "Row" WHERE k >= $1 ORDER BY k`;
    for (let run = 0; run < 2; run++) await prepared.run(hot, [0], arrays);
    expect(prepared.stats).toMatchObject({ prepared: 1, runs: 1 });
    // Ten statements run once each (as Prisma's IN lists of every length), the hot one between them.
    for (let k = 0; k < 10; k++) {
      await prepared.run(
        `SELECT k FROM "Row" WHERE k IN (${Array.from({ length: k + 1 }, (_, i) => `$${i + 1}`).join(", ")})`,
        Array.from({ length: k + 1 }, (_, i) => i),
        arrays,
      );
      await prepared.run(hot, [0], arrays);
    }
    // Never closed nor prepared again: every run of it went through the statement prepared first.
    expect(prepared.stats).toMatchObject({ prepared: 1, runs: 11, closed: 0 });
  });

  it("waits for a transaction under way, as `query` does, and reads what it committed", async () => {
    await insert(fc.sample(row, 3));
    const prepared = preparedStatements(pg, (t, v, o) => pg.query(t, v, o));
    const sql = `SELECT count(*)::int AS n FROM "Row" WHERE k >= $1`;
    for (let run = 0; run < 2; run++) await prepared.run(sql, [0], arrays);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedRow = new Promise<void>((resolve) => (inserted = resolve));
    const tx = pg.transaction(async (t) => {
      await t.query(`INSERT INTO "Row" (k, txt, at) VALUES (100, 'late', now())`);
      inserted();
      await held;
    });
    await insertedRow;
    let answered = false;
    const read = (prepared.run(sql, [0], arrays) as Promise<{ rows: unknown[][] }>).finally(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const answeredWhileOpen = answered;
    release();
    await tx;
    expect(answeredWhileOpen).toBe(false);
    expect((await read).rows).toStrictEqual([[4]]);
    expect(prepared.stats.runs).toBe(2);
  });
});
