import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, createCollection, createSpace, expectError, type Admin, type Member, PNG } from "../../helpers/fixtures.js";
import { createApiToken } from "../../../src/core/access/auth.js";
import { ssoTokenLabel } from "../../../src/core/access/sso-enforce.js";

/**
 * Organization-wide SSO applies to everything inside the organization, not only to its own
 * routes: a member marked `sso` who holds a token not issued by the organization's SAML sign-in
 * gets the organization's 403 on every space-, collection-, change-request- and comment-level
 * route, and sees none of its content in lists; the SSO-issued token reaches all of it.
 */

let t: TestGateway;
let admin: Admin;
let editor: Member; // holds a token not issued by SSO
let editorSso: Caller; // the same member's token from the organization's SAML sign-in
let ids: Record<string, string>;
let crIds: Record<string, string>; // comments of the change request

beforeAll(async () => {
  t = await startGateway();
  ({ admin, editor } = await acmeDocs(t, { editor: ["eve@acme.test", "admin"] }));
  const org = admin.organization;
  const collection = await createCollection(admin, org, { title: "Guides" });
  const space = await createSpace(admin, org, { title: "Handbook", parent: collection.id });
  const page = created(await admin.post(`/v1/spaces/${space.id}/content/pages`, { title: "Setup" }));
  const file = created(await admin.post(`/v1/spaces/${space.id}/content/files`, { name: "a.png", contentType: "image/png", data: PNG }));
  const reusable = created(await admin.post(`/v1/spaces/${space.id}/content/reusable-contents`, { title: "Notice" }));
  const revisionId = (await admin.get(`/v1/spaces/${space.id}/content`)).body.id;
  const cr = created(await admin.post(`/v1/spaces/${space.id}/change-requests`, { subject: "Typos" }));
  const comment = created(await admin.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "Is this right?" } }));
  const reply = created(await admin.post(`/v1/spaces/${space.id}/comments/${comment.id}/replies`, { body: { markdown: "Yes" } }));
  const crBase = `/v1/spaces/${space.id}/change-requests/${cr.id}`;
  const crComment = created(await admin.post(`${crBase}/comments`, { body: { markdown: "Typo here?" } }));
  const crReply = created(await admin.post(`${crBase}/comments/${crComment.id}/replies`, { body: { markdown: "Fixed" } }));
  crIds = { commentId: crComment.id, commentReplyId: crReply.id };
  ids = {
    organizationId: org,
    collectionId: collection.id,
    spaceId: space.id,
    pageId: page.id,
    pagePath: page.path,
    fileId: file.id,
    reusableContentId: reusable.id,
    revisionId,
    variableName: "product",
    changeRequestId: cr.id,
    commentId: comment.id,
    commentReplyId: reply.id,
  };

  const prisma = t.gateway.db.prisma;
  const provider = await prisma.samlProvider.create({ data: { id: "saml_acme1", organizationId: org, label: "Acme IdP" } });
  editorSso = t.caller((await createApiToken(prisma, editor.user, ssoTokenLabel(provider.id))).token);
  await prisma.member.update({ where: { organizationId_userId: { organizationId: org, userId: editor.user } }, data: { sso: true } });
  expect((await admin.patch(`/v1/orgs/${org}`, { sso: true })).status).toBe(200);
}, 120_000);
afterAll(() => t?.close());

/** A body with every required field of a request schema, filled with a plausible value. */
function sample(schema: any, doc: any): any {
  if (schema?.$ref)
    return sample(
      schema.$ref
        .split("/")
        .slice(1)
        .reduce((o: any, k: string) => o[k], doc),
      doc,
    );
  if (schema?.enum) return schema.enum[0];
  if (schema?.anyOf || schema?.oneOf) return sample((schema.anyOf ?? schema.oneOf)[0], doc);
  switch (schema?.type) {
    case "object":
      return Object.fromEntries((schema.required ?? []).map((k: string) => [k, sample(schema.properties?.[k], doc)]));
    case "array":
      return [];
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    default:
      return "x";
  }
}

/** Every documented operation below a space or a collection, with its path filled with real ids. */
function operationsInside(doc: any) {
  const out: { method: string; template: string; path: string; body?: unknown }[] = [];
  for (const [template, item] of Object.entries<any>(doc.paths)) {
    if (!/^\/v1\/(spaces|collections)\/\{/.test(template)) continue;
    const ofChangeRequest = template.includes("/change-requests/{changeRequestId}/comments");
    const path =
      template.replace(/\{(\w+)\}/g, (_, name) => {
        const id = (ofChangeRequest && crIds[name]) || ids[name];
        if (!id) throw new Error(`no id for ${name} in ${template}`);
        return id;
      }) + (template.endsWith("/search") ? "?query=setup" : template.endsWith("/embed") ? "?url=https%3A%2F%2Fexample.invalid%2F" : "");
    for (const [method, op] of Object.entries<any>(item)) {
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      out.push({ method: method.toUpperCase(), template, path, body: schema ? sample(schema, doc) : undefined });
    }
  }
  return out;
}

async function send(caller: Caller, method: string, path: string, body?: unknown) {
  switch (method) {
    case "GET":
      return caller.get(path);
    case "DELETE":
      return caller.delete(path);
    default:
      return (caller as any)[method.toLowerCase()](path, body ?? {});
  }
}

describe("organization-wide SSO inside the organization", () => {
  it("answers the organization's 403 on every space-, collection-, change-request- and comment-level route", async () => {
    const org = await editor.get(`/v1/orgs/${ids.organizationId}`);
    expectError(org, 403, "single sign-on");
    const ops = operationsInside(await (await fetch(`${t.url}/openapi.json`)).json());
    expect(ops.length).toBeGreaterThan(50);
    for (const tpl of [
      "/v1/spaces/{spaceId}",
      "/v1/collections/{collectionId}",
      "/v1/spaces/{spaceId}/change-requests/{changeRequestId}",
      "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
    ]) {
      expect(ops.map((o) => o.template)).toContain(tpl);
    }
    const wrong: string[] = [];
    for (const op of ops) {
      const res = await send(editor, op.method, op.path, op.body);
      if (res.status !== 403 || res.body?.error?.message !== org.body.error.message)
        wrong.push(`${op.method} ${op.template} → ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(wrong).toEqual([]);
  });

  it("refuses the raw download routes alike", async () => {
    for (const path of [
      `/v1/spaces/${ids.spaceId}/content/files/${ids.fileId}/download`,
      `/v1/spaces/${ids.spaceId}/change-requests/${ids.changeRequestId}/pdf/download`,
    ]) {
      const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${editor.token}` } });
      expect(res.status, path).toBe(403);
      expect((await res.json()).error.message).toMatch(/single sign-on/);
    }
    const ok = await fetch(`${t.url}/v1/spaces/${ids.spaceId}/content/files/${ids.fileId}/download`, {
      headers: { authorization: `Bearer ${editorSso.token}` },
    });
    expect(ok.status).toBe(200);
  });

  it("serves every read to the same member's SSO-issued token", async () => {
    const ops = operationsInside(await (await fetch(`${t.url}/openapi.json`)).json()).filter((o) => o.method === "GET");
    const wrong: string[] = [];
    for (const op of ops) {
      const res = await editorSso.get(op.path);
      if (res.status >= 300) wrong.push(`${op.method} ${op.template} → ${res.status} ${JSON.stringify(res.body)}`);
    }
    expect(wrong).toEqual([]);
  });

  it("lists nothing of the organization and answers 403 in GraphQL", async () => {
    expect((await editor.get("/v1/orgs")).body.items.map((o: any) => o.id)).not.toContain(ids.organizationId);
    expect((await editorSso.get("/v1/orgs")).body.items.map((o: any) => o.id)).toContain(ids.organizationId);
    const gql = await editor.graphql(`query($id: String!) { space(spaceId: $id) { id } }`, { id: ids.spaceId });
    expect(gql.errors[0].extensions.code).toBe(403);
    const lists = await editor.graphql(`{ organizations { items { id } } }`);
    expect(JSON.stringify(lists.data ?? {})).not.toContain(ids.organizationId);
    // The sign-in options stay readable, so the member can find where to sign in.
    expect((await editor.get(`/v1/orgs/${ids.organizationId}/sso`)).status).toBe(200);
  });

  it("a disabled member is no member anywhere inside the organization (404)", async () => {
    const prisma = t.gateway.db.prisma;
    const key = { organizationId_userId: { organizationId: ids.organizationId, userId: editor.user } };
    await prisma.member.update({ where: key, data: { disabled: true } });
    try {
      expectError(await editorSso.get(`/v1/spaces/${ids.spaceId}`), 404);
      expectError(await editorSso.get(`/v1/collections/${ids.collectionId}`), 404);
      expectError(await editorSso.get(`/v1/spaces/${ids.spaceId}/comments/${ids.commentId}`), 404);
      expectError(await editor.get(`/v1/spaces/${ids.spaceId}/change-requests/${ids.changeRequestId}`), 404);
    } finally {
      await prisma.member.update({ where: key, data: { disabled: false } });
    }
  });
});
