import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isObjectType } from "graphql";
import { startGateway, type Caller, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createCollection, createSpace, created, statementsOf, type Admin, type Member } from "../helpers/fixtures.js";
import { schema } from "../../src/schema.js";

/**
 * node(id:) and nodes(ids:) for every type implementing Node: an admin of the organization sees
 * each object, an outsider sees none (null, exactly like a missing id), and a member and a guest
 * see what the type's own read (its REST route) answers them.
 */
let t: TestGateway;
let admin: Admin;
let other: Admin;
let reader: Member;
let guest: Member;
/** One object of each Node type in Acme, with the REST read of it. */
const objects: Record<string, { id: string; rest?: string }> = {};

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, reader, guest } = await acmeDocs(t, { reader: ["rita@acme.test", "read"], guest: ["gus@acme.test", null] }));
  const org = admin.organization;
  const prisma = t.gateway.db.prisma;
  const collection = await createCollection(admin, org, { title: "Guides" });
  const space = await createSpace(admin, org, { title: "Handbook", parent: collection.id });
  const cr = created(await admin.post(`/v1/spaces/${space.id}/change-requests`, { subject: "Typos" }));
  const comment = created(await admin.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "Hello" } }));
  const reply = created(await admin.post(`/v1/spaces/${space.id}/comments/${comment.id}/replies`, { body: { markdown: "Hi" } }));
  const site = created(await admin.post(`/v1/orgs/${org}/sites`, { title: "Docs" }));
  const team = created(await admin.put(`/v1/orgs/${org}/teams`, { title: "Writers" }));
  const saml = created(await admin.post(`/v1/orgs/${org}/saml`, { label: "IdP" }));
  const translations = created(await admin.post(`/v1/orgs/${org}/translations`, { title: "French" }));
  await prisma.siteSection.create({ data: { id: "sitesc_nodes", siteId: site.id, title: "Section", path: "section" } });
  await prisma.siteSectionGroup.create({ data: { id: "sitesg_nodes", siteId: site.id, title: "Group" } });
  await prisma.siteSpace.create({ data: { id: "sitesp_nodes", siteId: site.id, spaceId: space.id, path: "handbook" } });
  await prisma.openApiSpec.create({ data: { id: "oas_nodes", organizationId: org, slug: "petstore" } });
  await prisma.openApiSpecVersion.create({
    data: { id: "oasv_nodes", specId: "oas_nodes", url: "https://example.com/petstore.json", filesystem: {} },
  });
  Object.assign(objects, {
    Organization: { id: org, rest: `/v1/orgs/${org}` },
    Collection: { id: collection.id, rest: `/v1/collections/${collection.id}` },
    Space: { id: space.id, rest: `/v1/spaces/${space.id}` },
    ChangeRequest: { id: cr.id, rest: `/v1/spaces/${space.id}/change-requests/${cr.id}` },
    Comment: { id: comment.id, rest: `/v1/spaces/${space.id}/comments/${comment.id}` },
    CommentReply: { id: reply.id, rest: `/v1/spaces/${space.id}/comments/${comment.id}/replies/${reply.id}` },
    Site: { id: site.id, rest: `/v1/orgs/${org}/sites/${site.id}` },
    SiteSection: { id: "sitesc_nodes", rest: `/v1/orgs/${org}/sites/${site.id}` },
    SiteSectionGroup: { id: "sitesg_nodes", rest: `/v1/orgs/${org}/sites/${site.id}` },
    SiteSpace: { id: "sitesp_nodes", rest: `/v1/orgs/${org}/sites/${site.id}` },
    Team: { id: team.id, rest: `/v1/orgs/${org}/teams/${team.id}` },
    SamlProvider: { id: saml.id, rest: `/v1/orgs/${org}/saml/${saml.id}` },
    TranslationSettings: { id: translations.id, rest: `/v1/orgs/${org}/translations/${translations.id}` },
    OpenApiSpec: { id: "oas_nodes", rest: `/v1/orgs/${org}/openapi/petstore` },
    OpenApiSpecVersion: { id: "oasv_nodes", rest: `/v1/orgs/${org}/openapi/petstore/versions/oasv_nodes` },
    User: { id: admin.user },
  });
}, 180_000);
afterAll(() => t?.close());

const NODE = `query($id: ID!) { node(id: $id) { __typename id } }`;

async function nodeOf(caller: Caller, id: string) {
  const res = await caller.graphql(NODE, { id });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.node;
}

/** Raw fetch of a REST read: only its status matters here (no OpenAPI check of error bodies needed). */
async function restReads(caller: Caller, path: string): Promise<boolean> {
  const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${caller.token}` } });
  return res.status === 200;
}

describe("node(id:) and nodes(ids:)", () => {
  it("covers every type implementing Node", () => {
    const nodeTypes = Object.values(schema.getTypeMap())
      .filter((type) => isObjectType(type) && type.getInterfaces().some((i) => i.name === "Node"))
      .map((type) => type.name)
      .sort();
    expect(Object.keys(objects).sort()).toEqual(nodeTypes);
  });

  it("answers every object to an admin of its organization", async () => {
    for (const [type, { id }] of Object.entries(objects)) expect(await nodeOf(admin, id), type).toEqual({ __typename: type, id });
  });

  it("answers nothing to an outsider: null, exactly like a missing id", async () => {
    for (const [type, { id }] of Object.entries(objects)) expect(await nodeOf(other, id), type).toBeNull();
    const missing = await other.graphql(NODE, { id: "spc_doesnotexist" });
    const hidden = await other.graphql(NODE, { id: objects.Space!.id });
    expect(hidden).toEqual(missing);
    expect(await nodeOf(other, "not-an-id")).toBeNull();
  });

  it("answers a member and a guest what the type's own read answers them", async () => {
    for (const caller of [reader, guest]) {
      for (const [type, { id, rest }] of Object.entries(objects)) {
        const expected = rest ? await restReads(caller, rest) : caller === reader; // a guest sees no other user
        expect(await nodeOf(caller, id), `${type} for ${caller === reader ? "reader" : "guest"}`).toEqual(
          expected ? { __typename: type, id } : null,
        );
      }
    }
    // The guest really is limited: no team, no SAML provider, no other user.
    expect(await nodeOf(guest, objects.SamlProvider!.id)).toBeNull();
    expect(await nodeOf(guest, objects.User!.id)).toBeNull();
    expect(await nodeOf(guest, guest.user)).toEqual({ __typename: "User", id: guest.user });
  });

  it("nodes(ids:) answers in order, null for what the caller may not see, with fields of each type", async () => {
    const ids = [objects.Space!.id, "spc_missing", objects.Organization!.id, objects.Comment!.id];
    const query = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Space { title } ... on Organization { title } ... on Comment { body { markdown } } } }`;
    const mine = await admin.graphql(query, { ids });
    expect(mine.data.nodes).toEqual([
      { __typename: "Space", id: ids[0], title: "Handbook" },
      null,
      { __typename: "Organization", id: ids[2], title: "Acme Docs" },
      { __typename: "Comment", id: ids[3], body: { markdown: "Hello" } },
    ]);
    const theirs = await other.graphql(query, { ids });
    expect(theirs.data.nodes).toEqual([null, null, null, null]);
    const tooMany = await admin.graphql(query, { ids: Array.from({ length: 101 }, (_, i) => `spc_${i}`) });
    expect(tooMany.errors[0].extensions.code).toBe(400);
  });

  it("costs as many statements for 40 spaces as for 5 (viewer, node, nodes)", async () => {
    const prisma = t.gateway.db.prisma;
    const space = await prisma.space.findUniqueOrThrow({ where: { id: objects.Space!.id } });
    const ids = Array.from({ length: 40 }, (_, i) => `spc_nodes_${i}`);
    await prisma.space.createMany({
      data: ids.map((id, i) => ({
        id,
        organizationId: space.organizationId,
        parentId: space.parentId,
        title: `Space ${i}`,
        position: 100 + i,
      })),
    });
    await admin.graphql(`{ viewer { id } }`); // the token's first use is recorded off the request's path
    await new Promise((r) => setTimeout(r, 200));
    const query = `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Space { title permissions { view edit } parent { id } organization { id } } } }`;
    const counts: number[] = [];
    for (const n of [5, 40]) {
      counts.push(
        await statementsOf(t, async () => {
          const res = await admin.graphql(query, { ids: ids.slice(0, n) });
          expect(res.data.nodes.filter(Boolean)).toHaveLength(n);
        }),
      );
    }
    const viewer = `query($n: Int!) { viewer { displayName organizations(first: $n) { totalCount nodes { title collections(first: $n) { nodes { spaces(first: $n) { nodes { title } } } } } } memberships(first: $n) { nodes { role organization { id } } } } }`;
    const viewerCounts: number[] = [];
    for (const n of [2, 20]) {
      viewerCounts.push(
        await statementsOf(t, async () => {
          const res = await admin.graphql(viewer, { n });
          expect(res.errors).toBeUndefined();
        }),
      );
    }
    console.log(
      `[nodes-batching] nodes(ids): 5 → ${counts[0]} statements, 40 → ${counts[1]}; viewer tree: n=2 → ${viewerCounts[0]}, n=20 → ${viewerCounts[1]}`,
    );
    expect(counts[1]).toBe(counts[0]);
    expect(viewerCounts[1]).toBe(viewerCounts[0]);
  });
});
