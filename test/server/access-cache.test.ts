import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, expectError, statementsOf, type Admin, type Member } from "../helpers/fixtures.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { changesAccess, changesInstallations } from "../../src/core/access/access-cache.js";

/**
 * The statement budget of a request: once a token and a membership were read, authentication and
 * membership cost no SQL statement (the access cache, src/core/access-cache.ts), and every write
 * that changes them — through the API, an admin command or straight to the database — is seen by
 * the next request.
 */
let t: TestGateway;
let admin: Admin;
let editor: Member;
let org: string;
let spaceId: string;

const SPACE = `query($id: String!) { space(spaceId: $id) { id title permissions { edit admin } } }`;

beforeAll(async () => {
  // The integration event dispatcher polls the database every second by default: keep it quiet while counting.
  // The response cache is off: these statements are those of requests that run (test/server/response-cache.test.ts).
  t = await startGateway({ integrationDispatchPollMs: 60 * 60 * 1000, responseCache: "off" });
  ({ admin, org, editor } = await acmeDocs(t, { editor: ["eddie@acme.test", "edit"] }));
  spaceId = (await createSpace(admin, org, { title: "Budget" })).id;
});
afterAll(() => t?.close());

describe("statement budget", () => {
  it("a repeated GET of a space sends no statement for the token or the membership", async () => {
    for (const caller of [admin, editor]) {
      await caller.get(`/v1/spaces/${spaceId}`);
      const cached = await statementsOf(t, () => caller.get(`/v1/spaces/${spaceId}`));
      const off = await uncachedStatements(() => caller.get(`/v1/spaces/${spaceId}`));
      // Without the cache the same GET reads the token and the membership too.
      expect(off - cached).toBe(2);
    }
  });

  it("a GraphQL read of the same space costs the same as REST", async () => {
    await admin.graphql(SPACE, { id: spaceId });
    const graph = await statementsOf(t, () => admin.graphql(SPACE, { id: spaceId }));
    const rest = await statementsOf(t, () => admin.get(`/v1/spaces/${spaceId}`));
    expect(graph).toBeLessThanOrEqual(rest);
  });
});

/** The statements `call` costs when the access cache holds nothing (every entry dropped first). */
function uncachedStatements(call: () => Promise<unknown>): Promise<number> {
  return statementsOf(t, async () => {
    t.gateway.services.accessCache.forget();
    return call();
  });
}

describe("what changes access is seen by the next request", () => {
  it("a role change through the API", async () => {
    const reader = await t.member(org, "rory@acme.test", "read");
    expect((await reader.get(`/v1/spaces/${spaceId}`)).body.permissions.edit).toBe(false);
    expect((await admin.patch(`/v1/orgs/${org}/members/${reader.user}`, { role: "edit" })).status).toBe(200);
    expect((await reader.get(`/v1/spaces/${spaceId}`)).body.permissions.edit).toBe(true);
    expect((await admin.delete(`/v1/orgs/${org}/members/${reader.user}`)).status).toBe(204);
    expectError(await reader.get(`/v1/spaces/${spaceId}`), 404);
  });

  it("a token revoked by an admin command, and one revoked straight in the database", async () => {
    const one = await t.member(org, "tess@acme.test", "read");
    expect((await one.get(`/v1/spaces/${spaceId}`)).status).toBe(200);
    await runAdminCommand(t.gateway.db.prisma, { command: "token-revoke", token: one.token });
    expectError(await one.get(`/v1/spaces/${spaceId}`), 401);

    const two = await t.member(org, "tom@acme.test", "read");
    expect((await two.get(`/v1/spaces/${spaceId}`)).status).toBe(200);
    await t.gateway.db.prisma.apiToken.updateMany({ where: { userId: two.user }, data: { revokedAt: new Date() } });
    expectError(await two.get(`/v1/spaces/${spaceId}`), 401);
  });

  it("a member disabled, and organization SSO turned on, inside a transaction", async () => {
    const member = await t.member(org, "dina@acme.test", "read");
    expect((await member.get(`/v1/spaces/${spaceId}`)).status).toBe(200);
    const key = { organizationId_userId: { organizationId: org, userId: member.user } };
    await t.gateway.db.prisma.$transaction(async (tx) => {
      await tx.member.update({ where: key, data: { disabled: true } });
    });
    expectError(await member.get(`/v1/spaces/${spaceId}`), 404);
    await t.gateway.db.prisma.member.update({ where: key, data: { disabled: false, sso: true } });
    expect((await member.get(`/v1/spaces/${spaceId}`)).status).toBe(200);
    expect((await admin.patch(`/v1/orgs/${org}`, { sso: true })).status).toBe(200);
    expectError(await member.get(`/v1/spaces/${spaceId}`), 403, "single sign-on");
    expect((await admin.patch(`/v1/orgs/${org}`, { sso: false })).status).toBe(200);
    expect((await member.get(`/v1/spaces/${spaceId}`)).status).toBe(200);
  });

  it("a rolled back change drops nothing and changes nothing", async () => {
    const member = await t.member(org, "rob@acme.test", "read");
    await member.get(`/v1/spaces/${spaceId}`);
    const key = { organizationId_userId: { organizationId: org, userId: member.user } };
    await expect(
      t.gateway.db.prisma.$transaction(async (tx) => {
        await tx.member.update({ where: key, data: { role: "admin" } });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    const misses = t.gateway.services.accessCache.stats.misses;
    expect((await member.get(`/v1/spaces/${spaceId}`)).body.permissions.admin).toBe(false);
    expect(t.gateway.services.accessCache.stats.misses).toBe(misses);
  });
});

describe("which writes drop the cache", () => {
  /** The SQL of each write `call` commits, by table. */
  async function writesOf(call: () => Promise<unknown>) {
    const seen: Map<string, readonly string[]>[] = [];
    let on = true;
    t.gateway.db.onCommittedWrite((writes) => {
      if (on) seen.push(new Map(writes));
    });
    try {
      await call();
    } finally {
      on = false;
    }
    return seen;
  }

  it("recording a token's use or a member's activity keeps the entries; a role change drops them", async () => {
    const prisma = t.gateway.db.prisma;
    const token = await prisma.apiToken.findFirstOrThrow({ where: { userId: editor.user } });
    const used = await writesOf(() => prisma.apiToken.update({ where: { id: token.id }, data: { lastUsedAt: new Date() } }));
    const seen = await writesOf(() => admin.post(`/v1/orgs/${org}/ping`));
    expect(used.length).toBe(1);
    expect(seen.some((w) => w.has("Member"))).toBe(true);
    for (const writes of [...used, ...seen]) expect(changesAccess(writes)).toBe(false);
    const role = await writesOf(() => admin.patch(`/v1/orgs/${org}/members/${editor.user}`, { role: "review" }));
    expect(role.some((w) => changesAccess(w))).toBe(true);
    const created = await writesOf(() => t.member(org, "nina@acme.test", "read"));
    expect(created.some((w) => changesAccess(w))).toBe(true);
  });

  it("a statement of data-modifying parts is read part by part: a page edit (the space's head moved) keeps access and installations", async () => {
    const space = (await admin.post(`/v1/orgs/${org}/spaces`, { title: "Parts" })).body;
    const page = (await admin.post(`/v1/spaces/${space.id}/content/pages`, { title: "Part" })).body;
    const edit = await writesOf(() => admin.patch(`/v1/spaces/${space.id}/content/page/${page.id}`, { title: "Part two" }));
    const statements = edit.flatMap((w) => [...w.values()].flat());
    expect(statements.some((sql) => /^\s*WITH\b/.test(sql) && /UPDATE "public"."Space"/.test(sql))).toBe(true);
    for (const writes of edit) {
      expect(changesAccess(writes)).toBe(false);
      expect(changesInstallations(writes)).toBe(false);
    }
    // The same shapes on tables that decide access: an UPDATE of a member's role inside WITH, a delete.
    const role = `WITH "x" AS (INSERT INTO "public"."Revision" ("id") VALUES ($1)) UPDATE "public"."Member" SET "role" = $2 WHERE "public"."Member"."userId" = $3`;
    expect(
      changesAccess(
        new Map([
          ["Member", [role]],
          ["Revision", [role]],
        ]),
      ),
    ).toBe(true);
    const seen = `WITH "x" AS (INSERT INTO "public"."Revision" ("id") VALUES ($1)) UPDATE "public"."Member" SET "lastSeenAt" = $2 WHERE "public"."Member"."userId" = $3`;
    expect(
      changesAccess(
        new Map([
          ["Member", [seen]],
          ["Revision", [seen]],
        ]),
      ),
    ).toBe(false);
    const moved = `WITH "x" AS (UPDATE "public"."Space" SET "organizationId" = $1 WHERE "public"."Space"."id" = $2) SELECT 1`;
    expect(changesInstallations(new Map([["Space", [moved]]]))).toBe(true);
  });
});
