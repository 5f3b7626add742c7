import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, createCollection, createSpace, expectError, type Admin, type Member } from "../../helpers/fixtures.js";
import { collect, firstOutcome, wsClient } from "../../helpers/graphql-ws.js";

let t: TestGateway;
let admin: Admin; // admin of Acme
let other: Admin; // admin of Other Org only
let third: Admin; // Ada again, admin of Third Org (transfers)
let creator: Member; // create role in Acme
let editor: Member; // edit role in Acme
let reader: Member; // read role in Acme
let guest: Member; // guest in Acme

const DAY = 24 * 60 * 60 * 1000;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, creator, editor, reader, guest } = await acmeDocs(t, {
    creator: ["cree@acme.test", "create"],
    editor: ["eddie@acme.test", "edit"],
    reader: ["rita@acme.test", "read"],
    guest: ["gus@acme.test", null],
  }));
  third = await t.bootstrap("ada@acme.test", "Third Org");
}, 180_000); // start-up and seeding are slow on a loaded machine
afterAll(() => t?.close());

const anonymous = () => t.caller("");
const db = () => t.gateway.db.prisma;

const newSpace = (body: Record<string, unknown> = {}, by: Caller = admin, org = admin.organization) =>
  createSpace(by, org, { title: "Space", ...body });
const newCollection = (title: string, org = admin.organization, by: Caller = admin) => createCollection(by, org, { title });

const ALL_PERMISSIONS = {
  view: true,
  access: true,
  admin: true,
  viewInviteLinks: true,
  edit: true,
  triggerGitSync: true,
  comment: true,
  merge: true,
  review: true,
  installIntegration: true,
};

describe("POST /v1/orgs/{organizationId}/spaces", () => {
  it("creates a top-level space with the documented fields (201)", async () => {
    const before = Date.now();
    const res = await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Handbook", emoji: "📚" });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(Object.keys(s).sort()).toEqual(
      [
        "object",
        "id",
        "title",
        "emoji",
        "visibility",
        "createdAt",
        "updatedAt",
        "editMode",
        "urls",
        "organization",
        "comments",
        "changeRequests",
        "changeRequestsOpen",
        "changeRequestsDraft",
        "permissions",
        "revision",
        "defaultLevel",
        "mergeRules",
      ].sort(),
    );
    expect(s).toEqual({
      object: "space",
      id: expect.stringMatching(/^spc_/),
      title: "Handbook",
      emoji: "📚",
      visibility: "private",
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      editMode: "live",
      urls: {
        location: `${t.url}/v1/spaces/${s.id}`,
        app: expect.stringContaining(s.id),
        icon: expect.stringContaining("1f4da"),
      },
      organization: admin.organization,
      comments: 0,
      changeRequests: 0,
      changeRequestsOpen: 0,
      changeRequestsDraft: 0,
      permissions: ALL_PERMISSIONS,
      revision: expect.stringMatching(/^rev_/), // its first, empty revision
      defaultLevel: "inherit",
      mergeRules: { type: "inherit" },
    });
    expect(new Date(s.createdAt).toISOString()).toBe(s.createdAt);
    expect(new Date(s.createdAt).getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it("creates in a collection (in-collection visibility), locked, with a default title and a hex emoji", async () => {
    const c = await newCollection("Home");
    const res = await creator.post(`/v1/orgs/${admin.organization}/spaces`, { parent: c.id, editMode: "locked", emoji: "U+1F389" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: "Untitled", parent: c.id, visibility: "in-collection", editMode: "locked", emoji: "1f389" });
    expect(res.body.permissions).toMatchObject({ view: true, admin: false, edit: false, merge: false, review: true, comment: true });
  });

  it("accepts a 100-character title and rejects bad input with a 400 naming the field", async () => {
    expect((await newSpace({ title: "t".repeat(100) })).title).toHaveLength(100);
    const foreign = await newCollection("Foreign", other.organization, other);
    const cases: [unknown, string][] = [
      [{ title: "t".repeat(101) }, "title"],
      [{ title: "  " }, "title"],
      [{ title: 5 }, "title"],
      [{ emoji: "e".repeat(33) }, "emoji"],
      [{ emoji: "xyz" }, "emoji"],
      [{ emoji: "📚📚" }, "emoji"],
      [{ editMode: "frozen" }, "editMode"],
      [{ parent: "col_unknown" }, "parent"],
      [{ parent: foreign.id }, "parent"],
      [{ visibility: "public" }, "visibility"],
    ];
    for (const [body, field] of cases) expectError(await admin.post(`/v1/orgs/${admin.organization}/spaces`, body), 400, field);
  });

  it("is 401 without a token, 403 below the create role, 404 for another organization", async () => {
    expectError(await anonymous().post(`/v1/orgs/${admin.organization}/spaces`, { title: "x" }), 401);
    expectError(await editor.post(`/v1/orgs/${admin.organization}/spaces`, { title: "x" }), 403, "create");
    expectError(await guest.post(`/v1/orgs/${admin.organization}/spaces`, { title: "x" }), 403, "create");
    expectError(await other.post(`/v1/orgs/${admin.organization}/spaces`, { title: "x" }), 404);
  });
});

describe("GET /v1/spaces/{spaceId}", () => {
  it("returns the space to members with their permissions", async () => {
    const s = await newSpace({ title: "Readable" });
    const mine = await admin.get(`/v1/spaces/${s.id}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual(s);
    expect((await reader.get(`/v1/spaces/${s.id}`)).body.permissions).toEqual({
      view: true,
      access: true,
      admin: false,
      viewInviteLinks: false,
      edit: false,
      triggerGitSync: false,
      comment: false,
      merge: false,
      review: false,
      installIntegration: false,
    });
    expect((await editor.get(`/v1/spaces/${s.id}`)).body.permissions).toMatchObject({
      edit: true,
      comment: true,
      review: false,
      admin: false,
    });
  });

  it("gives published and public links only to publicly reachable spaces; shareKey resolves share-link ones", async () => {
    const s = await newSpace({ title: "Published" });
    expect((await admin.get(`/v1/spaces/${s.id}`)).body.urls).not.toHaveProperty("published");
    await db().space.update({ where: { id: s.id }, data: { visibility: "public" } });
    const pub = (await admin.get(`/v1/spaces/${s.id}`)).body;
    expect(pub.visibility).toBe("public");
    expect(pub.urls).toMatchObject({ published: expect.stringContaining(s.id), public: expect.stringContaining(s.id) });
    await db().space.update({ where: { id: s.id }, data: { visibility: "share_link" } });
    const noKey = (await admin.get(`/v1/spaces/${s.id}`)).body;
    expect(noKey.visibility).toBe("share-link");
    expect(noKey.urls).not.toHaveProperty("published");
    const withKey = (await admin.get(`/v1/spaces/${s.id}`, { shareKey: "k3y_abc" })).body;
    expect(withKey.urls.published).toContain("share=k3y_abc");
    expect(withKey.urls).not.toHaveProperty("public");
    await db().space.update({ where: { id: s.id }, data: { visibility: "visitor_auth" } });
    const va = (await admin.get(`/v1/spaces/${s.id}`)).body;
    expect(va.visibility).toBe("visitor-auth");
    expect(va.urls).toHaveProperty("published");
    expect(va.urls).not.toHaveProperty("public");
    expectError(await admin.get(`/v1/spaces/${s.id}`, { shareKey: "not a key!" }), 400, "shareKey");
  });

  it("is 404 for guests without a grant, other organizations and unknown ids; guests see what is granted", async () => {
    const s = await newSpace({ title: "Guarded" });
    expectError(await guest.get(`/v1/spaces/${s.id}`), 404, s.id);
    expectError(await other.get(`/v1/spaces/${s.id}`), 404, s.id);
    expectError(await admin.get(`/v1/spaces/spc_unknown`), 404);
    expectError(await anonymous().get(`/v1/spaces/${s.id}`), 401);
    await db().spaceAccess.create({ data: { id: `acc_${s.id}`, spaceId: s.id, userId: guest.user, role: "comment" } });
    const granted = await guest.get(`/v1/spaces/${s.id}`);
    expect(granted.status).toBe(200);
    expect(granted.body.permissions).toMatchObject({ view: true, comment: true, edit: false });
    // A grant through a team works as well.
    const s2 = await newSpace({ title: "Team space" });
    const team = await db().team.create({ data: { id: `team_${s2.id}`, organizationId: admin.organization, title: "Writers" } });
    await db().teamMember.create({ data: { teamId: team.id, userId: guest.user } });
    await db().spaceAccess.create({ data: { id: `acc_${s2.id}`, spaceId: s2.id, teamId: team.id, role: "edit" } });
    expect((await guest.get(`/v1/spaces/${s2.id}`)).body.permissions.edit).toBe(true);
  });

  it("inherits the collection's defaultLevel, and the space's own defaultLevel wins", async () => {
    const c = await newCollection("Levels");
    await admin.patch(`/v1/collections/${c.id}`, { defaultLevel: "review" });
    const s = await newSpace({ parent: c.id });
    expect((await reader.get(`/v1/spaces/${s.id}`)).body.permissions).toMatchObject({ review: true, admin: false });
    await admin.patch(`/v1/spaces/${s.id}`, { defaultLevel: "read" });
    expect((await reader.get(`/v1/spaces/${s.id}`)).body.permissions).toMatchObject({ review: false, view: true });
  });
});

describe("PATCH /v1/spaces/{spaceId}", () => {
  it("lets an editor change title and emoji, and an admin editMode and defaultLevel", async () => {
    const s = await newSpace({ title: "Draft", emoji: "1f4dd" });
    const byEditor = await editor.patch(`/v1/spaces/${s.id}`, { title: "t".repeat(100), emoji: "✏️" });
    expect(byEditor.status).toBe(200);
    expect(byEditor.body).toMatchObject({ title: "t".repeat(100), emoji: "✏️", urls: { icon: expect.stringContaining("270f") } });
    const byAdmin = await admin.patch(`/v1/spaces/${s.id}`, { editMode: "locked", defaultLevel: "comment" });
    expect(byAdmin.body).toMatchObject({ editMode: "locked", defaultLevel: "comment" });
    expect(byAdmin.body.permissions).toMatchObject({ admin: true, edit: false, merge: false });
    expect(new Date(byAdmin.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(s.updatedAt).getTime());
    const cleared = await admin.patch(`/v1/spaces/${s.id}`, { emoji: null, defaultLevel: null, editMode: "live" });
    expect(cleared.body.emoji).toBe(""); // none (GitBook's schema requires the field)
    expect(cleared.body.defaultLevel).toBe("inherit");
    expect(cleared.body.urls).not.toHaveProperty("icon");
    expect(cleared.body.editMode).toBe("live");
  });

  it("refuses an editor the admin fields and the title of a locked space (403), a reader everything", async () => {
    const s = await newSpace({ title: "Locked soon" });
    expectError(await editor.patch(`/v1/spaces/${s.id}`, { editMode: "locked" }), 403, "admin");
    expectError(await editor.patch(`/v1/spaces/${s.id}`, { defaultLevel: "read" }), 403, "admin");
    expectError(await reader.patch(`/v1/spaces/${s.id}`, { title: "Mine" }), 403, "edit");
    await admin.patch(`/v1/spaces/${s.id}`, { editMode: "locked" });
    expectError(await editor.patch(`/v1/spaces/${s.id}`, { title: "Mine" }), 403, "locked");
    expect((await admin.get(`/v1/spaces/${s.id}`)).body.title).toBe("Locked soon");
  });

  it("rejects bad input with a 400 naming the field", async () => {
    const s = await newSpace({ title: "Strict" });
    const cases: [unknown, string][] = [
      [{ title: "t".repeat(101) }, "title"],
      [{ title: "" }, "title"],
      [{ title: null }, "title"],
      [{ emoji: "😀".repeat(9) + "x".repeat(24) }, "emoji"],
      [{ emoji: "no" + " ".repeat(3) + "pe" }, "emoji"],
      [{ editMode: "frozen" }, "editMode"],
      [{ editMode: null }, "editMode"],
      [{ defaultLevel: "owner" }, "defaultLevel"],
      [{ visibility: "public" }, "visibility"],
    ];
    for (const [body, field] of cases) expectError(await admin.patch(`/v1/spaces/${s.id}`, body), 400, field);
    expect((await admin.get(`/v1/spaces/${s.id}`)).body.title).toBe("Strict");
  });

  it("is 404 for another organization and 401 without a token", async () => {
    const s = await newSpace();
    expectError(await other.patch(`/v1/spaces/${s.id}`, { title: "Mine" }), 404);
    expectError(await anonymous().patch(`/v1/spaces/${s.id}`, { title: "Mine" }), 401);
  });
});

describe("DELETE /v1/spaces/{spaceId} and POST /v1/spaces/{spaceId}/restore", () => {
  it("soft-deletes (204 twice), keeps the space readable but not writable, and restores it", async () => {
    const s = await newSpace({ title: "Temporary" });
    const res = await admin.delete(`/v1/spaces/${s.id}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await admin.delete(`/v1/spaces/${s.id}`)).status).toBe(204);
    expect((await admin.delete(`/v1/spaces/spc_never_existed`)).status).toBe(204);

    const read = await admin.get(`/v1/spaces/${s.id}`);
    expect(read.status).toBe(200);
    expect(new Date(read.body.deletedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const list = await admin.get(`/v1/orgs/${admin.organization}/spaces`, { limit: 1000 });
    expect(list.body.items.map((x: any) => x.id)).not.toContain(s.id);

    expectError(await admin.patch(`/v1/spaces/${s.id}`, { title: "Nope" }), 409, "restore");
    expectError(await admin.post(`/v1/spaces/${s.id}/move`, { parent: null }), 409, "restore");
    expectError(await admin.post(`/v1/spaces/${s.id}/duplicate`), 409, "restore");
    expectError(await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: third.organization }), 409, "restore");

    const restored = await admin.post(`/v1/spaces/${s.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).not.toHaveProperty("deletedAt");
    expect(restored.body.title).toBe("Temporary");
    // Restoring a space that is not deleted returns it unchanged.
    expect((await admin.post(`/v1/spaces/${s.id}/restore`)).status).toBe(200);
  });

  it("restores within 7 days only; afterwards the space is gone (404) and delete answers 204", async () => {
    const s = await newSpace({ title: "Old" });
    await admin.delete(`/v1/spaces/${s.id}`);
    await db().space.update({ where: { id: s.id }, data: { deletedAt: new Date(Date.now() - 6.9 * DAY) } });
    expect((await admin.post(`/v1/spaces/${s.id}/restore`)).status).toBe(200);

    await admin.delete(`/v1/spaces/${s.id}`);
    await db().space.update({ where: { id: s.id }, data: { deletedAt: new Date(Date.now() - 7.1 * DAY) } });
    expectError(await admin.post(`/v1/spaces/${s.id}/restore`), 404, s.id);
    expectError(await admin.get(`/v1/spaces/${s.id}`), 404);
    expect((await admin.delete(`/v1/spaces/${s.id}`)).status).toBe(204);
  });

  it("is 403 below admin, 404 for another organization, 401 without a token", async () => {
    const s = await newSpace({ title: "Kept" });
    expectError(await creator.delete(`/v1/spaces/${s.id}`), 403, "admin");
    expectError(await other.delete(`/v1/spaces/${s.id}`), 404);
    expectError(await anonymous().delete(`/v1/spaces/${s.id}`), 401);
    await admin.delete(`/v1/spaces/${s.id}`);
    expectError(await creator.post(`/v1/spaces/${s.id}/restore`), 403, "admin");
    expectError(await other.post(`/v1/spaces/${s.id}/restore`), 404);
    expectError(await anonymous().post(`/v1/spaces/${s.id}/restore`), 401);
  });
});

describe("POST /v1/spaces/{spaceId}/duplicate", () => {
  it("creates a copy with the same parent and settings, right after the original (201)", async () => {
    const c = await newCollection("Copies");
    const original = await newSpace({ title: "Original", emoji: "📘", parent: c.id, editMode: "locked" });
    const next = await newSpace({ title: "Next", parent: c.id });
    await admin.patch(`/v1/spaces/${original.id}`, { defaultLevel: "review" });
    const res = await creator.post(`/v1/spaces/${original.id}/duplicate`);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: "space",
      title: "Original (copy)",
      emoji: "📘",
      parent: c.id,
      organization: admin.organization,
      visibility: "in-collection",
      editMode: "locked",
      defaultLevel: "review",
    });
    expect(res.body.id).not.toBe(original.id);
    const order = (await admin.get(`/v1/collections/${c.id}/spaces`)).body.items.map((x: any) => x.id);
    expect(order).toEqual([original.id, res.body.id, next.id]);
    const long = await newSpace({ title: "l".repeat(100) });
    const longCopy = (await admin.post(`/v1/spaces/${long.id}/duplicate`)).body;
    expect(longCopy.title).toHaveLength(100);
    expect(longCopy.title.endsWith(" (copy)")).toBe(true);
  });

  it("is 403 below create, 404 for another organization, 401 without a token", async () => {
    const s = await newSpace({ title: "Unique" });
    expectError(await editor.post(`/v1/spaces/${s.id}/duplicate`), 403, "create");
    expectError(await other.post(`/v1/spaces/${s.id}/duplicate`), 404);
    expectError(await anonymous().post(`/v1/spaces/${s.id}/duplicate`), 401);
  });
});

describe("POST /v1/spaces/{spaceId}/move", () => {
  it("moves into a collection at a position among its collections and spaces, and back to the top level", async () => {
    const c = await newCollection("Shelf");
    const a = await newSpace({ title: "A", parent: c.id });
    const sub = (await admin.post(`/v1/orgs/${admin.organization}/collections`, { title: "Sub", parent: c.id })).body;
    const s = await newSpace({ title: "Mover" });
    const moved = await admin.post(`/v1/spaces/${s.id}/move`, {
      parent: c.id,
      position: { before: { type: "collection", collection: sub.id } },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: s.id, parent: c.id });
    const order = async () =>
      [...(await db().collection.findMany({ where: { parentId: c.id } })), ...(await db().space.findMany({ where: { parentId: c.id } }))]
        .sort((x, y) => x.position - y.position)
        .map((x) => x.id);
    expect(await order()).toEqual([a.id, s.id, sub.id]);
    await admin.post(`/v1/spaces/${s.id}/move`, { position: { before: { type: "space", space: a.id } } });
    expect(await order()).toEqual([s.id, a.id, sub.id]);
    await admin.post(`/v1/spaces/${s.id}/move`, { position: { after: { type: "collection", collection: sub.id } } });
    expect(await order()).toEqual([a.id, sub.id, s.id]);
    const top = await admin.post(`/v1/spaces/${s.id}/move`, { parent: null });
    expect(top.body).not.toHaveProperty("parent");
    // A space in a collection is "in-collection"; moved to the top level it becomes private.
    const inside = await admin.post(`/v1/spaces/${a.id}/move`, { parent: null });
    expect(inside.body.visibility).toBe("private");
  });

  it("rejects bad targets with a 400 naming the field", async () => {
    const s = await newSpace({ title: "Stubborn" });
    const elsewhere = await newCollection("Elsewhere");
    const inElsewhere = await newSpace({ title: "Inside", parent: elsewhere.id });
    const foreign = await newCollection("Theirs", other.organization, other);
    const cases: [unknown, string][] = [
      [{ parent: "col_unknown" }, "parent"],
      [{ parent: foreign.id }, "parent"],
      [{ parent: 3 }, "parent"],
      [{ position: { before: { type: "space", space: inElsewhere.id } } }, "position.before"],
      [{ position: { after: { type: "space", space: s.id } } }, "position.after"],
      [{ position: { after: { type: "collection" } } }, "position.after.collection"],
      [{ position: { before: { type: "space", space: "spc_unknown" } } }, "position.before"],
    ];
    for (const [body, field] of cases) expectError(await admin.post(`/v1/spaces/${s.id}/move`, body), 400, field);
  });

  it("is 403 below admin, 404 for another organization, 401 without a token", async () => {
    const s = await newSpace({ title: "Anchored" });
    expectError(await creator.post(`/v1/spaces/${s.id}/move`, { parent: null }), 403, "admin");
    expectError(await other.post(`/v1/spaces/${s.id}/move`, { parent: null }), 404);
    expectError(await anonymous().post(`/v1/spaces/${s.id}/move`, { parent: null }), 401);
  });
});

describe("POST /v1/spaces/{spaceId}/transfer", () => {
  it("transfers to another organization's top level, or into one of its collections", async () => {
    const home = await newCollection("Home shelf");
    const s = await newSpace({ title: "Traveller", parent: home.id });
    const team = await db().team.create({ data: { id: `team_t_${s.id}`, organizationId: admin.organization, title: "Acme team" } });
    await db().spaceAccess.create({ data: { id: `acc_t_${s.id}`, spaceId: s.id, teamId: team.id, role: "edit" } });
    const res = await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: third.organization });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: s.id, organization: third.organization, visibility: "private" });
    expect(res.body).not.toHaveProperty("parent");
    expect(await db().spaceAccess.count({ where: { spaceId: s.id } })).toBe(0);

    const shelf = await newCollection("Their shelf", third.organization, third);
    const into = await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: third.organization, collection: shelf.id });
    expect(into.body).toMatchObject({ organization: third.organization, parent: shelf.id });
    const listed = await third.get(`/v1/collections/${shelf.id}/spaces`);
    expect(listed.body.items.map((x: any) => x.id)).toEqual([s.id]);
    // Same organization without a collection changes nothing.
    expect((await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: third.organization })).body.parent).toBe(shelf.id);
  });

  it("needs admin of the space and of the target organization", async () => {
    const s = await newSpace({ title: "Homebody" });
    expectError(await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: other.organization }), 404, "organization");
    expectError(await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: "org_unknown" }), 404, "organization");
    await t.member(other.organization, "ada@acme.test", "create");
    expectError(await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: other.organization }), 403, "admin");
    expectError(await creator.post(`/v1/spaces/${s.id}/transfer`, { organization: third.organization }), 403, "admin");
    expect((await admin.get(`/v1/spaces/${s.id}`)).body.organization).toBe(admin.organization);
  });

  it("rejects bad input with a 400 naming the field; 404 for another organization, 401 without a token", async () => {
    const s = await newSpace({ title: "Input" });
    const acmeCollection = await newCollection("Acme only");
    expectError(await admin.post(`/v1/spaces/${s.id}/transfer`, {}), 400, "organization");
    expectError(
      await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: third.organization, collection: acmeCollection.id }),
      400,
      "collection",
    );
    expectError(
      await admin.post(`/v1/spaces/${s.id}/transfer`, { organization: third.organization, collection: "col_unknown" }),
      400,
      "collection",
    );
    expectError(await other.post(`/v1/spaces/${s.id}/transfer`, { organization: other.organization }), 404);
    expectError(await anonymous().post(`/v1/spaces/${s.id}/transfer`, { organization: other.organization }), 401);
  });
});

describe("GET /v1/orgs/{organizationId}/spaces", () => {
  it("lists the spaces the caller can see, not deleted, oldest first, with pages", async () => {
    const fresh = await t.bootstrap("fay@fresh.test", "Fresh Org");
    const s1 = await newSpace({ title: "One" }, fresh, fresh.organization);
    const s2 = await newSpace({ title: "Two" }, fresh, fresh.organization);
    const s3 = await newSpace({ title: "Three" }, fresh, fresh.organization);
    await fresh.delete(`/v1/spaces/${s2.id}`);
    const res = await fresh.get(`/v1/orgs/${fresh.organization}/spaces`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.items.map((x: any) => x.id)).toEqual([s1.id, s3.id]);
    const p1 = await fresh.get(`/v1/orgs/${fresh.organization}/spaces`, { limit: 1 });
    expect(p1.body.items.map((x: any) => x.id)).toEqual([s1.id]);
    const p2 = await fresh.get(`/v1/orgs/${fresh.organization}/spaces`, { limit: 1, page: p1.body.next.page });
    expect(p2.body.items.map((x: any) => x.id)).toEqual([s3.id]);
    expect(p2.body).not.toHaveProperty("next");

    const visitor = await t.member(fresh.organization, "vic@fresh.test", null);
    expect((await visitor.get(`/v1/orgs/${fresh.organization}/spaces`)).body).toEqual({ count: 0, items: [] });
    await db().spaceAccess.create({ data: { id: `acc_v_${s3.id}`, spaceId: s3.id, userId: visitor.user, role: "read" } });
    expect((await visitor.get(`/v1/orgs/${fresh.organization}/spaces`)).body.items.map((x: any) => x.id)).toEqual([s3.id]);
  });

  it("is 400 for a bad limit or page, 404 for another organization, 401 without a token", async () => {
    expectError(await admin.get(`/v1/orgs/${admin.organization}/spaces`, { limit: 1001 }), 400, "limit");
    expectError(await admin.get(`/v1/orgs/${admin.organization}/spaces`, { page: "nonsense" }), 400, "page");
    expectError(await other.get(`/v1/orgs/${admin.organization}/spaces`), 404);
    expectError(await anonymous().get(`/v1/orgs/${admin.organization}/spaces`), 401);
  });
});

describe("GraphQL", () => {
  it("serves spaces through the organization's connection, without deleted ones", async () => {
    const fresh = await t.bootstrap("gil@graph.test", "Graph Org");
    const c = await newCollection("Graph shelf", fresh.organization, fresh);
    const s1 = await newSpace({ title: "G1", parent: c.id }, fresh, fresh.organization);
    const s2 = await newSpace({ title: "G2" }, fresh, fresh.organization);
    await fresh.delete(`/v1/spaces/${s2.id}`);
    const res = await fresh.graphql(
      `query($org: String!) { organization(organizationId: $org) {
        spaces(first: 10) { totalCount edges { node { id visibility organization { id } parent { id title } } } }
      } }`,
      { org: fresh.organization },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.organization.spaces).toEqual({
      totalCount: 1,
      edges: [
        {
          node: {
            id: s1.id,
            visibility: "in-collection",
            organization: { id: fresh.organization },
            parent: { id: c.id, title: "Graph shelf" },
          },
        },
      ],
    });
    const moved = await fresh.graphql(`mutation($id: String!) { spaceMove(spaceId: $id, parent: null) { id parent { id } visibility } }`, {
      id: s1.id,
    });
    expect(moved.data.spaceMove).toEqual({ id: s1.id, parent: null, visibility: "private" });
  });

  it("pushes spaceUpdated events to subscribers who can read the space", async () => {
    const s = await newSpace({ title: "Watched" });
    const watcher = wsClient(t.url, reader.token);
    const watched = collect(watcher, `subscription($id: String!) { spaceUpdated(spaceId: $id) { id title deletedAt } }`, { id: s.id }, 3);
    await watched.ready;
    await admin.patch(`/v1/spaces/${s.id}`, { title: "Watched closely" });
    await admin.delete(`/v1/spaces/${s.id}`);
    await admin.post(`/v1/spaces/${s.id}/restore`);
    const events = await watched.results;
    expect(events.map((e) => e.data.spaceUpdated.title)).toEqual(["Watched closely", "Watched closely", "Watched closely"]);
    expect(events[1].data.spaceUpdated.deletedAt).toEqual(expect.any(String));
    expect(events[2].data.spaceUpdated.deletedAt).toBeNull();
    await watcher.dispose();

    const stranger = wsClient(t.url, other.token);
    const refused = await firstOutcome(stranger, `subscription($id: String!) { spaceUpdated(spaceId: $id) { id } }`, { id: s.id });
    await stranger.dispose();
    expect(JSON.stringify(refused)).toContain("not found");
  });
});
