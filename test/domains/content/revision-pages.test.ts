import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitbookClient } from "../../helpers/gitbook-client.js";
import { type GitBookAPI, GitBookAPIError } from "@gitbook/api";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, createSpace, expectError, PNG, type Admin, type Member } from "../../helpers/fixtures.js";

/**
 * The reads of a revision by id that GitBook's reader makes, through GitBook's own client
 * (`@gitbook/api`) with a reader's token. Every answer is checked against this server's
 * /openapi.json and GitBook's schema for the operation (test/helpers/gitbook.ts).
 */
let t: TestGateway;
let admin: Admin;
let other: Admin;
let reader: Member;
let api: GitBookAPI;

const client = (token: string): GitBookAPI => gitbookClient(t, token);

/** The status of a call GitBook's client refused. */
async function failure(call: Promise<unknown>): Promise<number> {
  try {
    await call;
  } catch (err) {
    if (err instanceof GitBookAPIError) return err.code;
    throw err;
  }
  throw new Error("the call succeeded");
}

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, reader } = await acmeDocs(t, { reader: ["rita@acme.test", "read"] }));
  api = client(reader.token);
});
afterAll(() => t?.close());

async function newPage(spaceId: string, body: Record<string, unknown>): Promise<any> {
  return created(await admin.post(`/v1/spaces/${spaceId}/content/pages`, body));
}

async function head(spaceId: string): Promise<string> {
  return (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;
}

/** A space with a guide (group › Install, Configure), a file, and a page linking to all of them. */
async function guideSpace() {
  const spaceId = (await createSpace(admin, admin.organization, { title: "Guide" })).id;
  const group = await newPage(spaceId, { title: "Guides", type: "group" });
  const install = await newPage(spaceId, { title: "Install", parent: group.id, markdown: "# Install\n\n## Requirements\n\nNode.\n" });
  const configure = await newPage(spaceId, { title: "Configure", parent: group.id, markdown: "Set it up." });
  const file = created(
    await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "diagram.png", contentType: "image/png", data: PNG }),
  );
  const markdown = [
    "# Welcome",
    "",
    `See [install](page:${install.id}), [its requirements](page:${install.id}#requirements), [configure](configure) and [below](#more).`,
    "",
    `![diagram](file:${file.id}) [download](file:${file.id}) [site](https://example.com) [gone](page:page_missing).`,
    "",
    `[ref]: page:${configure.id}`,
    "",
    "## More",
    "",
    "Read [the ref][ref].",
    "",
  ].join("\n");
  const intro = await newPage(spaceId, { title: "Intro", markdown, position: 0 });
  const link = await newPage(spaceId, { title: "Elsewhere", type: "link", href: "https://example.org" });
  return { spaceId, group, install, configure, file, intro, link, markdown, revisionId: await head(spaceId) };
}

describe("GET /v1/spaces/{spaceId}/revisions/{revisionId}", () => {
  it("serves the revision with its page tree (documents keep their markdown), files, reusable contents and tags", async () => {
    const g = await guideSpace();
    const revision = (await api.spaces.getRevisionById(g.spaceId, g.revisionId, { metadata: true, computed: false })).data;
    expect(revision).toMatchObject({ object: "revision", id: g.revisionId, type: "edits", tags: [], reusableContents: [] });
    expect(revision.parents).toHaveLength(1);
    expect(revision.pages.map((p) => [p.id, p.type])).toEqual([
      [g.intro.id, "document"],
      [g.group.id, "group"],
      [g.link.id, "link"],
    ]);
    const intro = revision.pages[0] as any;
    expect(intro).toMatchObject({ title: "Intro", kind: "sheet", path: "intro", markdown: g.markdown, layout: { outline: true } });
    const group = revision.pages[1] as any;
    expect(group.pages.map((p: any) => [p.path, p.markdown !== undefined])).toEqual([
      ["install", true],
      ["configure", true],
    ]);
    expect(revision.files).toEqual([expect.objectContaining({ id: g.file.id, name: "diagram.png", contentType: "image/png" })]);
    expect(revision.files[0]!.downloadURL).toMatch(new RegExp(`/v1/spaces/${g.spaceId}/content/files/${g.file.id}/download$`));

    // Older revisions stay readable as they were: the first one had the group alone.
    const first = (await api.spaces.getRevisionById(g.spaceId, revision.parents[0]!)).data;
    expect(first.pages.length).toBeLessThan(revision.pages.length);
  });

  it("is 404 outside the space, for another space's revision and for other organizations; 401 without a token", async () => {
    const g = await guideSpace();
    const elsewhere = (await createSpace(admin, admin.organization, { title: "Elsewhere" })).id;
    expect(await failure(api.spaces.getRevisionById(elsewhere, g.revisionId))).toBe(404);
    expect(await failure(api.spaces.getRevisionById(g.spaceId, "rev_missing"))).toBe(404);
    expect(await failure(client(other.token).spaces.getRevisionById(g.spaceId, g.revisionId))).toBe(404);
    expect(await failure(client(other.token).spaces.getPageInRevisionById(g.spaceId, g.revisionId, g.intro.id))).toBe(404);
    const anonymous = await fetch(`${t.url}/v1/spaces/${g.spaceId}/revisions/${g.revisionId}`);
    expect(anonymous.status).toBe(401);
  });
});

describe("a change request's revisions", () => {
  it("are read by id in the space like its own, linking into the change request", async () => {
    const g = await guideSpace();
    const cr = created(await admin.post(`/v1/spaces/${g.spaceId}/change-requests`, { subject: "More" }));
    const added = created(
      await admin.post(`/v1/spaces/${g.spaceId}/change-requests/${cr.id}/content/pages`, {
        title: "Proposed",
        markdown: `Back to [intro](page:${g.intro.id}).`,
      }),
    );
    const crRevision = (await reader.get(`/v1/spaces/${g.spaceId}/change-requests/${cr.id}`)).body.revision;
    const revision = (await api.spaces.getRevisionById(g.spaceId, crRevision)).data;
    expect(revision.pages.map((p) => p.id)).toContain(added.id);
    expect(revision.urls.app).toContain(`/~/changes/${cr.number}/~/revisions/${crRevision}`);
    expect(((await api.spaces.getRevisionSemanticChanges(g.spaceId, crRevision)).data as any).changes).toEqual([
      { type: "page_created", page: { id: added.id, type: "document", title: "Proposed", path: "proposed" } },
    ]);
    // The space's own head is unchanged; GraphQL takes the refs format as an argument.
    const gql = await reader.graphql(
      `query($s: String!, $r: String!, $p: String!) {
        revisionPage(spaceId: $s, revisionId: $r, pageId: $p, markdownRefs: stable) { markdown }
      }`,
      { s: g.spaceId, r: crRevision, p: added.id },
    );
    expect(gql.data.revisionPage.markdown).toBe(`Back to [intro](/pages/${g.intro.id}).`);
    expect(await failure(api.spaces.getPageInRevisionById(g.spaceId, g.revisionId, added.id))).toBe(404);
  });
});

describe("GET …/revisions/{revisionId}/page/{pageId}", () => {
  it("answers the page's markdown, internal links as stored or as GitBook's stable refs", async () => {
    const g = await guideSpace();
    const plain = (await api.spaces.getPageInRevisionById(g.spaceId, g.revisionId, g.intro.id, { format: "markdown" })).data as any;
    expect(plain.markdown).toBe(g.markdown);
    expect(plain).not.toHaveProperty("document");

    const stable = (
      await api.spaces.getPageInRevisionById(g.spaceId, g.revisionId, g.intro.id, {
        format: "markdown",
        "format.markdown.refs": "stable",
        evaluated: "deterministic-only" as any,
        dereferenced: "reusable-contents" as any,
      })
    ).data as any;
    const expected = g.markdown
      .replace(`(page:${g.install.id})`, `(/pages/${g.install.id})`)
      .replace(`(page:${g.install.id}#requirements)`, `(/pages/${g.install.id}#requirements)`)
      .replace("(configure)", `(/pages/${g.configure.id})`)
      .replaceAll(`(file:${g.file.id})`, `(/files/${g.file.id})`)
      .replace(`[ref]: page:${g.configure.id}`, `[ref]: /pages/${g.configure.id}`);
    expect(stable.markdown).toBe(expected);
    // Kept as written: the same page's anchor, external URLs, broken links.
    expect(stable.markdown).toContain("[below](#more)");
    expect(stable.markdown).toContain("(https://example.com)");
    expect(stable.markdown).toContain("(page:page_missing)");
    // Every rewritten target is a form GitBook's reader parses back (ids of word characters and hyphens).
    const targets = [...stable.markdown.matchAll(/\]\((\/[^)]+)\)|^\[ref\]: (\S+)$/gm)].map((m) => m[1] ?? m[2]);
    expect(targets.length).toBe(6);
    for (const target of targets) expect(target).toMatch(/^\/(pages\/[\w-]+(#[\w-]+)?|files\/[\w-]+)$/);

    // Groups and links are pages too.
    const group = (await api.spaces.getPageInRevisionById(g.spaceId, g.revisionId, g.group.id)).data as any;
    expect(group).toMatchObject({ type: "group", pages: [{ id: g.install.id }, { id: g.configure.id }] });
    const link = (await api.spaces.getPageInRevisionById(g.spaceId, g.revisionId, g.link.id)).data as any;
    expect(link).toMatchObject({ type: "link", target: { kind: "url", url: "https://example.org" } });
  });

  it("answers GitBook's JSONDocument instead of the markdown with format=document", async () => {
    const g = await guideSpace();
    const page = (await api.spaces.getPageInRevisionById(g.spaceId, g.revisionId, g.intro.id, { format: "document" })).data as any;
    expect(page).not.toHaveProperty("markdown");
    const doc = page.document;
    expect(doc).toMatchObject({ object: "document", data: {} });
    expect(doc.nodes[0]).toEqual({
      object: "block",
      type: "heading-1",
      key: "0",
      isVoid: false,
      data: { id: "welcome" },
      meta: { id: "welcome" },
      nodes: [{ object: "text", leaves: [{ object: "leaf", text: "Welcome", marks: [] }] }],
    });
    // Links resolve to content refs, relative paths and reference definitions included.
    const refs = JSON.stringify(doc);
    expect(refs).toContain(JSON.stringify({ kind: "page", page: g.install.id }));
    expect(refs).toContain(JSON.stringify({ kind: "anchor", page: g.install.id, anchor: "requirements" }));
    expect(refs).toContain(JSON.stringify({ kind: "page", page: g.configure.id }));
    expect(refs).toContain(JSON.stringify({ kind: "anchor", anchor: "more" }));
    expect(refs).toContain(JSON.stringify({ kind: "file", file: g.file.id }));
    expect(refs).toContain(JSON.stringify({ kind: "url", url: "https://example.com" }));

    // The same document at …/document, with the reader's query.
    const same = (
      await api.spaces.getPageDocumentInRevisionById(g.spaceId, g.revisionId, g.intro.id, {
        evaluated: "deterministic-only" as any,
        dereferenced: "reusable-contents" as any,
      })
    ).data;
    expect(same).toEqual(doc);
    expect(await failure(api.spaces.getPageDocumentInRevisionById(g.spaceId, g.revisionId, g.group.id))).toBe(404);
    expect(await failure(api.spaces.getPageDocumentInRevisionById(g.spaceId, g.revisionId, "page_missing"))).toBe(404);
  });

  it("refuses bad query values with a 400 naming them, and unknown pages with a 404", async () => {
    const g = await guideSpace();
    const base = `/v1/spaces/${g.spaceId}/revisions/${g.revisionId}`;
    expectError(await reader.get(`${base}/page/${g.intro.id}`, { "format.markdown.refs": "absolute" }), 400, "format.markdown.refs");
    expectError(await reader.get(`${base}/page/${g.intro.id}`, { format: "html" }), 400, "format");
    expectError(await reader.get(`${base}/page/${g.intro.id}`, { evaluated: "maybe" }), 400, "evaluated");
    expectError(await reader.get(`${base}/page/${g.intro.id}/document`, { dereferenced: "all" }), 400, "dereferenced");
    expectError(await reader.get(`${base}/page/page_missing`), 404, "page_missing");
  });
});

describe("GET …/revisions/{revisionId}/path/{pagePath} and …/meta-links", () => {
  it("finds a page by its path without case (404 when none), and answers empty meta links", async () => {
    const g = await guideSpace();
    const byPath = (path: string) =>
      api.spaces.getPageInRevisionByPath(g.spaceId, g.revisionId, encodeURIComponent(path), { format: "markdown", metadata: false });
    expect((await byPath("install")).data).toMatchObject({
      id: g.install.id,
      type: "document",
      markdown: "# Install\n\n## Requirements\n\nNode.\n",
    });
    expect(((await byPath("CONFIGURE")).data as any).id).toBe(g.configure.id);
    expect(((await byPath("/Intro/")).data as any).id).toBe(g.intro.id);
    expect(await failure(byPath("guides/install"))).toBe(404); // groups add no segment
    expect(await failure(byPath("nowhere"))).toBe(404);
    expect(await failure(byPath("elsewhere"))).toBe(404); // a link page

    // A nested path, sent as one encoded segment as the reader does.
    const child = await newPage(g.spaceId, { title: "Deep", parent: g.install.id, markdown: "Down here." });
    const revisionId = await head(g.spaceId);
    const deep = await api.spaces.getPageInRevisionByPath(g.spaceId, revisionId, encodeURIComponent("Install/Deep"));
    expect((deep.data as any).id).toBe(child.id);

    const links = await api.request({
      path: `/spaces/${g.spaceId}/revisions/${g.revisionId}/page/${g.intro.id}/meta-links`,
      method: "GET",
      format: "json",
      secure: true,
    });
    expect(links.data).toEqual({ alternates: [] });
    expectError(await reader.get(`/v1/spaces/${g.spaceId}/revisions/${g.revisionId}/page/page_missing/meta-links`), 404);
  });
});

describe("GET …/revisions/{revisionId}/changes", () => {
  it("lists what each revision changed against its parent", async () => {
    const spaceId = (await createSpace(admin, admin.organization, { title: "Changes" })).id;
    const changes = async (query: Record<string, unknown> = {}) =>
      (await api.spaces.getRevisionSemanticChanges(spaceId, await head(spaceId), query as any)).data as any;
    expect(await changes({ computed: false, limit: 100, metadata: false })).toEqual({ changes: [] });

    const a = await newPage(spaceId, { title: "Alpha", markdown: "One." });
    expect((await changes()).changes).toEqual([
      { type: "page_created", page: { id: a.id, type: "document", title: "Alpha", path: "alpha" } },
    ]);

    await admin.patch(`/v1/spaces/${spaceId}/content/page/${a.id}`, { title: "Alpha 2", markdown: "Two." });
    const [edited] = (await changes()).changes;
    expect(edited).toMatchObject({
      type: "page_edited",
      page: { id: a.id, title: "Alpha 2" },
      attributes: { title: { before: "Alpha", after: "Alpha 2" } },
    });
    expect(edited.attributes.document.before).not.toBe(edited.attributes.document.after);

    const b = await newPage(spaceId, { title: "Beta" });
    await admin.patch(`/v1/spaces/${spaceId}/content/page/${b.id}`, { parent: a.id });
    expect((await changes()).changes).toEqual([
      {
        type: "page_moved",
        page: { id: b.id, type: "document", title: "Beta", path: "alpha/beta" },
        parent: { after: { id: a.id, type: "document", title: "Alpha 2", path: "alpha" } },
      },
    ]);

    const file = created(await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "x.png", contentType: "image/png", data: PNG }));
    expect((await changes()).changes).toEqual([
      {
        type: "file_created",
        file: { id: file.id, name: "x.png", contentType: "image/png", downloadURL: expect.stringContaining(file.id) },
      },
    ]);

    const rc = created(await admin.post(`/v1/spaces/${spaceId}/content/reusable-contents`, { title: "Footer", markdown: "© Acme" }));
    expect((await changes()).changes).toEqual([
      { type: "reusable_content_created", reusableContent: { id: rc.id, title: "Footer", document: rc.document } },
    ]);
    await admin.patch(`/v1/spaces/${spaceId}/content/reusable-contents/${rc.id}`, { markdown: "© Acme Inc." });
    expect((await changes()).changes).toMatchObject([
      { type: "reusable_content_edited", reusableContent: { id: rc.id }, attributes: { document: { before: expect.any(String) } } },
    ]);

    expect((await admin.delete(`/v1/spaces/${spaceId}/content/page/${a.id}`)).status).toBe(204);
    const deleted = await changes();
    expect(deleted.changes.map((c: any) => [c.type, c.page.id])).toEqual([
      ["page_deleted", a.id],
      ["page_deleted", b.id],
    ]);
    expect(await changes({ limit: 1 })).toMatchObject({ changes: [{ type: "page_deleted" }], more: 1 });
    expectError(await reader.get(`/v1/spaces/${spaceId}/revisions/${await head(spaceId)}/changes`, { limit: 0 }), 400, "limit");
  });
});

describe("documents everywhere and back", () => {
  it("writes a page's document back as the same markdown", async () => {
    const spaceId = (await createSpace(admin, admin.organization, { title: "Round trip" })).id;
    const markdown = [
      "# Title",
      "",
      "Some **bold**, _italic_, ~~struck~~ and `code` with [a link](https://example.com).",
      "",
      "- one",
      "- two",
      "",
      "1. first",
      "2. second",
      "",
      "- [x] done",
      "- [ ] todo",
      "",
      "> quoted",
      "",
      "```ts",
      "const a = 1;",
      "```",
      "",
      "---",
      "",
      "| a | b |",
      "| - | - |",
      "| 1 | 2 |",
      "",
      "<div>raw</div>",
      "",
    ].join("\n");
    const page = await newPage(spaceId, { title: "Rich", markdown });
    const doc = (await reader.get(`/v1/spaces/${spaceId}/content/page/${page.id}`, { format: "document" })).body.document;
    // Every block and inline has a key, unique in the document, the same on every read.
    const keys: string[] = [];
    const walk = (nodes: any[]) =>
      nodes.forEach((n) => {
        if (n.object !== "text") keys.push(n.key);
        if (n.nodes) walk(n.nodes);
      });
    walk(doc.nodes);
    expect(keys.every((k) => typeof k === "string" && k)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/page/${page.id}`, { format: "document" })).body.document).toEqual(doc);

    const rc = created(await admin.post(`/v1/spaces/${spaceId}/content/reusable-contents`, { title: "Copy", document: doc }));
    expect(rc.markdown).toBe(markdown);
    // GraphQL: the same fields, camelCase.
    const revisionId = await head(spaceId);
    const gql = await reader.graphql(
      `query($s: String!, $r: String!, $p: String!) {
        revisionPage(spaceId: $s, revisionId: $r, pageId: $p, format: document) { id markdown document }
        revision(spaceId: $s, revisionId: $r) { id pages { id } }
        revisionPageMetaLinks(spaceId: $s, revisionId: $r, pageId: $p) { alternates { kind } }
        revisionChanges(spaceId: $s, revisionId: $r) { changes { type } }
      }`,
      { s: spaceId, r: revisionId, p: page.id },
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data.revisionPage).toMatchObject({ id: page.id, markdown: null, document: doc });
    expect(gql.data.revision.pages).toEqual([{ id: page.id }]);
    expect(gql.data.revisionPageMetaLinks).toEqual({ alternates: [] });
    expect(gql.data.revisionChanges.changes).toEqual([{ type: "reusable_content_created" }]);
  });
});
