import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, createCollection, createSpace, expectError, type Admin } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin; // admin of Acme
let other: Admin; // admin of Other Org only
let third: Admin; // Ada again, admin of Third Org too (for transfers)
let creator: Caller; // create role in Acme
let reader: Caller; // read role in Acme
let guest: Caller; // guest in Acme

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, creator, reader, guest } = await acmeDocs(t, {
    creator: ["cree@acme.test", "create"],
    reader: ["rita@acme.test", "read"],
    guest: ["gus@acme.test", null],
  }));
  third = await t.bootstrap("ada@acme.test", "Third Org");
}, 180_000); // start-up and seeding are slow on a loaded machine
afterAll(() => t?.close());

const anonymous = () => t.caller("");

const newCollection = (title: string, parent?: string, by: Caller = admin, org = admin.organization) =>
  createCollection(by, org, parent ? { title, parent } : { title });
const newSpace = (title: string, parent?: string, org = admin.organization, by: Caller = admin) =>
  createSpace(by, org, parent ? { title, parent } : { title });

describe("POST /v1/orgs/{organizationId}/collections", () => {
  it("creates a top-level collection with the documented fields (201)", async () => {
    const res = await admin.post(`/v1/orgs/${admin.organization}/collections`, { title: "Guides" });
    expect(res.status).toBe(201);
    const c = res.body;
    expect(Object.keys(c).sort()).toEqual(["defaultLevel", "id", "object", "organization", "permissions", "title", "urls"]);
    expect(c).toEqual({
      object: "collection",
      id: expect.stringMatching(/^col_/),
      title: "Guides",
      organization: admin.organization,
      defaultLevel: null,
      urls: { location: `${t.url}/v1/collections/${c.id}`, app: expect.stringContaining(`/collections/${c.id}`) },
      permissions: { view: true, admin: true, viewInviteLinks: true, create: true },
    });
  });

  it("creates a nested collection under `parent` and a member with the create role may do it", async () => {
    const parent = await newCollection("Parent");
    const child = await newCollection("Child", parent.id, creator);
    expect(child.parent).toBe(parent.id);
    expect(child.permissions).toEqual({ view: true, admin: false, viewInviteLinks: false, create: true });
  });

  it("accepts a 50-character title and rejects bad input with a 400 naming the field", async () => {
    expect((await newCollection("x".repeat(50))).title).toHaveLength(50);
    const other_ = await newCollection("Theirs", undefined, other, other.organization);
    const cases: [unknown, string][] = [
      [{ title: "x".repeat(51) }, "title"],
      [{}, "title"],
      [{ title: "   " }, "title"],
      [{ title: 42 }, "title"],
      [{ title: "Ok", parent: "col_doesnotexist" }, "parent"],
      [{ title: "Ok", parent: other_.id }, "parent"],
      [{ title: "Ok", colour: "red" }, "colour"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post(`/v1/orgs/${admin.organization}/collections`, body);
      expectError(res, 400, field);
    }
  });

  it("is 401 without a token, 403 for a reader, 404 for another organization", async () => {
    expectError(await anonymous().post(`/v1/orgs/${admin.organization}/collections`, { title: "A" }), 401);
    expectError(await reader.post(`/v1/orgs/${admin.organization}/collections`, { title: "A" }), 403, "create");
    expectError(await other.post(`/v1/orgs/${admin.organization}/collections`, { title: "A" }), 404);
  });

  it("needs create on the parent collection", async () => {
    const locked = await newCollection("Read only");
    await admin.patch(`/v1/collections/${locked.id}`, { defaultLevel: "read" });
    expectError(await creator.post(`/v1/orgs/${admin.organization}/collections`, { title: "In", parent: locked.id }), 403, "create");
  });
});

describe("GET /v1/collections/{collectionId}", () => {
  it("returns the collection to members, with their permissions", async () => {
    const c = await newCollection("Readable");
    const mine = await admin.get(`/v1/collections/${c.id}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual(c);
    const theirs = await reader.get(`/v1/collections/${c.id}`);
    expect(theirs.body.permissions).toEqual({ view: true, admin: false, viewInviteLinks: false, create: false });
  });

  it("is 404 for another organization, guests and unknown ids; 401 without a token", async () => {
    const c = await newCollection("Hidden");
    expectError(await other.get(`/v1/collections/${c.id}`), 404, c.id);
    expectError(await guest.get(`/v1/collections/${c.id}`), 404);
    expectError(await admin.get(`/v1/collections/col_unknown`), 404);
    expectError(await anonymous().get(`/v1/collections/${c.id}`), 401);
  });
});

describe("PATCH /v1/collections/{collectionId}", () => {
  it("updates title, description and defaultLevel; null clears description and defaultLevel", async () => {
    const c = await newCollection("Before");
    const res = await admin.patch(`/v1/collections/${c.id}`, { title: "y".repeat(50), description: "d".repeat(100), defaultLevel: "edit" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, title: "y".repeat(50), description: "d".repeat(100), defaultLevel: "edit" });
    // The default level applies to members: a reader is now an editor of it (no create).
    expect((await reader.get(`/v1/collections/${c.id}`)).body.permissions.create).toBe(false);
    const cleared = await admin.patch(`/v1/collections/${c.id}`, { description: null, defaultLevel: null });
    expect(cleared.body.defaultLevel).toBeNull();
    expect(cleared.body).not.toHaveProperty("description");
    expect(cleared.body.title).toBe("y".repeat(50));
  });

  it("a defaultLevel of create lets readers create in it", async () => {
    const c = await newCollection("Open");
    await admin.patch(`/v1/collections/${c.id}`, { defaultLevel: "create" });
    expect((await reader.get(`/v1/collections/${c.id}`)).body.permissions).toMatchObject({ create: true, admin: false });
  });

  it("rejects bad input with a 400 naming the field", async () => {
    const c = await newCollection("Strict");
    const cases: [unknown, string][] = [
      [{ title: "x".repeat(51) }, "title"],
      [{ title: "" }, "title"],
      [{ title: null }, "title"],
      [{ description: "d".repeat(101) }, "description"],
      [{ defaultLevel: "owner" }, "defaultLevel"],
      [{ emoji: "📚" }, "emoji"],
    ];
    for (const [body, field] of cases) expectError(await admin.patch(`/v1/collections/${c.id}`, body), 400, field);
    expect((await admin.get(`/v1/collections/${c.id}`)).body.title).toBe("Strict");
  });

  it("is 403 for a member who is not admin of it, 404 for another organization, 401 without a token", async () => {
    const c = await newCollection("Guarded");
    expectError(await creator.patch(`/v1/collections/${c.id}`, { title: "Mine" }), 403, "admin");
    expectError(await other.patch(`/v1/collections/${c.id}`, { title: "Mine" }), 404);
    expectError(await anonymous().patch(`/v1/collections/${c.id}`, { title: "Mine" }), 401);
  });
});

describe("GET /v1/collections/{collectionId}/spaces", () => {
  it("lists the visible, not deleted spaces of the collection in order, with pages", async () => {
    const c = await newCollection("With spaces");
    const s1 = await newSpace("One", c.id);
    const s2 = await newSpace("Two", c.id);
    const s3 = await newSpace("Three", c.id);
    await newSpace("Elsewhere");
    const res = await admin.get(`/v1/collections/${c.id}/spaces`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.items.map((s: any) => s.id)).toEqual([s1.id, s2.id, s3.id]);
    expect(res.body.items[0]).toMatchObject({
      object: "space",
      parent: c.id,
      organization: admin.organization,
      visibility: "in-collection",
    });

    expect((await admin.delete(`/v1/spaces/${s2.id}`)).status).toBe(204);
    const page1 = await admin.get(`/v1/collections/${c.id}/spaces`, { limit: 1 });
    expect(page1.body.count).toBe(2);
    expect(page1.body.items.map((s: any) => s.id)).toEqual([s1.id]);
    const page2 = await admin.get(`/v1/collections/${c.id}/spaces`, { limit: 1, page: page1.body.next.page });
    expect(page2.body.items.map((s: any) => s.id)).toEqual([s3.id]);
    expect(page2.body).not.toHaveProperty("next");
  });

  it("rejects a bad limit, and is 404 for others and 401 without a token", async () => {
    const c = await newCollection("Listed");
    expectError(await admin.get(`/v1/collections/${c.id}/spaces`, { limit: 1001 }), 400, "limit");
    expectError(await admin.get(`/v1/collections/${c.id}/spaces`, { limit: 0 }), 400, "limit");
    expectError(await other.get(`/v1/collections/${c.id}/spaces`), 404);
    expectError(await anonymous().get(`/v1/collections/${c.id}/spaces`), 401);
  });
});

describe("GET /v1/orgs/{organizationId}/collections", () => {
  it("lists every collection by default and only top-level ones with nested=false", async () => {
    const fresh = await t.bootstrap("nina@nest.test", "Nest Org");
    const top1 = await newCollection("Top 1", undefined, fresh, fresh.organization);
    const sub = await newCollection("Sub", top1.id, fresh, fresh.organization);
    const top2 = await newCollection("Top 2", undefined, fresh, fresh.organization);
    const all = await fresh.get(`/v1/orgs/${fresh.organization}/collections`);
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(3);
    expect(all.body.items.map((c: any) => c.id)).toEqual([top1.id, sub.id, top2.id]);
    const explicit = await fresh.get(`/v1/orgs/${fresh.organization}/collections`, { nested: true });
    expect(explicit.body.count).toBe(3);
    const top = await fresh.get(`/v1/orgs/${fresh.organization}/collections`, { nested: false });
    expect(top.body.items.map((c: any) => c.id)).toEqual([top1.id, top2.id]);
    const paged = await fresh.get(`/v1/orgs/${fresh.organization}/collections`, { limit: 2 });
    expect(paged.body.items).toHaveLength(2);
    const rest = await fresh.get(`/v1/orgs/${fresh.organization}/collections`, { limit: 2, page: paged.body.next.page });
    expect(rest.body.items.map((c: any) => c.id)).toEqual([top2.id]);
  });

  it("shows guests no collection; 400 for bad parameters, 404 for strangers, 401 without a token", async () => {
    const res = await guest.get(`/v1/orgs/${admin.organization}/collections`);
    expect(res.body).toEqual({ count: 0, items: [] });
    expectError(await admin.get(`/v1/orgs/${admin.organization}/collections`, { nested: "maybe" }), 400, "nested");
    expectError(await admin.get(`/v1/orgs/${admin.organization}/collections`, { limit: 1001 }), 400, "limit");
    expectError(await other.get(`/v1/orgs/${admin.organization}/collections`), 404);
    expectError(await anonymous().get(`/v1/orgs/${admin.organization}/collections`), 401);
  });
});

describe("POST /v1/collections/{collectionId}/move", () => {
  it("orders collections and spaces as siblings of one parent", async () => {
    const root = await newCollection("Ordering root");
    const a = await newCollection("A", root.id);
    const s = await newSpace("S", root.id);
    const b = await newCollection("B", root.id);
    // Order: A, S, B. Move B before A → B, A, S.
    const moved = await admin.post(`/v1/collections/${b.id}/move`, { position: { before: { type: "collection", collection: a.id } } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: b.id, parent: root.id });
    expect(await siblingOrder(root.id)).toEqual([b.id, a.id, s.id]);
    // Move A after the space → B, S, A.
    await admin.post(`/v1/collections/${a.id}/move`, { position: { after: { type: "space", space: s.id } } });
    expect(await siblingOrder(root.id)).toEqual([b.id, s.id, a.id]);
    // Between two given neighbours → B, A, S.
    await admin.post(`/v1/collections/${a.id}/move`, {
      position: { after: { type: "collection", collection: b.id }, before: { type: "space", space: s.id } },
    });
    expect(await siblingOrder(root.id)).toEqual([b.id, a.id, s.id]);
    // Repeated moves into the same gap keep working (positions are spread out when needed).
    for (let i = 0; i < 60; i++) {
      const [first, second] = i % 2 ? [a.id, b.id] : [b.id, a.id];
      await admin.post(`/v1/collections/${second}/move`, { position: { after: { type: "collection", collection: first } } });
    }
    expect((await siblingOrder(root.id)).at(-1)).toBe(s.id);
  });

  it("moves under another parent, back to the top level with null, and keeps the parent when omitted", async () => {
    const target = await newCollection("Target");
    const c = await newCollection("Mover");
    const inside = await admin.post(`/v1/collections/${c.id}/move`, { parent: target.id });
    expect(inside.body.parent).toBe(target.id);
    const stay = await admin.post(`/v1/collections/${c.id}/move`, {});
    expect(stay.body.parent).toBe(target.id);
    const top = await admin.post(`/v1/collections/${c.id}/move`, { parent: null });
    expect(top.status).toBe(200);
    expect(top.body).not.toHaveProperty("parent");
  });

  it("refuses to move a collection under itself or a descendant, and other bad input, with a 400", async () => {
    const a = await newCollection("Loop A");
    const b = await newCollection("Loop B", a.id);
    const c = await newCollection("Loop C", b.id);
    const space = await newSpace("Loop space");
    const foreign = await newCollection("Foreign", undefined, other, other.organization);
    const cases: [unknown, string][] = [
      [{ parent: a.id }, "parent"],
      [{ parent: c.id }, "parent"],
      [{ parent: "col_nope" }, "parent"],
      [{ parent: foreign.id }, "parent"],
      [{ position: { before: { type: "space", space: space.id } } }, "position.before"], // the space is not a sibling of `a`
      [{ position: { after: { type: "space" } } }, "position.after.space"],
      [{ position: { after: { type: "collection", collection: a.id } } }, "position.after"],
      [{ position: { before: { type: "page", page: "x" } } }, "position"],
      [{ position: { sideways: true } }, "sideways"],
    ];
    // Nest the space under `c`, so that it is not among the top-level siblings of `a`.
    await admin.post(`/v1/spaces/${space.id}/move`, { parent: c.id });
    for (const [body, field] of cases) expectError(await admin.post(`/v1/collections/${a.id}/move`, body), 400, field);
  });

  it("is 403 without admin on the collection, 404 for another organization, 401 without a token", async () => {
    const c = await newCollection("Fixed");
    expectError(await creator.post(`/v1/collections/${c.id}/move`, { parent: null }), 403, "admin");
    expectError(await other.post(`/v1/collections/${c.id}/move`, { parent: null }), 404);
    expectError(await anonymous().post(`/v1/collections/${c.id}/move`, { parent: null }), 401);
  });
});

describe("POST /v1/collections/{collectionId}/transfer", () => {
  it("moves the collection, its descendants and their spaces to the target organization's top level", async () => {
    const parent = await newCollection("Parent stays");
    const c = await newCollection("Travelling", parent.id);
    const sub = await newCollection("Travelling child", c.id);
    const s1 = await newSpace("In travelling", c.id);
    const s2 = await newSpace("In child", sub.id);
    const res = await admin.post(`/v1/collections/${c.id}/transfer`, { organization: third.organization });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "collection", id: c.id, organization: third.organization });
    expect(res.body).not.toHaveProperty("parent");
    expect((await admin.get(`/v1/collections/${sub.id}`)).body).toMatchObject({ organization: third.organization, parent: c.id });
    expect((await admin.get(`/v1/spaces/${s1.id}`)).body).toMatchObject({ organization: third.organization, parent: c.id });
    expect((await admin.get(`/v1/spaces/${s2.id}`)).body).toMatchObject({ organization: third.organization, parent: sub.id });
    const listed = await admin.get(`/v1/orgs/${third.organization}/collections`);
    expect(listed.body.items.map((x: any) => x.id)).toEqual(expect.arrayContaining([c.id, sub.id]));
    // Back home: transferring to the organization it is in changes nothing.
    expect((await admin.post(`/v1/collections/${c.id}/transfer`, { organization: third.organization })).body.organization).toBe(
      third.organization,
    );
  });

  it("needs admin in both organizations", async () => {
    const c = await newCollection("Stays home");
    expectError(await admin.post(`/v1/collections/${c.id}/transfer`, { organization: other.organization }), 404, "organization");
    await t.member(other.organization, "ada@acme.test", "create");
    expectError(await admin.post(`/v1/collections/${c.id}/transfer`, { organization: other.organization }), 403, "admin");
    const cByCreator = await newCollection("Creator's", undefined, creator);
    expectError(await creator.post(`/v1/collections/${cByCreator.id}/transfer`, { organization: third.organization }), 403, "admin");
    expect((await admin.get(`/v1/collections/${c.id}`)).body.organization).toBe(admin.organization);
  });

  it("rejects a missing organization with 400; 404 for another organization's token, 401 without a token", async () => {
    const c = await newCollection("Transfer input");
    expectError(await admin.post(`/v1/collections/${c.id}/transfer`, {}), 400, "organization");
    expectError(await admin.post(`/v1/collections/${c.id}/transfer`, { organization: 7 }), 400, "organization");
    expectError(await other.post(`/v1/collections/${c.id}/transfer`, { organization: other.organization }), 404);
    expectError(await anonymous().post(`/v1/collections/${c.id}/transfer`, { organization: other.organization }), 401);
  });
});

describe("DELETE /v1/collections/{collectionId}", () => {
  it("deletes the collection and its sub-collections, moves their spaces to the top level, and answers 204 twice", async () => {
    const c = await newCollection("Doomed");
    const sub = await newCollection("Doomed child", c.id);
    const s1 = await newSpace("Survivor 1", c.id);
    const s2 = await newSpace("Survivor 2", sub.id);
    const lastTop = await newSpace("Last top-level space");
    const res = await admin.delete(`/v1/collections/${c.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expectError(await admin.get(`/v1/collections/${c.id}`), 404);
    expectError(await admin.get(`/v1/collections/${sub.id}`), 404);
    for (const s of [s1, s2]) {
      const got = await admin.get(`/v1/spaces/${s.id}`);
      expect(got.status).toBe(200);
      expect(got.body).not.toHaveProperty("parent");
      expect(got.body).not.toHaveProperty("deletedAt");
      expect(got.body.visibility).toBe("private");
    }
    // They go after the items that were already at the top level.
    const top = await siblingOrder(null, admin.organization);
    expect(top.indexOf(s1.id)).toBeGreaterThan(top.indexOf(lastTop.id));
    expect(top.indexOf(s2.id)).toBeGreaterThan(top.indexOf(lastTop.id));
    expect((await admin.delete(`/v1/collections/${c.id}`)).status).toBe(204);
    expect((await admin.delete(`/v1/collections/col_never_existed`)).status).toBe(204);
  });

  it("is 403 for a member who is not admin of it, 404 for another organization, 401 without a token", async () => {
    const c = await newCollection("Protected");
    expectError(await creator.delete(`/v1/collections/${c.id}`), 403, "admin");
    expectError(await other.delete(`/v1/collections/${c.id}`), 404);
    expectError(await anonymous().delete(`/v1/collections/${c.id}`), 401);
    expect((await admin.get(`/v1/collections/${c.id}`)).status).toBe(200);
  });
});

describe("GraphQL", () => {
  it("serves collections with connections and related objects", async () => {
    const c = await newCollection("Graph root");
    const child = await newCollection("Graph child", c.id);
    const s = await newSpace("Graph space", c.id);
    const res = await admin.graphql(
      `query($id: String!) { collection(collectionId: $id) {
        id title organization { id }
        children(first: 5) { totalCount edges { node { id parent { id } } } }
        spaces(first: 5) { totalCount edges { node { id parent { id } } } }
      } }`,
      { id: c.id },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.collection).toEqual({
      id: c.id,
      title: "Graph root",
      organization: { id: admin.organization },
      children: { totalCount: 1, edges: [{ node: { id: child.id, parent: { id: c.id } } }] },
      spaces: { totalCount: 1, edges: [{ node: { id: s.id, parent: { id: c.id } } }] },
    });
    const top = await admin.graphql(
      `query($org: String!) { organization(organizationId: $org) { all: collections { totalCount } top: collections(nested: false) { totalCount } } }`,
      { org: admin.organization },
    );
    const rest = await admin.get(`/v1/orgs/${admin.organization}/collections`);
    const restTop = await admin.get(`/v1/orgs/${admin.organization}/collections`, { nested: false });
    expect(top.data.organization).toEqual({ all: { totalCount: rest.body.count }, top: { totalCount: restTop.body.count } });
    const hidden = await other.graphql(`query($id: String!) { collection(collectionId: $id) { id } }`, { id: c.id });
    expect(hidden.errors[0].extensions.code).toBe(404);
  });
});

/** Ids of the collections and (not deleted) spaces under a parent, in their shared order. */
async function siblingOrder(parentId: string | null, organizationId = admin.organization): Promise<string[]> {
  const db = t.gateway.db.prisma;
  const [collections, spaces] = await Promise.all([
    db.collection.findMany({ where: { organizationId, parentId }, select: { id: true, position: true } }),
    db.space.findMany({ where: { organizationId, parentId, deletedAt: null }, select: { id: true, position: true } }),
  ]);
  return [...collections, ...spaces].sort((x, y) => x.position - y.position || (x.id < y.id ? -1 : 1)).map((x) => x.id);
}
