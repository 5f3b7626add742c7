import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createCollection, created, createSpace, forgetKept, type Admin } from "../helpers/fixtures.js";

/**
 * The documented lists that grow with an organization read a page in the order of an index:
 * the statement that reads a page, on the first page and on a page after a cursor, has a plan
 * without a sort whenever sorting is discouraged (`enable_sort = off`), so a page reads its own
 * rows and no others, however long the list; and a page after a cursor starts its index scan at
 * the cursor (the first sort key is an index condition), instead of reading every row before it.
 * Checked with EXPLAIN on the statements the requests sent, on both databases: the tables of a
 * test are small, and only the planner's choice with sorting discouraged tells whether an index
 * can give the order at all.
 */
let t: TestGateway;
let admin: Admin;
let org: string;
/** EXPLAIN (FORMAT JSON) of a statement with sorting discouraged: the plan's root node. */
let explain: (sql: string, args: readonly unknown[]) => Promise<PlanNode>;
let closeExplain: () => Promise<void> = async () => undefined;

interface PlanNode {
  "Node Type": string;
  "Index Cond"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

beforeAll(async () => {
  t = await startGateway();
  ({ admin, org } = await acmeDocs(t));
  t.gateway.db.observeStatements((_s, ok, sql, args) => {
    if (recording && ok && /^\s*SELECT\b/i.test(sql) && /\bORDER BY\b[^()]*\bLIMIT\b/i.test(sql)) recording.push({ sql, args: args ?? [] });
  });
  if (t.config.databaseUrl) {
    // Its own connection: a setting of the gateway's pool would reach its other requests.
    const client = new pg.Client({ connectionString: t.config.databaseUrl });
    await client.connect();
    await client.query("SET enable_sort = off");
    explain = async (sql, args) => (await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, [...args])).rows[0]["QUERY PLAN"][0].Plan;
    closeExplain = () => client.end();
  } else {
    // The embedded database has one connection: the setting is taken back after each plan.
    explain = async (sql, args) => {
      await t.gateway.db.driverQuery("SET enable_sort = off");
      try {
        const [row] = await t.gateway.db.driverQuery(
          `EXPLAIN (FORMAT JSON) ${sql}`,
          args.map((a) => (a instanceof Date ? a.toISOString() : a)),
        );
        const plan = Object.values(row!)[0];
        return (typeof plan === "string" ? JSON.parse(plan) : plan)[0].Plan;
      } finally {
        await t.gateway.db.driverQuery("RESET enable_sort");
      }
    };
  }
}, 180_000);
afterAll(async () => {
  await closeExplain();
  await t?.close();
});

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** Where the statements that read a page are recorded while `orderedReads` runs. */
let recording: { sql: string; args: readonly unknown[] }[] | null = null;

/** The statements that read a page (a SELECT with ORDER BY and LIMIT) that `call` sent, with their parameters. */
async function orderedReads(call: () => Promise<unknown>): Promise<{ sql: string; args: readonly unknown[] }[]> {
  const seen: { sql: string; args: readonly unknown[] }[] = [];
  await forgetKept(t.gateway);
  recording = seen;
  try {
    await call();
  } finally {
    recording = null;
  }
  return seen;
}

/** Two pages of `path` (one item each): each page's ordered reads, checked as described above. */
async function expectIndexedPages(path: string, firstKey: string) {
  const sep = path.includes("?") ? "&" : "?";
  let body: any;
  const first = await orderedReads(async () => {
    const res = await admin.get(`${path}${sep}limit=1`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    body = res.body;
  });
  expect(body.next?.page, `${path} has a second page`).toBeTruthy();
  const second = await orderedReads(async () => {
    const res = await admin.get(`${path}${sep}limit=1&page=${encodeURIComponent(body.next.page)}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items).toHaveLength(1);
  });
  expect(first.length, `${path}: the page is read with an ORDER BY`).toBeGreaterThan(0);
  expect(second.length).toBeGreaterThan(0);
  for (const { sql, args } of [...first, ...second]) {
    const plan = nodes(await explain(sql, args));
    expect(
      plan.filter((n) => /Sort/.test(n["Node Type"])).map((n) => n["Node Type"]),
      `${path}: ${sql}`,
    ).toEqual([]);
  }
  // After a cursor, the scan starts at it: the first sort key bounds the index scan.
  const [cursorRead] = second;
  const scans = nodes(await explain(cursorRead!.sql, cursorRead!.args)).filter((n) => n["Index Cond"]);
  expect(
    scans.some((n) => n["Index Cond"]!.includes(`"${firstKey}"`) || n["Index Cond"]!.includes(firstKey)),
    `${path}: ${JSON.stringify(scans.map((n) => [n["Index Name"], n["Index Cond"]]))}`,
  ).toBe(true);
}

describe("pages of long lists are read in index order", () => {
  let space: any;
  let collection: any;
  let changeRequest: any;
  let comment: any;
  let crComment: any;

  beforeAll(async () => {
    collection = await createCollection(admin, org, { title: "Guides" });
    await createCollection(admin, org, { title: "Reference" });
    await createCollection(admin, org, { title: "Inner", parent: collection.id });
    space = await createSpace(admin, org, { title: "One", parent: collection.id });
    await createSpace(admin, org, { title: "Two", parent: collection.id });
    await createSpace(admin, org, { title: "Three" });
    comment = created(await admin.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "first" } }));
    created(await admin.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "second" } }));
    for (const text of ["a reply", "another"])
      created(await admin.post(`/v1/spaces/${space.id}/comments/${comment.id}/replies`, { body: { markdown: text } }));
    for (const subject of ["First", "Second"])
      changeRequest = created(await admin.post(`/v1/spaces/${space.id}/change-requests`, { subject }));
    const cr = `/v1/spaces/${space.id}/change-requests/${changeRequest.id}`;
    crComment = created(await admin.post(`${cr}/comments`, { body: { markdown: "on the change" } }));
    created(await admin.post(`${cr}/comments`, { body: { markdown: "again" } }));
    for (const text of ["a reply", "another"])
      created(await admin.post(`${cr}/comments/${crComment.id}/replies`, { body: { markdown: text } }));
    await t.member(org, "mia@acme.test", "read");
  });

  it("an organization's spaces, a collection's spaces, and a member's spaces", async () => {
    await expectIndexedPages(`/v1/orgs/${org}/spaces`, "createdAt");
    await expectIndexedPages(`/v1/collections/${collection.id}/spaces`, "position");
    await expectIndexedPages(`/v1/orgs/${org}/members/${admin.user}/spaces?order=asc`, "createdAt");
    await expectIndexedPages(`/v1/orgs/${org}/members/${admin.user}/spaces`, "createdAt");
  });

  it("an organization's collections, all of them or the top-level ones", async () => {
    await expectIndexedPages(`/v1/orgs/${org}/collections`, "createdAt");
    await expectIndexedPages(`/v1/orgs/${org}/collections?nested=false`, "position");
  });

  it("comments of a space and of a change request, newest or oldest first, and their replies", async () => {
    const cr = `/v1/spaces/${space.id}/change-requests/${changeRequest.id}`;
    await expectIndexedPages(`/v1/spaces/${space.id}/comments`, "postedAt");
    await expectIndexedPages(`/v1/spaces/${space.id}/comments?order=asc`, "postedAt");
    await expectIndexedPages(`${cr}/comments`, "postedAt");
    await expectIndexedPages(`${cr}/comments/${crComment.id}/replies`, "postedAt");
  });

  it("a space's change requests of a status, and an organization's members", async () => {
    await expectIndexedPages(`/v1/spaces/${space.id}/change-requests?status=draft`, "number");
    await expectIndexedPages(`/v1/orgs/${org}/members`, "joinedAt");
  });

  it("an integration's events, newest first", async () => {
    created(await admin.post(`/v1/integrations/plans`, { title: "Plans", organization: org, scopes: ["space:content:read"] }));
    const installation = created(await admin.post(`/v1/integrations/plans/installations`, { organization: org }));
    expect((await admin.patch(`/v1/integrations/plans/installations/${installation.id}`, { space_selection: "all" })).status).toBe(200);
    const page = created(await admin.post(`/v1/spaces/${space.id}/content/pages`, { title: "Draft" }));
    expect((await admin.patch(`/v1/spaces/${space.id}/content/page/${page.id}`, { title: "Edited" })).status).toBe(200);
    await expectIndexedPages(`/v1/integrations/plans/events`, "createdAt");
  });

  it("pages walk every item once, in order, where items share their first sort key (the cursor's bound keeps them)", async () => {
    const same = new Date("2026-03-01T12:00:00.000Z");
    const spaces = await t.gateway.db.prisma.space.findMany({ where: { organizationId: org }, select: { id: true } });
    await t.gateway.db.prisma.space.updateMany({ where: { id: { in: spaces.map((s) => s.id) } }, data: { createdAt: same } });
    const comments = await t.gateway.db.prisma.comment.findMany({ where: { spaceId: space.id }, select: { id: true } });
    await t.gateway.db.prisma.comment.updateMany({ where: { id: { in: comments.map((c) => c.id) } }, data: { postedAt: same } });
    for (const path of [
      `/v1/orgs/${org}/spaces`,
      `/v1/orgs/${org}/members/${admin.user}/spaces`,
      `/v1/orgs/${org}/members/${admin.user}/spaces?order=asc`,
      `/v1/spaces/${space.id}/comments`,
      `/v1/spaces/${space.id}/comments?order=asc`,
    ]) {
      const sep = path.includes("?") ? "&" : "?";
      const whole = await admin.get(`${path}${sep}limit=1000`);
      expect(whole.status).toBe(200);
      expect(whole.body.items.length).toBeGreaterThanOrEqual(2);
      const walked: string[] = [];
      let page: string | undefined;
      do {
        const res = await admin.get(`${path}${sep}limit=1${page ? `&page=${encodeURIComponent(page)}` : ""}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.count).toBe(whole.body.count);
        walked.push(...res.body.items.map((i: { id: string }) => i.id));
        page = res.body.next?.page;
      } while (page && walked.length <= whole.body.items.length);
      expect(walked, path).toEqual(whole.body.items.map((i: { id: string }) => i.id));
    }
  });

  it.skipIf(!!process.env.DATABASE_URL)(
    "the embedded database's planner learns the tables' sizes from the upkeep (it has no autovacuum)",
    async () => {
      const prisma = t.gateway.db.prisma;
      const start = Date.UTC(2025, 0, 1);
      await prisma.space.createMany({
        data: Array.from({ length: 5_000 }, (_, k) => ({
          id: `spc_bulk_${k}`,
          organizationId: org,
          title: `Bulk ${k}`,
          createdAt: new Date(start + k * 1000),
        })),
      });
      const [read] = await orderedReads(async () => expect((await admin.get(`/v1/orgs/${org}/spaces?limit=2`)).status).toBe(200));
      // Without statistics the planner takes the table for a few rows, and sorts them all.
      const plain = async () => {
        const [row] = await t.gateway.db.driverQuery(
          `EXPLAIN (FORMAT JSON) ${read!.sql}`,
          read!.args.map((a) => (a instanceof Date ? a.toISOString() : a)),
        );
        const plan = Object.values(row!)[0];
        return nodes((typeof plan === "string" ? JSON.parse(plan) : plan)[0].Plan).map((n) => n["Node Type"]);
      };
      expect(await plain()).toContain("Sort");
      await t.gateway.maintain();
      expect(await plain()).not.toContain("Sort");
    },
  );
});
