import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { fewestStatements } from "../../helpers/fixtures.js";
import type { RowChange } from "../../../src/core/cache/row-keys.js";

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let writer: Awaited<ReturnType<TestGateway["member"]>>;

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme");
  writer = await t.member(admin.organization, "wes@acme.test", "edit");
}, 180_000);
afterAll(() => t?.close());

/**
 * The counts' rows that differ from a COUNT(*) of what is stored: the counts are columns the
 * database keeps (prisma/migrations/*_counters), so this must always be empty.
 */
async function countsAdrift(): Promise<unknown[]> {
  const q = (sql: string) => t.gateway.db.driverQuery(sql);
  return [
    ...(
      await q(`
      SELECT s.id, s."openCommentsCount", s."changeRequestsCount", s."openChangeRequestsCount", s."draftChangeRequestsCount",
        (SELECT count(*)::int FROM "Comment" c WHERE c."spaceId" = s.id AND c."changeRequestId" IS NULL AND c."parentId" IS NULL AND c.status = 'open') AS comments,
        (SELECT count(*)::int FROM "ChangeRequest" r WHERE r."spaceId" = s.id) AS crs,
        (SELECT count(*)::int FROM "ChangeRequest" r WHERE r."spaceId" = s.id AND r.status = 'open') AS open,
        (SELECT count(*)::int FROM "ChangeRequest" r WHERE r."spaceId" = s.id AND r.status = 'draft') AS draft
      FROM "Space" s`)
    ).filter(
      (r) =>
        r.openCommentsCount !== r.comments ||
        r.changeRequestsCount !== r.crs ||
        r.openChangeRequestsCount !== r.open ||
        r.draftChangeRequestsCount !== r.draft,
    ),
    ...(
      await q(`
      SELECT r.id, r."openCommentsCount",
        (SELECT count(*)::int FROM "Comment" c WHERE c."changeRequestId" = r.id AND c."parentId" IS NULL AND c.status = 'open') AS comments
      FROM "ChangeRequest" r`)
    ).filter((r) => r.openCommentsCount !== r.comments),
    ...(
      await q(`
      SELECT p.id, p."repliesCount", (SELECT count(*)::int FROM "Comment" c WHERE c."parentId" = p.id) AS replies
      FROM "Comment" p`)
    ).filter((r) => r.repliesCount !== r.replies),
  ];
}

describe("Space and change request counts", () => {
  it("follow the change requests and open comments stored", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Guide" })).body.id;
    const zero = (await admin.get(`/v1/spaces/${spaceId}`)).body;
    expect(zero).toMatchObject({ comments: 0, changeRequests: 0, changeRequestsOpen: 0, changeRequestsDraft: 0 });

    const first = (await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "One" })).body;
    await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Two" });
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${first.number}`, { status: "open" });

    const kept = (await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "Keep" } })).body;
    const resolved = (await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "Done" } })).body;
    await admin.put(`/v1/spaces/${spaceId}/comments/${resolved.id}`, { resolved: true });
    await admin.post(`/v1/spaces/${spaceId}/comments/${kept.id}/replies`, { body: { markdown: "A reply is not a comment" } });
    await admin.post(`/v1/spaces/${spaceId}/change-requests/${first.id}/comments`, { body: { markdown: "On the change" } });

    const space = (await admin.get(`/v1/spaces/${spaceId}`)).body;
    expect(space).toMatchObject({ comments: 1, changeRequests: 2, changeRequestsOpen: 1, changeRequestsDraft: 1 });
    expect((await admin.get(`/v1/spaces/${spaceId}/change-requests/${first.id}`)).body.comments).toBe(1);
  });

  it("cost no statement of their own: a GET of a space or a change request is one SELECT", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Budget" })).body.id;
    const cr = (await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "One" })).body;
    await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "Open" } });
    // The token and the membership come from the access cache; the space's row holds its counts.
    const space = await fewestStatements(t, () => admin.get(`/v1/spaces/${spaceId}`));
    expect(space.result.status).toBe(200);
    expect(space.result.body).toMatchObject({ comments: 1, changeRequests: 1, changeRequestsDraft: 1 });
    expect(space.count).toBe(1);
    const list = await fewestStatements(t, () => admin.get(`/v1/orgs/${admin.organization}/spaces`, { limit: 50 }));
    expect(list.result.status).toBe(200);
    expect(list.count).toBeLessThanOrEqual(2); // the page and its total, whatever the number of spaces
    const graph = await fewestStatements(t, () =>
      admin.graphql(
        `query($id: String!) { space(spaceId: $id) { id commentsCount changeRequestsCount openChangeRequestsCount draftChangeRequestsCount } }`,
        { id: spaceId },
      ),
    );
    expect(graph.result.data.space).toMatchObject({ commentsCount: 1, changeRequestsCount: 1, draftChangeRequestsCount: 1 });
    expect(graph.count).toBe(1);
    expect((await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr.id}`)).body.comments).toBe(0);
  });

  it("equal the stored rows' COUNT(*) after any interleaving of writes, deletes, merges, restores and cascades", {
    timeout: 120_000,
  }, async () => {
    const org = admin.organization;
    const spaces: string[] = [];
    for (const title of ["P1", "P2"]) spaces.push((await admin.post(`/v1/orgs/${org}/spaces`, { title })).body.id);
    const comments: { space: string; cr?: string; id: string; reply?: string }[] = [];
    const crs: { space: string; id: string }[] = [];
    const failures: string[] = [];

    const pick = <T>(list: T[], i: number) => (list.length ? list[i % list.length] : undefined);
    const send = async (what: string, call: () => Promise<{ status: number; body: any }>) => {
      const res = await call();
      // Refusals (a merged change request, a deleted space…) are fine; a 5xx is not.
      if (res.status >= 500) failures.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.status < 300 ? res.body : undefined;
    };
    const as = (i: number) => (i % 2 ? writer : admin);
    const actions = {
      comment: async (i: number, j: number) => {
        const space = spaces[i % spaces.length]!;
        const body = await send("comment", () => as(j).post(`/v1/spaces/${space}/comments`, { body: { markdown: `c${j}` } }));
        if (body) comments.push({ space, id: body.id });
      },
      crComment: async (i: number, j: number) => {
        const cr = pick(crs, i);
        if (!cr) return;
        const body = await send("cr comment", () =>
          as(j).post(`/v1/spaces/${cr.space}/change-requests/${cr.id}/comments`, { body: { markdown: `r${j}` } }),
        );
        if (body) comments.push({ space: cr.space, cr: cr.id, id: body.id });
      },
      reply: async (i: number, j: number) => {
        const c = pick(comments, i);
        if (!c) return;
        const base = c.cr ? `/v1/spaces/${c.space}/change-requests/${c.cr}` : `/v1/spaces/${c.space}`;
        const body = await send("reply", () => as(j).post(`${base}/comments/${c.id}/replies`, { body: { markdown: `re${j}` } }));
        if (body) c.reply = body.id;
      },
      resolve: async (i: number, j: number) => {
        const c = pick(comments, i);
        if (!c) return;
        const base = c.cr ? `/v1/spaces/${c.space}/change-requests/${c.cr}` : `/v1/spaces/${c.space}`;
        await send("resolve", () => admin.put(`${base}/comments/${c.id}`, { resolved: j % 3 !== 0 }));
      },
      deleteComment: async (i: number) => {
        const c = pick(comments, i);
        if (!c) return;
        const base = c.cr ? `/v1/spaces/${c.space}/change-requests/${c.cr}` : `/v1/spaces/${c.space}`;
        await send("delete comment", () =>
          admin.delete(c.reply && i % 2 ? `${base}/comments/${c.id}/replies/${c.reply}` : `${base}/comments/${c.id}`),
        );
      },
      createCr: async (i: number, j: number) => {
        const space = spaces[i % spaces.length]!;
        const body = await send("create cr", () => as(j).post(`/v1/spaces/${space}/change-requests`, { subject: `cr${j}` }));
        if (body) crs.push({ space, id: body.id });
      },
      crStatus: async (i: number, j: number) => {
        const cr = pick(crs, i);
        if (cr)
          await send("cr status", () =>
            admin.patch(`/v1/spaces/${cr.space}/change-requests/${cr.id}`, { status: (["open", "draft", "archived"] as const)[j % 3] }),
          );
      },
      merge: async (i: number) => {
        const cr = pick(crs, i);
        if (cr) await send("merge", () => admin.post(`/v1/spaces/${cr.space}/change-requests/${cr.id}/merge`));
      },
      deleteRestore: async (i: number) => {
        const space = spaces[i % spaces.length]!;
        await send("delete space", () => admin.delete(`/v1/spaces/${space}`));
        await send("restore space", () => admin.post(`/v1/spaces/${space}/restore`));
      },
      // Cascades the API does not make (a user removed for good, a change request purged).
      cascade: async (i: number) => {
        const cr = pick(crs, i);
        if (i % 2 && cr) await t.gateway.db.prisma.changeRequest.deleteMany({ where: { id: cr.id } });
        else if (comments.length) await t.gateway.db.prisma.comment.deleteMany({ where: { id: pick(comments, i)!.id } });
      },
    };
    const action = fc.tuple(fc.constantFrom(...(Object.keys(actions) as (keyof typeof actions)[])), fc.nat(50), fc.nat(50));

    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(action, { minLength: 1, maxLength: 4 }), { minLength: 3, maxLength: 8 }), async (batches) => {
        // Each batch runs at once: its writes interleave in the database.
        for (const batch of batches) await Promise.all(batch.map(([name, i, j]) => actions[name](i, j)));
        expect(failures).toEqual([]);
        expect(await countsAdrift()).toEqual([]);
      }),
      { numRuns: 8 },
    );
    // What the API answers is what is stored.
    for (const space of spaces) {
      const body = (await admin.get(`/v1/spaces/${space}`)).body;
      const stored = await t.gateway.db.prisma.changeRequest.count({ where: { spaceId: space } });
      expect(body.changeRequests).toBe(stored);
    }
  });

  it("are written only by the database: a write of them from outside is ignored", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Backfill" })).body.id;
    const c = (await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "one" } })).body;
    await admin.post(`/v1/spaces/${spaceId}/comments/${c.id}/replies`, { body: { markdown: "two" } });
    await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "three" });
    // Only the database's own triggers write the counts: a write from outside leaves them as they are.
    await t.gateway.db.prisma.space.update({ where: { id: spaceId }, data: { openCommentsCount: 99, changeRequestsCount: 99 } });
    await t.gateway.db.prisma.comment.update({ where: { id: c.id }, data: { repliesCount: 99 } });
    expect((await admin.get(`/v1/spaces/${spaceId}`)).body).toMatchObject({ comments: 1, changeRequests: 1 });
    expect(await countsAdrift()).toEqual([]);
  });
});

describe("writes told to write listeners (core/db/db.ts onCommittedWrite)", () => {
  it("name the rows whose counts the database changed with them", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Told" })).body.id;
    const heard: string[][] = [];
    let listening = true;
    t.gateway.db.onCommittedWrite((writes) => void (listening && heard.push([...writes.keys()].sort())));
    const c = (await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "one" } })).body;
    expect(heard.some((tables) => tables.includes("Comment") && tables.includes("Space"))).toBe(true);
    heard.length = 0;
    await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "two" });
    expect(heard.some((tables) => tables.includes("ChangeRequest") && tables.includes("Space"))).toBe(true);
    // An edit of a comment's text changes no count.
    heard.length = 0;
    await admin.put(`/v1/spaces/${spaceId}/comments/${c.id}`, { body: { markdown: "edited" } });
    expect(heard.some((tables) => tables.includes("Comment"))).toBe(true);
    expect(heard.some((tables) => tables.includes("Space"))).toBe(false);
    listening = false;
  });

  it("name the rows written, and the whole table where the database changed rows it did not name (cascades)", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Rows told" })).body.id;
    const heard: Map<string, RowChange>[] = [];
    let listening = true;
    t.gateway.db.onCommittedWrite((_writes, rows) => void (listening && heard.push(new Map(rows))));
    const told = (table: string) => heard.map((rows) => rows.get(table)).filter((c) => c !== undefined);
    const ids = (change: RowChange | undefined, column = "id") =>
      change && change !== "table" ? [...(change.values.get(column) ?? [])] : change;

    const c = (await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "one" } })).body;
    // The comment itself, by its id and its space's, and the space whose count the trigger changed: by its id.
    expect(told("Comment").map((change) => ids(change))).toContainEqual([c.id]);
    expect(told("Comment").map((change) => ids(change, "spaceId"))).toContainEqual([spaceId]);
    expect(told("Space").map((change) => ids(change))).toContainEqual([spaceId]);
    expect(told("Space")).not.toContain("table");

    heard.length = 0;
    const reply = (await admin.post(`/v1/spaces/${spaceId}/comments/${c.id}/replies`, { body: { markdown: "two" } })).body;
    expect(told("Comment").map((change) => ids(change))).toContainEqual(expect.arrayContaining([reply.id, c.id]));

    // Deleting the comment removes its reply and reactions by cascade: those tables are told whole.
    heard.length = 0;
    expect((await admin.delete(`/v1/spaces/${spaceId}/comments/${c.id}`)).status).toBe(204);
    expect(told("Comment")).toContain("table");
    expect(told("CommentReaction")).toContain("table");
    listening = false;
  });
});

describe("the counters migration", () => {
  it("counts the rows already stored (backfill), then keeps counting", { timeout: 60_000 }, async () => {
    const { PGlite } = await import("@electric-sql/pglite");
    const { applyMigrations, migrationsDir } = await import("../../../src/core/db/migrate.js");
    const fs = await import("node:fs");
    const path = await import("node:path");
    const os = await import("node:os");
    const names = fs
      .readdirSync(migrationsDir)
      .filter((n) => fs.existsSync(path.join(migrationsDir, n, "migration.sql")))
      .sort();
    const counters = names.findIndex((n) => n.endsWith("_counters"));
    expect(counters).toBeGreaterThan(0);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-counters-"));
    const db = await PGlite.create();
    try {
      const upTo = (end: number) => {
        for (const name of names.slice(0, end))
          if (!fs.existsSync(path.join(dir, name))) fs.cpSync(path.join(migrationsDir, name), path.join(dir, name), { recursive: true });
      };
      const run = () =>
        applyMigrations(
          (sql) => db.exec(sql),
          async (sql) => (await db.query<Record<string, unknown>>(sql)).rows,
          dir,
        );
      upTo(counters);
      await run();
      await db.exec(`
        INSERT INTO "User" (id, email, "displayName") VALUES ('usr_1', 'a@b.test', 'A');
        INSERT INTO "Organization" (id, title) VALUES ('org_1', 'O');
        INSERT INTO "Space" (id, "organizationId", title, "updatedAt") VALUES ('spc_1', 'org_1', 'S', now()), ('spc_2', 'org_1', 'T', now());
        INSERT INTO "ChangeRequest" (id, "spaceId", number, status, "createdById", "revisionId", "revisionInitial", "updatedAt") VALUES
          ('cr_1', 'spc_1', 1, 'open', 'usr_1', 'rev', 'rev', now()), ('cr_2', 'spc_1', 2, 'draft', 'usr_1', 'rev', 'rev', now()),
          ('cr_3', 'spc_1', 3, 'merged', 'usr_1', 'rev', 'rev', now());
        INSERT INTO "Comment" (id, "spaceId", "changeRequestId", "parentId", markdown, status, "postedById") VALUES
          ('c_1', 'spc_1', NULL, NULL, 'x', 'open', 'usr_1'), ('c_2', 'spc_1', NULL, NULL, 'x', 'resolved', 'usr_1'),
          ('c_3', 'spc_1', NULL, 'c_1', 'x', 'open', 'usr_1'), ('c_4', 'spc_1', NULL, 'c_1', 'x', 'open', 'usr_1'),
          ('c_5', 'spc_1', 'cr_1', NULL, 'x', 'open', 'usr_1'), ('c_6', 'spc_1', 'cr_1', 'c_5', 'x', 'open', 'usr_1');
      `);
      upTo(names.length);
      expect(await run()).toContain(names[counters]);
      const rows = async (sql: string) => (await db.query<Record<string, unknown>>(sql)).rows;
      expect(
        await rows(
          `SELECT id, "openCommentsCount", "changeRequestsCount", "openChangeRequestsCount", "draftChangeRequestsCount" FROM "Space" ORDER BY id`,
        ),
      ).toEqual([
        { id: "spc_1", openCommentsCount: 1, changeRequestsCount: 3, openChangeRequestsCount: 1, draftChangeRequestsCount: 1 },
        { id: "spc_2", openCommentsCount: 0, changeRequestsCount: 0, openChangeRequestsCount: 0, draftChangeRequestsCount: 0 },
      ]);
      expect(await rows(`SELECT id, "openCommentsCount" FROM "ChangeRequest" ORDER BY id`)).toEqual([
        { id: "cr_1", openCommentsCount: 1 },
        { id: "cr_2", openCommentsCount: 0 },
        { id: "cr_3", openCommentsCount: 0 },
      ]);
      expect(await rows(`SELECT id, "repliesCount" FROM "Comment" WHERE "repliesCount" > 0 ORDER BY id`)).toEqual([
        { id: "c_1", repliesCount: 2 },
        { id: "c_5", repliesCount: 1 },
      ]);
      // From then on the database keeps them: a move to another space, a status change, a cascade.
      await db.exec(`
        UPDATE "ChangeRequest" SET "spaceId" = 'spc_2', status = 'draft' WHERE id = 'cr_1';
        UPDATE "Comment" SET status = 'resolved' WHERE id = 'c_1';
        DELETE FROM "Comment" WHERE id = 'c_5';
      `);
      expect(
        await rows(
          `SELECT id, "openCommentsCount", "changeRequestsCount", "openChangeRequestsCount", "draftChangeRequestsCount" FROM "Space" ORDER BY id`,
        ),
      ).toEqual([
        { id: "spc_1", openCommentsCount: 0, changeRequestsCount: 2, openChangeRequestsCount: 0, draftChangeRequestsCount: 1 },
        { id: "spc_2", openCommentsCount: 0, changeRequestsCount: 1, openChangeRequestsCount: 0, draftChangeRequestsCount: 1 },
      ]);
      expect(await rows(`SELECT id, "openCommentsCount" FROM "ChangeRequest" WHERE id = 'cr_1'`)).toEqual([
        { id: "cr_1", openCommentsCount: 0 },
      ]);
    } finally {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
