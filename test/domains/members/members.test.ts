import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, statementsOf, type Admin, type Member } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin;
let other: Admin;
let reader: Member;
let guest: Member;
let editor: Member;
let org: string;

const iso = (value: unknown) => new Date(String(value)).toISOString() === value;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, org, reader, guest, editor } = await acmeDocs(t, {
    reader: ["rita@acme.test", "read"],
    guest: ["gus@acme.test", null],
    editor: ["eddie@acme.test", "edit"],
  }));
  const prisma = t.gateway.db.prisma;
  // Distinct, known join dates and names: ada, rita, gus, eddie in that order.
  const people: [string, string, string][] = [
    [admin.user, "Ada Admin", "2024-01-01T00:00:00.000Z"],
    [reader.user, "Rita Reader", "2024-02-01T00:00:00.000Z"],
    [guest.user, "Gus Guest", "2024-03-01T00:00:00.000Z"],
    [editor.user, "Eddie Editor", "2024-04-01T00:00:00.000Z"],
  ];
  for (const [userId, displayName, joinedAt] of people) {
    await prisma.user.update({ where: { id: userId }, data: { displayName } });
    await prisma.member.update({
      where: { organizationId_userId: { organizationId: org, userId } },
      data: { joinedAt: new Date(joinedAt) },
    });
  }
  // Spaces: one plain, one with its own default level, one in a collection, one deleted.
  await prisma.collection.create({ data: { id: "col_handbook", organizationId: org, title: "Handbook", defaultLevel: "review" } });
  const spaces: [string, object][] = [
    ["spc_plain", { createdAt: new Date("2024-05-01T00:00:00Z") }],
    ["spc_commented", { defaultLevel: "comment", createdAt: new Date("2024-05-02T00:00:00Z") }],
    ["spc_incollection", { parentId: "col_handbook", createdAt: new Date("2024-05-03T00:00:00Z") }],
    ["spc_deleted", { deletedAt: new Date(), createdAt: new Date("2024-05-04T00:00:00Z") }],
  ];
  for (const [id, data] of spaces) await prisma.space.create({ data: { id, organizationId: org, title: id, ...data } });
  await prisma.space.create({ data: { id: "spc_elsewhere", organizationId: other.organization, title: "Elsewhere" } });
  // Teams: the guest is in "Writers", which is granted the collection space.
  await prisma.team.create({
    data: {
      id: "team_writers",
      organizationId: org,
      title: "Writers",
      members: {
        create: [
          { userId: guest.user, role: "member" },
          { userId: reader.user, role: "owner" },
        ],
      },
    },
  });
  await prisma.team.create({
    data: { id: "team_reviewers", organizationId: org, title: "Reviewers", members: { create: [{ userId: reader.user }] } },
  });
  await prisma.spaceAccess.createMany({
    data: [
      { id: "acc_1", spaceId: "spc_plain", userId: guest.user, role: "comment" },
      { id: "acc_2", spaceId: "spc_incollection", teamId: "team_writers", role: "edit" },
      { id: "acc_3", spaceId: "spc_plain", userId: reader.user, role: "edit" },
      { id: "acc_4", spaceId: "spc_deleted", userId: guest.user, role: "admin" },
    ],
  });
}, 180_000); // start-up and seeding are slow on a busy machine
afterAll(() => t?.close());

describe("GET /v1/orgs/{organizationId}/members", () => {
  it("lists the members with the documented fields, newest first", async () => {
    const res = await admin.get(`/v1/orgs/${org}/members`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(4);
    expect(res.body).not.toHaveProperty("next");
    expect(res.body.items.map((m: any) => m.id)).toEqual([editor.user, guest.user, reader.user, admin.user]);
    const rita = res.body.items.find((m: any) => m.id === reader.user);
    expect(rita).toEqual({
      object: "member",
      id: reader.user,
      role: "read",
      user: {
        object: "user",
        id: reader.user,
        displayName: "Rita Reader",
        email: "rita@acme.test",
        urls: { location: `${t.url}/v1/users/${reader.user}` },
      },
      disabled: false,
      joinedAt: "2024-02-01T00:00:00.000Z",
      sso: false,
      spaces: 3,
      teams: 2,
      sites: 0,
    });
    expect(rita).not.toHaveProperty("lastSeenAt");
    const gus = res.body.items.find((m: any) => m.id === guest.user);
    expect(gus).toHaveProperty("role", null);
    // A guest reaches the spaces granted to them or their teams, never deleted ones.
    expect(gus.spaces).toBe(2);
    expect(gus.teams).toBe(1);
    expect(res.body.items.find((m: any) => m.id === admin.user)).toMatchObject({ role: "admin", spaces: 3, teams: 0 });
    expect(iso(rita.joinedAt)).toBe(true);
  });

  it("sorts ascending, filters by role and searches names and emails case-insensitively", async () => {
    const asc = await admin.get(`/v1/orgs/${org}/members`, { order: "asc" });
    expect(asc.body.items.map((m: any) => m.id)).toEqual([admin.user, reader.user, guest.user, editor.user]);
    const readers = await admin.get(`/v1/orgs/${org}/members`, { role: "read" });
    expect(readers.body.count).toBe(1);
    expect(readers.body.items[0].id).toBe(reader.user);
    const byEmail = await admin.get(`/v1/orgs/${org}/members`, { search: "RITA@ACME" });
    expect(byEmail.body.items.map((m: any) => m.id)).toEqual([reader.user]);
    const byName = await admin.get(`/v1/orgs/${org}/members`, { search: "editor" });
    expect(byName.body.items.map((m: any) => m.id)).toEqual([editor.user]);
    expect((await admin.get(`/v1/orgs/${org}/members`, { search: "nobody-here" })).body).toEqual({ count: 0, items: [] });
    const byDisplayName = await admin.get(`/v1/orgs/${org}/members`, { sort: "displayName", order: "asc" });
    expect(byDisplayName.body.items.map((m: any) => m.user.displayName)).toEqual(["Ada Admin", "Eddie Editor", "Gus Guest", "Rita Reader"]);
  });

  it("pages with a cursor, in every sort", async () => {
    for (const sort of ["joinedAt", "displayName"]) {
      const seen: string[] = [];
      let page: string | undefined;
      do {
        const res = await admin.get(`/v1/orgs/${org}/members`, { sort, limit: 3, page });
        expect(res.status).toBe(200);
        expect(res.body.count).toBe(4);
        seen.push(...res.body.items.map((m: any) => m.id));
        page = res.body.next?.page;
      } while (page);
      expect(new Set(seen).size, sort).toBe(4);
    }
  });

  it("sorting by lastSeenAt lists only members seen at least once", async () => {
    expect((await admin.get(`/v1/orgs/${org}/members`, { sort: "lastSeenAt" })).body).toEqual({ count: 0, items: [] });
    expect((await reader.post(`/v1/orgs/${org}/ping`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
    expect((await guest.post(`/v1/orgs/${org}/ping`)).status).toBe(200);
    const res = await admin.get(`/v1/orgs/${org}/members`, { sort: "lastSeenAt" });
    expect(res.body.count).toBe(2);
    expect(res.body.items.map((m: any) => m.id)).toEqual([guest.user, reader.user]);
    expect(iso(res.body.items[0].lastSeenAt)).toBe(true);
    const asc = await admin.get(`/v1/orgs/${org}/members`, { sort: "lastSeenAt", order: "asc" });
    expect(asc.body.items.map((m: any) => m.id)).toEqual([reader.user, guest.user]);
  });

  it("rejects bad query parameters with a 400 naming them", async () => {
    const cases: [Record<string, string | number>, string][] = [
      [{ sort: "title" }, "sort"],
      [{ order: "up" }, "order"],
      [{ role: "owner" }, "role"],
      [{ limit: 0 }, "limit"],
      [{ limit: 1001 }, "limit"],
      [{ limit: "many" }, "limit"],
      [{ page: "garbage" }, "page"],
    ];
    for (const [query, field] of cases) {
      const res = await admin.get(`/v1/orgs/${org}/members`, query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error.message, JSON.stringify(query)).toContain(field);
    }
  });

  it("is 401 without a token, 403 for guests and 404 for another organization", async () => {
    expect((await t.caller("").get(`/v1/orgs/${org}/members`)).status).toBe(401);
    const forbidden = await guest.get(`/v1/orgs/${org}/members`);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.message).toContain("read");
    expect((await other.get(`/v1/orgs/${org}/members`)).status).toBe(404);
    expect((await reader.get(`/v1/orgs/${org}/members`)).status).toBe(200);
  });

  it("loads nested users and counts in a bounded number of statements", async () => {
    // Tokens record their use at most once a minute, off the request's path: keep that out of the count.
    await t.gateway.db.prisma.apiToken.updateMany({ data: { lastUsedAt: new Date(Date.now() + 3_600_000) } });
    // Both pages hold a guest (whose grants take their own two queries), and neither holds every
    // member (so each counts them with a statement of its own).
    const members = (await admin.get(`/v1/orgs/${org}/members`, { limit: 100 })).body.count;
    expect(members).toBeGreaterThan(3);
    const two = await statementsOf(t, () => admin.get(`/v1/orgs/${org}/members`, { limit: 2 }));
    const three = await statementsOf(t, () => admin.get(`/v1/orgs/${org}/members`, { limit: 3 }));
    expect(three).toBe(two);
    // A page that holds them all is their count: one statement fewer.
    const all = await statementsOf(t, () => admin.get(`/v1/orgs/${org}/members`, { limit: 100 }));
    expect(all).toBe(two - 1);
  });
});

describe("GET /v1/orgs/{organizationId}/members/{userId}", () => {
  it("returns a member; guests may read themselves only", async () => {
    const res = await reader.get(`/v1/orgs/${org}/members/${editor.user}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: "member",
      id: editor.user,
      role: "edit",
      user: { email: "eddie@acme.test" },
      spaces: 3,
      teams: 0,
    });
    const self = await guest.get(`/v1/orgs/${org}/members/${guest.user}`);
    expect(self.status).toBe(200);
    expect(self.body.role).toBeNull();
    expect((await guest.get(`/v1/orgs/${org}/members/${admin.user}`)).status).toBe(403);
  });

  it("is 404 for a non-member and for another organization, 401 without a token", async () => {
    const missing = await admin.get(`/v1/orgs/${org}/members/${other.user}`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain(other.user);
    expect((await other.get(`/v1/orgs/${org}/members/${admin.user}`)).status).toBe(404);
    expect((await t.caller("").get(`/v1/orgs/${org}/members/${admin.user}`)).status).toBe(401);
  });
});

describe("PATCH /v1/orgs/{organizationId}/members/{userId}", () => {
  it("changes the role, and null makes a guest", async () => {
    const res = await admin.patch(`/v1/orgs/${org}/members/${editor.user}`, { role: "create" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "member", id: editor.user, role: "create" });
    const guestNow = await admin.patch(`/v1/orgs/${org}/members/${editor.user}`, { role: null });
    expect(guestNow.status).toBe(200);
    expect(guestNow.body.role).toBeNull();
    expect(guestNow.body.spaces).toBe(0);
    expect((await admin.get(`/v1/orgs/${org}/members/${editor.user}`)).body.role).toBeNull();
    const unchanged = await admin.patch(`/v1/orgs/${org}/members/${editor.user}`, {});
    expect(unchanged.body.role).toBeNull();
    expect((await admin.patch(`/v1/orgs/${org}/members/${editor.user}`, { role: "edit" })).body.role).toBe("edit");
  });

  it("rejects bad input with a 400 naming the field", async () => {
    for (const body of [{ role: "owner" }, { role: 3 }, { rank: "edit" }]) {
      const res = await admin.patch(`/v1/orgs/${org}/members/${editor.user}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toMatch(/role|rank/);
    }
  });

  it("refuses to demote the last admin with 409", async () => {
    const res = await admin.patch(`/v1/orgs/${org}/members/${admin.user}`, { role: "read" });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("admin");
    expect((await admin.get(`/v1/orgs/${org}/members/${admin.user}`)).body.role).toBe("admin");
  });

  it("is 403 for non-admins, 404 for unknown members and other organizations", async () => {
    const res = await reader.patch(`/v1/orgs/${org}/members/${reader.user}`, { role: "admin" });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("admin");
    expect((await admin.patch(`/v1/orgs/${org}/members/usr_nobody`, { role: "read" })).status).toBe(404);
    expect((await other.patch(`/v1/orgs/${org}/members/${reader.user}`, { role: "read" })).status).toBe(404);
    expect((await t.caller("").patch(`/v1/orgs/${org}/members/${reader.user}`, { role: "read" })).status).toBe(401);
  });
});

describe("POST /v1/orgs/{organizationId}/ping", () => {
  it("records the caller's last-seen time and answers the member's visitor claims (a JWT)", async () => {
    const before = Date.now();
    const res = await editor.post(`/v1/orgs/${org}/ping`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["serviceVisitorClaims"]);
    const claims = decodeJwt(res.body.serviceVisitorClaims);
    expect(decodeProtectedHeader(res.body.serviceVisitorClaims).alg).toBe("HS256");
    expect(claims).toMatchObject({ sub: editor.user, organization: org, role: "edit", aud: `organization:${org}`, iss: t.url });
    expect(claims.exp! - claims.iat!).toBe(3600);
    const seen = (await admin.get(`/v1/orgs/${org}/members/${editor.user}`)).body.lastSeenAt;
    expect(new Date(seen).getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it("is 404 for another organization and 401 without a token", async () => {
    expect((await other.post(`/v1/orgs/${org}/ping`)).status).toBe(404);
    expect((await t.caller("").post(`/v1/orgs/${org}/ping`)).status).toBe(401);
    expect((await admin.post(`/v1/orgs/${org}/ping`, { extra: 1 })).status).toBe(400);
  });
});

describe("POST /v1/orgs/{organizationId}/members/{userId}/sso", () => {
  it("marks the member as an SSO member", async () => {
    const res = await admin.post(`/v1/orgs/${org}/members/${reader.user}/sso`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "member", id: reader.user, sso: true });
    expect((await admin.get(`/v1/orgs/${org}/members/${reader.user}`)).body.sso).toBe(true);
  });

  it("is 403 for non-admins, 404 for unknown members and other organizations, 401 without a token", async () => {
    const res = await reader.post(`/v1/orgs/${org}/members/${editor.user}/sso`);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("admin");
    expect((await admin.post(`/v1/orgs/${org}/members/usr_nobody/sso`)).status).toBe(404);
    expect((await other.post(`/v1/orgs/${org}/members/${reader.user}/sso`)).status).toBe(404);
    expect((await t.caller("").post(`/v1/orgs/${org}/members/${reader.user}/sso`)).status).toBe(401);
  });
});

describe("GET /v1/orgs/{organizationId}/members/{userId}/spaces", () => {
  it("lists the live spaces a member reaches, with their effective role, newest first", async () => {
    const res = await admin.get(`/v1/orgs/${org}/members/${reader.user}/spaces`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.items.map((i: any) => [i.space.id, i.permission])).toEqual([
      ["spc_incollection", "review"], // the collection's default level
      ["spc_commented", "comment"], // the space's default level
      ["spc_plain", "edit"], // an explicit grant above the organization role
    ]);
    expect(res.body.items[0].space).toMatchObject({ object: "space", id: "spc_incollection", title: "spc_incollection" });
    const asc = await admin.get(`/v1/orgs/${org}/members/${reader.user}/spaces`, { order: "asc", limit: 2 });
    expect(asc.body.items.map((i: any) => i.space.id)).toEqual(["spc_plain", "spc_commented"]);
    const rest = await admin.get(`/v1/orgs/${org}/members/${reader.user}/spaces`, { order: "asc", limit: 2, page: asc.body.next.page });
    expect(rest.body.items.map((i: any) => i.space.id)).toEqual(["spc_incollection"]);
    expect(rest.body).not.toHaveProperty("next");
  });

  it("gives guests only what is granted to them or their teams, and admins admin everywhere", async () => {
    const res = await guest.get(`/v1/orgs/${org}/members/${guest.user}/spaces`);
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: any) => [i.space.id, i.permission])).toEqual([
      ["spc_incollection", "edit"],
      ["spc_plain", "comment"],
    ]);
    const adminSpaces = await reader.get(`/v1/orgs/${org}/members/${admin.user}/spaces`);
    expect(adminSpaces.body.items.map((i: any) => i.permission)).toEqual(["admin", "admin", "admin"]);
  });

  it("is 403 for a guest looking at others, 404 for unknown members and other organizations, 400 for bad input", async () => {
    expect((await guest.get(`/v1/orgs/${org}/members/${reader.user}/spaces`)).status).toBe(403);
    expect((await admin.get(`/v1/orgs/${org}/members/usr_nobody/spaces`)).status).toBe(404);
    expect((await other.get(`/v1/orgs/${org}/members/${reader.user}/spaces`)).status).toBe(404);
    expect((await t.caller("").get(`/v1/orgs/${org}/members/${reader.user}/spaces`)).status).toBe(401);
    const bad = await admin.get(`/v1/orgs/${org}/members/${reader.user}/spaces`, { order: "sideways" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("order");
  });
});

describe("GET /v1/orgs/{organizationId}/members/{userId}/teams", () => {
  it("lists the member's teams by title with their role in each", async () => {
    const res = await admin.get(`/v1/orgs/${org}/members/${reader.user}/teams`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.items.map((i: any) => [i.team.title, i.member.role])).toEqual([
      ["Reviewers", "member"],
      ["Writers", "owner"],
    ]);
    const writers = res.body.items[1];
    expect(writers).toEqual({
      team: {
        object: "team",
        id: "team_writers",
        title: "Writers",
        members: 2,
        spaces: 1,
        createdAt: expect.any(String),
        permissions: { admin: true, view: true },
      },
      member: { role: "owner" },
    });
    const filtered = await admin.get(`/v1/orgs/${org}/members/${reader.user}/teams`, { title: "wRiT" });
    expect(filtered.body.items.map((i: any) => i.team.id)).toEqual(["team_writers"]);
    const page = await admin.get(`/v1/orgs/${org}/members/${reader.user}/teams`, { limit: 1 });
    expect(page.body.items.map((i: any) => i.team.title)).toEqual(["Reviewers"]);
    expect(
      (await admin.get(`/v1/orgs/${org}/members/${reader.user}/teams`, { limit: 1, page: page.body.next.page })).body.items[0].team.title,
    ).toBe("Writers");
  });

  it("lets guests see their own teams only; 404 for unknown members and other organizations", async () => {
    const own = await guest.get(`/v1/orgs/${org}/members/${guest.user}/teams`);
    expect(own.status).toBe(200);
    expect(own.body.items).toEqual([expect.objectContaining({ member: { role: "member" } })]);
    expect(own.body.items[0].team.permissions).toEqual({ admin: false, view: true });
    expect((await guest.get(`/v1/orgs/${org}/members/${reader.user}/teams`)).status).toBe(403);
    expect((await admin.get(`/v1/orgs/${org}/members/usr_nobody/teams`)).status).toBe(404);
    expect((await other.get(`/v1/orgs/${org}/members/${reader.user}/teams`)).status).toBe(404);
    expect((await t.caller("").get(`/v1/orgs/${org}/members/${reader.user}/teams`)).status).toBe(401);
    expect((await admin.get(`/v1/orgs/${org}/members/${reader.user}/teams`, { limit: -1 })).status).toBe(400);
  });
});

describe("DELETE /v1/orgs/{organizationId}/members/{userId}", () => {
  it("is 403 when a non-admin removes someone else, 404 for another organization, 401 without a token", async () => {
    const res = await reader.delete(`/v1/orgs/${org}/members/${editor.user}`);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("admin");
    expect((await other.delete(`/v1/orgs/${org}/members/${editor.user}`)).status).toBe(404);
    expect((await t.caller("").delete(`/v1/orgs/${org}/members/${editor.user}`)).status).toBe(401);
  });

  it("refuses to remove the last admin with 409", async () => {
    const res = await admin.delete(`/v1/orgs/${org}/members/${admin.user}`);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("admin");
  });

  it("lets a member leave, with their team memberships and grants", async () => {
    const res = await reader.delete(`/v1/orgs/${org}/members/${reader.user}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    const prisma = t.gateway.db.prisma;
    expect(await prisma.teamMember.count({ where: { userId: reader.user } })).toBe(0);
    expect(await prisma.spaceAccess.count({ where: { userId: reader.user } })).toBe(0);
    // No longer a member: the organization no longer exists for them.
    expect((await reader.get(`/v1/orgs/${org}/members`)).status).toBe(404);
  });

  it("answers 204 with an empty body, also when the member is already gone", async () => {
    const first = await admin.delete(`/v1/orgs/${org}/members/${editor.user}`);
    expect(first.status).toBe(204);
    expect(first.body).toBeUndefined();
    const second = await admin.delete(`/v1/orgs/${org}/members/${editor.user}`);
    expect(second.status).toBe(204);
    expect(second.body).toBeUndefined();
    expect((await admin.get(`/v1/orgs/${org}/members/${editor.user}`)).status).toBe(404);
  });

  it("lets an admin step down once another admin exists", async () => {
    const second = await t.member(org, "bea@acme.test", "admin");
    expect((await second.patch(`/v1/orgs/${org}/members/${admin.user}`, { role: "edit" })).body.role).toBe("edit");
    expect((await second.delete(`/v1/orgs/${org}/members/${second.user}`)).status).toBe(409);
    expect((await second.patch(`/v1/orgs/${org}/members/${admin.user}`, { role: "admin" })).body.role).toBe("admin");
  });
});

describe("GraphQL", () => {
  const query = `query($id: String!) { organization(organizationId: $id) { members(first: 10) { totalCount edges { node { id role spacesCount teamsCount user { email } } } } } }`;

  it("walks an organization's members as a connection", async () => {
    const res = await admin.graphql(query, { id: org });
    expect(res.errors).toBeUndefined();
    const members = res.data.organization.members;
    expect(members.totalCount).toBe(members.edges.length);
    expect(members.edges.map((e: any) => e.node.user.email)).toContain("gus@acme.test");
  });

  it("shows a guest only themself", async () => {
    const res = await guest.graphql(query, { id: org });
    expect(res.data.organization.members.totalCount).toBe(1);
    expect(res.data.organization.members.edges[0].node).toMatchObject({ id: guest.user, role: null });
  });

  it("serves the member operations with the same rules", async () => {
    const res = await admin.graphql(`query($o: String!, $u: String!) { organizationMember(organizationId: $o, userId: $u) { id role } }`, {
      o: org,
      u: guest.user,
    });
    expect(res.data.organizationMember).toEqual({ id: guest.user, role: null });
    const denied = await guest.graphql(`query($o: String!) { organizationMembers(organizationId: $o) { count } }`, { o: org });
    expect(denied.errors[0].extensions.code).toBe(403);
  });
});
