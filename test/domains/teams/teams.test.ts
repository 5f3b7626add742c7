import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, statementsOf, type Admin, type Member } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin;
let other: Admin;
let owner: Member;
let reader: Member;
let guest: Member;
let org: string;

const teamUrl = (id: string) => `/v1/orgs/${org}/teams/${id}`;
const memberIds = async (teamId: string) =>
  (await t.gateway.db.prisma.teamMember.findMany({ where: { teamId }, orderBy: { userId: "asc" } })).map((m) => [m.userId, m.role]);

async function createTeam(title: string, members: string[] = []) {
  return created(await admin.put(`/v1/orgs/${org}/teams`, { title, members })).id as string;
}

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, org, owner, reader, guest } = await acmeDocs(t, {
    owner: ["olga@acme.test", "edit"],
    reader: ["rita@acme.test", "read"],
    guest: ["gus@acme.test", null],
  }));
}, 180_000); // starting a gateway on a busy machine can be slow
afterAll(() => t?.close());

describe("PUT /v1/orgs/{organizationId}/teams", () => {
  it("creates a team with its members and answers 201 with the documented fields", async () => {
    const res = await admin.put(`/v1/orgs/${org}/teams`, { title: "  Platform  ", members: [owner.user, reader.user, reader.user] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      object: "team",
      id: expect.stringMatching(/^team_/),
      title: "Platform",
      members: 2,
      spaces: 0,
      createdAt: expect.any(String),
      permissions: { admin: true, view: true },
    });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    expect(await memberIds(res.body.id)).toEqual(
      [
        [owner.user, "member"],
        [reader.user, "member"],
      ].sort(),
    );
    const empty = await admin.put(`/v1/orgs/${org}/teams`, { title: "Solo" });
    expect(empty.status).toBe(201);
    expect(empty.body.members).toBe(0);
  });

  it("rejects bad input with a 400 naming the field or the users, and creates nothing", async () => {
    const before = await t.gateway.db.prisma.team.count();
    const cases: [unknown, string][] = [
      [{}, "title"],
      [{ title: "" }, "title"],
      [{ title: "   " }, "title"],
      [{ title: "x".repeat(101) }, "title"],
      [{ title: 12 }, "title"],
      [{ title: "Ok", members: "nope" }, "members"],
      [{ title: "Ok", color: "red" }, "color"],
      [{ title: "Ok", members: [other.user] }, other.user],
      [{ title: "Ok", members: ["usr_ghost", reader.user] }, "usr_ghost"],
    ];
    for (const [body, needle] of cases) {
      const res = await admin.put(`/v1/orgs/${org}/teams`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toContain(needle);
    }
    expect(await t.gateway.db.prisma.team.count()).toBe(before);
  });

  it("is 403 for non-admins, 404 for another organization and 401 without a token", async () => {
    const res = await owner.put(`/v1/orgs/${org}/teams`, { title: "Mine" });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("admin");
    expect((await other.put(`/v1/orgs/${org}/teams`, { title: "Mine" })).status).toBe(404);
    expect((await t.caller("").put(`/v1/orgs/${org}/teams`, { title: "Mine" })).status).toBe(401);
  });
});

describe("GET /v1/orgs/{organizationId}/teams", () => {
  let alpha: string;
  let beta: string;
  let gamma: string;
  beforeAll(async () => {
    await t.gateway.db.prisma.team.deleteMany({ where: { organizationId: org } });
    alpha = await createTeam("Alpha squad", [owner.user]);
    beta = await createTeam("beta crew", [reader.user, guest.user]);
    gamma = await createTeam("Gamma");
    await admin.put(`${teamUrl(alpha)}/members/${owner.user}`, { role: "owner" });
    await t.gateway.db.prisma.space.create({ data: { id: "spc_t1", organizationId: org, title: "Docs" } });
    await t.gateway.db.prisma.space.create({ data: { id: "spc_t2", organizationId: org, title: "Old", deletedAt: new Date() } });
    await t.gateway.db.prisma.spaceAccess.createMany({
      data: [
        { id: "acc_t1", spaceId: "spc_t1", teamId: beta, role: "edit" },
        { id: "acc_t2", spaceId: "spc_t2", teamId: beta, role: "edit" },
      ],
    });
  });

  it("lists the teams by title with counts and the caller's permissions", async () => {
    const res = await reader.get(`/v1/orgs/${org}/teams`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.items.map((x: any) => x.title)).toEqual(["Alpha squad", "beta crew", "Gamma"]);
    const b = res.body.items[1];
    expect(b).toEqual({
      object: "team",
      id: beta,
      title: "beta crew",
      members: 2,
      spaces: 1,
      createdAt: expect.any(String),
      permissions: { admin: false, view: true },
    });
    const asOwner = await owner.get(`/v1/orgs/${org}/teams`);
    expect(asOwner.body.items.map((x: any) => x.permissions.admin)).toEqual([true, false, false]);
  });

  it("filters by title case-insensitively and by the teams a member can manage", async () => {
    expect((await admin.get(`/v1/orgs/${org}/teams`, { title: "CREW" })).body.items.map((x: any) => x.id)).toEqual([beta]);
    expect((await admin.get(`/v1/orgs/${org}/teams`, { member: owner.user })).body.items.map((x: any) => x.id)).toEqual([alpha]);
    expect((await admin.get(`/v1/orgs/${org}/teams`, { member: admin.user })).body.count).toBe(3);
    expect((await admin.get(`/v1/orgs/${org}/teams`, { member: reader.user })).body).toEqual({ count: 0, items: [] });
    expect((await admin.get(`/v1/orgs/${org}/teams`, { member: admin.user, title: "gam" })).body.items.map((x: any) => x.id)).toEqual([
      gamma,
    ]);
    const stranger = await admin.get(`/v1/orgs/${org}/teams`, { member: other.user });
    expect(stranger.status).toBe(400);
    expect(stranger.body.error.message).toContain("member");
  });

  it("pages with a cursor and rejects a bad limit", async () => {
    const first = await admin.get(`/v1/orgs/${org}/teams`, { limit: 2 });
    expect(first.body.items).toHaveLength(2);
    expect(first.body.count).toBe(3);
    const second = await admin.get(`/v1/orgs/${org}/teams`, { limit: 2, page: first.body.next.page });
    expect(second.body.items.map((x: any) => x.id)).toEqual([gamma]);
    expect(second.body).not.toHaveProperty("next");
    const bad = await admin.get(`/v1/orgs/${org}/teams`, { limit: 5000 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("limit");
  });

  it("is 403 for guests, 404 for another organization and 401 without a token", async () => {
    expect((await guest.get(`/v1/orgs/${org}/teams`)).status).toBe(403);
    expect((await other.get(`/v1/orgs/${org}/teams`)).status).toBe(404);
    expect((await t.caller("").get(`/v1/orgs/${org}/teams`)).status).toBe(401);
  });

  it("loads counts and permissions in a bounded number of statements", async () => {
    // Tokens record their use at most once a minute, off the request's path: keep that out of the count.
    await t.gateway.db.prisma.apiToken.updateMany({ data: { lastUsedAt: new Date(Date.now() + 3_600_000) } });
    const one = await statementsOf(t, () => reader.get(`/v1/orgs/${org}/teams`, { limit: 1 }));
    const three = await statementsOf(t, () => reader.get(`/v1/orgs/${org}/teams`, { limit: 3 }));
    expect(three).toBe(one);
  });
});

describe("GET /v1/orgs/{organizationId}/teams/{teamId}", () => {
  it("returns the team; a guest sees only teams they are in", async () => {
    const team = await createTeam("Readers", [guest.user]);
    const res = await reader.get(teamUrl(team));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "team", id: team, title: "Readers", members: 1, permissions: { admin: false, view: true } });
    const own = await guest.get(teamUrl(team));
    expect(own.status).toBe(200);
    expect(own.body.permissions).toEqual({ admin: false, view: true });
    const lonely = await createTeam("Lonely");
    expect((await guest.get(teamUrl(lonely))).status).toBe(403);
  });

  it("is 404 for unknown teams, teams of another organization and strangers", async () => {
    const missing = await admin.get(teamUrl("team_nope"));
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("team_nope");
    const theirs = await other.put(`/v1/orgs/${other.organization}/teams`, { title: "Theirs" });
    expect((await admin.get(teamUrl(theirs.body.id))).status).toBe(404);
    const ours = await createTeam("Ours");
    expect((await other.get(teamUrl(ours))).status).toBe(404);
    expect((await t.caller("").get(teamUrl(ours))).status).toBe(401);
  });
});

describe("PATCH /v1/orgs/{organizationId}/teams/{teamId}", () => {
  it("renames the team, for admins and the team's owners", async () => {
    const team = await createTeam("Before", [owner.user, reader.user]);
    const res = await admin.patch(teamUrl(team), { title: "After" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "team", id: team, title: "After", members: 2 });
    expect((await owner.patch(teamUrl(team), { title: "By owner" })).status).toBe(403);
    await admin.put(`${teamUrl(team)}/members/${owner.user}`, { role: "owner" });
    const byOwner = await owner.patch(teamUrl(team), { title: "By owner" });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body).toMatchObject({ title: "By owner", permissions: { admin: true, view: true } });
    expect((await admin.patch(teamUrl(team), {})).body.title).toBe("By owner");
  });

  it("rejects bad input with a 400 naming the field", async () => {
    const team = await createTeam("Stable");
    for (const body of [{ title: "" }, { title: null }, { title: "y".repeat(101) }, { title: false }, { name: "x" }]) {
      const res = await admin.patch(teamUrl(team), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toMatch(/title|name/);
    }
    expect((await admin.get(teamUrl(team))).body.title).toBe("Stable");
  });

  it("is 403 for team members who are not owners, 404 for unknown teams and other organizations", async () => {
    const team = await createTeam("Guarded", [reader.user]);
    const res = await reader.patch(teamUrl(team), { title: "Taken" });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("owner");
    expect((await admin.patch(teamUrl("team_nope"), { title: "x" })).status).toBe(404);
    expect((await other.patch(teamUrl(team), { title: "x" })).status).toBe(404);
    expect((await t.caller("").patch(teamUrl(team), { title: "x" })).status).toBe(401);
  });
});

describe("DELETE /v1/orgs/{organizationId}/teams/{teamId}", () => {
  it("deletes the team with its memberships and grants, 204 with an empty body twice", async () => {
    const team = await createTeam("Doomed", [owner.user]);
    await admin.put(`${teamUrl(team)}/members/${owner.user}`, { role: "owner" });
    await t.gateway.db.prisma.space.create({ data: { id: "spc_doomed", organizationId: org, title: "Doomed docs" } });
    await t.gateway.db.prisma.spaceAccess.create({ data: { id: "acc_doomed", spaceId: "spc_doomed", teamId: team, role: "read" } });
    const first = await owner.delete(teamUrl(team));
    expect(first.status).toBe(204);
    expect(first.body).toBeUndefined();
    const second = await owner.delete(teamUrl(team));
    expect(second.status).toBe(204);
    expect(second.body).toBeUndefined();
    expect((await admin.get(teamUrl(team))).status).toBe(404);
    expect(await t.gateway.db.prisma.teamMember.count({ where: { teamId: team } })).toBe(0);
    expect(await t.gateway.db.prisma.spaceAccess.count({ where: { teamId: team } })).toBe(0);
  });

  it("is 403 for members who cannot manage it, 404 for another organization, 401 without a token", async () => {
    const team = await createTeam("Kept", [reader.user]);
    const res = await reader.delete(teamUrl(team));
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("admin");
    expect((await other.delete(teamUrl(team))).status).toBe(404);
    expect((await t.caller("").delete(teamUrl(team))).status).toBe(401);
    expect((await admin.get(teamUrl(team))).status).toBe(200);
  });
});

describe("GET /v1/orgs/{organizationId}/teams/{teamId}/members", () => {
  it("lists the entries: organization membership, team role and permissions", async () => {
    const team = await createTeam("Listed", [reader.user, guest.user, owner.user]);
    await admin.put(`${teamUrl(team)}/members/${owner.user}`, { role: "owner" });
    const res = await reader.get(`${teamUrl(team)}/members`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    const byId = Object.fromEntries(res.body.items.map((e: any) => [e.organization.id, e]));
    expect(byId[owner.user]).toEqual({
      organization: {
        object: "member",
        id: owner.user,
        role: "edit",
        user: {
          object: "user",
          id: owner.user,
          displayName: "olga",
          email: "olga@acme.test",
          urls: { location: `${t.url}/v1/users/${owner.user}` },
        },
        disabled: false,
        joinedAt: expect.any(String),
        sso: false,
        spaces: expect.any(Number),
        teams: expect.any(Number),
        sites: expect.any(Number),
      },
      team: { role: "owner" },
      permissions: { view: true },
    });
    expect(byId[guest.user].organization.role).toBeNull();
    expect(byId[reader.user].team).toEqual({ role: "member" });
    // A guest in the team sees the list, but may view only their own membership.
    const asGuest = await guest.get(`${teamUrl(team)}/members`);
    expect(asGuest.status).toBe(200);
    const views = Object.fromEntries(asGuest.body.items.map((e: any) => [e.organization.id, e.permissions.view]));
    expect(views).toEqual({ [reader.user]: false, [guest.user]: true, [owner.user]: false });
  });

  it("pages with a cursor", async () => {
    const team = await createTeam("Paged", [reader.user, guest.user, owner.user]);
    const first = await admin.get(`${teamUrl(team)}/members`, { limit: 2 });
    expect(first.body.items).toHaveLength(2);
    const second = await admin.get(`${teamUrl(team)}/members`, { limit: 2, page: first.body.next.page });
    expect(second.body.items).toHaveLength(1);
    const all = [...first.body.items, ...second.body.items].map((e: any) => e.organization.id);
    expect(new Set(all).size).toBe(3);
    expect((await admin.get(`${teamUrl(team)}/members`, { page: "%%%" })).status).toBe(400);
  });

  it("is 403 for a guest outside the team, 404 for unknown teams and another organization", async () => {
    const team = await createTeam("Closed", [reader.user]);
    expect((await guest.get(`${teamUrl(team)}/members`)).status).toBe(403);
    expect((await admin.get(`${teamUrl("team_nope")}/members`)).status).toBe(404);
    expect((await other.get(`${teamUrl(team)}/members`)).status).toBe(404);
    expect((await t.caller("").get(`${teamUrl(team)}/members`)).status).toBe(401);
  });
});

describe("PUT /v1/orgs/{organizationId}/teams/{teamId}/members", () => {
  it("adds by id or email and removes, answering 204 with an empty body", async () => {
    const team = await createTeam("Bulk", [reader.user]);
    const res = await admin.put(`${teamUrl(team)}/members`, { add: [owner.user, "GUS@acme.test"], remove: [reader.user] });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect(await memberIds(team)).toEqual(
      [
        [owner.user, "member"],
        [guest.user, "member"],
      ].sort(),
    );
    // Adding someone already in the team keeps their role.
    await admin.put(`${teamUrl(team)}/members/${owner.user}`, { role: "owner" });
    expect((await admin.put(`${teamUrl(team)}/members`, { add: [owner.user] })).status).toBe(204);
    expect(await memberIds(team)).toContainEqual([owner.user, "owner"]);
  });

  it("removes a user listed in both add and remove", async () => {
    const team = await createTeam("Both");
    expect((await admin.put(`${teamUrl(team)}/members`, { add: [reader.user, guest.user], remove: ["rita@acme.test"] })).status).toBe(204);
    expect(await memberIds(team)).toEqual([[guest.user, "member"]]);
  });

  // Enable with the `memberships` argument of Mutation.teamMembersUpdate (see the TEMP note in teams.schema.ts).
  it("sets roles through memberships, adding members it names, and rejects a bad role naming it", async () => {
    const team = await createTeam("Roles", [reader.user]);
    const res = await admin.put(`${teamUrl(team)}/members`, {
      memberships: { [reader.user]: { role: "owner" }, "gus@acme.test": { role: "member" } },
    });
    expect(res.status).toBe(204);
    expect(await memberIds(team)).toEqual(
      [
        [reader.user, "owner"],
        [guest.user, "member"],
      ].sort(),
    );
    const bad = await admin.put(`${teamUrl(team)}/members`, { memberships: { [reader.user]: { role: "boss" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain(`memberships.${reader.user}.role`);
    const both = await admin.put(`${teamUrl(team)}/members`, {
      add: [owner.user],
      remove: [owner.user],
      memberships: { [owner.user]: { role: "owner" } },
    });
    expect(both.status).toBe(204);
    expect((await memberIds(team)).map(([id]) => id)).not.toContain(owner.user);
  });

  it("lets the team's owner manage members", async () => {
    const team = await createTeam("Owned", [owner.user]);
    await admin.put(`${teamUrl(team)}/members/${owner.user}`, { role: "owner" });
    expect((await owner.put(`${teamUrl(team)}/members`, { add: [reader.user] })).status).toBe(204);
    expect(await memberIds(team)).toContainEqual([reader.user, "member"]);
  });

  it("rejects unknown users and non-members with a 400 naming them, and writes nothing", async () => {
    const team = await createTeam("Atomic", [reader.user]);
    const res = await admin.put(`${teamUrl(team)}/members`, { add: [guest.user, "ghost@acme.test"], remove: [reader.user, other.user] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("ghost@acme.test");
    expect(res.body.error.message).toContain(other.user);
    expect(res.body.error.message).toContain("add");
    expect(res.body.error.message).toContain("remove");
    expect(await memberIds(team)).toEqual([[reader.user, "member"]]);
    for (const body of [{ add: "x" }, { add: [1] }, { drop: [] }]) {
      const bad = await admin.put(`${teamUrl(team)}/members`, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.message, JSON.stringify(body)).toMatch(/add|drop/);
    }
  });

  it("is 403 for members who cannot manage the team, 404 for unknown teams and another organization", async () => {
    const team = await createTeam("Guarded members", [reader.user]);
    const res = await reader.put(`${teamUrl(team)}/members`, { add: [guest.user] });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("owner");
    expect((await admin.put(`${teamUrl("team_nope")}/members`, { add: [] })).status).toBe(404);
    expect((await other.put(`${teamUrl(team)}/members`, { add: [] })).status).toBe(404);
    expect((await t.caller("").put(`${teamUrl(team)}/members`, { add: [] })).status).toBe(401);
  });
});

describe("PUT /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}", () => {
  it("adds a member (as member by default) and updates the role, 204 with an empty body", async () => {
    const team = await createTeam("Single");
    const added = await admin.put(`${teamUrl(team)}/members/${reader.user}`);
    expect(added.status).toBe(204);
    expect(added.body).toBeUndefined();
    expect(await memberIds(team)).toEqual([[reader.user, "member"]]);
    expect((await admin.put(`${teamUrl(team)}/members/${reader.user}`, { role: "owner" })).status).toBe(204);
    expect(await memberIds(team)).toEqual([[reader.user, "owner"]]);
    expect((await admin.put(`${teamUrl(team)}/members/${reader.user}`, {})).status).toBe(204);
    expect(await memberIds(team)).toEqual([[reader.user, "owner"]]);
    expect((await admin.put(`${teamUrl(team)}/members/${guest.user}`, { role: "owner" })).status).toBe(204);
    expect(await memberIds(team)).toContainEqual([guest.user, "owner"]);
  });

  it("rejects a bad role or a non-member with a 400 naming them", async () => {
    const team = await createTeam("Strict");
    const badRole = await admin.put(`${teamUrl(team)}/members/${reader.user}`, { role: "admin" });
    expect(badRole.status).toBe(400);
    expect(badRole.body.error.message).toContain("role");
    const outsider = await admin.put(`${teamUrl(team)}/members/${other.user}`, { role: "member" });
    expect(outsider.status).toBe(400);
    expect(outsider.body.error.message).toContain(other.user);
    expect(await memberIds(team)).toEqual([]);
  });

  it("is 403 for members who cannot manage the team, 404 for unknown teams and another organization", async () => {
    const team = await createTeam("Locked", [reader.user]);
    expect((await reader.put(`${teamUrl(team)}/members/${reader.user}`, { role: "owner" })).status).toBe(403);
    expect((await admin.put(`${teamUrl("team_nope")}/members/${reader.user}`, {})).status).toBe(404);
    expect((await other.put(`${teamUrl(team)}/members/${reader.user}`, {})).status).toBe(404);
    expect((await t.caller("").put(`${teamUrl(team)}/members/${reader.user}`, {})).status).toBe(401);
  });
});

describe("DELETE /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}", () => {
  it("takes the member out, 204 with an empty body twice", async () => {
    const team = await createTeam("Leaving", [reader.user, guest.user]);
    const first = await admin.delete(`${teamUrl(team)}/members/${reader.user}`);
    expect(first.status).toBe(204);
    expect(first.body).toBeUndefined();
    const second = await admin.delete(`${teamUrl(team)}/members/${reader.user}`);
    expect(second.status).toBe(204);
    expect(second.body).toBeUndefined();
    expect(await memberIds(team)).toEqual([[guest.user, "member"]]);
  });

  it("is 403 for members who cannot manage the team, 404 for another organization, 401 without a token", async () => {
    const team = await createTeam("Sticky", [reader.user, guest.user]);
    expect((await reader.delete(`${teamUrl(team)}/members/${guest.user}`)).status).toBe(403);
    expect((await other.delete(`${teamUrl(team)}/members/${guest.user}`)).status).toBe(404);
    expect((await t.caller("").delete(`${teamUrl(team)}/members/${guest.user}`)).status).toBe(401);
    expect(await memberIds(team)).toHaveLength(2);
  });
});

describe("GraphQL", () => {
  it("walks an organization's teams and their memberships as connections", async () => {
    const team = await createTeam("Graph", [reader.user, guest.user]);
    const teams = await admin.graphql(
      `query($o: String!) { organization(organizationId: $o) { teams(first: 3) { totalCount edges { node { id title } } } } }`,
      {
        o: org,
      },
    );
    expect(teams.errors).toBeUndefined();
    const total = await t.gateway.db.prisma.team.count({ where: { organizationId: org } });
    expect(teams.data.organization.teams.totalCount).toBe(total);
    expect(teams.data.organization.teams.edges).toHaveLength(Math.min(3, total));
    const res = await admin.graphql(
      `query($o: String!, $t: String!) { team(organizationId: $o, teamId: $t) { id membersCount memberships(first: 5) { totalCount edges { node { role user { email } member { role } } } } } }`,
      { o: org, t: team },
    );
    expect(res.errors).toBeUndefined();
    const node = res.data.team;
    expect(node.membersCount).toBe(2);
    expect(node.memberships.totalCount).toBe(2);
    const entries = node.memberships.edges.map((e: any) => [e.node.user.email, e.node.member.role, e.node.role]);
    expect(entries.sort()).toEqual([
      ["gus@acme.test", null, "member"],
      ["rita@acme.test", "read", "member"],
    ]);
    const asGuest = await guest.graphql(
      `query($o: String!) { organization(organizationId: $o) { teams { totalCount edges { node { id } } } } }`,
      { o: org },
    );
    const guestTeams = await t.gateway.db.prisma.team.count({ where: { organizationId: org, members: { some: { userId: guest.user } } } });
    expect(asGuest.data.organization.teams.totalCount).toBe(guestTeams);
  });

  it("serves the team mutations with the same rules", async () => {
    const created = await admin.graphql(
      `mutation($o: String!) { teamCreate(organizationId: $o, title: "Via graph") { id title permissions { admin } } }`,
      { o: org },
    );
    expect(created.data.teamCreate).toMatchObject({ title: "Via graph", permissions: { admin: true } });
    const denied = await reader.graphql(`mutation($o: String!, $t: String!) { teamDelete(organizationId: $o, teamId: $t) { deletedId } }`, {
      o: org,
      t: created.data.teamCreate.id,
    });
    expect(denied.errors[0].extensions.code).toBe(403);
  });
});
