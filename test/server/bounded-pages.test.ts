import { describe, expect, it } from "vitest";
import { boundNestedPages } from "../../src/core/db/bounded-pages.js";

/**
 * The rewrite of src/core/bounded-pages.ts on plans written by hand: what it rewrites, and what it
 * leaves alone — above all data that looks like a plan (a client's JSON document is data).
 * test/server/bounded-pages.property.test.ts checks it against Prisma's own plans and answers.
 */
const T = `"public"."ChangeRequest"`;

function page(overrides: { order?: string; select?: string; cursor?: unknown; take?: unknown; distinct?: unknown } = {}) {
  return {
    type: "process",
    args: {
      expr: {
        type: "query",
        args: {
          type: "templateSql",
          fragments: [
            {
              type: "stringChunk",
              chunk: `SELECT ${overrides.select ?? `${T}."id", ${T}."spaceId", ${T}."number", ${T}."status"::text`} FROM ${T} WHERE (1=1 AND ${T}."spaceId" IN `,
            },
            { type: "parameterTuple" },
            { type: "stringChunk", chunk: `) ORDER BY ${overrides.order ?? `${T}."number" DESC`} OFFSET ` },
            { type: "parameter" },
          ],
          args: [["spc_1", "spc_2"], "0"],
        },
      },
      operations: {
        pagination: { cursor: overrides.cursor ?? null, take: "take" in overrides ? overrides.take : 11, skip: 0 },
        distinct: overrides.distinct ?? null,
        reverse: false,
        nested: {},
        linkingFields: ["spaceId"],
      },
    },
  };
}

const sql = (plan: ReturnType<typeof page>) => plan.args.expr.args.fragments.map((f: any) => f.chunk ?? `<${f.type}>`).join("");

describe("bounded pages", () => {
  it("numbers each parent's rows in the page's order and keeps skip + take of them, in the statement's order", () => {
    const plan = boundNestedPages(page());
    expect(sql(plan)).toBe(
      `SELECT "prisma_page"."id", "prisma_page"."spaceId", "prisma_page"."number", "prisma_page"."status" FROM (SELECT ${T}."id", ${T}."spaceId", ${T}."number", ${T}."status"::text, ` +
        `ROW_NUMBER() OVER (PARTITION BY ${T}."spaceId" ORDER BY ${T}."number" DESC) AS "prisma_page_row" FROM ${T} WHERE (1=1 AND ${T}."spaceId" IN <parameterTuple>)) AS "prisma_page" ` +
        `WHERE "prisma_page"."prisma_page_row" <= 11 ORDER BY "prisma_page"."number" DESC OFFSET <parameter>`,
    );
    expect(plan.args.expr.args.args).toEqual([["spc_1", "spc_2"], "0"]);
  });

  it("leaves alone a page with a cursor, a distinct, no take, an order by a cast column or by another table's", () => {
    for (const plan of [
      page({ cursor: { id: "cr_1" } }),
      page({ distinct: ["status"] }),
      page({ take: null }),
      page({ take: -3 }),
      page({ order: `${T}."status" ASC` }),
      page({ order: `"j0"."title" ASC` }),
      page({ select: `${T}."id", ${T}."spaceId", COUNT(*)` }),
    ]) {
      const before = JSON.stringify(plan);
      expect(JSON.stringify(boundNestedPages(plan))).toBe(before);
    }
  });

  it("never rewrites data that looks like a plan: a constant, a field's new value, a statement's parameters", () => {
    const lookalike = () => page();
    const plans = [
      { type: "value", args: lookalike() },
      { type: "initializeRecord", args: { expr: { type: "unit" }, fields: { content: { type: "value", value: lookalike() } } } },
      { type: "mapRecord", args: { expr: { type: "unit" }, fields: { content: { type: "set", value: lookalike() } } } },
      { type: "execute", args: { type: "templateSql", fragments: [{ type: "stringChunk", chunk: "UPDATE …" }], args: [lookalike()] } },
    ];
    for (const plan of plans) {
      const before = JSON.stringify(plan);
      expect(JSON.stringify(boundNestedPages(plan))).toBe(before);
    }
  });

  it("finds pages anywhere in a plan's structure", () => {
    const nested = {
      type: "let",
      args: { bindings: [{ name: "@parent", expr: { type: "join", args: { parent: { type: "get" }, children: [{ child: page() }] } } }] },
    };
    boundNestedPages(nested);
    expect(sql(nested.args.bindings[0]!.expr.args.children[0]!.child)).toContain(`"prisma_page_row" <= 11 `);
  });
});
