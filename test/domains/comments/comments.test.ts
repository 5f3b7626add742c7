import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, createSpace, fewestStatements, type Admin, type Member } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin;
let other: Admin;
let commenter: Member;
let reader: Member;
let org: string;
let space: string;
let spaceBase: string;
let crBase: string;

const CR_ID = "cr_comments_one";
const CR_OTHER = "cr_comments_two";
const iso = (value: unknown) => typeof value === "string" && new Date(value).toISOString() === value;

function storedPage(id: string, title: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    title,
    type: "document",
    parentId: null,
    position: 0,
    slug: title.toLowerCase().replace(/\s+/g, "-"),
    markdown: `# ${title}`,
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-02T00:00:00.000Z",
    ...extra,
  };
}

async function createRevision(id: string, spaceId: string, pages: ReturnType<typeof storedPage>[], changeRequestId?: string) {
  await t.gateway.db.prisma.revision.create({
    data: {
      id,
      spaceId,
      changeRequestId: changeRequestId ?? null,
      content: { pages: Object.fromEntries(pages.map((p) => [p.id, p])), files: {}, reusableContents: {}, variables: {} },
    },
  });
}

const intro = storedPage("page_intro", "Introduction", { emoji: "1f4da", position: 0 });
const setup = storedPage("page_setup", "Setup", { parentId: "page_intro", position: 1, icon: "gear" });
const faq = storedPage("page_faq", "FAQ", { position: 2 });
const crOnly = storedPage("page_new", "Brand new", { position: 3 });

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, org, commenter, reader } = await acmeDocs(t, {
    commenter: ["cora@acme.test", "comment"],
    reader: ["rita@acme.test", "read"],
  }));
  const prisma = t.gateway.db.prisma;
  await prisma.user.update({ where: { id: admin.user }, data: { displayName: "Ada Admin" } });
  await prisma.user.update({ where: { id: commenter.user }, data: { displayName: "Cora Commenter" } });

  space = (await createSpace(admin, org, { title: "Guides" })).id;
  spaceBase = `/v1/spaces/${space}`;
  await createRevision("rev_main1", space, [intro, setup, faq]);
  await prisma.space.update({ where: { id: space }, data: { revisionId: "rev_main1" } });

  await createRevision("rev_cr1", space, [intro, setup, faq, crOnly], CR_ID);
  await prisma.changeRequest.create({
    data: {
      id: CR_ID,
      spaceId: space,
      number: 1,
      status: "open",
      subject: "More pages",
      createdById: admin.user,
      revisionId: "rev_cr1",
      revisionInitial: "rev_main1",
    },
  });
  await prisma.changeRequest.create({
    data: {
      id: CR_OTHER,
      spaceId: space,
      number: 2,
      status: "draft",
      createdById: admin.user,
      revisionId: "rev_main1",
      revisionInitial: "rev_main1",
    },
  });
  crBase = `${spaceBase}/change-requests/${CR_ID}`;
}, 180_000);
afterAll(() => t?.close());

describe("POST /v1/spaces/{spaceId}/comments", () => {
  it("posts a comment on a page and a node, with every documented field", async () => {
    const res = await commenter.post(`${spaceBase}/comments`, {
      page: "page_setup",
      node: "node_42",
      body: { markdown: "Is this **right**?" },
    });
    expect(res.status).toBe(201);
    const c = res.body;
    expect(c.id).toMatch(/^cmt_/);
    expect(c).toEqual({
      object: "comment",
      id: c.id,
      postedBy: {
        object: "user",
        id: commenter.user,
        displayName: "Cora Commenter",
        email: "cora@acme.test",
        urls: { location: `${t.url}/v1/users/${commenter.user}` },
      },
      postedAt: expect.any(String),
      reactions: [],
      replies: 0,
      repliers: [],
      body: { markdown: "Is this **right**?" },
      target: {
        page: {
          id: "page_setup",
          title: "Setup",
          icon: "gear",
          createdAt: "2024-01-01T00:00:00.000Z",
          updatedAt: "2024-01-02T00:00:00.000Z",
          path: "introduction/setup",
          outdated: false,
        },
        node: { id: "node_42" },
        space,
        revision: "rev_main1",
      },
      urls: { location: `${t.url}${spaceBase}/comments/${c.id}` },
      permissions: { view: true, edit: true, reply: true, delete: true },
      status: "open",
    });
    expect(iso(c.postedAt)).toBe(true);
    const row = await t.gateway.db.prisma.comment.findUniqueOrThrow({ where: { id: c.id } });
    expect(row).toMatchObject({
      spaceId: space,
      changeRequestId: null,
      parentId: null,
      pageId: "page_setup",
      nodeId: "node_42",
      revisionId: "rev_main1",
      postedById: commenter.user,
    });
  });

  it("posts a comment without a target page: target holds the space and the revision only", async () => {
    const res = await admin.post(`${spaceBase}/comments`, { body: { markdown: "General remark" } });
    expect(res.status).toBe(201);
    expect(res.body.target).toEqual({ space, revision: "rev_main1" });
    expect(res.body.permissions).toEqual({ view: true, edit: true, reply: true, delete: true });
  });

  it("rejects bad input with a 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{}, "body"],
      [{ body: null }, "body"],
      [{ body: {} }, "body.markdown"],
      [{ body: { markdown: "   \n " } }, "body.markdown"],
      [{ body: { markdown: "x".repeat(10_001) } }, "body.markdown"],
      [{ body: { markdown: 12 } }, "body.markdown"],
      [{ body: { markdown: "hi", extra: 1 } }, "extra"],
      [{ body: { markdown: "hi" }, page: "page_new" }, "page"],
      [{ body: { markdown: "hi" }, page: "page_unknown" }, "page"],
      [{ body: { markdown: "hi" }, node: "n".repeat(257) }, "node"],
      [{ body: { markdown: "hi" }, colour: "red" }, "colour"],
    ];
    for (const [body, field] of cases) {
      const res = await commenter.post(`${spaceBase}/comments`, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body).slice(0, 80)).toContain(field);
    }
    const malformed = await commenter.raw("POST", `${spaceBase}/comments`, '{"body": ');
    expect(malformed.status).toBe(400);
  });

  it("needs the comment role (403 for readers), is 404 for strangers and 401 without a token", async () => {
    const res = await reader.post(`${spaceBase}/comments`, { body: { markdown: "hi" } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("comment");
    const stranger = await other.post(`${spaceBase}/comments`, { body: { markdown: "hi" } });
    expect(stranger.status).toBe(404);
    expect((await t.caller("").post(`${spaceBase}/comments`, { body: { markdown: "hi" } })).status).toBe(401);
    expect((await admin.post(`/v1/spaces/spc_nothing/comments`, { body: { markdown: "hi" } })).status).toBe(404);
  });

  it("accepts a markdown body of exactly 10000 characters", async () => {
    const res = await commenter.post(`${spaceBase}/comments`, { body: { markdown: "y".repeat(10_000) } });
    expect(res.status).toBe(201);
    expect((await commenter.delete(`${spaceBase}/comments/${res.body.id}`)).status).toBe(204);
  });
});

describe("GET /v1/spaces/{spaceId}/comments/{commentId}", () => {
  it("reads a comment; format=document adds a parsed document to the body", async () => {
    const posted = await commenter.post(`${spaceBase}/comments`, {
      page: "page_faq",
      body: {
        markdown:
          "# Title\n\nSome **bold** and _italic_ text with [a link](https://example.com).\n\n- one\n- two\n\n```js\nlet a = 1;\n```",
      },
    });
    const plain = await reader.get(`${spaceBase}/comments/${posted.body.id}`);
    expect(plain.status).toBe(200);
    expect(plain.body.body).toEqual({ markdown: posted.body.body.markdown });
    expect(plain.body.permissions).toEqual({ view: true, edit: false, reply: false, delete: false });
    expect(plain.body.target.page).toMatchObject({ id: "page_faq", title: "FAQ", path: "faq", outdated: false });
    expect(plain.body.target.page).not.toHaveProperty("emoji");

    const doc = await reader.get(`${spaceBase}/comments/${posted.body.id}`, { format: "document" });
    expect(doc.status).toBe(200);
    const document = doc.body.body.document;
    expect(document.object).toBe("document");
    expect(document.nodes.map((n: any) => n.type)).toEqual(["heading-1", "paragraph", "list-unordered", "code"]);
    // GitBook's JSONDocument: texts of leaves with mark objects, links with content refs, code lines.
    const leaves = document.nodes[1].nodes.filter((n: any) => n.object === "text").flatMap((n: any) => n.leaves);
    expect(leaves.find((l: any) => l.text === "bold").marks).toEqual([{ object: "mark", type: "bold" }]);
    expect(leaves.find((l: any) => l.text === "italic").marks).toEqual([{ object: "mark", type: "italic" }]);
    expect(document.nodes[1].nodes.find((n: any) => n.object === "inline")).toMatchObject({
      type: "link",
      data: { ref: { kind: "url", url: "https://example.com" } },
    });
    expect(document.nodes[2].nodes).toHaveLength(2);
    expect(document.nodes[3]).toMatchObject({
      type: "code",
      data: { syntax: "js" },
      nodes: [{ type: "code-line", nodes: [{ object: "text", leaves: [{ text: "let a = 1;" }] }] }],
    });

    const bad = await reader.get(`${spaceBase}/comments/${posted.body.id}`, { format: "html" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("format");
  });

  it("is 404 for an unknown comment, a change request's comment and strangers", async () => {
    expect((await admin.get(`${spaceBase}/comments/cmt_nothing`)).status).toBe(404);
    const onCr = await admin.post(`${crBase}/comments`, { body: { markdown: "CR only" } });
    expect((await admin.get(`${spaceBase}/comments/${onCr.body.id}`)).status).toBe(404);
    const mine = await admin.post(`${spaceBase}/comments`, { body: { markdown: "secret" } });
    const stranger = await other.get(`${spaceBase}/comments/${mine.body.id}`);
    expect(stranger.status).toBe(404);
    expect(JSON.stringify(stranger.body)).not.toContain("secret");
    expect((await t.caller("").get(`${spaceBase}/comments/${mine.body.id}`)).status).toBe(401);
  });
});

describe("target.page.outdated", () => {
  it("turns true when the page changes or disappears in the active revision", async () => {
    const prisma = t.gateway.db.prisma;
    const s = (await createSpace(admin, org, { title: "Outdated" })).id;
    const a = storedPage("page_a", "Alpha");
    const b = storedPage("page_b", "Beta");
    await createRevision("rev_o1", s, [a, b]);
    await prisma.space.update({ where: { id: s }, data: { revisionId: "rev_o1" } });
    const onA = (await admin.post(`/v1/spaces/${s}/comments`, { page: "page_a", body: { markdown: "on a" } })).body;
    const onB = (await admin.post(`/v1/spaces/${s}/comments`, { page: "page_b", body: { markdown: "on b" } })).body;

    // A new revision that leaves both pages unchanged: not outdated.
    await createRevision("rev_o2", s, [a, b]);
    await prisma.space.update({ where: { id: s }, data: { revisionId: "rev_o2" } });
    expect((await admin.get(`/v1/spaces/${s}/comments/${onA.id}`)).body.target.page.outdated).toBe(false);

    // Alpha renamed and edited, Beta removed.
    await createRevision("rev_o3", s, [{ ...a, title: "Alpha 2", markdown: "changed", updatedAt: "2024-03-01T00:00:00.000Z" }]);
    await prisma.space.update({ where: { id: s }, data: { revisionId: "rev_o3" } });
    const changed = (await admin.get(`/v1/spaces/${s}/comments/${onA.id}`)).body.target.page;
    expect(changed).toEqual({
      id: "page_a",
      title: "Alpha 2",
      createdAt: "2024-01-01T00:00:00.000Z",
      updatedAt: "2024-03-01T00:00:00.000Z",
      path: "alpha",
      outdated: true,
    });
    const gone = (await admin.get(`/v1/spaces/${s}/comments/${onB.id}`)).body.target;
    expect(gone.page).toMatchObject({ id: "page_b", title: "Beta", outdated: true });
    expect(gone.revision).toBe("rev_o1");
  });
});

describe("GET /v1/spaces/{spaceId}/comments", () => {
  let listSpace: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const prisma = t.gateway.db.prisma;
    listSpace = (await createSpace(admin, org, { title: "Lists" })).id;
    await createRevision("rev_l1", listSpace, [storedPage("page_x", "X"), storedPage("page_y", "Y")]);
    await prisma.space.update({ where: { id: listSpace }, data: { revisionId: "rev_l1" } });
    const posts: [string, Member | Admin, string | undefined][] = [
      ["first", admin, "page_x"],
      ["second", commenter, "page_y"],
      ["third", admin, "page_x"],
      ["fourth", commenter, undefined],
    ];
    let minute = 0;
    for (const [name, who, pageId] of posts) {
      const res = await who.post(`/v1/spaces/${listSpace}/comments`, { page: pageId, body: { markdown: `**${name}**` } });
      ids[name] = res.body.id;
      await prisma.comment.update({ where: { id: res.body.id }, data: { postedAt: new Date(Date.UTC(2024, 0, 1, 0, minute++)) } });
    }
    await admin.put(`/v1/spaces/${listSpace}/comments/${ids.second}`, { resolved: true });
    await commenter.post(`/v1/spaces/${listSpace}/comments/${ids.first}/replies`, { body: { markdown: "a reply is not listed" } });
  });

  const names = (items: any[]) => items.map((c) => Object.keys(ids).find((k) => ids[k] === c.id));

  it("lists top-level comments newest first by default, with the envelope", async () => {
    const res = await reader.get(`/v1/spaces/${listSpace}/comments`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(4);
    expect(res.body).not.toHaveProperty("next");
    expect(names(res.body.items)).toEqual(["fourth", "third", "second", "first"]);
    expect(res.body.items[3].replies).toBe(1);
    expect(res.body.items[0].body).toEqual({ markdown: "**fourth**" });
  });

  it("orders, filters by status, page and users, and pages with a cursor", async () => {
    const list = (query: Record<string, string | number>) => reader.get(`/v1/spaces/${listSpace}/comments`, query);
    expect(names((await list({ order: "asc" })).body.items)).toEqual(["first", "second", "third", "fourth"]);
    expect(names((await list({ status: "resolved" })).body.items)).toEqual(["second"]);
    expect(names((await list({ status: "open" })).body.items)).toEqual(["fourth", "third", "first"]);
    expect(names((await list({ status: "all" })).body.items)).toHaveLength(4);
    expect(names((await list({ pageId: "page_x" })).body.items)).toEqual(["third", "first"]);
    expect(names((await list({ users: commenter.user })).body.items)).toEqual(["fourth", "second"]);
    const both = await reader.get(`/v1/spaces/${listSpace}/comments?users=${commenter.user}&users=${admin.user}&order=asc`);
    expect(names(both.body.items)).toEqual(["first", "second", "third", "fourth"]);
    const comma = await list({ users: `${admin.user},${commenter.user}`, status: "open", pageId: "page_x" });
    expect(names(comma.body.items)).toEqual(["third", "first"]);
    expect((await list({ users: "usr_nobody" })).body).toEqual({ count: 0, items: [] });

    const first = await list({ limit: 3, order: "asc" });
    expect(first.body.count).toBe(4);
    expect(names(first.body.items)).toEqual(["first", "second", "third"]);
    const second = await list({ limit: 3, order: "asc", page: first.body.next.page });
    expect(names(second.body.items)).toEqual(["fourth"]);
    expect(second.body).not.toHaveProperty("next");

    for (const [query, field] of [
      [{ limit: 1001 }, "limit"],
      [{ order: "up" }, "order"],
      [{ status: "closed" }, "status"],
      [{ page: "garbage" }, "page"],
    ] as const) {
      const res = await list(query as any);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error.message).toContain(field);
    }
  });

  it("gives documents with format=document", async () => {
    const res = await reader.get(`/v1/spaces/${listSpace}/comments`, { format: "document", limit: 1 });
    expect(res.body.items[0].body.markdown).toBe("**fourth**");
    expect(res.body.items[0].body.document.nodes[0].nodes[0]).toEqual({
      object: "text",
      leaves: [{ object: "leaf", text: "fourth", marks: [{ object: "mark", type: "bold" }] }],
    });
  });

  it("is 404 for strangers and 401 without a token", async () => {
    expect((await other.get(`/v1/spaces/${listSpace}/comments`)).status).toBe(404);
    expect((await t.caller("").get(`/v1/spaces/${listSpace}/comments`)).status).toBe(401);
  });
});

describe("replies", () => {
  let comment: any;

  beforeAll(async () => {
    comment = (await admin.post(`${spaceBase}/comments`, { page: "page_intro", body: { markdown: "Thread" } })).body;
  });

  it("POST and GET a reply: the comment-reply shape, without replies, target or status", async () => {
    const res = await commenter.post(`${spaceBase}/comments/${comment.id}/replies`, { body: { markdown: "Agreed" } });
    expect(res.status).toBe(201);
    const r = res.body;
    expect(r.id).toMatch(/^rpl_/);
    expect(r).toEqual({
      object: "comment-reply",
      id: r.id,
      postedBy: expect.objectContaining({ object: "user", id: commenter.user }),
      postedAt: expect.any(String),
      reactions: [],
      body: { markdown: "Agreed" },
      urls: { location: `${t.url}${spaceBase}/comments/${comment.id}/replies/${r.id}` },
      permissions: { view: true, edit: true, reply: true, delete: true },
    });
    const got = await reader.get(`${spaceBase}/comments/${comment.id}/replies/${r.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...r, permissions: { view: true, edit: false, reply: false, delete: false } });
    const doc = await reader.get(`${spaceBase}/comments/${comment.id}/replies/${r.id}`, { format: "document" });
    expect(doc.body.body.document.nodes[0].type).toBe("paragraph");
    expect((await reader.get(`${spaceBase}/comments/${comment.id}`)).body.replies).toBe(1);
    const row = await t.gateway.db.prisma.comment.findUniqueOrThrow({ where: { id: r.id } });
    expect(row).toMatchObject({ parentId: comment.id, spaceId: space, changeRequestId: null });
  });

  it("rejects bad replies: 400 body, 403 reader, 404 unknown comment or reply, 404 stranger", async () => {
    const blank = await commenter.post(`${spaceBase}/comments/${comment.id}/replies`, { body: { markdown: " " } });
    expect(blank.status).toBe(400);
    expect(blank.body.error.message).toContain("body.markdown");
    expect((await commenter.post(`${spaceBase}/comments/${comment.id}/replies`, {})).status).toBe(400);
    expect((await reader.post(`${spaceBase}/comments/${comment.id}/replies`, { body: { markdown: "hi" } })).status).toBe(403);
    expect((await commenter.post(`${spaceBase}/comments/cmt_nothing/replies`, { body: { markdown: "hi" } })).status).toBe(404);
    expect((await other.post(`${spaceBase}/comments/${comment.id}/replies`, { body: { markdown: "hi" } })).status).toBe(404);
    const missing = await reader.get(`${spaceBase}/comments/${comment.id}/replies/rpl_nothing`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("rpl_nothing");
    const wrongThread = await reader.get(`${spaceBase}/comments/cmt_nothing/replies/rpl_nothing`);
    expect(wrongThread.body.error.message).toContain("cmt_nothing");
  });

  it("PUT a reply: the author edits the body, others react; there is no resolved on space replies", async () => {
    const r = (await commenter.post(`${spaceBase}/comments/${comment.id}/replies`, { body: { markdown: "tpyo" } })).body;
    const edited = await commenter.put(`${spaceBase}/comments/${comment.id}/replies/${r.id}`, { body: { markdown: "typo" } });
    expect(edited.status).toBe(200);
    expect(edited.body.body).toEqual({ markdown: "typo" });
    expect(iso(edited.body.editedAt)).toBe(true);
    const forbidden = await admin.put(`${spaceBase}/comments/${comment.id}/replies/${r.id}`, { body: { markdown: "mine" } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.message).toContain("author");
    const reacted = await admin.put(`${spaceBase}/comments/${comment.id}/replies/${r.id}`, { addedReactions: ["👍"] });
    expect(reacted.body.reactions).toEqual([
      { emoji: "👍", count: 1, users: [{ user: expect.objectContaining({ id: admin.user }), reactedAt: expect.any(String) }] },
    ]);
    const resolved = await admin.put(`${spaceBase}/comments/${comment.id}/replies/${r.id}`, { resolved: true });
    expect(resolved.status).toBe(400);
    expect(resolved.body.error.message).toContain("resolved");
  });

  it("DELETE a reply: author or admin, 403 for others, 204 also when absent", async () => {
    const r = (await commenter.post(`${spaceBase}/comments/${comment.id}/replies`, { body: { markdown: "bye" } })).body;
    const other2 = await t.member(org, "cid@acme.test", "comment");
    const denied = await other2.delete(`${spaceBase}/comments/${comment.id}/replies/${r.id}`);
    expect(denied.status).toBe(403);
    expect((await commenter.delete(`${spaceBase}/comments/${comment.id}/replies/${r.id}`)).status).toBe(204);
    expect(await t.gateway.db.prisma.comment.count({ where: { id: r.id } })).toBe(0);
    expect((await commenter.delete(`${spaceBase}/comments/${comment.id}/replies/${r.id}`)).status).toBe(204);
    const r2 = (await commenter.post(`${spaceBase}/comments/${comment.id}/replies`, { body: { markdown: "admin removes" } })).body;
    expect((await admin.delete(`${spaceBase}/comments/${comment.id}/replies/${r2.id}`)).status).toBe(204);
    expect((await other.delete(`${spaceBase}/comments/${comment.id}/replies/${r2.id}`)).status).toBe(404);
  });
});

describe("PUT /v1/spaces/{spaceId}/comments/{commentId}", () => {
  it("aggregates reactions added and removed by two users, in a stable order", async () => {
    const c = (await commenter.post(`${spaceBase}/comments`, { body: { markdown: "React to me" } })).body;
    const url = `${spaceBase}/comments/${c.id}`;
    expect((await admin.put(url, { addedReactions: ["👍", "🎉"] })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
    const res = await commenter.put(url, { addedReactions: ["👍", "👍"] });
    expect(res.status).toBe(200);
    const byEmoji = Object.fromEntries(res.body.reactions.map((r: any) => [r.emoji, r]));
    expect(byEmoji["👍"]).toEqual({
      emoji: "👍",
      count: 2,
      users: [
        { user: expect.objectContaining({ object: "user", id: admin.user }), reactedAt: expect.any(String) },
        { user: expect.objectContaining({ object: "user", id: commenter.user }), reactedAt: expect.any(String) },
      ],
    });
    expect(byEmoji["🎉"]).toEqual({
      emoji: "🎉",
      count: 1,
      users: [{ user: expect.objectContaining({ id: admin.user }), reactedAt: expect.any(String) }],
    });
    expect(iso(byEmoji["👍"].users[0].reactedAt)).toBe(true);
    // The same order on every read.
    const again = await reader.get(url);
    expect(again.body.reactions).toEqual(res.body.reactions);

    // Adding again keeps the first reaction; removing drops only the caller's.
    const removed = await admin.put(url, { addedReactions: ["👍"], removedReactions: ["🎉"] });
    expect(removed.body.reactions).toEqual([byEmoji["👍"]]);
    const both = await commenter.put(url, { addedReactions: ["🚀"], removedReactions: ["👍", "🚀"] });
    expect(both.body.reactions).toEqual([{ ...byEmoji["👍"], count: 1, users: [byEmoji["👍"].users[0]] }]);

    for (const [body, field] of [
      [{ addedReactions: [""] }, "addedReactions[0]"],
      [{ removedReactions: ["a b"] }, "removedReactions[0]"],
      [{ addedReactions: ["x".repeat(33)] }, "addedReactions[0]"],
      [{ addedReactions: "👍" }, "addedReactions"],
    ] as const) {
      const bad = await admin.put(url, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.message).toContain(field);
    }
    expect((await reader.put(url, { addedReactions: ["👍"] })).status).toBe(403);
  });

  it("resolves and reopens: status, resolvedAt and resolvedBy", async () => {
    const c = (await admin.post(`${spaceBase}/comments`, { body: { markdown: "To resolve" } })).body;
    const url = `${spaceBase}/comments/${c.id}`;
    const resolved = await commenter.put(url, { resolved: true });
    expect(resolved.status).toBe(200);
    expect(resolved.body.status).toBe("resolved");
    expect(iso(resolved.body.resolvedAt)).toBe(true);
    expect(resolved.body.resolvedBy).toEqual(
      expect.objectContaining({ object: "user", id: commenter.user, displayName: "Cora Commenter" }),
    );
    // Resolving again keeps who resolved it first.
    const twice = await admin.put(url, { resolved: true });
    expect(twice.body.resolvedBy.id).toBe(commenter.user);
    expect(twice.body.resolvedAt).toBe(resolved.body.resolvedAt);

    const reopened = await admin.put(url, { resolved: false });
    expect(reopened.body.status).toBe("open");
    expect(reopened.body).not.toHaveProperty("resolvedAt");
    expect(reopened.body).not.toHaveProperty("resolvedBy");
    const row = await t.gateway.db.prisma.comment.findUniqueOrThrow({ where: { id: c.id } });
    expect(row).toMatchObject({ status: "open", resolvedAt: null, resolvedById: null });
    expect((await admin.put(url, { resolved: "yes" })).status).toBe(400);
    expect((await admin.put(url, { resolved: null })).status).toBe(400);
  });

  it("only the author edits the body (editedAt is set); others get 403", async () => {
    const c = (await commenter.post(`${spaceBase}/comments`, { body: { markdown: "Draft" } })).body;
    const url = `${spaceBase}/comments/${c.id}`;
    expect(c).not.toHaveProperty("editedAt");
    const denied = await admin.put(url, { body: { markdown: "Hijacked" } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("author");
    expect((await reader.get(url)).body.body.markdown).toBe("Draft");
    const edited = await commenter.put(url, { body: { markdown: "Final" } });
    expect(edited.status).toBe(200);
    expect(edited.body.body).toEqual({ markdown: "Final" });
    expect(iso(edited.body.editedAt)).toBe(true);
    const blank = await commenter.put(url, { body: { markdown: "" } });
    expect(blank.status).toBe(400);
    expect(blank.body.error.message).toContain("body.markdown");
    // Nothing to change: the comment as it is.
    expect((await commenter.put(url, {})).body.body.markdown).toBe("Final");
    expect((await other.put(url, { resolved: true })).status).toBe(404);
    expect((await admin.put(`${spaceBase}/comments/cmt_nothing`, { resolved: true })).status).toBe(404);
  });
});

describe("DELETE /v1/spaces/{spaceId}/comments/{commentId}", () => {
  it("deletes a comment with its replies and reactions; 204 again; 403 for others", async () => {
    const prisma = t.gateway.db.prisma;
    const c = (await commenter.post(`${spaceBase}/comments`, { body: { markdown: "Doomed" } })).body;
    const url = `${spaceBase}/comments/${c.id}`;
    const r1 = (await admin.post(`${url}/replies`, { body: { markdown: "r1" } })).body;
    await admin.post(`${url}/replies`, { body: { markdown: "r2" } });
    await admin.put(url, { addedReactions: ["👍"] });
    await admin.put(`${url}/replies/${r1.id}`, { addedReactions: ["👍"] });

    const denied = await reader.delete(url);
    expect(denied.status).toBe(403);
    expect((await other.delete(url)).status).toBe(404);
    const res = await commenter.delete(url);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect(await prisma.comment.count({ where: { OR: [{ id: c.id }, { parentId: c.id }] } })).toBe(0);
    expect(await prisma.commentReaction.count({ where: { commentId: { in: [c.id, r1.id] } } })).toBe(0);
    expect((await commenter.delete(url)).status).toBe(204);
    expect((await reader.get(url)).status).toBe(404);

    const byOther = (await commenter.post(`${spaceBase}/comments`, { body: { markdown: "Admin removes it" } })).body;
    expect((await admin.delete(`${spaceBase}/comments/${byOther.id}`)).status).toBe(204);
  });
});

describe("change request comments", () => {
  it("posts on a page of the change request's head revision, addressed by id or number", async () => {
    const res = await commenter.post(`${crBase}/comments`, { page: "page_new", node: "n1", body: { markdown: "New page comment" } });
    expect(res.status).toBe(201);
    expect(res.body.target).toEqual({
      page: {
        id: "page_new",
        title: "Brand new",
        createdAt: "2024-01-01T00:00:00.000Z",
        updatedAt: "2024-01-02T00:00:00.000Z",
        path: "brand-new",
        outdated: false,
      },
      node: { id: "n1" },
      changeRequest: CR_ID,
      space,
      revision: "rev_cr1",
    });
    expect(res.body.urls.location).toBe(`${t.url}${crBase}/comments/${res.body.id}`);
    const byNumber = await reader.get(`${spaceBase}/change-requests/1/comments/${res.body.id}`);
    expect(byNumber.status).toBe(200);
    expect(byNumber.body.id).toBe(res.body.id);
    const viaNumber = await commenter.post(`${spaceBase}/change-requests/1/comments`, { body: { markdown: "by number" } });
    expect(viaNumber.status).toBe(201);
    expect(viaNumber.body.target.changeRequest).toBe(CR_ID);

    // A page of the change request only is not a page of CR 2 nor of the space.
    const wrong = await commenter.post(`${spaceBase}/change-requests/${CR_OTHER}/comments`, { page: "page_new", body: { markdown: "x" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("page");
    // A comment of one change request is not reachable through another or through the space.
    expect((await reader.get(`${spaceBase}/change-requests/2/comments/${res.body.id}`)).status).toBe(404);
    expect((await reader.get(`${spaceBase}/comments/${res.body.id}`)).status).toBe(404);
  });

  it("lists with filters, separately from the space's comments", async () => {
    const list = await reader.get(`${crBase}/comments`, { order: "asc" });
    expect(list.status).toBe(200);
    expect(list.body.items.every((c: any) => c.target.changeRequest === CR_ID)).toBe(true);
    expect(list.body.count).toBe(list.body.items.length);
    const onPage = await reader.get(`${crBase}/comments`, { pageId: "page_new", format: "document" });
    expect(onPage.body.count).toBe(1);
    expect(onPage.body.items[0].body.document.object).toBe("document");
    const space2 = await reader.get(`${spaceBase}/comments`, { limit: 1000 });
    expect(space2.body.items.some((c: any) => c.target.changeRequest)).toBe(false);
    expect((await reader.get(`${spaceBase}/change-requests/99/comments`)).status).toBe(404);
    expect((await reader.get(`${spaceBase}/change-requests/cr_nothing/comments`)).status).toBe(404);
  });

  it("replies: create (with format), list oldest first with a cursor, get, put (resolved resolves the thread), delete", async () => {
    const c = (await admin.post(`${crBase}/comments`, { body: { markdown: "Review this" } })).body;
    const url = `${crBase}/comments/${c.id}`;
    const first = await commenter.post(`${url}/replies?format=document`, { body: { markdown: "*one*" } });
    expect(first.status).toBe(201);
    expect(first.body.object).toBe("comment-reply");
    expect(first.body.body.document.object).toBe("document");
    expect(first.body.urls.location).toBe(`${t.url}${url}/replies/${first.body.id}`);
    const second = await admin.post(`${url}/replies`, { body: { markdown: "two" }, format: "markdown" });
    expect(second.body.body).toEqual({ markdown: "two" });
    await t.gateway.db.prisma.comment.update({ where: { id: second.body.id }, data: { postedAt: new Date(Date.now() + 60_000) } });

    const page1 = await reader.get(`${url}/replies`, { limit: 1 });
    expect(page1.status).toBe(200);
    expect(page1.body.count).toBe(2);
    expect(page1.body.items.map((r: any) => r.id)).toEqual([first.body.id]);
    const page2 = await reader.get(`${url}/replies`, { limit: 1, page: page1.body.next.page, format: "document" });
    expect(page2.body.items.map((r: any) => r.id)).toEqual([second.body.id]);
    expect(page2.body.items[0].body.document.nodes[0].type).toBe("paragraph");
    expect(page2.body).not.toHaveProperty("next");
    expect((await reader.get(`${crBase}/comments/cmt_nothing/replies`)).status).toBe(404);

    const got = await reader.get(`${url}/replies/${first.body.id}`);
    expect(got.body.body).toEqual({ markdown: "*one*" });
    const put = await commenter.put(`${url}/replies/${first.body.id}`, {
      resolved: true,
      body: { markdown: "*uno*" },
      addedReactions: ["✅"],
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ object: "comment-reply", body: { markdown: "*uno*" }, reactions: [{ emoji: "✅", count: 1 }] });
    expect(put.body).not.toHaveProperty("status");
    const thread = await reader.get(url);
    expect(thread.body).toMatchObject({ status: "resolved", replies: 2, resolvedBy: { id: commenter.user } });
    expect((await commenter.put(`${url}/replies/${first.body.id}`, { resolved: false })).status).toBe(200);
    expect((await reader.get(url)).body.status).toBe("open");

    expect((await admin.put(`${url}/replies/${first.body.id}`, { body: { markdown: "not mine" } })).status).toBe(403);
    expect((await commenter.delete(`${url}/replies/${first.body.id}`)).status).toBe(204);
    expect((await commenter.delete(`${url}/replies/${first.body.id}`)).status).toBe(204);
    expect((await reader.get(url)).body.replies).toBe(1);
    expect((await admin.delete(url)).status).toBe(204);
    expect(await t.gateway.db.prisma.comment.count({ where: { parentId: c.id } })).toBe(0);
    expect((await admin.delete(url)).status).toBe(204);
  });

  it("PUT comment: resolve, edit and react on a change request comment", async () => {
    const c = (await commenter.post(`${crBase}/comments`, { body: { markdown: "cr put" } })).body;
    const res = await commenter.put(`${spaceBase}/change-requests/1/comments/${c.id}`, {
      resolved: true,
      body: { markdown: "cr put!" },
      addedReactions: ["👀"],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "resolved",
      body: { markdown: "cr put!" },
      reactions: [{ emoji: "👀", count: 1 }],
      resolvedBy: { id: commenter.user },
    });
    expect(iso(res.body.editedAt)).toBe(true);
    expect((await admin.put(`${crBase}/comments/${c.id}`, { body: { markdown: "x" } })).status).toBe(403);
  });

  it("is 404 for another organization's token and 401 without a token", async () => {
    const c = (await admin.post(`${crBase}/comments`, { body: { markdown: "private" } })).body;
    const stranger = [
      () => other.get(`${crBase}/comments`),
      () => other.post(`${crBase}/comments`, { body: { markdown: "x" } }),
      () => other.get(`${crBase}/comments/${c.id}`),
      () => other.put(`${crBase}/comments/${c.id}`, { resolved: true }),
      () => other.delete(`${crBase}/comments/${c.id}`),
      () => other.get(`${crBase}/comments/${c.id}/replies`),
      () => other.post(`${crBase}/comments/${c.id}/replies`, { body: { markdown: "x" } }),
      () => other.get(`${crBase}/commenters`),
      () => other.get(`${spaceBase}/commenters`),
      () => other.get(`${spaceBase}/comments`),
    ];
    for (const call of stranger) expect((await call()).status).toBe(404);
    expect((await t.caller("").get(`${crBase}/comments`)).status).toBe(401);
    expect((await t.caller("").delete(`${crBase}/comments/${c.id}`)).status).toBe(401);
    expect(await t.gateway.db.prisma.comment.count({ where: { id: c.id } })).toBe(1);
  });
});

describe("commenters", () => {
  it("lists the organization members who commented, as Member objects", async () => {
    const s = (await createSpace(admin, org, { title: "Commenters" })).id;
    expect((await reader.get(`/v1/spaces/${s}/commenters`)).body).toEqual({ count: 0, items: [] });
    const c = (await admin.post(`/v1/spaces/${s}/comments`, { body: { markdown: "by ada" } })).body;
    await commenter.post(`/v1/spaces/${s}/comments/${c.id}/replies`, { body: { markdown: "reply by cora" } });
    const res = await reader.get(`/v1/spaces/${s}/commenters`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.items.map((m: any) => m.id).sort()).toEqual([admin.user, commenter.user].sort());
    const cora = res.body.items.find((m: any) => m.id === commenter.user);
    expect(cora).toMatchObject({
      object: "member",
      id: commenter.user,
      role: "comment",
      user: { object: "user", id: commenter.user },
      disabled: false,
      sso: false,
    });
    const paged = await reader.get(`/v1/spaces/${s}/commenters`, { limit: 1 });
    expect(paged.body.items).toHaveLength(1);
    expect(paged.body.next.page).toEqual(expect.any(String));

    const cr = await reader.get(`${crBase}/commenters`);
    expect(cr.status).toBe(200);
    expect(cr.body.items.map((m: any) => m.id).sort()).toEqual([admin.user, commenter.user].sort());
    expect((await reader.get(`${spaceBase}/change-requests/2/commenters`)).body).toEqual({ count: 0, items: [] });
  });
});

describe("a deleted space", () => {
  it("keeps its comments readable and refuses writes with 409", async () => {
    const s = (await createSpace(admin, org, { title: "Going away" })).id;
    const c = (await commenter.post(`/v1/spaces/${s}/comments`, { body: { markdown: "last words" } })).body;
    expect((await admin.delete(`/v1/spaces/${s}`)).status).toBe(204);
    expect((await reader.get(`/v1/spaces/${s}/comments`)).body.count).toBe(1);
    expect((await reader.get(`/v1/spaces/${s}/comments/${c.id}`)).status).toBe(200);
    const posted = await commenter.post(`/v1/spaces/${s}/comments`, { body: { markdown: "too late" } });
    expect(posted.status).toBe(409);
    expect(posted.body.error.message).toContain("restore");
    expect((await commenter.put(`/v1/spaces/${s}/comments/${c.id}`, { resolved: true })).status).toBe(409);
    expect((await commenter.post(`/v1/spaces/${s}/comments/${c.id}/replies`, { body: { markdown: "x" } })).status).toBe(409);
    expect((await commenter.delete(`/v1/spaces/${s}/comments/${c.id}`)).status).toBe(409);
  });
});

describe("open comment counts (Space.comments, ChangeRequest.comments, Comment.replies)", () => {
  it("are the counts of the rows, read with the object itself", async () => {
    const prisma = t.gateway.db.prisma;
    const s = (await createSpace(admin, org, { title: "Counts" })).id;
    const a = (await admin.post(`/v1/spaces/${s}/comments`, { body: { markdown: "open 1" } })).body;
    await admin.post(`/v1/spaces/${s}/comments`, { body: { markdown: "open 2" } });
    const resolved = (await admin.post(`/v1/spaces/${s}/comments`, { body: { markdown: "resolved" } })).body;
    await admin.put(`/v1/spaces/${s}/comments/${resolved.id}`, { resolved: true });
    await admin.post(`/v1/spaces/${s}/comments/${a.id}/replies`, { body: { markdown: "replies do not count" } });

    // A GET of the space sends one statement: its row holds the counts.
    const { count, result: got } = await fewestStatements(t, () => admin.get(`/v1/spaces/${s}`));
    expect(got.body.comments).toBe(2);
    expect(count).toBe(1);
    expect((await admin.get(`/v1/spaces/${s}/comments/${a.id}`)).body.replies).toBe(1);

    const expectedSpace = await prisma.comment.count({ where: { spaceId: space, changeRequestId: null, parentId: null, status: "open" } });
    const expectedCr = await prisma.comment.count({ where: { changeRequestId: CR_ID, parentId: null, status: "open" } });
    expect(expectedSpace).toBeGreaterThan(0);
    expect(expectedCr).toBeGreaterThan(0);
    expect((await admin.get(spaceBase)).body.comments).toBe(expectedSpace);
    expect((await admin.get(crBase)).body.comments).toBe(expectedCr);
    expect((await admin.get(`${spaceBase}/change-requests/${CR_OTHER}`)).body.comments).toBe(0);
  });
});

describe("GraphQL", () => {
  it("walks Space → comments → replies and ChangeRequest → comments with totalCount", async () => {
    const s = (await createSpace(admin, org, { title: "Graph" })).id;
    const c1 = (await admin.post(`/v1/spaces/${s}/comments`, { body: { markdown: "g1" } })).body;
    const c2 = (await commenter.post(`/v1/spaces/${s}/comments`, { body: { markdown: "g2" } })).body;
    await t.gateway.db.prisma.comment.update({ where: { id: c2.id }, data: { postedAt: new Date(Date.now() + 60_000) } });
    await commenter.post(`/v1/spaces/${s}/comments/${c1.id}/replies`, { body: { markdown: "g1 r1" } });
    await admin.post(`/v1/spaces/${s}/comments/${c1.id}/replies`, { body: { markdown: "g1 r2" } });
    await admin.put(`/v1/spaces/${s}/comments/${c2.id}`, { resolved: true });
    const res = await reader.graphql(
      `query($id: String!) { space(spaceId: $id) {
        comments(first: 10) { totalCount edges { node { id object repliesCount status body { markdown }
          postedBy { id } replies(first: 1) { totalCount pageInfo { hasNextPage } edges { node { id object body { markdown } postedBy { id } } } } } } }
        open: comments(status: open) { totalCount }
      } }`,
      { id: s },
    );
    expect(res.errors).toBeUndefined();
    const conn = res.data.space.comments;
    expect(conn.totalCount).toBe(2);
    expect(conn.edges.map((e: any) => e.node.id)).toEqual([c2.id, c1.id]);
    const first = conn.edges[1].node;
    expect(first).toMatchObject({
      object: "comment",
      repliesCount: 2,
      status: "open",
      body: { markdown: "g1" },
      postedBy: { id: admin.user },
    });
    expect(first.replies.totalCount).toBe(2);
    expect(first.replies.pageInfo.hasNextPage).toBe(true);
    expect(first.replies.edges[0].node).toMatchObject({
      object: "comment-reply",
      body: { markdown: "g1 r1" },
      postedBy: { id: commenter.user },
    });
    expect(res.data.space.open.totalCount).toBe(1);

    const cr = await reader.graphql(
      `query($s: String!) { changeRequest(spaceId: $s, changeRequestId: "1") { comments(first: 50) { totalCount edges { node { target { changeRequest } } } } } }`,
      { s: space },
    );
    expect(cr.errors).toBeUndefined();
    const crComments = await t.gateway.db.prisma.comment.count({ where: { changeRequestId: CR_ID, parentId: null } });
    expect(cr.data.changeRequest.comments.totalCount).toBe(crComments);
    expect(cr.data.changeRequest.comments.edges.every((e: any) => e.node.target.changeRequest === CR_ID)).toBe(true);

    const root = await reader.graphql(
      `query($s: String!, $c: String!) { spaceComment(spaceId: $s, commentId: $c, format: document) { id body { markdown document } target { space } } }`,
      { s, c: c1.id },
    );
    expect(root.errors).toBeUndefined();
    expect(root.data.spaceComment.body.document.object).toBe("document");
    const stranger = await other.graphql(`query($s: String!) { spaceComments(spaceId: $s) { count } }`, { s });
    expect(stranger.errors[0].extensions.code).toBe(404);
  });
});
