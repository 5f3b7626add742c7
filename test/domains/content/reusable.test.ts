import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, createSpace, expectError, type Admin, type Member, PNG } from "../../helpers/fixtures.js";

/**
 * Reusable contents, variables and file deletion: written in a change request (and in a live
 * space's own content), read at GitBook's paths, merged three-way like pages.
 */

let t: TestGateway;
let admin: Admin;
let other: Admin;
let editor: Member;
let reader: Member;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, editor, reader } = await acmeDocs(t, { editor: ["eddie@acme.test", "edit"], reader: ["rita@acme.test", "read"] }));
});
afterAll(() => t?.close());

async function spaceWithCr(title = "Handbook") {
  const spaceId = (await createSpace(admin, admin.organization, { title })).id;
  const cr = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Edits" }));
  return { spaceId, crId: cr.id as string, base: `/v1/spaces/${spaceId}/change-requests/${cr.id}/content` };
}

async function merge(spaceId: string, crId: string) {
  await admin.patch(`/v1/spaces/${spaceId}/change-requests/${crId}`, { status: "open" });
  return admin.post(`/v1/spaces/${spaceId}/change-requests/${crId}/merge`, {});
}

describe("reusable contents", () => {
  it("are created, read at GitBook's paths, updated and deleted in a change request, and merged into the space", async () => {
    const { spaceId, crId, base } = await spaceWithCr();
    const rc = created(
      await editor.post(`${base}/reusable-contents`, { title: "Support hint", markdown: "Need help? Write to **support**.\n" }),
    );
    expect(rc).toEqual({
      id: expect.stringMatching(/^rc_/),
      title: "Support hint",
      markdown: "Need help? Write to **support**.\n",
      document: expect.stringMatching(/^doc_/),
    });
    expect((await reader.get(`${base}/reusable-contents/${rc.id}`)).body).toEqual(rc);
    // Not in the space's content until the change request is merged.
    expectError(await reader.get(`/v1/spaces/${spaceId}/content/reusable-contents/${rc.id}`), 404, rc.id);

    const updated = await editor.patch(`${base}/reusable-contents/${rc.id}`, { title: "Support" });
    expect(updated.body).toMatchObject({ id: rc.id, title: "Support", markdown: rc.markdown });
    const fromDocument = await editor.patch(`${base}/reusable-contents/${rc.id}`, {
      document: {
        object: "document",
        data: {},
        nodes: [
          {
            object: "block",
            type: "paragraph",
            data: {},
            nodes: [{ object: "text", leaves: [{ object: "leaf", text: "Call us.", marks: [] }] }],
          },
        ],
      },
    });
    expect(fromDocument.body.markdown).toBe("Call us.\n");

    // The change request's revision holds it: GitBook's revision reads.
    const revision = (await reader.get(`${base}`)).body;
    expect(revision.reusableContents).toEqual([{ id: rc.id, title: "Support", markdown: "Call us.\n", document: rc.document }]);
    const inRevision = await reader.get(`/v1/spaces/${spaceId}/revisions/${revision.id}/reusable-contents/${rc.id}`);
    expect(inRevision.body).toEqual(revision.reusableContents[0]);
    const document = await reader.get(`/v1/spaces/${spaceId}/revisions/${revision.id}/reusable-contents/${rc.id}/document`, {
      dereferenced: "reusable-contents",
      evaluated: true,
    });
    expect(document.status).toBe(200);
    expect(document.body).toMatchObject({ object: "document", nodes: [{ object: "block", type: "paragraph" }] });
    expect(JSON.stringify(document.body)).toContain("Call us.");
    expectError(
      await reader.get(`/v1/spaces/${spaceId}/revisions/${revision.id}/reusable-contents/${rc.id}/document`, { dereferenced: "maybe" }),
      400,
      "dereferenced",
    );

    // A second one, deleted again; deleting what is not there is done too.
    const gone = created(await editor.post(`${base}/reusable-contents`, { title: "Temporary" }));
    expect(gone.document).toBeUndefined(); // empty: no document
    expect((await editor.delete(`${base}/reusable-contents/${gone.id}`)).status).toBe(204);
    expect((await editor.delete(`${base}/reusable-contents/${gone.id}`)).status).toBe(204);
    expectError(await reader.get(`${base}/reusable-contents/${gone.id}`), 404, gone.id);
    // An older revision still has it.
    expect((await reader.get(`/v1/spaces/${spaceId}/revisions/${revision.id}/reusable-contents/${rc.id}`)).status).toBe(200);

    expect((await merge(spaceId, crId)).status).toBe(200);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/reusable-contents/${rc.id}`)).body).toMatchObject({
      id: rc.id,
      title: "Support",
    });
    // Merged: the change request takes no more writes.
    expectError(await editor.post(`${base}/reusable-contents`, { title: "Late" }), 409, "merged");
    expectError(await editor.put(`${base}/variables`, { variables: { a: 1 } }), 409, "merged");
    expectError(await editor.delete(`${base}/files/file_x`), 409, "merged");
  });

  it("serve their document as GitBook's JSONDocument, which writes back as the same markdown", async () => {
    const { spaceId, base } = await spaceWithCr();
    const file = created(await admin.post(`${base}/files`, { name: "a.png", contentType: "image/png", data: PNG }));
    const page = created(await admin.post(`${base}/pages`, { title: "Setup", markdown: "## Install" }));
    const markdown = [
      "# Title",
      "Some **bold**, _italic_, ~~struck~~ and `code` text with [a page](page:" +
        page.id +
        "#install), [a site](https://example.com) and ![a diagram](file:" +
        file.id +
        ").",
      "#### Deep heading",
      "> A quote\n>\n> ```js\n> quoted()\n> ```",
      "- one\n- two\n  1. nested",
      "3. three\n4. four",
      "- [x] done\n- [ ] todo",
      "```ts\nconst a = 1;\nconst b = 2;\n```",
      "---",
      "| a | b |\n| - | - |\n| 1 | 2 |",
      "<div>raw</div>",
      "A note[^1].\n\n[^1]: The note.",
    ].join("\n\n");
    const rc = created(await editor.post(`${base}/reusable-contents`, { title: "Everything", markdown }));
    const revision = (await reader.get(base)).body.id;
    // The helper checks the answer against GitBook's JSONDocument schema.
    const doc = (await reader.get(`/v1/spaces/${spaceId}/revisions/${revision}/reusable-contents/${rc.id}/document`)).body;
    expect(doc.object).toBe("document");
    expect(doc.nodes.map((n: any) => n.type)).toEqual([
      "heading-1",
      "paragraph",
      "heading-3",
      "blockquote",
      "list-unordered",
      "list-ordered",
      "list-tasks",
      "code",
      "divider",
      "code",
      "code",
      "paragraph",
      "paragraph",
      "paragraph",
    ]);
    const links = JSON.stringify(doc.nodes[1]);
    expect(links).toContain(JSON.stringify({ kind: "anchor", page: page.id, anchor: "install" }));
    expect(links).toContain(JSON.stringify({ kind: "url", url: "https://example.com" }));
    expect(links).toContain(JSON.stringify({ kind: "file", file: file.id }));
    expect(doc.nodes[7].nodes.map((l: any) => l.nodes[0].leaves[0].text)).toEqual(["const a = 1;", "const b = 2;"]);
    // Written back, GitBook's document gives the same text (a plain paragraph, a list, a code block).
    const simple = created(
      await editor.post(`${base}/reusable-contents`, { title: "Simple", markdown: "Hello **world**.\n\n- a\n- b\n\n```js\nx()\n```\n" }),
    );
    const simpleDoc = (
      await reader.get(`/v1/spaces/${spaceId}/revisions/${(await reader.get(base)).body.id}/reusable-contents/${simple.id}/document`)
    ).body;
    const back = await editor.patch(`${base}/reusable-contents/${simple.id}`, { document: simpleDoc });
    expect(back.body.markdown).toBe("Hello **world**.\n\n- a\n- b\n\n```js\nx()\n```\n");
  });

  it("are written in the space's own content while it is live, by the edit role only", async () => {
    const spaceId = (await createSpace(admin, admin.organization, { title: "Live" })).id;
    const content = `/v1/spaces/${spaceId}/content`;
    expectError(await reader.post(`${content}/reusable-contents`, { title: "Nope" }), 403);
    const rc = created(await editor.post(`${content}/reusable-contents`, { title: "Footer", markdown: "© Acme" }));
    expect((await editor.patch(`${content}/reusable-contents/${rc.id}`, { markdown: "© Acme Inc." })).body.markdown).toBe("© Acme Inc.");
    expectError(await reader.patch(`${content}/reusable-contents/${rc.id}`, { title: "x" }), 403);
    expectError(await reader.delete(`${content}/reusable-contents/${rc.id}`), 403);
    // Another organization does not see the space at all.
    expectError(await other.get(`${content}/reusable-contents/${rc.id}`), 404);
    const rev = (await admin.get(content)).body.id;
    expectError(await other.get(`/v1/spaces/${spaceId}/revisions/${rev}/reusable-contents/${rc.id}`), 404);
    // A revision of another space is not this space's.
    const elsewhere = (await createSpace(admin, admin.organization, { title: "Elsewhere" })).id;
    expectError(await admin.get(`/v1/spaces/${elsewhere}/revisions/${rev}/reusable-contents/${rc.id}`), 404, rev);

    expect((await admin.patch(`/v1/spaces/${spaceId}`, { editMode: "locked" })).status).toBe(200);
    expectError(await editor.patch(`${content}/reusable-contents/${rc.id}`, { title: "Locked" }), 403, "locked");
    expectError(await editor.put(`${content}/variables`, { variables: { a: "b" } }), 403, "locked");
  });

  it("refuses bad input with a 400 naming the field, and treats prototype names as plain ids", async () => {
    const { base } = await spaceWithCr();
    expectError(await editor.post(`${base}/reusable-contents`, { markdown: "x" }), 400, "title");
    expectError(await editor.post(`${base}/reusable-contents`, { title: "  " }), 400, "title");
    expectError(await editor.post(`${base}/reusable-contents`, { title: "a\u0000b" }), 400, "title");
    expectError(await editor.post(`${base}/reusable-contents`, { title: "x", markdown: "\ud800" }), 400, "markdown");
    expectError(await editor.post(`${base}/reusable-contents`, { title: "x".repeat(257) }), 400, "title");
    expectError(await editor.post(`${base}/reusable-contents`, { title: "x", markdown: "x".repeat(1_000_001) }), 400, "markdown");
    expectError(
      await editor.post(`${base}/reusable-contents`, { title: "x", markdown: "a", document: { object: "document", nodes: [] } }),
      400,
      "markdown or document",
    );
    expectError(
      await editor.post(`${base}/reusable-contents`, {
        title: "x",
        document: { object: "document", nodes: [{ object: "block", type: "nope" }] },
      }),
      400,
      "document",
    );
    const rc = created(await editor.post(`${base}/reusable-contents`, { title: "Kept" }));
    expectError(await editor.patch(`${base}/reusable-contents/${rc.id}`, { markdown: null }), 400, "markdown");
    for (const id of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expectError(await editor.get(`${base}/reusable-contents/${id}`), 404, id);
      expectError(await editor.patch(`${base}/reusable-contents/${id}`, { title: "x" }), 404, id);
      expect((await editor.delete(`${base}/reusable-contents/${id}`)).status).toBe(204);
    }
    expectError(await editor.get(`${base}/reusable-contents/a%00b`), 400, "reusableContentId");
    expect((await editor.get(`${base}/reusable-contents/${rc.id}`)).body.title).toBe("Kept");
  });
});

describe("variables", () => {
  it("are replaced, set, read and deleted, with GitBook's value types", async () => {
    const { spaceId, crId, base } = await spaceWithCr();
    expect((await reader.get(`${base}/variables`)).body).toEqual({});
    const put = await editor.put(`${base}/variables`, { variables: { version: "2.1", beta: true, seats: 25, constructor: "kept" } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ version: "2.1", beta: true, seats: 25, constructor: "kept" });
    const patch = await editor.patch(`${base}/variables`, { variables: { version: "2.2", region: "eu" } });
    expect(patch.body).toEqual({ version: "2.2", beta: true, seats: 25, constructor: "kept", region: "eu" });
    expect((await editor.delete(`${base}/variables/beta`)).status).toBe(204);
    expect((await editor.delete(`${base}/variables/beta`)).status).toBe(204);
    expect((await editor.delete(`${base}/variables/__proto__`)).status).toBe(204);
    expect((await reader.get(`${base}/variables`)).body).toEqual({ version: "2.2", seats: 25, constructor: "kept", region: "eu" });
    expect((await reader.get(base)).body.variables).toEqual({ version: "2.2", seats: 25, constructor: "kept", region: "eu" });
    // PUT replaces them all.
    expect((await editor.put(`${base}/variables`, { variables: { version: "3" } })).body).toEqual({ version: "3" });
    expectError(await reader.put(`${base}/variables`, { variables: { a: "b" } }), 403);
    expectError(await reader.delete(`${base}/variables/version`), 403);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/variables`)).body).toEqual({});
    expect((await merge(spaceId, crId)).status).toBe(200);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/variables`)).body).toEqual({ version: "3" });
    expect((await reader.get(`/v1/spaces/${spaceId}/content`)).body.variables).toEqual({ version: "3" });
  });

  it("refuse bad names and values with a 400 naming the variable", async () => {
    const { base } = await spaceWithCr();
    const bad: [unknown, string][] = [
      [{ "1st": "x" }, "1st"],
      [{ "a-b": "x" }, "a-b"],
      [{ "": "x" }, "variables."],
      [{ __proto__x: "x" }, "two underscores"],
      [{ ["n".repeat(65)]: "x" }, "64"],
      [{ motto: "x".repeat(257) }, "variables.motto"],
      [{ motto: "a\u0000b" }, "variables.motto"],
      [{ motto: "\udc00" }, "variables.motto"],
      [{ "a\u0000": "x" }, "NUL"],
      [{ motto: null }, "variables.motto"],
      [{ motto: { nested: true } }, "variables.motto"],
      [{ motto: ["x"] }, "variables.motto"],
      [Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`v${i}`, i])), "at most 100"],
      [["x"], "variables"],
      ["text", "variables"],
    ];
    for (const [variables, text] of bad) {
      const res = await editor.put(`${base}/variables`, { variables });
      expectError(res, 400, text);
    }
    // A name that is Object.prototype's own member, sent as JSON text.
    expectError(await editor.raw("PUT", `${base}/variables`, '{"variables":{"__proto__":"x"}}'), 400, "__proto__");
    expectError(await editor.raw("PUT", `${base}/variables`, '{"variables":{"big":1e400}}'), 400, "variables.big");
    // 100 set, one more through PATCH is one too many.
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`v${i}`, i]));
    expect((await editor.put(`${base}/variables`, { variables: hundred })).status).toBe(200);
    expectError(await editor.patch(`${base}/variables`, { variables: { extra: 1 } }), 400, "at most 100");
    expect(Object.keys((await editor.get(`${base}/variables`)).body)).toHaveLength(100);
  });
});

describe("file deletion", () => {
  it("removes a file from a change request's content, then from the space's on merge; the bytes stay for older revisions", async () => {
    const spaceId = (await createSpace(admin, admin.organization, { title: "Files" })).id;
    const file = created(await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "a.png", contentType: "image/png", data: PNG }));
    const cr = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Drop the image" }));
    const base = `/v1/spaces/${spaceId}/change-requests/${cr.id}/content`;
    expectError(await reader.delete(`${base}/files/${file.id}`), 403);
    expect((await editor.delete(`${base}/files/${file.id}`)).status).toBe(204);
    expect((await editor.delete(`${base}/files/${file.id}`)).status).toBe(204);
    expectError(await reader.get(`${base}/files/${file.id}`), 404);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/files/${file.id}`)).status).toBe(200);
    expect((await merge(spaceId, cr.id)).status).toBe(200);
    expectError(await reader.get(`/v1/spaces/${spaceId}/content/files/${file.id}`), 404);
    expect((await reader.get(`/v1/spaces/${spaceId}/content/files`)).body.items).toEqual([]);
    const download = await fetch(`${t.url}/v1/spaces/${spaceId}/content/files/${file.id}/download`, {
      headers: { authorization: `Bearer ${reader.token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(PNG, "base64"))).toBe(true);

    // Directly in a live space's content.
    const other = created(await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "b.png", contentType: "image/png", data: PNG }));
    expect((await editor.delete(`/v1/spaces/${spaceId}/content/files/${other.id}`)).status).toBe(204);
    expectError(await reader.get(`/v1/spaces/${spaceId}/content/files/${other.id}`), 404);
    expect((await editor.delete(`/v1/spaces/${spaceId}/content/files/constructor`)).status).toBe(204);
  });
});

describe("merging", () => {
  it("combines variables and reusable contents edited in two change requests, and answers 409 naming what both changed", async () => {
    const spaceId = (await createSpace(admin, admin.organization, { title: "Merges" })).id;
    const content = `/v1/spaces/${spaceId}/content`;
    const rc = created(await admin.post(`${content}/reusable-contents`, { title: "Notice", markdown: "one\ntwo\nthree\n" }));
    expect((await admin.put(`${content}/variables`, { variables: { version: "1", region: "eu" } })).status).toBe(200);
    const crA = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "A" })).id;
    const crB = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "B" })).id;
    const a = `/v1/spaces/${spaceId}/change-requests/${crA}/content`;
    const b = `/v1/spaces/${spaceId}/change-requests/${crB}/content`;
    // Different variables, different fields and lines of the same reusable content: both merge.
    expect((await editor.patch(`${a}/variables`, { variables: { version: "2" } })).status).toBe(200);
    expect((await editor.patch(`${b}/variables`, { variables: { region: "us", plan: "pro" } })).status).toBe(200);
    expect((await editor.patch(`${a}/reusable-contents/${rc.id}`, { title: "Notice!", markdown: "ONE\ntwo\nthree\n" })).status).toBe(200);
    expect((await editor.patch(`${b}/reusable-contents/${rc.id}`, { markdown: "one\ntwo\nTHREE\n" })).status).toBe(200);
    expect((await merge(spaceId, crA)).status).toBe(200);
    expect((await merge(spaceId, crB)).status).toBe(200);
    expect((await admin.get(`${content}/variables`)).body).toEqual({ version: "2", region: "us", plan: "pro" });
    expect((await admin.get(`${content}/reusable-contents/${rc.id}`)).body).toMatchObject({
      title: "Notice!",
      markdown: "ONE\ntwo\nTHREE\n",
    });

    // The same variable and the same line on both sides: the second merge is a conflict.
    const crC = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "C" })).id;
    const crD = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "D" })).id;
    const c = `/v1/spaces/${spaceId}/change-requests/${crC}/content`;
    const d = `/v1/spaces/${spaceId}/change-requests/${crD}/content`;
    await editor.patch(`${c}/variables`, { variables: { version: "3" } });
    await editor.patch(`${d}/variables`, { variables: { version: "4" } });
    await editor.patch(`${c}/reusable-contents/${rc.id}`, { markdown: "ONE\ntwo (c)\nTHREE\n" });
    await editor.patch(`${d}/reusable-contents/${rc.id}`, { markdown: "ONE\ntwo (d)\nTHREE\n" });
    expect((await merge(spaceId, crC)).status).toBe(200);
    const conflict = await merge(spaceId, crD);
    expectError(conflict, 409, 'variable "version"', 'reusable content "Notice!"', "line 2");
    // Nothing was written; deleting on one side what the other edited conflicts too.
    expect((await admin.get(`${content}/variables`)).body.version).toBe("3");
    const crE = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "E" })).id;
    await editor.delete(`/v1/spaces/${spaceId}/change-requests/${crE}/content/reusable-contents/${rc.id}`);
    await admin.patch(`${content}/reusable-contents/${rc.id}`, { title: "Renamed" });
    expectError(await merge(spaceId, crE), 409, "reusable content", "deleted");
  });
});

describe("GraphQL", () => {
  it("writes and reads reusable contents and variables with the same rules", async () => {
    const { spaceId, crId } = await spaceWithCr();
    const create = await editor.graphql(
      `mutation($s: String!, $c: String!) { changeRequestReusableContentCreate(spaceId: $s, changeRequestId: $c, title: "Intro", markdown: "Hello") { id title markdown document } }`,
      { s: spaceId, c: crId },
    );
    const rc = create.data.changeRequestReusableContentCreate;
    expect(rc).toMatchObject({ title: "Intro", markdown: "Hello", document: expect.stringMatching(/^doc_/) });
    const vars = await editor.graphql(
      `mutation($s: String!, $c: String!, $v: ContentVariables!) { changeRequestVariablesReplace(spaceId: $s, changeRequestId: $c, variables: $v) }`,
      {
        s: spaceId,
        c: crId,
        v: { product: "Acme", year: 2026 },
      },
    );
    expect(vars.data.changeRequestVariablesReplace).toEqual({ product: "Acme", year: 2026 });
    const read = await reader.graphql(
      `query($s: String!, $c: String!) { changeRequestContent(spaceId: $s, changeRequestId: $c) { id variables reusableContents { id title } } }`,
      { s: spaceId, c: crId },
    );
    const revision = read.data.changeRequestContent;
    expect(revision).toMatchObject({ variables: { product: "Acme", year: 2026 }, reusableContents: [{ id: rc.id, title: "Intro" }] });
    const doc = await reader.graphql(
      `query($s: String!, $r: String!, $id: String!) { revisionReusableContentDocument(spaceId: $s, revisionId: $r, reusableContentId: $id) }`,
      {
        s: spaceId,
        r: revision.id,
        id: rc.id,
      },
    );
    expect(doc.data.revisionReusableContentDocument).toMatchObject({ object: "document" });
    const bad = await editor.graphql(
      `mutation($s: String!, $c: String!, $v: ContentVariables!) { changeRequestVariablesUpdate(spaceId: $s, changeRequestId: $c, variables: $v) }`,
      {
        s: spaceId,
        c: crId,
        v: { "bad name": "x" },
      },
    );
    expect(bad.errors[0].message).toContain("variables.bad name");
    const del = await editor.graphql(
      `mutation($s: String!, $c: String!, $id: String!) { changeRequestReusableContentDelete(spaceId: $s, changeRequestId: $c, reusableContentId: $id) { deletedId } }`,
      {
        s: spaceId,
        c: crId,
        id: rc.id,
      },
    );
    expect(del.data.changeRequestReusableContentDelete.deletedId).toBe(rc.id);
    const denied = await reader.graphql(
      `mutation($s: String!, $c: String!) { changeRequestVariableDelete(spaceId: $s, changeRequestId: $c, variableName: "year") { deletedId } }`,
      { s: spaceId, c: crId },
    );
    expect(denied.errors[0].extensions.code).toBe(403);
  });
});
