import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryCompiler } from "@prisma/client/runtime/query_compiler_bg.postgresql.mjs";
import { openDatabase, type Database } from "../../src/core/db/db.js";
import { compilerOwn } from "../../src/core/db/query-plan-cache.js";
import { readTags } from "../../src/core/cache/request-reads.js";
import { freshPostgres } from "../helpers/postgres.js";
import { testTmpDir } from "../helpers/tmp.js";

/**
 * A page of a to-many relation under several parents reads at most `skip + take` rows per parent
 * (src/core/bounded-pages.ts), and answers exactly what Prisma's own plan answers: random
 * organizations (spaces with change requests of random statuses, with comments and replies, dates
 * that tie) are read with random pages at two levels — take, skip, order, a status filter, now and
 * then a cursor (left to Prisma) — through the server's compiler and through Prisma's alone: the
 * same rows, and the same tags for the response cache. Likewise organizations' pages of spaces
 * filtered as the graph filters them (access grants, membership: EXISTS through joined tables).
 */
const RUNS = Number(process.env.BOUNDED_PAGES_RUNS || 40);

let db: Database;
let drop: (() => Promise<void>) | undefined;
const proto = QueryCompiler.prototype as unknown as Record<"compile" | "compileBatch", (this: object, query: string) => unknown>;
let hooked: { compile: (typeof proto)["compile"]; compileBatch: (typeof proto)["compileBatch"] };
const statements: { sql: string; args: readonly unknown[] }[] = [];

beforeAll(async () => {
  let databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const fresh = await freshPostgres(process.env.DATABASE_URL, "pages");
    databaseUrl = fresh.url;
    drop = fresh.drop;
  }
  const dataDir = fs.mkdtempSync(path.join(testTmpDir(), "pages-"));
  db = await openDatabase({ dataDir, databaseUrl });
  hooked = { compile: proto.compile, compileBatch: proto.compileBatch };
  db.observeStatements((_s, _ok, sql, args) => void statements.push({ sql, args: args ?? [] }));
}, 120_000);
afterAll(async () => {
  await db?.close();
  await drop?.();
});

/** Runs `read` with Prisma's own compiler instead of the server's. */
async function unhooked<T>(read: () => Promise<T>): Promise<T> {
  proto.compile = compilerOwn.compile;
  proto.compileBatch = compilerOwn.compileBatch;
  try {
    return await read();
  } finally {
    proto.compile = hooked.compile;
    proto.compileBatch = hooked.compileBatch;
  }
}

const STATUSES = ["draft", "open", "merged", "archived"] as const;
const DAYS = [new Date("2026-01-01T00:00:00Z"), new Date("2026-01-02T00:00:00Z"), new Date("2026-01-03T00:00:00Z")];

const organization = fc.array(
  fc.array(
    fc.record({
      status: fc.constantFrom(...STATUSES),
      comments: fc.array(fc.record({ day: fc.nat(DAYS.length - 1), reply: fc.boolean() }), { maxLength: 6 }),
    }),
    { maxLength: 14 },
  ),
  { minLength: 1, maxLength: 4 },
);

const pageArgs = fc.record({
  take: fc.integer({ min: 1, max: 5 }),
  skip: fc.nat(3),
  direction: fc.constantFrom("asc" as const, "desc" as const),
  status: fc.option(fc.subarray([...STATUSES], { minLength: 1 }), { nil: undefined }),
  commentTake: fc.integer({ min: 1, max: 4 }),
  commentSkip: fc.nat(2),
  cursor: fc.boolean(),
});

let run = 0;

type Organization = typeof organization extends fc.Arbitrary<infer T> ? T : never;

async function seed(spaces: Organization): Promise<{ organizationId: string; firstRequest: string | undefined }> {
  const p = db.prisma;
  const tag = `bp${++run}`;
  const user = await p.user.create({ data: { id: `usr_${tag}`, email: `${tag}@pages.test`, displayName: tag } });
  const org = await p.organization.create({ data: { id: `org_${tag}`, title: tag } });
  let firstRequest: string | undefined;
  for (const [s, requests] of spaces.entries()) {
    const space = await p.space.create({ data: { id: `spc_${tag}_${s}`, organizationId: org.id, title: `${tag} ${s}` } });
    const revision = await p.revision.create({ data: { id: `rev_${tag}_${s}`, spaceId: space.id, content: {} } });
    for (const [r, request] of requests.entries()) {
      const cr = await p.changeRequest.create({
        data: {
          id: `cr_${tag}_${s}_${r}`,
          spaceId: space.id,
          number: r + 1,
          status: request.status,
          createdById: user.id,
          revisionId: revision.id,
          revisionInitial: revision.id,
        },
      });
      firstRequest ??= cr.id;
      let parent: string | undefined;
      for (const [c, comment] of request.comments.entries()) {
        const id = `cmt_${tag}_${s}_${r}_${c}`;
        await p.comment.create({
          data: {
            id,
            spaceId: space.id,
            changeRequestId: cr.id,
            markdown: `comment ${c}`,
            postedById: user.id,
            postedAt: DAYS[comment.day]!,
            parentId: comment.reply ? parent : undefined,
          },
        });
        parent ??= id;
      }
    }
  }
  return { organizationId: org.id, firstRequest };
}

describe("pages of a relation under several parents", () => {
  it("read at most skip + take rows a parent and answer what Prisma's own plan answers", async () => {
    await fc.assert(
      fc.asyncProperty(organization, pageArgs, async (spaces, args) => {
        const { organizationId, firstRequest } = await seed(spaces);
        const cursor = args.cursor && firstRequest ? { id: firstRequest } : undefined;
        const read = () =>
          db.prisma.space.findMany({
            where: { organizationId },
            orderBy: { id: "asc" },
            include: {
              changeRequests: {
                where: args.status ? { status: { in: args.status } } : {},
                orderBy: { number: args.direction },
                take: args.take,
                skip: args.skip,
                ...(cursor ? { cursor } : {}),
                include: {
                  comments: {
                    where: { parentId: null },
                    orderBy: [{ postedAt: "desc" }, { id: "desc" }],
                    take: args.commentTake,
                    skip: args.commentSkip,
                  },
                },
              },
            },
          });
        statements.length = 0;
        const answer = await read();
        const sent = statements.splice(0);
        const pages = (table: string) => sent.map((s) => s.sql).filter((sql) => sql.includes(`FROM "public"."${table}"`));
        const isBounded = (sql: string) => sql.includes("ROW_NUMBER() OVER (PARTITION BY");
        const expected = await unhooked(read);
        expect(answer).toEqual(expected);
        // The response cache tags an answer with the same rows either way (core/cache/request-reads.ts).
        const own = statements.splice(0);
        expect(sent.map((s) => readTags(s.sql, s.args))).toEqual(own.map((s) => readTags(s.sql, s.args)));
        // The change requests' page is bounded unless a cursor starts it (found in memory); the comments' always.
        expect(pages("ChangeRequest").map(isBounded)).toEqual([!cursor]);
        if (!cursor) expect(pages("ChangeRequest")[0]).toContain(`"prisma_page_row" <= ${args.skip + args.take} `);
        expect(
          pages("Comment").every((sql) => isBounded(sql) && sql.includes(`"prisma_page_row" <= ${args.commentSkip + args.commentTake} `)),
        ).toBe(true);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);

  it("filtered through other tables (access, membership), ordered by dates that tie (then ids), answer what Prisma's own plan answers", async () => {
    const spaceRows = fc.array(
      fc.record({
        day: fc.nat(DAYS.length - 1),
        visibility: fc.constantFrom("public" as const, "private" as const),
        granted: fc.boolean(),
        deleted: fc.boolean(),
      }),
      { maxLength: 12 },
    );
    const organizations = fc.array(fc.record({ member: fc.boolean(), spaces: spaceRows }), { minLength: 1, maxLength: 4 });
    const page = fc.record({
      take: fc.integer({ min: 1, max: 6 }),
      skip: fc.nat(3),
      direction: fc.constantFrom("asc" as const, "desc" as const),
    });
    await fc.assert(
      fc.asyncProperty(organizations, page, async (orgs, args) => {
        const p = db.prisma;
        const tag = `bq${++run}`;
        const user = await p.user.create({ data: { id: `usr_${tag}`, email: `${tag}@pages.test`, displayName: tag } });
        const ids: string[] = [];
        for (const [o, org] of orgs.entries()) {
          const id = `org_${tag}_${o}`;
          ids.push(id);
          await p.organization.create({ data: { id, title: `${tag} ${o}` } });
          if (org.member) await p.member.create({ data: { organizationId: id, userId: user.id, role: "read" } });
          for (const [s, space] of org.spaces.entries()) {
            const spaceId = `spc_${tag}_${o}_${s}`;
            await p.space.create({
              data: {
                id: spaceId,
                organizationId: id,
                title: `${s}`,
                visibility: space.visibility,
                createdAt: DAYS[space.day]!,
                deletedAt: space.deleted ? DAYS[0] : null,
              },
            });
            if (space.granted) await p.spaceAccess.create({ data: { id: `acc_${spaceId}`, spaceId, userId: user.id, role: "read" } });
          }
        }
        const read = () =>
          p.organization.findMany({
            where: { id: { in: ids } },
            orderBy: { id: "asc" },
            include: {
              spaces: {
                where: {
                  deletedAt: null,
                  OR: [
                    { visibility: "public" },
                    { access: { some: { userId: user.id } } },
                    { organization: { members: { some: { userId: user.id, disabled: false, role: { not: null } } } } },
                  ],
                },
                orderBy: [{ createdAt: args.direction }, { id: args.direction }],
                take: args.take,
                skip: args.skip,
              },
            },
          });
        statements.length = 0;
        const answer = await read();
        const sent = statements.splice(0);
        const expected = await unhooked(read);
        expect(answer).toEqual(expected);
        const own = statements.splice(0);
        expect(sent.map((s) => readTags(s.sql, s.args))).toEqual(own.map((s) => readTags(s.sql, s.args)));
        const spaces = sent.filter((s) => s.sql.includes(`FROM "public"."Space"`));
        expect(spaces.map((s) => s.sql.includes(`"prisma_page_row" <= ${args.skip + args.take} `))).toEqual([true]);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);
});
