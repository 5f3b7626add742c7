import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryCompiler } from "@prisma/client/runtime/query_compiler_bg.postgresql.mjs";
import { openDatabase, type Database } from "../../src/core/db/db.js";
import { cachedCompile, compilerOwn, shapeOf } from "../../src/core/db/query-plan-cache.js";
import { freshPostgres } from "../helpers/postgres.js";
import { testTmpDir } from "../helpers/tmp.js";

/**
 * Plans kept by shape (src/core/db/query-plan-cache.ts) are exactly the plans the compiler makes: random
 * values (any text: empty, long, prototype names, NUL, lone surrogates, LIKE's wildcards, the
 * stand-ins' own marker) go through the project's kinds of queries — by id, by compound key,
 * lists with filters, orders, cursors, `contains`, enum and date filters, counts, relation counts,
 * batched finds, writes — and every query the client compiles is compiled again, by one plan cache
 * kept for the whole run (so later runs are answered from what earlier ones taught it) and by the
 * compiler alone: both plans must be equal, or both fail alike. Same SQL, same parameters, same rows.
 */
const RUNS = Number(process.env.PLAN_PROPERTY_RUNS || 60);

let db: Database;
let drop: (() => Promise<void>) | undefined;
const compiled: { compiler: object; batch: boolean; query: string }[] = [];
const proto = QueryCompiler.prototype as unknown as Record<"compile" | "compileBatch", (this: object, query: string) => unknown>;

beforeAll(async () => {
  let databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const fresh = await freshPostgres(process.env.DATABASE_URL, "plans");
    databaseUrl = fresh.url;
    drop = fresh.drop;
  }
  const dataDir = fs.mkdtempSync(path.join(testTmpDir(), "plans-"));
  db = await openDatabase({ dataDir, databaseUrl, queryPlanCache: false });
  proto.compile = function (query) {
    compiled.push({ compiler: this, batch: false, query });
    return compilerOwn.compile.call(this, query);
  };
  proto.compileBatch = function (query) {
    compiled.push({ compiler: this, batch: true, query });
    return compilerOwn.compileBatch.call(this, query);
  };
}, 120_000);
afterAll(async () => {
  proto.compile = compilerOwn.compile;
  proto.compileBatch = compilerOwn.compileBatch;
  await db?.close();
  await drop?.();
});

const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    "__proto__",
    "constructor",
    "%",
    "_",
    "a%b_c\\",
    "\u0000",
    "\ud800",
    "\udc00x",
    "\u2063plan",
    "open",
    "asc",
    "x".repeat(3000),
  ),
);

/** The project's kinds of queries, with the generated values in them; failures are expected (ids that do not exist, NUL refused by the database). */
async function queries(p: Database["prisma"], [a, b, c]: string[], n: number, when: Date): Promise<void> {
  const attempts: Promise<unknown>[] = [
    p.space.findUnique({ where: { id: a } }),
    p.space.findMany({
      where: { organizationId: a, deletedAt: null, title: { contains: b } },
      take: n,
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { id: true, title: true, _count: { select: { changeRequests: true } } },
    }),
    p.space.findMany({ where: { id: { in: [a, b, c] } } }),
    p.space.findMany({ where: { title: { equals: c, mode: "insensitive" }, parentId: null }, cursor: { id: a }, skip: 1, take: n }),
    p.changeRequest.findMany({
      where: { spaceId: a, status: { in: ["open", "draft"] } },
      orderBy: { number: "desc" },
      take: 10,
      include: { createdBy: true },
    }),
    p.comment.count({ where: { spaceId: b, changeRequestId: null, parentId: null, status: "open" } }),
    p.member.findUnique({
      where: { organizationId_userId: { organizationId: a, userId: b } },
      select: { role: true, user: { select: { id: true, email: true } } },
    }),
    p.revision.findFirst({ where: { spaceId: c, createdAt: { lt: when } }, orderBy: { createdAt: "desc" } }),
    p.space.updateMany({ where: { id: a, organizationId: b }, data: { title: c, updatedAt: when } }),
    p.apiToken.findFirst({ where: { hash: a, revokedAt: null }, include: { user: true } }),
    p.organization.findMany({ where: { OR: [{ title: { startsWith: a } }, { id: b }] }, take: n }),
  ];
  // Finds in one tick are batched by the client (compileBatch).
  attempts.push(
    Promise.all([
      p.space.findUnique({ where: { id: a } }),
      p.space.findUnique({ where: { id: b } }),
      p.space.findUnique({ where: { id: c } }),
    ]),
  );
  await Promise.allSettled(attempts);
}

const outcome = (compile: (q: string) => unknown, query: string) => {
  try {
    return { plan: JSON.stringify(compile(query)) };
  } catch (err) {
    return { error: String((err as Error).message ?? err) };
  }
};

describe("query plans kept by shape", () => {
  it("are the compiler's own plans, for any values, once the cache has learnt their shapes", async () => {
    const caches = new Map<object, { one: ReturnType<typeof cachedCompile>; batch: ReturnType<typeof cachedCompile> }>();
    const cacheOf = (compiler: object) => {
      let c = caches.get(compiler);
      if (!c)
        caches.set(
          compiler,
          (c = {
            one: cachedCompile((q) => compilerOwn.compile.call(compiler, q)),
            batch: cachedCompile((q) => compilerOwn.compileBatch.call(compiler, q)),
          }),
        );
      return c;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(text, text, text),
        fc.integer({ min: 1, max: 60 }),
        fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }),
        async (values, n, when) => {
          compiled.length = 0;
          await queries(db.prisma, values, n, when);
          expect(compiled.length).toBeGreaterThanOrEqual(11);
          for (const { compiler, batch, query } of compiled) {
            const own = batch ? compilerOwn.compileBatch : compilerOwn.compile;
            const cache = batch ? cacheOf(compiler).batch : cacheOf(compiler).one;
            expect(outcome(cache, query), query.slice(0, 500)).toEqual(outcome((q) => own.call(compiler, q), query));
          }
        },
      ),
      { numRuns: RUNS },
    );
    // The cache answered many of them from plans it kept: a cache that kept nothing would pass the comparison.
    // (Each new page size is a new shape, and `contains` or an enum value in a shape's key a new plan.)
    const stats = [...caches.values()].flatMap((c) => [c.one.stats(), c.batch.stats()]);
    const hits = stats.reduce((s, x) => s + x.hits, 0);
    const misses = stats.reduce((s, x) => s + x.misses, 0);
    expect(hits).toBeGreaterThan((hits + misses) / 3);
  }, 300_000);

  it("keys a query by everything but its argument values", () => {
    const q = (id: string, take: number) => ({
      modelName: "Space",
      action: "findMany",
      query: { arguments: { where: { id, deletedAt: null }, take }, selection: { $scalars: true } },
    });
    expect(shapeOf(q("a", 5)).key).toBe(shapeOf(q("b\u0000", 5)).key);
    expect(shapeOf(q("a", 5)).key).not.toBe(shapeOf(q("a", 6)).key);
    expect(shapeOf(q("a", 5)).values).toEqual(["a"]);
    const dated = {
      modelName: "Revision",
      action: "findFirst",
      query: {
        arguments: { where: { createdAt: { lt: { $type: "DateTime", value: "2026-01-01T00:00:00.000Z" } } } },
        selection: { $scalars: true },
      },
    };
    expect(shapeOf(dated).values).toEqual(["DateTime", "2026-01-01T00:00:00.000Z"]);
    expect(shapeOf(dated).fixed).toEqual([true, true]);
  });

  it("stop keeping a shape whose other values keep changing, and answer alike meanwhile", () => {
    // A compiler that hands the id back as a parameter and rewrites `contains` as a LIKE pattern.
    let compiles = 0;
    const compile = (q: string) => {
      compiles++;
      const { query } = JSON.parse(q);
      const where = query.arguments.where;
      return { sql: "SELECT … WHERE id = $1 AND title LIKE $2", args: [where.id, `%${where.title.contains}%`] };
    };
    const cached = cachedCompile(compile);
    const q = (id: string, contains: string) =>
      JSON.stringify({
        modelName: "Space",
        action: "findMany",
        query: { arguments: { where: { id, title: { contains } } }, selection: { $scalars: true } },
      });
    for (let i = 0; i < 100; i++) expect(cached(q(`spc_${i}`, "same"))).toEqual(compile(q(`spc_${i}`, "same")));
    expect(cached.stats()).toMatchObject({ hits: 99, misses: 1, templates: 1 });
    for (let i = 0; i < 200; i++) expect(cached(q("spc_x", `term ${i}`))).toEqual(compile(q("spc_x", `term ${i}`)));
    const stats = cached.stats();
    expect(stats.hits).toBe(99);
    expect(stats.templates).toBe(0); // past 16 keys the shape is no longer kept
    compiles = 0;
    cached(q("spc_y", "same"));
    expect(compiles).toBe(1); // and each of its queries costs one compile, no probing
  });

  it("do not probe a JSON document's values, nor an operation whose every query is a new shape", () => {
    let compiles = 0;
    // Page contents: the document goes to the database as one JSON parameter, its keys are page ids.
    const compile = (q: string) => {
      compiles++;
      const { query } = JSON.parse(q);
      const data = query.arguments.data;
      return { sql: "INSERT … VALUES ($1, $2, $3)", args: [data.id, JSON.stringify(data.content), String(data.position ?? 0)] };
    };
    const cached = cachedCompile(compile);
    const write = (id: string, content: unknown, position?: number) =>
      JSON.stringify({
        modelName: position === undefined ? "Revision" : "Collection",
        action: "createOne",
        query: { arguments: { data: { id, content, ...(position === undefined ? {} : { position }) } }, selection: { $scalars: true } },
      });
    for (let i = 0; i < 50; i++) {
      const query = write(`rev_${i}`, { pages: { [`page_${i % 7}`]: { title: `Title ${i}`, markdown: `# ${i}` } } });
      compiles = 0;
      expect(cached(query)).toEqual(compile(query));
      // Its own compile, the one above, and at most one probe (the shape is seen as a document at once).
      expect(compiles).toBeLessThanOrEqual(3);
    }
    // A number that changes with every query (a new item's position) makes every query a new shape: probed 16 times, then not.
    let probed = 0;
    for (let i = 0; i < 40; i++) {
      const query = write(`rev_p${i}`, null, i);
      compiles = 0;
      expect(cached(query)).toEqual(compile(query));
      if (compiles > 2) probed++;
    }
    expect(probed).toBe(16);
  });
});
