import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { purgeDeletedSpaces } from "../../../src/domains/spaces/spaces.service.js";
import { acmeDocs, created, createSpace, expectError, type Admin, type Member, PNG } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin; // admin of Acme
let other: Admin; // admin of another organization
let editor: Member;
let reader: Member;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, editor, reader } = await acmeDocs(t, { editor: ["eddie@acme.test", "edit"], reader: ["rita@acme.test", "read"] }));
});
afterAll(() => t?.close());

async function newSpace(title = "Handbook", by: Caller = admin, org = admin.organization): Promise<string> {
  return (await createSpace(by, org, { title })).id;
}

async function newPage(spaceId: string, body: Record<string, unknown>, by: Caller = admin): Promise<any> {
  return created(await by.post(`/v1/spaces/${spaceId}/content/pages`, body));
}

// The spec's fields, and `kind` and `tags` that GitBook's schema requires.
const DOC_PAGE_KEYS = [
  "createdAt",
  "documentId",
  "hidden",
  "id",
  "kind",
  "layout",
  "markdown",
  "noIndex",
  "noRobotsIndex",
  "pages",
  "path",
  "slug",
  "tags",
  "title",
  "type",
  "updatedAt",
  "urls",
];

describe("GET /v1/spaces/{spaceId}/content", () => {
  it("serves a new space's initial, empty revision with the documented fields", async () => {
    const spaceId = await newSpace();
    const res = await admin.get(`/v1/spaces/${spaceId}/content`);
    expect(res.status).toBe(200);
    const rev = res.body;
    expect(Object.keys(rev).sort()).toEqual([
      "createdAt",
      "files",
      "id",
      "object",
      "pages",
      "parents",
      "reusableContents",
      "tags",
      "type",
      "urls",
      "variables",
    ]);
    expect(rev).toMatchObject({
      object: "revision",
      parents: [],
      pages: [],
      files: [],
      reusableContents: [],
      variables: {},
      type: "initial",
    });
    expect(rev.id).toMatch(/^rev_/);
    expect(rev.urls).toEqual({ app: `${t.url}/app/s/${spaceId}/~/revisions/${rev.id}` });
    expect(new Date(rev.createdAt).toISOString()).toBe(rev.createdAt);
    // The same revision on every read; the space reports it as its active revision.
    expect((await admin.get(`/v1/spaces/${spaceId}/content`, { metadata: false, computed: false })).body.id).toBe(rev.id);
    expect((await admin.get(`/v1/spaces/${spaceId}`)).body.revision).toBe(rev.id);
    expectError(await admin.get(`/v1/spaces/${spaceId}/content`, { metadata: "maybe" }), 400, "metadata");
  });

  it("makes each change a new revision whose parent is the previous one", async () => {
    const spaceId = await newSpace();
    const first = (await admin.get(`/v1/spaces/${spaceId}/content`)).body;
    const page = await newPage(spaceId, { title: "Intro", markdown: "Hello" });
    const second = (await admin.get(`/v1/spaces/${spaceId}/content`)).body;
    expect(second.parents).toEqual([first.id]);
    expect(second.type).toBe("edits");
    expect(second.pages.map((p: any) => p.id)).toEqual([page.id]);
    await admin.patch(`/v1/spaces/${spaceId}/content/page/${page.id}`, { markdown: "Hello again" });
    const third = (await admin.get(`/v1/spaces/${spaceId}/content`)).body;
    expect(third.parents).toEqual([second.id]);
    // Old revisions are immutable snapshots.
    const stored = await t.gateway.db.prisma.revision.findUniqueOrThrow({ where: { id: second.id } });
    expect((stored.content as any).pages[page.id].markdown).toBe("Hello");
  });

  it("answers 404 to another organization and 401 without a token", async () => {
    const spaceId = await newSpace();
    expectError(await other.get(`/v1/spaces/${spaceId}/content`), 404, spaceId);
    expectError(await t.caller("").get(`/v1/spaces/${spaceId}/content`), 401);
  });
});

describe("pages", () => {
  it("creates document, group and link pages with exactly the documented fields (201)", async () => {
    const spaceId = await newSpace();
    const doc = await newPage(spaceId, {
      title: "Getting Started",
      markdown: "# Install\n\nRun it.",
      description: "First steps",
      emoji: "🚀",
    });
    expect(Object.keys(doc).sort()).toEqual([...DOC_PAGE_KEYS, "description", "emoji"].sort());
    expect(doc).toMatchObject({
      id: expect.stringMatching(/^page_/),
      title: "Getting Started",
      emoji: "🚀",
      markdown: "# Install\n\nRun it.",
      type: "document",
      slug: "getting-started",
      path: "getting-started",
      description: "First steps",
      pages: [],
      hidden: false,
      noIndex: false,
      noRobotsIndex: false,
      urls: { app: `${t.url}/app/s/${spaceId}/getting-started` },
      layout: {
        width: "default",
        cover: false,
        coverSize: "hero",
        title: true,
        description: true,
        tableOfContents: true,
        outline: true,
        pagination: true,
        coverMask: "none",
        metadata: true,
        tags: true,
        actions: true,
        anchors: true,
      },
      kind: "sheet",
      tags: [],
    });
    expect(doc.documentId).toEqual(expect.any(String));
    expect(doc.createdAt).toBe(doc.updatedAt);

    const group = await newPage(spaceId, { title: "Guides", type: "group" });
    expect(Object.keys(group).sort()).toEqual([
      "createdAt",
      "hidden",
      "id",
      "kind",
      "noIndex",
      "noRobotsIndex",
      "pages",
      "path",
      "slug",
      "tags",
      "title",
      "type",
      "updatedAt",
      "urls",
    ]);
    expect(group).toMatchObject({ type: "group", path: "" });
    const inGroup = await newPage(spaceId, { title: "Deploy", parent: group.id, markdown: "Ship it." });
    expect(inGroup.path).toBe("deploy"); // groups add no path segment
    const nested = await newPage(spaceId, { title: "Docker", parent: inGroup.id, hidden: true });
    expect(nested).toMatchObject({ path: "deploy/docker", hidden: true, markdown: "" });

    const link = await newPage(spaceId, { title: "Status", type: "link", href: "https://status.example.com" });
    expect(link).toMatchObject({ type: "link", markdown: "[Status](<https://status.example.com>)" });
    expect(link).not.toHaveProperty("documentId");

    const tree = (await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body;
    expect(Object.keys(tree)).toEqual(["pages"]);
    expect(tree.pages.map((p: any) => p.title)).toEqual(["Getting Started", "Guides", "Status"]);
    const guides = tree.pages[1];
    expect(guides.pages).toHaveLength(1);
    expect(guides.pages[0]).toMatchObject({ id: inGroup.id, path: "deploy", markdown: "Ship it." });
    expect(guides.pages[0].pages[0]).toMatchObject({ id: nested.id, path: "deploy/docker", hidden: true, pages: [] });
    expect(Object.keys(guides.pages[0].pages[0]).sort()).toEqual(DOC_PAGE_KEYS);
  });

  it("places pages by position and keeps slugs unique at the same path", async () => {
    const spaceId = await newSpace();
    const a = await newPage(spaceId, { title: "A" });
    const c = await newPage(spaceId, { title: "C" });
    const b = await newPage(spaceId, { title: "B", position: 1 });
    const first = await newPage(spaceId, { title: "First", position: 0 });
    const again = await newPage(spaceId, { title: "A" });
    expect(again.slug).toBe("a-2");
    const tree = (await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages;
    expect(tree.map((p: any) => p.id)).toEqual([first.id, a.id, b.id, c.id, again.id]);
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "X", slug: "a" }), 409, "slug");
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "X", slug: "Not A Slug" }), 400, "slug");
  });

  it("serves one page, with a JSON document derived from its markdown when format=document", async () => {
    const spaceId = await newSpace();
    const markdown = [
      "# Title",
      "",
      'Some **bold** and _italic_ and `code` and ~~gone~~ with a [link](https://example.com "Ex").',
      "",
      "- one",
      "- [x] done",
      "",
      "1. first",
      "",
      "```ts",
      "const a = 1;",
      "```",
      "",
      "> quoted",
      "",
      "| a | b |",
      "|:--|--:|",
      "| 1 | 2 |",
      "",
      "![alt text](https://example.com/i.png)",
      "",
      "---",
    ].join("\n");
    const page = await newPage(spaceId, { title: "Rich", markdown });
    const plain = await admin.get(`/v1/spaces/${spaceId}/content/page/${page.id}`);
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty("document");
    expect(plain.body.markdown).toBe(markdown);

    const res = await admin.get(`/v1/spaces/${spaceId}/content/page/${page.id}`, {
      format: "document",
      evaluated: true,
      metadata: true,
      computed: false,
    });
    expect(res.status).toBe(200);
    // GitBook's JSONDocument instead of the markdown, as GitBook answers format=document.
    expect(res.body).not.toHaveProperty("markdown");
    const doc = res.body.document;
    expect(doc).toMatchObject({ object: "document", data: {} });
    expect(doc.nodes.map((n: any) => n.type)).toEqual([
      "heading-1",
      "paragraph",
      "list-tasks",
      "list-ordered",
      "code",
      "blockquote",
      "code",
      "paragraph",
      "divider",
    ]);
    const text = (value: string, marks: string[] = []) => ({
      object: "text",
      leaves: [{ object: "leaf", text: value, marks: marks.map((type) => ({ object: "mark", type })) }],
    });
    expect(doc.nodes[0]).toEqual({
      object: "block",
      type: "heading-1",
      key: "0",
      isVoid: false,
      data: { id: "title" },
      meta: { id: "title" },
      nodes: [text("Title")],
    });
    const para = doc.nodes[1].nodes;
    expect(para).toContainEqual(text("bold", ["bold"]));
    expect(para).toContainEqual(text("italic", ["italic"]));
    expect(para).toContainEqual(text("code", ["code"]));
    expect(para).toContainEqual(text("gone", ["strikethrough"]));
    expect(para).toContainEqual({
      object: "inline",
      type: "link",
      key: "1.9",
      isVoid: false,
      data: { ref: { kind: "url", url: "https://example.com" } },
      nodes: [text("link")],
    });
    expect(doc.nodes[2].nodes.map((item: any) => item.data)).toEqual([{ checked: false }, { checked: true }]);
    expect(doc.nodes[3].data).toEqual({ start: 1 });
    expect(doc.nodes[4]).toEqual({
      object: "block",
      type: "code",
      key: "4",
      isVoid: false,
      data: { syntax: "ts" },
      nodes: [{ object: "block", type: "code-line", key: "4.0", isVoid: false, data: {}, nodes: [text("const a = 1;")] }],
    });
    // A table has no GitBook block it fits: a code block of its markdown, which writes back as itself.
    expect(doc.nodes[6]).toMatchObject({ type: "code", data: { syntax: "markdown" }, meta: { rawMarkdown: true } });
    expect(doc.nodes[7].nodes).toContainEqual({
      object: "inline",
      type: "inline-image",
      key: "7.0",
      isVoid: true,
      data: { ref: { kind: "url", url: "https://example.com/i.png" }, alt: "alt text" },
    });
    expect(doc.nodes[8]).toEqual({ object: "block", type: "divider", key: "8", isVoid: true, data: {} });

    expectError(await admin.get(`/v1/spaces/${spaceId}/content/page/${page.id}`, { format: "html" }), 400, "format");
    expectError(await admin.get(`/v1/spaces/${spaceId}/content/page/page_missing`), 404, "page_missing");
    expectError(await other.get(`/v1/spaces/${spaceId}/content/page/${page.id}`), 404);
  });

  it("updates, moves and deletes pages (the sub-tree with them)", async () => {
    const spaceId = await newSpace();
    const parent = await newPage(spaceId, { title: "Parent", emoji: "1f4da", description: "About" });
    const child = await newPage(spaceId, { title: "Child", parent: parent.id, markdown: "x" });
    const grandchild = await newPage(spaceId, { title: "Grandchild", parent: child.id });
    const sibling = await newPage(spaceId, { title: "Sibling" });

    const res = await admin.patch(`/v1/spaces/${spaceId}/content/page/${parent.id}`, {
      title: "Renamed",
      markdown: "New body",
      description: null,
      emoji: null,
      hidden: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: parent.id, title: "Renamed", markdown: "New body", hidden: true, slug: "parent", path: "parent" });
    expect(res.body).not.toHaveProperty("description");
    expect(res.body).not.toHaveProperty("emoji");
    expect(res.body.updatedAt > parent.updatedAt).toBe(true);
    expect(res.body.pages[0].pages[0].id).toBe(grandchild.id);

    // Move the child to the top level, before everything.
    const moved = await admin.patch(`/v1/spaces/${spaceId}/content/page/${child.id}`, { parent: null, position: 0 });
    expect(moved.body).toMatchObject({ path: "child", pages: [{ id: grandchild.id, path: "child/grandchild" }] });
    let tree = (await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages;
    expect(tree.map((p: any) => p.id)).toEqual([child.id, parent.id, sibling.id]);

    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/${child.id}`, { parent: grandchild.id }), 400, "parent");
    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/${child.id}`, { parent: "page_nope" }), 400, "parent");
    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/${child.id}`, { position: -1 }), 400, "position");
    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/${child.id}`, { title: "" }), 400, "title");
    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/page_nope`, { title: "x" }), 404, "page_nope");

    const del = await admin.delete(`/v1/spaces/${spaceId}/content/page/${child.id}`);
    expect(del.status).toBe(204);
    tree = (await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages;
    expect(tree.map((p: any) => p.id)).toEqual([parent.id, sibling.id]);
    expectError(await admin.get(`/v1/spaces/${spaceId}/content/page/${grandchild.id}`), 404);
    const before = (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;
    expect((await admin.delete(`/v1/spaces/${spaceId}/content/page/${child.id}`)).status).toBe(204);
    expect((await admin.get(`/v1/spaces/${spaceId}/content`)).body.id).toBe(before); // nothing to delete: no new revision
  });

  it("rejects bad input with a 400 naming the field", async () => {
    const spaceId = await newSpace();
    const group = await newPage(spaceId, { title: "G", type: "group" });
    const cases: [Record<string, unknown>, string][] = [
      [{}, "title"],
      [{ title: "   " }, "title"],
      [{ title: "x".repeat(257) }, "title"],
      [{ title: "x", type: "folder" }, "type"],
      [{ title: "x", position: -2 }, "position"],
      [{ title: "x", position: "first" }, "position"],
      [{ title: "x", emoji: "not an emoji" }, "emoji"],
      [{ title: "x", type: "link" }, "href"],
      [{ title: "x", type: "link", href: "notaurl" }, "href"],
      [{ title: "x", href: "https://example.com" }, "href"],
      [{ title: "x", type: "group", markdown: "text" }, "markdown"],
      [{ title: "x", parent: "page_nope" }, "parent"],
      [{ title: "x", unknown: 1 }, "unknown"],
    ];
    for (const [body, field] of cases) expectError(await admin.post(`/v1/spaces/${spaceId}/content/pages`, body), 400, field);
    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/${group.id}`, { markdown: "text" }), 400, "markdown");
    expectError(await admin.patch(`/v1/spaces/${spaceId}/content/page/${group.id}`, { markdown: null }), 400, "markdown");
    expectError(await admin.raw("POST", `/v1/spaces/${spaceId}/content/pages`, "{"), 400, "JSON");
    expect((await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages).toHaveLength(1);
  });

  it("needs the edit role to write (403), and refuses edits while the space is locked (403)", async () => {
    const spaceId = await newSpace();
    const page = await newPage(spaceId, { title: "Page" });
    expectError(await reader.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Nope" }), 403, "edit");
    expectError(await reader.patch(`/v1/spaces/${spaceId}/content/page/${page.id}`, { title: "Nope" }), 403, "edit");
    expectError(await reader.delete(`/v1/spaces/${spaceId}/content/page/${page.id}`), 403, "edit");
    expect((await reader.get(`/v1/spaces/${spaceId}/content/page/${page.id}`)).status).toBe(200);
    expect((await editor.post(`/v1/spaces/${spaceId}/content/pages`, { title: "By editor" })).status).toBe(201);

    expect((await admin.patch(`/v1/spaces/${spaceId}`, { editMode: "locked" })).status).toBe(200);
    const before = (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Locked" }), 403, "locked");
    expectError(await editor.patch(`/v1/spaces/${spaceId}/content/page/${page.id}`, { title: "Locked" }), 403, "locked");
    expectError(await admin.delete(`/v1/spaces/${spaceId}/content/page/${page.id}`), 403, "locked");
    expectError(
      await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "a.png", contentType: "image/png", data: PNG }),
      403,
      "locked",
    );
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: "http://127.0.0.1:9/", source: "website" }), 403, "locked");
    expect((await admin.get(`/v1/spaces/${spaceId}/content`)).body.id).toBe(before);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/pages`)).status).toBe(200);
    await admin.patch(`/v1/spaces/${spaceId}`, { editMode: "live" });
    expect((await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Live again" })).status).toBe(201);

    for (const res of [
      await other.post(`/v1/spaces/${spaceId}/content/pages`, { title: "x" }),
      await other.get(`/v1/spaces/${spaceId}/content/pages`),
      await other.get(`/v1/spaces/${spaceId}/content/files`),
      await other.get(`/v1/spaces/${spaceId}/links`),
      await other.get(`/v1/spaces/${spaceId}/search`, { query: "page" }),
    ]) {
      expectError(res, 404);
    }
  });

  it("serves the same content to GraphQL, with typed sub-pages and write mutations", async () => {
    const spaceId = await newSpace();
    const created = await admin.graphql(
      `mutation($s: String!) { pageCreate(spaceId: $s, title: "Top", markdown: "hi") { id path urls { app } } }`,
      { s: spaceId },
    );
    const top = created.data.pageCreate;
    const child = await admin.graphql(
      `mutation($s: String!, $p: String) { pageCreate(spaceId: $s, title: "Sub", parent: $p) { id path } }`,
      { s: spaceId, p: top.id },
    );
    expect(child.data.pageCreate.path).toBe("top/sub");
    await admin.graphql(`mutation($s: String!, $p: String) { pageCreate(spaceId: $s, title: "Deep", parent: $p) { id } }`, {
      s: spaceId,
      p: child.data.pageCreate.id,
    });
    const res = await admin.graphql(
      `query($s: String!) {
        spacePages(spaceId: $s) { pages { title pages { title pages { title path type } } } }
        space(spaceId: $s) { content { type files { id } pages { id } } }
      }`,
      { s: spaceId },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.spacePages.pages[0].pages[0].pages[0]).toEqual({ title: "Deep", path: "top/sub/deep", type: "document" });
    expect(res.data.space.content).toEqual({ type: "edits", files: [], pages: [{ id: top.id }] });
    const updated = await admin.graphql(
      `mutation($s: String!, $p: String!) { pageUpdate(spaceId: $s, pageId: $p, title: "Top!") { title } }`,
      { s: spaceId, p: top.id },
    );
    expect(updated.data.pageUpdate.title).toBe("Top!");
    const deleted = await admin.graphql(
      `mutation($s: String!, $p: String!) { pageDelete(spaceId: $s, pageId: $p) { deletedId space { id } } }`,
      { s: spaceId, p: top.id },
    );
    expect(deleted.data.pageDelete).toEqual({ deletedId: top.id, space: { id: spaceId } });
    const denied = await reader.graphql(`mutation($s: String!) { pageCreate(spaceId: $s, title: "x") { id } }`, { s: spaceId });
    expect(denied.errors[0].extensions.code).toBe(403);
  });
});

describe("files", () => {
  it("gives a duplicated space its own copy of the content and files, kept when the source is deleted for good", async () => {
    const source = await newSpace("Source");
    const file = created(
      await admin.post(`/v1/spaces/${source}/content/files`, { name: "diagram.png", contentType: "image/png", data: PNG }),
    );
    const page = await newPage(source, { title: "Intro", markdown: `See ![diagram](file:${file.id})` });
    const copy = created(await admin.post(`/v1/spaces/${source}/duplicate`)).id;
    const content = (await admin.get(`/v1/spaces/${copy}/content`)).body;
    expect(content.pages.map((p: any) => [p.id, p.title])).toEqual([[page.id, "Intro"]]);
    const copied = (await admin.get(`/v1/spaces/${copy}/content/files/${file.id}`)).body;
    expect(copied).toMatchObject({
      id: file.id,
      name: "diagram.png",
      downloadURL: `${t.url}/v1/spaces/${copy}/content/files/${file.id}/download`,
    });
    const bytes = async () => {
      const res = await fetch(copied.downloadURL, { headers: { authorization: `Bearer ${admin.token}` } });
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    expect((await bytes()).equals(Buffer.from(PNG, "base64"))).toBe(true);
    // The source is deleted, then removed for good once its retention ends: the copy keeps its bytes.
    expect((await admin.delete(`/v1/spaces/${source}`)).status).toBe(204);
    await purgeDeletedSpaces(t.gateway.db.prisma, 7, new Date(Date.now() + 8 * 24 * 60 * 60 * 1000));
    expectError(await admin.get(`/v1/spaces/${source}`), 404);
    expect((await bytes()).equals(Buffer.from(PNG, "base64"))).toBe(true);
  });

  it("uploads a file (201), lists it, serves it and its bytes at downloadURL", async () => {
    const spaceId = await newSpace();
    const res = await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "diagram.png", contentType: "image/png", data: PNG });
    expect(res.status).toBe(201);
    const file = res.body;
    expect(Object.keys(file).sort()).toEqual(["contentType", "dimensions", "downloadURL", "id", "name", "size"]);
    expect(file).toMatchObject({
      id: expect.stringMatching(/^file_/),
      name: "diagram.png",
      contentType: "image/png",
      size: Buffer.from(PNG, "base64").length,
      dimensions: { width: 2, height: 3 },
      downloadURL: `${t.url}/v1/spaces/${spaceId}/content/files/${file.id}/download`,
    });
    const text = await admin.post(`/v1/spaces/${spaceId}/content/files`, {
      name: "notes.txt",
      contentType: "text/plain",
      data: Buffer.from("hello").toString("base64"),
    });
    expect(text.body).not.toHaveProperty("dimensions");

    const list = await admin.get(`/v1/spaces/${spaceId}/content/files`);
    expect(list.body.count).toBe(2);
    expect(list.body.items.map((f: any) => f.name)).toEqual(["diagram.png", "notes.txt"]);
    const paged = await admin.get(`/v1/spaces/${spaceId}/content/files`, { limit: 1 });
    expect(paged.body.items).toHaveLength(1);
    expect((await admin.get(`/v1/spaces/${spaceId}/content/files`, { limit: 1, page: paged.body.next.page })).body.items[0].name).toBe(
      "notes.txt",
    );
    expect((await reader.get(`/v1/spaces/${spaceId}/content/files/${file.id}`, { metadata: false })).body).toEqual(file);
    expect((await admin.get(`/v1/spaces/${spaceId}`)).body.revision).toBe((await admin.get(`/v1/spaces/${spaceId}/content`)).body.id);
    expect((await admin.get(`/v1/spaces/${spaceId}/content`)).body.files).toHaveLength(2);
    expectError(await admin.get(`/v1/spaces/${spaceId}/content/files/file_nope`), 404, "file_nope");

    const download = await fetch(file.downloadURL, { headers: { authorization: `Bearer ${reader.token}` } });
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(PNG, "base64"))).toBe(true);
    const anonymous = await fetch(file.downloadURL);
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe(401);
    expect((await fetch(file.downloadURL, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(404);
    expect(
      (
        await fetch(`${t.url}/v1/spaces/${spaceId}/content/files/file_nope/download`, {
          headers: { authorization: `Bearer ${admin.token}` },
        })
      ).status,
    ).toBe(404);
  });

  it("rejects bad uploads with a 400 naming the field", async () => {
    const spaceId = await newSpace();
    const cases: [Record<string, unknown>, string][] = [
      [{ contentType: "image/png", data: PNG }, "name"],
      [{ name: "a/b.png", contentType: "image/png", data: PNG }, "name"],
      [{ name: "a.png", data: PNG }, "contentType"],
      [{ name: "a.png", contentType: "not a type", data: PNG }, "contentType"],
      [{ name: "a.png", contentType: "image/png" }, "data"],
      [{ name: "a.png", contentType: "image/png", data: "%%%not base64" }, "data"],
    ];
    for (const [body, field] of cases) expectError(await admin.post(`/v1/spaces/${spaceId}/content/files`, body), 400, field);
    const before = t.config.maxFileBytes;
    t.config.maxFileBytes = 10;
    try {
      expectError(
        await admin.post(`/v1/spaces/${spaceId}/content/files`, {
          name: "big.bin",
          contentType: "application/octet-stream",
          data: Buffer.alloc(64).toString("base64"),
        }),
        400,
        "at most 10 bytes",
      );
    } finally {
      t.config.maxFileBytes = before;
    }
    expect((await admin.get(`/v1/spaces/${spaceId}/content/files`)).body.count).toBe(0);
    expect(await t.gateway.db.prisma.fileBlob.count({ where: { spaceId } })).toBe(0);
    expectError(
      await reader.post(`/v1/spaces/${spaceId}/content/files`, { name: "a.png", contentType: "image/png", data: PNG }),
      403,
      "edit",
    );
  });

  it("lists the pages using a file as backlinks", async () => {
    const spaceId = await newSpace();
    const file = (await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "d.png", contentType: "image/png", data: PNG })).body;
    const a = await newPage(spaceId, { title: "A", markdown: `![diagram](file:${file.id})` });
    const b = await newPage(spaceId, { title: "B", markdown: `See [the file](${file.downloadURL}).` });
    await newPage(spaceId, { title: "C", markdown: "No files here, just `file:" + file.id + "` as code." });
    const revision = (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;
    const res = await admin.get(`/v1/spaces/${spaceId}/content/files/${file.id}/backlinks`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.items.map((i: any) => i.page)).toEqual([a.id, b.id]);
    const item = res.body.items[0];
    expect(Object.keys(item).sort()).toEqual(["kind", "page", "space", "versionContext"]);
    expect(item).toMatchObject({ kind: "page", versionContext: { type: "revision", revision }, space: { object: "space", id: spaceId } });
    expect((await admin.get(`/v1/spaces/${spaceId}/content/files/${file.id}/backlinks`, { limit: 1 })).body.next.page).toEqual(
      expect.any(String),
    );
    expectError(await admin.get(`/v1/spaces/${spaceId}/content/files/file_nope/backlinks`), 404);
  });
});

describe("links", () => {
  it("reports ok, broken and in-app links with stats, filtered by status", async () => {
    const spaceId = await newSpace("Linked");
    const file = (await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "d.png", contentType: "image/png", data: PNG })).body;
    const guide = await newPage(spaceId, {
      title: "Guide",
      markdown: [
        "## Setup",
        "",
        "[FAQ](faq) and [FAQ again](./faq.md) and [missing](missing-page)",
        "[setup](#setup) [nope](#nope) [billing](faq#billing)",
        `[external](https://example.com/x) [space](${t.url}/app/s/${spaceId}) [org](${t.url}/app/o/${admin.organization})`,
        `![img](file:${file.id}) [gone](file:file_gone)`,
      ].join("\n"),
    });
    const faq = await newPage(spaceId, {
      title: "FAQ",
      slug: "faq",
      markdown: "## Billing\n\n[back](/guide#setup) [ext](https://example.com/x)",
    });
    const revision = (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;

    const res = await admin.get(`/v1/spaces/${spaceId}/links`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["count", "items", "stats"]);
    const items = res.body.items as any[];
    expect(res.body.stats).toEqual({ total: items.length, broken: { total: 3, changeRequest: 0 } });
    expect(items.map((i) => i.status)).toEqual(
      [...items.map((i) => i.status)].sort((a, b) => ["broken", "in-app", "ok"].indexOf(a) - ["broken", "in-app", "ok"].indexOf(b)),
    );
    const find = (pred: (i: any) => boolean) => items.filter(pred);
    const toFaq = find((i) => i.targetReference.kind === "page" && i.targetReference.page === faq.id);
    expect(toFaq).toHaveLength(1); // both spellings of the link are one target
    expect(toFaq[0]).toMatchObject({
      status: "ok",
      relation: "reference",
      targetReference: { versionContext: { type: "revision", revision }, space: { id: spaceId } },
    });
    expect(toFaq[0].locationReferences).toEqual([
      expect.objectContaining({ kind: "page", page: guide.id, versionContext: { type: "revision", revision } }),
    ]);
    expect(find((i) => i.targetReference.url === "missing-page")[0]).toMatchObject({ status: "broken", targetReference: { kind: "page" } });
    expect(find((i) => i.targetReference.anchor === "nope")[0]).toMatchObject({
      status: "broken",
      targetReference: { kind: "anchor", page: guide.id },
    });
    expect(find((i) => i.targetReference.anchor === "setup")).toHaveLength(1); // from the guide itself and from the FAQ
    expect(
      find((i) => i.targetReference.anchor === "setup")[0]
        .locationReferences.map((l: any) => l.page)
        .sort(),
    ).toEqual([guide.id, faq.id].sort());
    expect(find((i) => i.targetReference.anchor === "billing")[0]).toMatchObject({
      status: "ok",
      targetReference: { kind: "anchor", page: faq.id },
    });
    expect(find((i) => i.targetReference.url === "https://example.com/x")[0]).toMatchObject({
      status: "ok",
      targetReference: { kind: "url" },
    });
    expect(find((i) => i.targetReference.url === "https://example.com/x")[0].locationReferences).toHaveLength(2);
    expect(find((i) => i.targetReference.kind === "space")[0]).toMatchObject({
      status: "in-app",
      targetReference: { url: `${t.url}/app/s/${spaceId}`, space: { id: spaceId } },
    });
    expect(find((i) => i.targetReference.kind === "organization")[0]).toMatchObject({
      status: "in-app",
      targetReference: { organization: { object: "organization", id: admin.organization } },
    });
    expect(find((i) => i.relation === "image")[0]).toMatchObject({
      status: "ok",
      targetReference: { kind: "file", file: { id: file.id, name: "d.png" } },
    });
    expect(find((i) => i.targetReference.url === "file:file_gone")[0]).toMatchObject({
      status: "broken",
      targetReference: { kind: "file" },
    });

    const broken = await admin.get(`/v1/spaces/${spaceId}/links`, { status: "broken" });
    expect(broken.body.count).toBe(3);
    expect(broken.body.items.every((i: any) => i.status === "broken")).toBe(true);
    expect(broken.body.stats.total).toBe(items.length);
    expect((await admin.get(`/v1/spaces/${spaceId}/links`, { status: "in-app" })).body.count).toBe(2);
    expectError(await admin.get(`/v1/spaces/${spaceId}/links`, { status: "fine" }), 400, "status");
    const first = await admin.get(`/v1/spaces/${spaceId}/links`, { limit: 2 });
    expect(first.body.items).toHaveLength(2);
    const second = await admin.get(`/v1/spaces/${spaceId}/links`, { limit: 2, page: first.body.next.page });
    expect(second.body.items[0]).toEqual(items[2]);

    const pageLinks = await reader.get(`/v1/spaces/${spaceId}/content/page/${faq.id}/links`);
    expect(pageLinks.status).toBe(200);
    expect(pageLinks.body.count).toBe(2);
    expect(pageLinks.body.stats).toEqual({ total: 2, broken: { total: 0, changeRequest: 0 } });
    expect((await reader.get(`/v1/spaces/${spaceId}/content/page/${guide.id}/links`, { status: "broken", limit: 1 })).body).toMatchObject({
      count: 3,
      next: { page: expect.any(String) },
    });
    expectError(await admin.get(`/v1/spaces/${spaceId}/content/page/page_nope/links`), 404);

    // A stranger's space linked in-app stays a plain URL.
    const hidden = await newSpace("Other", other, other.organization);
    await admin.patch(`/v1/spaces/${spaceId}/content/page/${faq.id}`, { markdown: `[x](${t.url}/app/s/${hidden})` });
    const strangers = (await admin.get(`/v1/spaces/${spaceId}/content/page/${faq.id}/links`)).body.items;
    expect(strangers).toEqual([
      expect.objectContaining({ status: "in-app", targetReference: { kind: "url", url: `${t.url}/app/s/${hidden}` } }),
    ]);
  });

  it("counts broken links that change requests add", async () => {
    const spaceId = await newSpace();
    const page = await newPage(spaceId, { title: "Home", markdown: "[ok](https://example.com)" });
    const cr = (await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "links" })).body;
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content/page/${page.id}`, {
      markdown: "[ok](https://example.com) [broken](nowhere)",
    });
    const main = await admin.get(`/v1/spaces/${spaceId}/links`);
    expect(main.body.stats).toEqual({ total: 1, broken: { total: 0, changeRequest: 1 } });
    const inCr = await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr.number}/content/page/${page.id}/links`);
    expect(inCr.body.stats).toEqual({ total: 2, broken: { total: 1, changeRequest: 1 } });
    expect(inCr.body.items[0]).toMatchObject({ status: "broken", targetReference: { kind: "page", url: "nowhere" } });
  });
});

describe("search", () => {
  let spaceId: string;
  let install: any;
  let config: any;

  beforeAll(async () => {
    spaceId = await newSpace("Gateway docs");
    config = await newPage(spaceId, {
      title: "Configuration",
      markdown:
        "Before you provision, read this.\n\n## Provision options\n\nThe provision can use Docker. Provision flags: --quiet.\n\n## Logging\n\nLogs go to stdout.",
    });
    install = await newPage(spaceId, { title: "Provision the gateway", markdown: "Download it.\n\n## Requirements\n\nNode 20." });
    await newPage(spaceId, { title: "Unrelated", markdown: "Nothing to see." });
  });

  it("ranks title matches first and lists the matching sections", async () => {
    const res = await reader.get(`/v1/spaces/${spaceId}/search`, { query: "provision" });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.items.map((i: any) => i.id)).toEqual([install.id, config.id]);
    const hit = res.body.items[1];
    expect(Object.keys(hit).sort()).toEqual(["id", "path", "sections", "title", "urls"]);
    expect(hit).toMatchObject({ title: "Configuration", path: "configuration", urls: { app: `${t.url}/app/s/${spaceId}/configuration` } });
    expect(hit.sections[0]).toEqual({
      id: "provision-options",
      title: "Provision options",
      path: "configuration#provision-options",
      body: "The provision can use Docker. Provision flags: --quiet.",
      urls: { app: `${t.url}/app/s/${spaceId}/configuration#provision-options` },
    });
    expect(hit.sections.map((s: any) => s.id)).toEqual(["provision-options", config.id]);
    // Stemming: "provisioning" finds "provision"; websearch syntax: exclusions.
    expect((await reader.get(`/v1/spaces/${spaceId}/search`, { query: "provisioning" })).body.count).toBe(2);
    expect((await reader.get(`/v1/spaces/${spaceId}/search`, { query: "provision -docker" })).body.items.map((i: any) => i.id)).toEqual([
      install.id,
    ]);
    expect((await reader.get(`/v1/spaces/${spaceId}/search`, { query: "stdout" })).body.items[0].sections[0].id).toBe("logging");
    expect((await reader.get(`/v1/spaces/${spaceId}/search`, { query: "zebra" })).body).toEqual({ count: 0, items: [] });
    const page1 = await reader.get(`/v1/spaces/${spaceId}/search`, { query: "provision", limit: 1 });
    expect(page1.body.items.map((i: any) => i.id)).toEqual([install.id]);
    expect(
      (await reader.get(`/v1/spaces/${spaceId}/search`, { query: "provision", limit: 1, page: page1.body.next.page })).body.items[0].id,
    ).toBe(config.id);
  });

  it("follows the active revision", async () => {
    const page = await newPage(spaceId, { title: "Temporary platypus" });
    expect((await admin.get(`/v1/spaces/${spaceId}/search`, { query: "platypus" })).body.count).toBe(1);
    await admin.patch(`/v1/spaces/${spaceId}/content/page/${page.id}`, { title: "Temporary wombat" });
    expect((await admin.get(`/v1/spaces/${spaceId}/search`, { query: "platypus" })).body.count).toBe(0);
    expect((await admin.get(`/v1/spaces/${spaceId}/search`, { query: "wombat" })).body.items[0].title).toBe("Temporary wombat");
    await admin.delete(`/v1/spaces/${spaceId}/content/page/${page.id}`);
    expect((await admin.get(`/v1/spaces/${spaceId}/search`, { query: "wombat" })).body.count).toBe(0);
  });

  it("requires a query of at most 512 characters", async () => {
    expectError(await admin.get(`/v1/spaces/${spaceId}/search`), 400, "query");
    expectError(await admin.get(`/v1/spaces/${spaceId}/search`, { query: "  " }), 400, "query");
    expectError(await admin.get(`/v1/spaces/${spaceId}/search`, { query: "x".repeat(513) }), 400, "query");
    expect((await admin.get(`/v1/spaces/${spaceId}/search`, { query: "x".repeat(512) })).status).toBe(200);
    expectError(await admin.get(`/v1/orgs/${admin.organization}/search`, { query: "x".repeat(513) }), 400, "query");
    expectError(await admin.get(`/v1/orgs/${admin.organization}/search`), 400, "query");
  });

  it("searches the organization's spaces the caller can read", async () => {
    const second = await newSpace("Second");
    await newPage(second, { title: "Provision elsewhere" });
    const res = await reader.get(`/v1/orgs/${admin.organization}/search`, { query: "provision" });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    const [first, next] = res.body.items;
    expect(Object.keys(first).sort()).toEqual(["id", "pages", "title"]);
    expect(res.body.items.map((i: any) => i.id).sort()).toEqual([spaceId, second].sort());
    expect(res.body.items.find((i: any) => i.id === spaceId)).toMatchObject({
      title: "Gateway docs",
      pages: [{ id: install.id }, { id: config.id }],
    });
    expect(next.pages[0].urls.app).toContain(`/s/${next.id}/`);
    // Another organization's member learns nothing; its own search does not see these spaces.
    expectError(await other.get(`/v1/orgs/${admin.organization}/search`, { query: "provision" }), 404);
    expect((await other.get(`/v1/orgs/${other.organization}/search`, { query: "provision" })).body.count).toBe(0);
    // A guest sees only the spaces shared with them.
    const guest = await t.member(admin.organization, "gus@acme.test", null);
    expect((await guest.get(`/v1/orgs/${admin.organization}/search`, { query: "provision" })).body).toEqual({ count: 0, items: [] });
    // Deleted spaces drop out.
    await admin.delete(`/v1/spaces/${second}`);
    expect((await reader.get(`/v1/orgs/${admin.organization}/search`, { query: "provision" })).body.items.map((i: any) => i.id)).toEqual([
      spaceId,
    ]);
  });
});

describe("POST /v1/spaces/{spaceId}/content/import", () => {
  let site: http.Server;
  let base: string;
  const pages: Record<string, string> = {
    "/docs/": `<html><head><title>Docs home</title><script>alert(1)</script></head><body>
      <nav><a href="/docs/nav-only.html">Nav</a></nav>
      <main><h1>Welcome</h1><p>Start with the <a href="guide.html">guide</a> or the <a href="/docs/guide/advanced.html#tips">advanced tips</a>.</p>
      <p><a href="https://example.com/out">External</a> <a href="/elsewhere/">Outside the folder</a> <a href="missing.html">Missing</a></p>
      <img src="logo.png" alt="Logo"></main></body></html>`,
    "/docs/guide.html": `<html><head><title>Guide | Docs</title></head><body><article><h1>Guide</h1><h2>Steps</h2><ul><li>One</li><li>Two</li></ul><p><a href="index.html">Home</a></p></article></body></html>`,
    "/docs/guide/advanced.html": `<html><body><h1>Advanced</h1><h2 id="tips">Tips</h2><pre><code>npm start</code></pre><p><a href="../guide.html">Back</a></p></body></html>`,
    "/elsewhere/": `<html><body><h1>Not imported</h1></body></html>`,
  };
  const many: Record<string, string> = {};
  for (let i = 0; i < 60; i++) many[`/many/p${i}.html`] = `<html><body><h1>Page ${i}</h1></body></html>`;
  many["/many/"] = `<html><body><h1>Many</h1>${Object.keys(many)
    .map((p) => `<a href="${p}">${p}</a>`)
    .join(" ")}</body></html>`;

  beforeAll(async () => {
    site = http.createServer((req, res) => {
      const path = (req.url ?? "/").split("?")[0]!.replace(/index\.html$/, "");
      if (path === "/notes/setup.md") {
        res.writeHead(200, { "content-type": "text/markdown" }).end("# Setup notes\n\nInstall **carefully**.\n\n## Then\n\nRun it.");
        return;
      }
      const body = pages[path] ?? many[path];
      if (!body) {
        res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not found</h1>");
        return;
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

  it("imports a small website as pages of a new revision (201), with links between them", async () => {
    const spaceId = await newSpace("Imported");
    const existing = await newPage(spaceId, { title: "Existing" });
    const before = (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;
    const res = await editor.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/docs/`, source: "website" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["importedResources", "revision", "totalResources"]);
    expect(res.body.importedResources).toBe(3);
    expect(res.body.totalResources).toBe(5); // + nav-only.html and missing.html, which could not be imported
    const content = (await admin.get(`/v1/spaces/${spaceId}/content`)).body;
    expect(content.id).toBe(res.body.revision);
    expect(content.type).toBe("import");
    expect(content.parents).toEqual([before]);
    expect(content.pages.map((p: any) => p.title)).toEqual(["Existing", "Welcome"]);
    void existing;
    const home = content.pages[1];
    expect(home.slug).toBe("welcome");
    expect(home.pages.map((p: any) => [p.title, p.path])).toEqual([["Guide", "welcome/guide"]]);
    expect(home.pages[0].pages.map((p: any) => [p.title, p.path])).toEqual([["Advanced", "welcome/guide/advanced"]]);
    expect(home.markdown).toContain("Start with the [guide](/welcome/guide)");
    expect(home.markdown).toContain("[advanced tips](/welcome/guide/advanced#tips)");
    expect(home.markdown).toContain("[External](https://example.com/out)");
    expect(home.markdown).toContain(`![Logo](${base}/docs/logo.png)`);
    expect(home.markdown).not.toContain("alert");
    expect(home.markdown).not.toContain("Nav");
    expect(home.pages[0].markdown).toContain("## Steps");
    expect(home.pages[0].markdown).toMatch(/-\s+One/);
    expect(home.pages[0].pages[0].markdown).toContain("```\nnpm start\n```");
    // The rewritten links resolve to the imported pages.
    expect((await admin.get(`/v1/spaces/${spaceId}/links`, { status: "broken" })).body.count).toBe(0);
    const toGuide = (await admin.get(`/v1/spaces/${spaceId}/content/page/${home.id}/links`)).body.items;
    expect(toGuide.filter((i: any) => i.targetReference.kind !== "url").map((i: any) => i.status)).toEqual(["ok", "ok"]);
    const search = await admin.get(`/v1/spaces/${spaceId}/search`, { query: "npm start" });
    expect(search.body.items[0].title).toBe("Advanced");
  });

  it("bounds a website import to 50 pages", async () => {
    const spaceId = await newSpace("Many");
    const res = await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/many/`, source: "website" });
    expect(res.status).toBe(201);
    expect(res.body.importedResources).toBe(50);
    expect(res.body.totalResources).toBe(61);
  });

  it("imports one HTML page or one markdown file, and into a change request", async () => {
    const spaceId = await newSpace("Single");
    const one = await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/docs/guide.html`, source: "html" });
    expect(one.body).toMatchObject({ importedResources: 1, totalResources: 1 });
    const md = await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/notes/setup.md`, source: "markdown" });
    expect(md.body).toMatchObject({ importedResources: 1, totalResources: 1 });
    const imported = (await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages;
    expect(imported.map((p: any) => p.title)).toEqual(["Guide", "Setup notes"]);
    expect(imported[1].markdown).toBe("Install **carefully**.\n\n## Then\n\nRun it.");
    const cr = (await admin.post(`/v1/spaces/${spaceId}/change-requests`, {})).body;
    const inCr = await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content/import`, {
      url: `${base}/docs/`,
      source: "website",
    });
    expect(inCr.status).toBe(201);
    expect((await admin.get(`/v1/spaces/${spaceId}/change-requests/${cr.id}/content`)).body.id).toBe(inCr.body.revision);
    expect((await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages).toHaveLength(2);
  });

  it("rejects a bad url or source (400) and an unreachable site (400), writing nothing", async () => {
    const spaceId = await newSpace("Bad import");
    const before = (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/import`, { source: "website" }), 400, "url");
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: "not a url", source: "website" }), 400, "url");
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: "ftp://example.com/x", source: "website" }), 400, "url");
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/docs/`, source: "confluence" }), 400, "source");
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/docs/` }), 400, "source");
    expectError(await admin.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/nothing-here/`, source: "website" }), 400, "url");
    expectError(await reader.post(`/v1/spaces/${spaceId}/content/import`, { url: `${base}/docs/`, source: "website" }), 403, "edit");
    expect((await admin.get(`/v1/spaces/${spaceId}/content`)).body.id).toBe(before);
  });
});
