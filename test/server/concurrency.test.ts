import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Answer, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, createSpace, expectError, type Admin, type Member } from "../helpers/fixtures.js";

/**
 * Requests sent at the same time: idempotent writes stay idempotent, compatible writes to one
 * space all land (they queue on the space's lock), and only true conflicts answer 409.
 * Runs on the embedded database and, with DATABASE_URL, on PostgreSQL, where requests really
 * run in parallel on several connections.
 */

let t: TestGateway;
let admin: Admin;
let editor: Member;
let reader: Member;
let org: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, editor, reader, org } = await acmeDocs(t, { editor: ["eddie@acme.test", "edit"], reader: ["rita@acme.test", "read"] }));
});
afterAll(() => t?.close());

const at = <T>(n: number, send: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => send(i)));
const statuses = (answers: Answer[]) => answers.map((a) => a.status);
const same = (n: number, status: number) => Array.from({ length: n }, () => status);
/** Many requests at once, on a machine that may be busy: a bound on the whole test, not a timing. */
const MANY = 120_000;

describe("identical idempotent writes sent at once", () => {
  it(
    "PUT a team member: every answer is 204 and the member is in the team once, with or without a role",
    async () => {
      const team = created(await admin.put(`/v1/orgs/${org}/teams`, { title: "Crew" })).id;
      const url = `/v1/orgs/${org}/teams/${team}/members`;
      expect(statuses(await at(10, () => admin.put(`${url}/${reader.user}`, {})))).toEqual(same(10, 204));
      expect(statuses(await at(10, () => admin.put(`${url}/${editor.user}`, { role: "owner" })))).toEqual(same(10, 204));
      // Again on a member already in the team: the empty body keeps the role.
      expect(statuses(await at(10, () => admin.put(`${url}/${editor.user}`, {})))).toEqual(same(10, 204));
      const members = (await admin.get(url)).body.items.map((m: any) => [m.organization.id, m.team.role]).sort();
      expect(members).toEqual(
        [
          [editor.user, "owner"],
          [reader.user, "member"],
        ].sort(),
      );
    },
    MANY,
  );

  it(
    "PUT team members in bulk (add and memberships): every answer is 204",
    async () => {
      const team = created(await admin.put(`/v1/orgs/${org}/teams`, { title: "Bulk" })).id;
      const url = `/v1/orgs/${org}/teams/${team}/members`;
      const answers = await at(10, () => admin.put(url, { add: [reader.user], memberships: { [editor.user]: { role: "owner" } } }));
      expect(statuses(answers)).toEqual(same(10, 204));
      expect((await admin.get(url)).body.count).toBe(2);
    },
    MANY,
  );

  it(
    "PUT a space or site installation: every answer is 200, one installation, one setup event; DELETE at once records one removal",
    async () => {
      created(await admin.post("/v1/integrations/racer", { title: "Racer", organization: org, target: "all" }));
      const installation = created(await admin.post("/v1/integrations/racer/installations", { organization: org })).id;
      const space = (await createSpace(admin, org, { title: "Installed" })).id;
      const site = created(await admin.post(`/v1/orgs/${org}/sites`, { title: "Installed" })).id;
      const prisma = t.gateway.db.prisma;
      const events = (type: string) => prisma.integrationEvent.count({ where: { installationId: installation, type } });
      for (const [kind, id] of [
        ["spaces", space],
        ["sites", site],
      ] as const) {
        const url = `/v1/integrations/racer/installations/${installation}/${kind}/${id}`;
        const answers = await at(10, () => admin.put(url, { configuration: {} }));
        expect(statuses(answers)).toEqual(same(10, 200));
        expect(new Set(answers.map((a) => a.body.createdAt)).size).toBe(1);
        const setup = kind === "spaces" ? "space_installation_setup" : "site_installation_setup";
        expect(await events(setup)).toBe(1);
        expect(statuses(await at(10, () => admin.delete(url)))).toEqual(same(10, 204));
        expect(await events(kind === "spaces" ? "space_installation_deleted" : "site_installation_deleted")).toBe(1);
      }
    },
    MANY,
  );

  it(
    "PUT a comment with the same reaction: every answer is 200 and the reaction is counted once",
    async () => {
      const space = (await createSpace(admin, org, { title: "Reactions" })).id;
      const comment = created(await admin.post(`/v1/spaces/${space}/comments`, { body: { markdown: "React" } })).id;
      const answers = await at(10, () => editor.put(`/v1/spaces/${space}/comments/${comment}`, { addedReactions: ["👍"] }));
      expect(statuses(answers)).toEqual(same(10, 200));
      expect((await admin.get(`/v1/spaces/${space}/comments/${comment}`)).body.reactions).toEqual([
        expect.objectContaining({ emoji: "👍", count: 1 }),
      ]);
    },
    MANY,
  );
});

describe("a new integration published by several requests at once", () => {
  it(
    "the first creates it (201), the others add versions (200): versions 1 to 10, each once",
    async () => {
      const answers = await at(10, (i) => admin.post("/v1/integrations/twins", { title: `Twins ${i}`, organization: org }));
      expect(statuses(answers).sort()).toEqual([...same(9, 200), 201].sort());
      expect(answers.map((a) => a.body.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      expect((await admin.get("/v1/integrations/twins")).body.version).toBe(10);
    },
    MANY,
  );
});

describe("compatible writes to one space sent at once", () => {
  it(
    "50 change requests: 50 × 201 with the numbers 1 to 50, each once",
    async () => {
      const space = (await createSpace(admin, org, { title: "Numbers" })).id;
      const answers = await at(50, (i) => editor.post(`/v1/spaces/${space}/change-requests`, { subject: `Change ${i}` }));
      expect(statuses(answers)).toEqual(same(50, 201));
      expect(answers.map((a) => a.body.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect((await admin.get(`/v1/spaces/${space}/change-requests`, { status: "draft", limit: 100 })).body.count).toBe(50);
    },
    MANY,
  );

  it(
    "20 page creations, then 20 edits of different pages: all succeed and all are kept",
    async () => {
      const space = (await createSpace(admin, org, { title: "Pages" })).id;
      const pages = await at(20, (i) => editor.post(`/v1/spaces/${space}/content/pages`, { title: `Page ${i}` }));
      expect(statuses(pages)).toEqual(same(20, 201));
      expect((await admin.get(`/v1/spaces/${space}/content/pages`)).body.pages).toHaveLength(20);
      const slugs = pages.map((p) => p.body.slug);
      expect(new Set(slugs).size).toBe(20);

      const edits = await at(20, (i) => editor.patch(`/v1/spaces/${space}/content/page/${pages[i]!.body.id}`, { markdown: `Text ${i}` }));
      expect(statuses(edits)).toEqual(same(20, 200));
      const read = await at(20, (i) => admin.get(`/v1/spaces/${space}/content/page/${pages[i]!.body.id}`));
      read.forEach((r, i) => expect(r.body.markdown.trim()).toBe(`Text ${i}`));
    },
    MANY,
  );

  it(
    "an edit while another transaction holds its space's row lock: it waits for the lock, then lands once",
    async () => {
      const space = (await createSpace(admin, org, { title: "Held" })).id;
      const page = created(await editor.post(`/v1/spaces/${space}/content/pages`, { title: "Held page" }));
      const prisma = t.gateway.db.prisma;
      const revisions = () => prisma.revision.count({ where: { spaceId: space } });
      const before = await revisions();
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const held = new Promise<void>((resolve) => (locked = resolve));
      const holder = prisma.$transaction(
        async (tx) => {
          await tx.$queryRaw`SELECT "id" FROM "Space" WHERE "id" = ${space} FOR NO KEY UPDATE`;
          locked();
          await released;
        },
        { timeout: 60_000 },
      );
      await held;
      // On PostgreSQL the edit finds the lock taken (its one-statement attempt writes nothing) and
      // queues on it; on the embedded database it waits for the one connection.
      const edit = editor.patch(`/v1/spaces/${space}/content/page/${page.id}`, { markdown: "After the lock" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await holder;
      expect((await edit).status).toBe(200);
      expect(await revisions()).toBe(before + 1);
      expect((await admin.get(`/v1/spaces/${space}/content/page/${page.id}`)).body.markdown.trim()).toBe("After the lock");
    },
    MANY,
  );

  it(
    "edits of one change request's pages and a status change at once: all succeed",
    async () => {
      const space = (await createSpace(admin, org, { title: "In a change request" })).id;
      const cr = created(await editor.post(`/v1/spaces/${space}/change-requests`, {})).number;
      const base = `/v1/spaces/${space}/change-requests/${cr}`;
      const answers = await at(10, (i) => editor.post(`${base}/content/pages`, { title: `Proposal ${i}` }));
      expect(statuses(answers)).toEqual(same(10, 201));
      const opened = await at(5, () => editor.patch(base, { status: "open" }));
      expect(statuses(opened)).toEqual(same(5, 200));
      expect((await admin.get(`${base}/content/pages`)).body.pages).toHaveLength(10);
      expect((await admin.get(base)).body.status).toBe("open");
    },
    MANY,
  );

  it(
    "edits of different pages of one change request at once, then one sent with its merge: one line of revisions, and an acknowledged edit is merged",
    async () => {
      const space = (await createSpace(admin, org, { title: "Proposals at once" })).id;
      const cr = created(await editor.post(`/v1/spaces/${space}/change-requests`, {})).number;
      const base = `/v1/spaces/${space}/change-requests/${cr}`;
      const pages: { id: string }[] = [];
      for (let i = 0; i < 10; i++) pages.push(created(await editor.post(`${base}/content/pages`, { title: `Page ${i}` })));
      const edits = await at(10, (i) => editor.patch(`${base}/content/page/${pages[i]!.id}`, { markdown: `Text ${i}` }));
      expect(statuses(edits)).toEqual(same(10, 200));
      const read = await at(10, (i) => admin.get(`${base}/content/page/${pages[i]!.id}`));
      read.forEach((r, i) => expect(r.body.markdown.trim()).toBe(`Text ${i}`));
      // Each revision of the change request starts from the one before: no two from the same parent.
      const prisma = t.gateway.db.prisma;
      const request = await prisma.changeRequest.findFirstOrThrow({ where: { spaceId: space, number: cr } });
      const revisions = await prisma.revision.findMany({ where: { changeRequestId: request.id } });
      expect(revisions).toHaveLength(20);
      expect(new Set(revisions.map((r) => r.parents[0])).size).toBe(20);
      const byParent = new Map(revisions.map((r) => [r.parents[0], r.id]));
      let head = request.revisionInitial;
      for (let i = 0; i < 20; i++) head = byParent.get(head)!;
      expect(head).toBe(request.revisionId);
      // An edit sent with the merge lands before it (and is merged) or answers 409: it is never acknowledged and lost.
      const [merge, late] = await Promise.all([
        admin.post(`${base}/merge`),
        editor.patch(`${base}/content/page/${pages[0]!.id}`, { markdown: "Late" }),
      ]);
      expect(merge.status).toBe(200);
      expect([200, 409]).toContain(late.status);
      const merged = (await admin.get(`/v1/spaces/${space}/content/page/${pages[0]!.id}`)).body.markdown.trim();
      expect(merged).toBe(late.status === 200 ? "Late" : "Text 0");
    },
    MANY,
  );

  it(
    "20 merges of change requests that touch different pages: all merge, every page lands",
    async () => {
      const space = (await createSpace(admin, org, { title: "Merges" })).id;
      const numbers: number[] = [];
      for (let i = 0; i < 20; i++) {
        const cr = created(await editor.post(`/v1/spaces/${space}/change-requests`, {})).number;
        created(await editor.post(`/v1/spaces/${space}/change-requests/${cr}/content/pages`, { title: `Merged ${i}` }));
        numbers.push(cr);
      }
      const merges = await at(20, (i) => admin.post(`/v1/spaces/${space}/change-requests/${numbers[i]}/merge`));
      expect(statuses(merges)).toEqual(same(20, 200));
      expect(new Set(merges.map((m) => m.body.revision)).size).toBe(20);
      const titles = (await admin.get(`/v1/spaces/${space}/content/pages`)).body.pages.map((p: any) => p.title).sort();
      expect(titles).toEqual(Array.from({ length: 20 }, (_, i) => `Merged ${i}`).sort());
      // The space's history is one line: each merge's first parent is the merge before it.
      const content = await t.gateway.db.prisma.revision.findMany({ where: { spaceId: space, type: "merge" } });
      const firstParents = new Set(content.map((r) => r.parents[0]));
      expect(firstParents.size).toBe(20);
    },
    MANY,
  );

  it(
    "two merges that change the same lines: one lands, the other is a 409 naming the page, and nothing of it is written",
    async () => {
      const space = (await createSpace(admin, org, { title: "Conflicts" })).id;
      const page = created(await admin.post(`/v1/spaces/${space}/content/pages`, { title: "Shared", markdown: "one\n" })).id;
      const crs: number[] = [];
      for (const text of ["two\n", "three\n"]) {
        const cr = created(await editor.post(`/v1/spaces/${space}/change-requests`, {})).number;
        expect((await editor.patch(`/v1/spaces/${space}/change-requests/${cr}/content/page/${page}`, { markdown: text })).status).toBe(200);
        crs.push(cr);
      }
      const merges = await at(2, (i) => admin.post(`/v1/spaces/${space}/change-requests/${crs[i]}/merge`));
      expect(statuses(merges).sort()).toEqual([200, 409]);
      expectError(merges.find((m) => m.status === 409)!, 409, "Shared");
      const kept = (await admin.get(`/v1/spaces/${space}/content/page/${page}`)).body.markdown.trim();
      const winner = merges.findIndex((m) => m.status === 200);
      expect(kept).toBe(["two", "three"][winner]);
      const loser = crs[1 - winner];
      expect((await admin.get(`/v1/spaces/${space}/change-requests/${loser}`)).body.status).toBe("draft");
    },
    MANY,
  );
});
