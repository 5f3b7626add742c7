import http from "node:http";
import fc from "fast-check";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { parseAllowedNetworks } from "../../../src/core/support/outbound.js";
import { acmeDocs, created, createSpace, expectError, type Admin, type Member } from "../../helpers/fixtures.js";

/**
 * GitBook's batched content changes of a change request, `POST …/change-requests/{id}/content`
 * (its `updateChangeRequestContent`): every answer is checked against /openapi.json and GitBook's
 * schema for the operation by the gateway's checker.
 */
let t: TestGateway;
let admin: Admin;
let other: Admin;
let reader: Member;
let files: http.Server;
let filesUrl: string;

// A 1×1 PNG.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");

beforeAll(async () => {
  files = http.createServer((req, res) => {
    if (req.url === "/diagram.png") {
      res.writeHead(200, { "content-type": "image/png" });
      res.end(PNG);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  t = await startGateway({ outboundAllowedNetworks: parseAllowedNetworks("127.0.0.0/8") });
  ({ admin, other, reader } = await acmeDocs(t, { reader: ["rita@acme.test", "read"] }));
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => files?.close(resolve));
});

async function setup() {
  const spaceId = (await createSpace(admin, admin.organization, { title: "Batch" })).id as string;
  const intro = created(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Intro", markdown: "Welcome." }));
  const guide = created(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Guide", markdown: "Read on." }));
  const cr = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Batch" }));
  return { spaceId, intro, guide, cr, base: `/v1/spaces/${spaceId}/change-requests/${cr.id}/content` };
}

describe("POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/content", () => {
  it("inserts pages and files in one revision, resolves the batch's refs and links, and answers the pages touched (compat=false)", async () => {
    const { spaceId, intro, cr, base } = await setup();
    const res = await admin.post(`${base}?compat=false`, {
      changes: [
        {
          operation: "insert_page",
          ref: "setup",
          document: {
            markdown:
              "# Setup\n\nSee [the architecture](./overview.md), the [intro](/pages/" +
              intro.id +
              "#top), [guide](/pages/guide.md) and ![diagram](./diagram.png).\n",
          },
        },
        {
          operation: "insert_files",
          files: [
            { ref: "diagram.png", name: "diagram.png", url: `${filesUrl}/diagram.png` },
            { name: "notes.txt", contentType: "text/plain", base64: Buffer.from("hi").toString("base64") },
          ],
        },
        {
          operation: "insert_page",
          ref: "overview",
          title: "Ignored when the document names one",
          into: intro.id,
          document: { markdown: "---\ntitle: Architecture\ndescription: How it fits\nhidden: true\n---\nBack to [setup](./setup.md).\n" },
        },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.changeRequest).toMatchObject({ object: "change-request", id: cr.id });
    expect(res.body.changeRequest.revision).not.toBe(cr.revision);
    expect(res.body.changes.map((c: any) => [c.object, c.ref])).toEqual([
      ["created_page", "setup"],
      ["created_page", "overview"],
    ]);
    const [setupRef, overviewRef] = res.body.changes.map((c: any) => c.page);
    expect(setupRef.urls.location).toBe(`${t.url}${base}/page/${setupRef.id}`);
    expect(res.body.insertedFiles.map((f: any) => [f.name, f.contentType, f.size])).toEqual([
      ["diagram.png", "image/png", PNG.length],
      ["notes.txt", "text/plain", 2],
    ]);
    expect(res.body.insertedFiles[0].dimensions).toEqual({ width: 1, height: 1 });
    const diagram = res.body.insertedFiles[0].id;

    const setupPage = (await admin.get(`${base}/page/${setupRef.id}`)).body;
    expect(setupPage.title).toBe("Setup"); // the leading heading is the title, and leaves the body
    expect(setupPage.markdown).toBe(
      `See [the architecture](page:${overviewRef.id}), the [intro](page:${intro.id}#top), [guide](page:${(await pageByTitle(base, "Guide")).id}) and ![diagram](file:${diagram}).\n`,
    );
    const overview = (await admin.get(`${base}/page/${overviewRef.id}`)).body;
    expect(overview).toMatchObject({
      title: "Architecture",
      description: "How it fits",
      hidden: true,
      path: "intro/architecture",
      markdown: `Back to [setup](page:${setupRef.id}).\n`,
    });
    // The file's bytes are served, and the link report sees the page and file links as ok.
    const download = await fetch(`${t.url}${base.replace(/\/change-requests\/[^/]+/, "")}/files/${diagram}/download`, {
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(PNG)).toBe(true);

    // The space is untouched until the merge, which brings everything in.
    expect((await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages.map((p: any) => p.title)).toEqual(["Intro", "Guide"]);
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status: "open" });
    expect((await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/merge`)).body.result).toBe("merge");
    const merged = (await admin.get(`/v1/spaces/${spaceId}/content`)).body;
    expect(merged.pages.map((p: any) => p.title)).toEqual(["Intro", "Guide", "Setup"]);
    expect(merged.files.map((f: any) => f.name).sort()).toEqual(["diagram.png", "notes.txt"]);
  });

  it("answers the change request by default (compat=true); updates, moves, renames and deletes pages", async () => {
    const { spaceId, intro, guide, cr, base } = await setup();
    const res = await admin.post(base, {
      changes: [
        { operation: "update_page", page: guide.id, title: "Handbook", slug: "handbook", emoji: "📚", into: intro.id },
        { operation: "update_page", page: intro.id, document: { markdown: "---\ndescription: Start here\n---\nHello again.\n" } },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ object: "change-request", id: cr.id, status: "draft" });
    let pages = (await admin.get(`${base}/pages`)).body.pages;
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ id: intro.id, description: "Start here", markdown: "Hello again.\n" });
    expect(pages[0].pages[0]).toMatchObject({ id: guide.id, title: "Handbook", slug: "handbook", emoji: "📚", path: "intro/handbook" });

    // into: null brings it back to the top level, first.
    const moved = await admin.post(`${base}?compat=false`, {
      changes: [
        { operation: "update_page", page: guide.id, into: null, at: 0 },
        { operation: "delete_page", page: intro.id },
      ],
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.changes).toEqual([
      { object: "updated_page", page: { object: "page", id: guide.id, urls: { location: `${t.url}${base}/page/${guide.id}` } } },
      { object: "deleted_page", page: intro.id },
    ]);
    pages = (await admin.get(`${base}/pages`)).body.pages;
    expect(pages.map((p: any) => p.title)).toEqual(["Handbook"]);
    expect((await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body.pages.map((p: any) => p.title)).toEqual(["Intro", "Guide"]);
  });

  it("reverts pages to the change request's base: a deleted page comes back, an edit is undone, an inserted page goes", async () => {
    const { intro, guide, base } = await setup();
    const first = await admin.post(`${base}?compat=false`, {
      changes: [
        { operation: "delete_page", page: intro.id },
        { operation: "update_page", page: guide.id, title: "Changed", document: { markdown: "Changed." } },
        { operation: "insert_page", document: { markdown: "# New\n" } },
      ],
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const inserted = first.body.changes[2].page.id;
    const res = await admin.post(`${base}?compat=false`, {
      changes: [
        { operation: "revert_page", page: intro.id },
        { operation: "revert_page", page: guide.id },
        { operation: "revert_page", page: inserted },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.changes.map((c: any) => c.object)).toEqual(["updated_page", "updated_page", "deleted_page"]);
    const pages = (await admin.get(`${base}/pages`)).body.pages;
    expect(pages.map((p: any) => [p.title, p.markdown])).toEqual([
      ["Intro", "Welcome."],
      ["Guide", "Read on."],
    ]);

    // A revert that would put a page under its own sub-page is refused.
    expect((await admin.post(base, { changes: [{ operation: "update_page", page: guide.id, into: intro.id }] })).status).toBe(200);
    const base2 = (await admin.get(`${base}/pages`)).body.pages;
    expect(base2[0].pages.map((p: any) => p.id)).toEqual([guide.id]);
    const revision = (await admin.get(base)).body.id;
    expect(
      (
        await admin.post(base, {
          changes: [
            { operation: "update_page", page: guide.id, into: null },
            { operation: "update_page", page: intro.id, into: guide.id },
          ],
        })
      ).status,
    ).toBe(200);
    expectError(
      await admin.post(base, { changes: [{ operation: "revert_page", page: guide.id, revision }] }),
      400,
      "changes[0].page",
      "sub-pages",
    );
  });

  it("takes a JSON document and turns it into markdown", async () => {
    const { base } = await setup();
    const document = {
      object: "document",
      nodes: [
        { object: "block", type: "heading-2", nodes: [{ object: "text", leaves: [{ object: "leaf", text: "Steps", marks: [] }] }] },
        {
          object: "block",
          type: "paragraph",
          nodes: [
            { object: "text", text: "Run " },
            { object: "text", text: "npm start", marks: ["code"] },
            { object: "text", leaves: [{ text: " now", marks: [{ object: "mark", type: "bold" }] }] },
          ],
        },
        {
          object: "block",
          type: "paragraph",
          nodes: [
            { object: "inline", type: "link", data: { ref: { kind: "page", page: "page_abc" } }, nodes: [{ object: "text", text: "see" }] },
          ],
        },
        {
          object: "block",
          type: "list-ordered",
          nodes: [
            {
              object: "block",
              type: "list-item",
              nodes: [{ object: "block", type: "paragraph", nodes: [{ object: "text", text: "one" }] }],
            },
          ],
        },
        {
          object: "block",
          type: "code",
          data: { syntax: "sh" },
          nodes: [{ object: "block", type: "code-line", nodes: [{ object: "text", text: "npm i" }] }],
        },
      ],
    };
    const res = await admin.post(`${base}?compat=false`, { changes: [{ operation: "insert_page", title: "Run", document: { document } }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const page = (await admin.get(`${base}/page/${res.body.changes[0].page.id}`)).body;
    expect(page.title).toBe("Run");
    expect(page.markdown).toBe("## Steps\n\nRun `npm start` **now**\n\n[see](page:page_abc)\n\n1. one\n\n```sh\nnpm i\n```\n");
  });

  it("rejects the whole batch when one change does not apply: 400 naming it, no revision, no file kept", async () => {
    const { guide, cr, base } = await setup();
    const res = await admin.post(base, {
      changes: [
        { operation: "insert_files", files: [{ name: "a.txt", contentType: "text/plain", base64: "aGk=" }] },
        { operation: "update_page", page: guide.id, title: "Fine" },
        { operation: "update_page", page: "page_missing", title: "Nope" },
      ],
    });
    expectError(res, 400, "changes[2].page", "page_missing");
    const after = (await admin.get(`/v1/spaces/${cr.space}/change-requests/${cr.id}`)).body;
    expect(after.revision).toBe(cr.revision);
    expect((await admin.get(`${base}/files`)).body.items).toEqual([]);
    expect((await admin.get(`${base}/page/${guide.id}`)).body.title).toBe("Guide");
    expect(await t.gateway.db.prisma.fileBlob.count({ where: { spaceId: cr.space, name: "a.txt" } })).toBe(0);
  });

  it("answers 400 naming what is wrong", async () => {
    const { intro, guide, base } = await setup();
    const cases: [unknown, string][] = [
      [{}, "changes"],
      [{ changes: [] }, "changes"],
      [{ changes: Array.from({ length: 51 }, () => ({ operation: "delete_page", page: intro.id })) }, "at most 50"],
      [{ changes: [{ operation: "rename_page", page: intro.id }] }, "operation"],
      [{ changes: [{ operation: "delete_page" }] }, "changes[0].page"],
      [{ changes: [{ operation: "delete_page", page: intro.id, title: "x" }] }, "changes[0].title is not a field of a delete_page change"],
      [{ changes: [{ operation: "insert_page" }] }, "changes[0].document is required"],
      [{ changes: [{ operation: "insert_page", document: { markdown: "x" }, into: null }] }, "changes[0].into cannot be null"],
      [{ changes: [{ operation: "insert_page", document: { markdown: "x" }, into: "page_nope" }] }, "changes[0].into"],
      [{ changes: [{ operation: "insert_page", document: { markdown: "x", document: { object: "document", nodes: [] } } }] }, "not both"],
      [
        {
          changes: [
            {
              operation: "insert_page",
              document: { document: { object: "document", nodes: [{ object: "block", type: "openapi", nodes: [] }] } },
            },
          ],
        },
        "openapi",
      ],
      [{ changes: [{ operation: "insert_page", document: { markdown: "---\ntitle: [oops\n---\n" } }] }, "frontmatter"],
      [{ changes: [{ operation: "insert_page", document: { markdown: "x" }, condition: "visitor.claims.x" }] }, "condition"],
      [{ changes: [{ operation: "update_page", page: guide.id, slug: "Not A Slug" }] }, "changes[0].slug"],
      [{ changes: [{ operation: "update_page", page: guide.id, slug: "intro" }] }, "already used"],
      [
        {
          changes: [
            { operation: "update_page", page: intro.id, into: guide.id },
            { operation: "update_page", page: guide.id, into: intro.id },
          ],
        },
        "changes[1].into",
      ],
      [{ changes: [{ operation: "update_page", page: guide.id, at: -1 }] }, "at"],
      [{ changes: [{ operation: "revert_page", page: guide.id, block: ["b1"] }] }, "changes[0].block"],
      [{ changes: [{ operation: "revert_page", page: guide.id, revision: "rev_nope" }] }, "changes[0].revision"],
      [
        {
          changes: [
            { operation: "insert_page", ref: "a", document: {} },
            { operation: "insert_page", ref: "./a.md", document: {} },
          ],
        },
        "changes[1].ref",
      ],
      [{ changes: [{ operation: "insert_page", ref: "intro", document: {} }] }, "path of an existing page"],
      [{ changes: [{ operation: "insert_files", files: [] }] }, "changes[0].files"],
      [{ changes: [{ operation: "insert_files", files: [{ name: "a.png", base64: "aGk=" }] }] }, "contentType is required"],
      [
        {
          changes: [
            {
              operation: "insert_files",
              files: [{ name: "a.png", base64: "aGk=", url: `${filesUrl}/diagram.png`, contentType: "image/png" }],
            },
          ],
        },
        "exactly one",
      ],
      [{ changes: [{ operation: "insert_files", files: [{ name: "a.png", url: "http://10.0.0.1/a.png" }] }] }, "changes[0].files[0].url"],
      [{ changes: [{ operation: "insert_files", files: [{ name: "a.png", url: `${filesUrl}/missing.png` }] }] }, "could not be fetched"],
      [
        { changes: [{ operation: "insert_files", files: [{ name: "a/b.png", contentType: "image/png", base64: "aGk=" }] }] },
        "changes[0].files[0].name",
      ],
    ];
    for (const [body, text] of cases) expectError(await admin.post(base, body), 400, text);
    expectError(await admin.post(`${base}?compat=maybe`, { changes: [{ operation: "delete_page", page: intro.id }] }), 400, "compat");
  });

  it("follows the change request's rules: read role 403, another organization 404, merged 409", async () => {
    const { spaceId, intro, cr, base } = await setup();
    const body = { changes: [{ operation: "delete_page", page: intro.id }] };
    expectError(await reader.post(base, body), 403);
    expectError(await other.post(base, body), 404);
    expectError(await admin.post(`/v1/spaces/${spaceId}/change-requests/999/content`, body), 404);
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${cr.id}`, { status: "open" });
    await admin.post(`/v1/spaces/${spaceId}/change-requests/${cr.id}/merge`);
    expectError(await admin.post(base, body), 409, "merged");
  });

  it("lands every one of concurrent batches on the same change request, each on the result of the one before", async () => {
    const { cr, base } = await setup();
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        admin.post(base, { changes: [{ operation: "insert_page", title: `Page ${i}`, document: { markdown: `Text ${i}` } }] }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const titles = (await admin.get(`${base}/pages`)).body.pages.map((p: any) => p.title);
    expect(titles.slice(0, 2)).toEqual(["Intro", "Guide"]);
    expect(titles.slice(2).sort()).toEqual(["Page 0", "Page 1", "Page 2", "Page 3", "Page 4"]);
    const after = (await admin.get(`/v1/spaces/${cr.space}/change-requests/${cr.id}`)).body;
    expect(new Set(answers.map((a) => a.body.revision)).size).toBe(5);
    expect(answers.map((a) => a.body.revision)).toContain(after.revision);
  });

  it("applies a random batch whole or not at all (property): a refused batch leaves the content as it was, an applied one shows every page it reports", {
    timeout: 120_000,
  }, async () => {
    const { base, cr } = await setup();
    const pick = fc.oneof({ weight: 9, arbitrary: fc.nat({ max: 3 }) }, { weight: 1, arbitrary: fc.constant(99) });
    const change = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          operation: fc.constant("insert_page"),
          into: fc.option(pick, { nil: undefined }),
          title: fc.constantFrom("A", "B", "Notes"),
        }),
      },
      fc.record({
        operation: fc.constant("insert_page"),
        into: fc.option(pick, { nil: undefined }),
        title: fc.constantFrom("A", "B", "Notes"),
      }),
      fc.record({
        operation: fc.constant("update_page"),
        page: pick,
        title: fc.option(fc.constantFrom("Renamed", "Renamed", "Renamed", ""), { nil: undefined }),
        into: fc.option(fc.oneof(pick, fc.constant(null)), { nil: undefined }),
      }),
      fc.record({ operation: fc.constant("delete_page"), page: pick }),
      fc.record({ operation: fc.constant("revert_page"), page: pick }),
    );
    const state = async () => {
      const pages = (await admin.get(`${base}/pages`)).body.pages;
      const revision = (await admin.get(`/v1/spaces/${cr.space}/change-requests/${cr.id}`)).body.revision;
      return { pages, revision };
    };
    const flat = (pages: any[]): any[] => pages.flatMap((p) => [p, ...flat(p.pages ?? [])]);
    const outcomes = { applied: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 6 }), async (abstract) => {
        const before = await state();
        // Page choices name pages of the content, or (past its end) a missing page.
        const ids = flat(before.pages).map((p) => p.id);
        const id = (n: number) => ids[n] ?? "page_missing";
        const changes = abstract.map((c: any) => {
          const out: any = { operation: c.operation };
          if (c.operation === "insert_page") out.document = { markdown: `# ${c.title}\n\nText.` };
          if (c.page !== undefined) out.page = id(c.page);
          if (c.title !== undefined) out.title = c.title;
          if (c.into !== undefined) out.into = c.into === null ? null : id(c.into);
          return out;
        });
        const res = await admin.post(`${base}?compat=false`, { changes });
        expect([200, 400]).toContain(res.status);
        outcomes[res.status === 200 ? "applied" : "refused"]++;
        const after = await state();
        if (res.status === 400) {
          expect(res.body.error.message).toMatch(/^changes\[\d+\]/);
          expect(after).toEqual(before);
          return;
        }
        expect(after.revision).not.toBe(before.revision);
        const present = new Set(flat(after.pages).map((p) => p.id));
        for (const c of res.body.changes) {
          if (c.object === "deleted_page") expect(present.has(c.page)).toBe(false);
          else expect(present.has(c.page.id)).toBe(true);
        }
      }),
      { numRuns: 25, seed: 4242 },
    );
    // Both kinds of batch were tried.
    expect(outcomes.applied).toBeGreaterThan(2);
    expect(outcomes.refused).toBeGreaterThan(2);
  });

  it("is documented in /openapi.json as GitBook has it: compat in the query, changes in the body, either answer", async () => {
    const doc = (await fetch(`${t.url}/v1/openapi.json`).then((r) => r.json())) as any;
    const op = doc.paths["/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content"].post;
    expect(op.parameters.map((p: any) => `${p.in} ${p.name}`).sort()).toEqual(["path changeRequestId", "path spaceId", "query compat"]);
    expect(Object.keys(op.requestBody.content["application/json"].schema.properties)).toEqual(["changes"]);
    expect(op.responses["200"].content["application/json"].schema.oneOf.map((s: any) => s.$ref)).toEqual([
      "#/components/schemas/ChangeRequest",
      "#/components/schemas/ChangeRequestContentUpdate",
    ]);
    expect(doc.components.schemas.ChangeRequestContentChangeInput.properties.into.type).toEqual(["string", "null"]);
  });

  it("is a mutation of the graph", async () => {
    const { intro, cr } = await setup();
    const res = await admin.graphql(
      `mutation ($space: String!, $cr: String!, $changes: [ChangeRequestContentChangeInput!]!) {
        changeRequestContentUpdate(spaceId: $space, changeRequestId: $cr, changes: $changes, compat: false) {
          ... on ChangeRequestContentUpdate { changeRequest { number } changes { object ref page { id urls { location } } } insertedFiles { name } }
        }
      }`,
      {
        space: cr.space,
        cr: String(cr.number),
        changes: [
          { operation: "insert_page", ref: "x", into: intro.id, document: { markdown: "Hi" } },
          { operation: "delete_page", page: intro.id },
        ],
      },
    );
    expect(res.errors).toBeUndefined();
    const out = res.data.changeRequestContentUpdate;
    expect(out.changeRequest.number).toBe(cr.number);
    // The page inserted under the deleted one went with it: only the deletion is reported.
    expect(out.changes).toEqual([{ object: "deleted_page", ref: null, page: { id: intro.id, urls: null } }]);
  });
});

async function pageByTitle(base: string, title: string): Promise<any> {
  const walk = (pages: any[]): any => pages.flatMap((p) => [p, ...walk(p.pages ?? [])]);
  return walk((await admin.get(`${base}/pages`)).body.pages).find((p: any) => p.title === title);
}
