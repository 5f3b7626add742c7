import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, createSpace, expectError, type Admin, type Member } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin; // admin of Acme
let other: Admin; // admin of another organization
let reviewer: Member;
let editor: Member;
let reader: Member;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, reviewer, editor, reader } = await acmeDocs(t, {
    reviewer: ["rev@acme.test", "review"],
    editor: ["eddie@acme.test", "edit"],
    reader: ["rita@acme.test", "read"],
  }));
});
afterAll(() => t?.close());

async function newSpace(title = "Docs"): Promise<string> {
  return (await createSpace(admin, admin.organization, { title })).id;
}

async function newPage(spaceId: string, body: Record<string, unknown>, by: Caller = admin, cr?: string): Promise<any> {
  const base = cr ? `/v1/spaces/${spaceId}/change-requests/${cr}` : `/v1/spaces/${spaceId}`;
  return created(await by.post(`${base}/content/pages`, body));
}

async function newCr(spaceId: string, body: Record<string, unknown> = {}, by: Caller = admin): Promise<any> {
  return created(await by.post(`/v1/spaces/${spaceId}/change-requests`, body));
}

const mainRevision = async (spaceId: string) => (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id as string;

describe("POST /v1/spaces/{spaceId}/change-requests", () => {
  it("creates a draft change request with exactly the documented fields (201)", async () => {
    const spaceId = await newSpace();
    const rev = await mainRevision(spaceId);
    const res = await editor.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "  Fix typos  ", agentTaskId: "task_1" });
    expect(res.status).toBe(201);
    const cr = res.body;
    expect(Object.keys(cr).sort()).toEqual(
      [
        "comments",
        "createdAt",
        "createdBy",
        "id",
        "number",
        "object",
        "outdated",
        "revision",
        "revisionInitial",
        "space",
        "status",
        "subject",
        "updatedAt",
        "urls",
      ].sort(),
    );
    expect(cr).toMatchObject({
      object: "change-request",
      id: expect.stringMatching(/^cr_/),
      number: 1,
      status: "draft",
      subject: "Fix typos",
      createdBy: { object: "user", id: editor.user, email: "eddie@acme.test" },
      revision: rev,
      revisionInitial: rev,
      comments: 0,
      outdated: false,
      urls: { app: `${t.url}/app/s/${spaceId}/~/changes/1`, location: `${t.url}/v1/spaces/${spaceId}/change-requests/${cr.id}` },
    });
    const second = await newCr(spaceId);
    expect(second.number).toBe(2);
    expect(second.subject).toBe(""); // no subject (GitBook's schema requires the field)
    // A space without content gets its initial revision first.
    const empty = await newSpace("Empty");
    const first = await newCr(empty);
    expect(first.revisionInitial).toBe(await mainRevision(empty));
  });

  it("numbers change requests one by one per space, also when created at the same time", async () => {
    const spaceId = await newSpace();
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) => admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: `cr ${i}` })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(created.map((r) => r.body.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await newCr(await newSpace())).number).toBe(1); // numbers are per space
  });

  it("needs the edit role (403), rejects bad input (400) and hides other organizations' spaces (404)", async () => {
    const spaceId = await newSpace();
    expectError(await reader.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "x" }), 403, "edit");
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "x".repeat(251) }), 400, "subject");
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: 12 }), 400, "subject");
    expectError(await other.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "x" }), 404);
  });
});

describe("reading and listing change requests", () => {
  let spaceId: string;
  let a: any, b: any, c: any;
  beforeAll(async () => {
    spaceId = await newSpace();
    a = await newCr(spaceId, { subject: "A" });
    b = await newCr(spaceId, { subject: "B" }, editor);
    c = await newCr(spaceId, { subject: "C" });
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${b.id}`, { status: "open" });
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${c.id}`, { status: "open" });
    // Ada contributes to B by editing its content.
    await newPage(spaceId, { title: "In B" }, admin, b.id);
  });

  it("gets a change request by id or by number", async () => {
    const byId = await reader.get(`/v1/spaces/${spaceId}/change-requests/${a.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(a);
    expect((await reader.get(`/v1/spaces/${spaceId}/change-requests/1`)).body.id).toBe(a.id);
    expectError(await reader.get(`/v1/spaces/${spaceId}/change-requests/99`), 404, "99");
    expectError(await reader.get(`/v1/spaces/${spaceId}/change-requests/cr_nope`), 404, "cr_nope");
    const elsewhere = await newSpace("Elsewhere");
    expectError(await admin.get(`/v1/spaces/${elsewhere}/change-requests/${a.id}`), 404);
    expectError(await other.get(`/v1/spaces/${spaceId}/change-requests/${a.id}`), 404);
    expectError(await other.get(`/v1/spaces/${spaceId}/change-requests/1`), 404);
  });

  it("lists open change requests by default, newest first, filtered by status, creator and contributor", async () => {
    const open = await reader.get(`/v1/spaces/${spaceId}/change-requests`);
    expect(open.status).toBe(200);
    expect(open.body.count).toBe(2);
    expect(open.body.items.map((i: any) => i.number)).toEqual([3, 2]);
    expect((await reader.get(`/v1/spaces/${spaceId}/change-requests`, { status: "draft" })).body.items.map((i: any) => i.id)).toEqual([
      a.id,
    ]);
    expect((await reader.get(`/v1/spaces/${spaceId}/change-requests`, { creator: editor.user })).body.items.map((i: any) => i.id)).toEqual([
      b.id,
    ]);
    expect(
      (await reader.get(`/v1/spaces/${spaceId}/change-requests`, { contributor: admin.user })).body.items.map((i: any) => i.id),
    ).toEqual([c.id, b.id]);
    expect((await reader.get(`/v1/spaces/${spaceId}/change-requests`, { contributor: reader.user })).body.count).toBe(0);
    const first = await reader.get(`/v1/spaces/${spaceId}/change-requests`, { limit: 1 });
    expect(first.body.items[0].id).toBe(c.id);
    expect((await reader.get(`/v1/spaces/${spaceId}/change-requests`, { limit: 1, page: first.body.next.page })).body.items[0].id).toBe(
      b.id,
    );
    expectError(await reader.get(`/v1/spaces/${spaceId}/change-requests`, { status: "closed" }), 400, "status");
    expectError(await reader.get(`/v1/spaces/${spaceId}/change-requests`, { limit: 1001 }), 400, "limit");
    expectError(await other.get(`/v1/spaces/${spaceId}/change-requests`), 404);
  });

  it("lists them on GraphQL as a connection of the space", async () => {
    const res = await reader.graphql(
      `query($s: String!) { space(spaceId: $s) {
        all: changeRequests { totalCount edges { node { number createdBy { email } } } }
        drafts: changeRequests(status: draft) { totalCount }
      } }`,
      { s: spaceId },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.space.all.totalCount).toBe(3);
    expect(res.data.space.all.edges.map((e: any) => e.node.number)).toEqual([3, 2, 1]);
    expect(res.data.space.all.edges[1].node.createdBy.email).toBe("eddie@acme.test");
    expect(res.data.space.drafts.totalCount).toBe(1);
  });
});

describe("PATCH /v1/spaces/{spaceId}/change-requests/{changeRequestId}", () => {
  it("changes the subject and moves the status draft → open → archived → open", async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId, { subject: "Old" }, editor);
    const renamed = await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.number}`, { subject: "New" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: cr.id, subject: "New", status: "draft" });
    expect((await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { subject: null })).body.subject).toBe("");
    for (const status of ["open", "draft", "open", "archived", "open"]) {
      const res = await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(status);
    }
    expectError(await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status: "merged" }), 400, "merge");
    expectError(await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status: "closed" }), 400, "status");
    expectError(await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { subject: "x".repeat(251) }), 400, "subject");
    expectError(await reader.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status: "draft" }), 403, "edit");
    expectError(await other.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status: "draft" }), 404);
    expectError(await editor.patch(`/v1/spaces/${spaceId}/change-requests/42`, { subject: "x" }), 404);
  });
});

describe("change request content", () => {
  it("edits the change request's own revisions, leaving the space's content alone", async () => {
    const spaceId = await newSpace();
    const page = await newPage(spaceId, { title: "Home", markdown: "Main text" });
    const before = await mainRevision(spaceId);
    const cr = await newCr(spaceId, { subject: "Edit" }, editor);
    const prefix = `/v1/spaces/${spaceId}/change-requests/${cr.number}/content`;

    const edited = await editor.patch(`${prefix}/page/${page.id}`, { markdown: "CR text" });
    expect(edited.status).toBe(200);
    expect(edited.body.urls.app).toBe(`${t.url}/app/s/${spaceId}/~/changes/${cr.number}/home`);
    const added = await newPage(spaceId, { title: "CR only", parent: page.id }, editor, cr.id);
    const file = await editor.post(`${prefix}/files`, {
      name: "a.txt",
      contentType: "text/plain",
      data: Buffer.from("hi").toString("base64"),
    });
    expect(file.status).toBe(201);

    const revision = await reader.get(prefix);
    expect(revision.status).toBe(200);
    expect(revision.body).toMatchObject({ object: "revision", type: "edits", files: [{ id: file.body.id }] });
    expect(revision.body.urls).toEqual({ app: `${t.url}/app/s/${spaceId}/~/changes/${cr.number}/~/revisions/${revision.body.id}` });
    const crRow = (await reader.get(`/v1/spaces/${spaceId}/change-requests/${cr.id}`)).body;
    expect(crRow.revision).toBe(revision.body.id);
    expect(crRow.revisionInitial).toBe(before);
    expect(crRow.outdated).toBe(false);

    const pages = (await reader.get(`${prefix}/pages`, { metadata: false })).body.pages;
    expect(pages[0]).toMatchObject({ markdown: "CR text", pages: [{ id: added.id, path: "home/cr-only" }] });
    expect((await reader.get(`${prefix}/page/${page.id}`, { format: "document" })).body.document.nodes[0].nodes[0].leaves[0].text).toBe(
      "CR text",
    );
    expect((await reader.get(`${prefix}/files`)).body.count).toBe(1);
    expect((await reader.get(`${prefix}/files/${file.body.id}`)).body.name).toBe("a.txt");
    expect((await reader.get(`${prefix}/files/${file.body.id}/backlinks`)).body).toEqual({ count: 0, items: [] });
    expect((await reader.get(`${prefix}/page/${page.id}/links`)).body.stats).toEqual({ total: 0, broken: { total: 0, changeRequest: 0 } });
    expect((await editor.delete(`${prefix}/page/${added.id}`)).status).toBe(204);

    // The space's content did not change.
    expect(await mainRevision(spaceId)).toBe(before);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/page/${page.id}`)).body.markdown).toBe("Main text");
    expectError(await reader.get(`/v1/spaces/${spaceId}/content/files/${file.body.id}`), 404);

    // The change request records who contributed.
    expect((await reader.get(`/v1/spaces/${spaceId}/change-requests`, { status: "draft", contributor: editor.user })).body.count).toBe(1);
    expectError(await reader.patch(`${prefix}/page/${page.id}`, { markdown: "no" }), 403, "edit");
    expectError(await other.get(prefix), 404);
    expectError(await other.get(`${prefix}/pages`), 404);
    expectError(await other.get(`${prefix}/page/${page.id}`), 404);
    expectError(await admin.get(`/v1/spaces/${spaceId}/change-requests/77/content`), 404);
  });

  it("stays editable in a locked space, and closes once archived or merged", async () => {
    const spaceId = await newSpace();
    const page = await newPage(spaceId, { title: "Home" });
    const cr = await newCr(spaceId);
    await admin.patch(`/v1/spaces/${spaceId}`, { editMode: "locked" });
    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/${page.id}`, { markdown: "direct" }), 403, "locked");
    expect(
      (await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content/page/${page.id}`, { markdown: "proposed" })).status,
    ).toBe(200);
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/merge`), 403, "locked");
    await admin.patch(`/v1/spaces/${spaceId}`, { editMode: "live" });
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status: "archived" });
    expectError(
      await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content/page/${page.id}`, { markdown: "late" }),
      409,
      "archived",
    );
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/merge`), 409, "archived");
  });

  it("applies concurrent edits one after the other", async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    const results = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: `Main ${i}` })),
      ...Array.from({ length: 4 }, (_, i) =>
        admin.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content/pages`, { title: `CR ${i}` }),
      ),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect((await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages.map((p: any) => p.title).sort()).toEqual([
      "Main 0",
      "Main 1",
      "Main 2",
      "Main 3",
    ]);
    expect(
      (await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content/pages`)).body.pages.map((p: any) => p.title).sort(),
    ).toEqual(["CR 0", "CR 1", "CR 2", "CR 3"]);
    const revisions = await t.gateway.db.prisma.revision.findMany({ where: { spaceId, changeRequestId: null, type: "edits" } });
    // One linear history: every revision's parent is the one before it.
    const parents = new Set(revisions.map((r) => r.parents[0]));
    expect(parents.size).toBe(4);
  });
});

describe("merging and updating", () => {
  it("merges concurrent work cleanly, refuses conflicts (409, nothing written) and merges once they are resolved", async () => {
    const spaceId = await newSpace("Merge");
    const intro = await newPage(spaceId, { title: "Intro", markdown: "line one\n\nline two\n\nline three" });
    const guide = await newPage(spaceId, { title: "Guide", markdown: "alpha\n\nbeta" });
    const start = await mainRevision(spaceId);

    const cr1 = await newCr(spaceId, { subject: "First" }, editor);
    const cr2 = await newCr(spaceId, { subject: "Second" }, editor);
    await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr1.id}/content/page/${intro.id}`, {
      markdown: "line ONE (cr1)\n\nline two\n\nline three",
    });
    const added = await newPage(spaceId, { title: "New in CR1", markdown: "fresh" }, editor, cr1.id);
    await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/content/page/${intro.id}`, {
      markdown: "line one (cr2)\n\nline two\n\nline three (cr2)",
    });
    // Meanwhile, on the space itself.
    await admin.patch(`/v1/spaces/${spaceId}/content/page/${guide.id}`, { markdown: "ALPHA (main)\n\nbeta" });
    const mainBefore = await mainRevision(spaceId);
    expect((await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr1.id}`)).body.outdated).toBe(true);

    // Merging needs the review role.
    expectError(await editor.post(`/v1/spaces/${spaceId}/change-requests/${cr1.id}/merge`), 403, "review");

    // 1. The first change request merges cleanly with the space's own edit.
    const cr1Head = (await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr1.id}`)).body.revision;
    const merged = await reviewer.post(`/v1/spaces/${spaceId}/change-requests/${cr1.number}/merge`);
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    expect(Object.keys(merged.body).sort()).toEqual(["result", "revision"]);
    expect(merged.body.result).toBe("merge");
    const afterFirst = (await admin.get(`/v1/spaces/${spaceId}/content`)).body;
    expect(afterFirst).toMatchObject({ id: merged.body.revision, type: "merge", parents: [mainBefore, cr1Head] });
    expect(afterFirst.pages.map((p: any) => p.title)).toEqual(["Intro", "Guide", "New in CR1"]);
    expect(afterFirst.pages[0].markdown).toBe("line ONE (cr1)\n\nline two\n\nline three");
    expect(afterFirst.pages[1].markdown).toBe("ALPHA (main)\n\nbeta");
    expect(afterFirst.pages[2].id).toBe(added.id);
    const cr1After = (await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr1.id}`)).body;
    expect(cr1After).toMatchObject({ status: "merged", revisionMerged: merged.body.revision, outdated: false });
    expect((await admin.get(`/v1/spaces/${spaceId}/search`, { query: "fresh" })).body.items[0].id).toBe(added.id);

    // 2. The second one changed the same line: 409 naming the page, nothing written.
    const cr2Before = (await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr2.id}`)).body;
    expect(cr2Before.outdated).toBe(true);
    const conflict = await reviewer.post(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/merge`);
    expectError(conflict, 409, 'page "Intro"');
    expect(await mainRevision(spaceId)).toBe(merged.body.revision);
    expect((await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr2.id}`)).body).toEqual(cr2Before);

    // 3. Updating it from the space still conflicts on that line: 409 quoting both sides.
    const stillConflicting = await editor.post(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/update`);
    expectError(stillConflicting, 409, 'page "Intro"', "line 1", "line ONE (cr1)", "line one (cr2)");
    expect(stillConflicting.body.error.message).not.toContain("line three");
    expect((await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr2.id}`)).body).toEqual(cr2Before);

    // 4. Resolve in the change request (take the space's line, keep its own other change), then update and merge.
    await editor.patch(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/content/page/${intro.id}`, {
      markdown: "line ONE (cr1)\n\nline two\n\nline three (cr2)",
    });
    const cr2Head = (await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr2.id}`)).body.revision;
    const updated = await editor.post(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/update`);
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.result).toBe("update");
    const cr2After = (await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr2.id}`)).body;
    expect(cr2After).toMatchObject({
      revision: updated.body.revision,
      revisionMergedAncestor: merged.body.revision,
      outdated: false,
      status: "draft",
    });
    const cr2Content = (await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/content`)).body;
    expect(cr2Content).toMatchObject({ type: "update", parents: [cr2Head, merged.body.revision] });
    expect(cr2Content.pages.map((p: any) => p.title)).toEqual(["Intro", "Guide", "New in CR1"]);
    expect(cr2Content.pages[1].markdown).toBe("ALPHA (main)\n\nbeta");
    // Already up to date: nothing new.
    expect((await editor.post(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/update`)).body).toEqual({
      revision: updated.body.revision,
      result: "update",
    });

    const second = await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/merge`);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const final = (await admin.get(`/v1/spaces/${spaceId}/content`)).body;
    expect(final.id).toBe(second.body.revision);
    expect(final.pages[0].markdown).toBe("line ONE (cr1)\n\nline two\n\nline three (cr2)");
    expect(final.pages[1].markdown).toBe("ALPHA (main)\n\nbeta");

    // Merged change requests no longer change.
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/merge`), 409, "merged");
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/update`), 409, "merged");
    expectError(await admin.patch(`/v1/spaces/${spaceId}/change-requests/${cr2.id}`, { status: "open" }), 409, "merged");
    expectError(
      await admin.patch(`/v1/spaces/${spaceId}/change-requests/${cr2.id}/content/page/${intro.id}`, { title: "x" }),
      409,
      "merged",
    );
    void start;
  });

  it("reports a page deleted on one side and edited on the other", async () => {
    const spaceId = await newSpace();
    const page = await newPage(spaceId, { title: "Doomed", markdown: "text" });
    const cr = await newCr(spaceId);
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content/page/${page.id}`, { markdown: "edited" });
    await admin.delete(`/v1/spaces/${spaceId}/content/page/${page.id}`);
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/merge`), 409, 'page "Doomed"', "deleted");
  });

  it("merges through GraphQL, and is 404 for other organizations", async () => {
    const spaceId = await newSpace();
    const cr = await newCr(spaceId);
    await newPage(spaceId, { title: "Via graph" }, admin, cr.id);
    expectError(await other.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/merge`), 404);
    expectError(await other.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/update`), 404);
    const res = await admin.graphql(
      `mutation($s: String!, $c: String!) { changeRequestMerge(spaceId: $s, changeRequestId: $c) { revision result } }`,
      { s: spaceId, c: String(cr.number) },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.changeRequestMerge.result).toBe("merge");
    expect((await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages[0].title).toBe("Via graph");
  });
});

describe("GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf", () => {
  it("answers a URL serving the change request's content as a PDF, optionally one page", async () => {
    const spaceId = await newSpace("Printable");
    const cr = await newCr(spaceId, { subject: "Print me" });
    const one = await newPage(
      spaceId,
      {
        title: "Chapter one",
        markdown:
          "# Heading\n\nSome text that is long enough to wrap " +
          "word ".repeat(80) +
          "\n\n- item\n\n```\ncode\n```\n\nUnicode: café ✓ 漢字",
      },
      admin,
      cr.id,
    );
    await newPage(spaceId, { title: "Chapter two", markdown: "More." }, admin, cr.id);

    const res = await reader.get(`/v1/spaces/${spaceId}/change-requests/${cr.id}/pdf`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url: `${t.url}/v1/spaces/${spaceId}/change-requests/${cr.id}/pdf/download` });
    const pdf = await fetch(res.body.url, { headers: { authorization: `Bearer ${reader.token}` } });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    const pagesIn = (b: Buffer) => (b.toString("latin1").match(/\/Type \/Page\b(?!s)/g) ?? []).length;
    expect(pagesIn(bytes)).toBeGreaterThanOrEqual(2);

    const single = await reader.get(`/v1/spaces/${spaceId}/change-requests/${cr.number}/pdf`, { pageId: one.id });
    expect(single.body.url).toBe(`${t.url}/v1/spaces/${spaceId}/change-requests/${cr.id}/pdf/download?pageId=${one.id}`);
    const singleBytes = Buffer.from(
      await (await fetch(single.body.url, { headers: { authorization: `Bearer ${reader.token}` } })).arrayBuffer(),
    );
    expect(singleBytes.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    expect(pagesIn(singleBytes)).toBeLessThan(pagesIn(bytes));

    expectError(await reader.get(`/v1/spaces/${spaceId}/change-requests/${cr.id}/pdf`, { pageId: "page_nope" }), 404, "page_nope");
    expectError(await other.get(`/v1/spaces/${spaceId}/change-requests/${cr.id}/pdf`), 404);
    expect((await fetch(res.body.url)).status).toBe(401);
    expect((await fetch(res.body.url, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(404);
  });
});
