import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, type Admin } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin;
let other: Admin;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other } = await acmeDocs(t));
});
afterAll(() => t?.close());

describe("GET /v1/orgs", () => {
  it("lists only the caller's organizations with the documented fields", async () => {
    const res = await admin.get("/v1/orgs");
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(1);
    expect(res.body).not.toHaveProperty("next");
    const org = res.body.items[0];
    expect(org).toMatchObject({
      object: "organization",
      id: admin.organization,
      title: "Acme Docs",
      emailDomains: [],
      type: "business",
      inviteLinks: true,
      sso: false,
      ai: false,
      plan: expect.any(String),
      defaultRole: null,
      internal_isOnNewTrial: true,
      urls: {
        location: `${t.url}/v1/orgs/${admin.organization}`,
        app: expect.stringContaining(admin.organization),
      },
      permissions: { view: true, admin: true, createContent: true, listMembers: true, listTeams: true },
    });
    expect(new Date(org.createdAt).toISOString()).toBe(org.createdAt);
    expect(org).not.toHaveProperty("hostname");
  });

  it("pages with a cursor and rejects a limit over 1000", async () => {
    await t.bootstrap("ada@acme.test", "Second Org");
    const first = await admin.get("/v1/orgs", { limit: 1 });
    expect(first.body.count).toBe(2);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.next.page).toEqual(expect.any(String));
    const second = await admin.get("/v1/orgs", { limit: 1, page: first.body.next.page });
    expect(second.body.items).toHaveLength(1);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
    expect(second.body).not.toHaveProperty("next");

    const tooMany = await admin.get("/v1/orgs", { limit: 1001 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toEqual({ code: 400, message: expect.stringContaining("limit") });
    const badCursor = await admin.get("/v1/orgs", { page: "nonsense" });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.message).toContain("page");
  });

  it("answers 401 without a token or with an unknown one", async () => {
    const none = await t.caller("").get("/v1/orgs");
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    const bad = await t.caller("dapi_unknown").get("/v1/orgs");
    expect(bad.status).toBe(401);
  });
});

describe("GET /v1/orgs/{organizationId}", () => {
  it("returns the organization to a member and 404 to anyone else", async () => {
    expect((await admin.get(`/v1/orgs/${admin.organization}`)).body.id).toBe(admin.organization);
    const res = await other.get(`/v1/orgs/${admin.organization}`);
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain(admin.organization);
  });
});

describe("PATCH /v1/orgs/{organizationId}", () => {
  it("updates the documented fields, and null clears nullable ones", async () => {
    const res = await admin.patch(`/v1/orgs/${admin.organization}`, {
      title: "Acme Documentation",
      emailDomains: ["acme.test", "ACME.test"],
      hostname: "acme-docs",
      defaultRole: "edit",
      defaultContent: { type: "site", site: "site_123" },
      logo: "https://cdn.acme.test/logo.png",
      sso: true,
      ai: true,
      inviteLinks: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      title: "Acme Documentation",
      emailDomains: ["acme.test"],
      hostname: "acme-docs",
      defaultRole: "edit",
      defaultContent: { type: "site", site: "site_123" },
      sso: true,
      ai: true,
      inviteLinks: false,
      urls: { logo: "https://cdn.acme.test/logo.png" },
    });
    const cleared = await admin.patch(`/v1/orgs/${admin.organization}`, {
      defaultRole: null,
      defaultContent: null,
      logo: null,
      sso: false,
    });
    expect(cleared.body.defaultRole).toBeNull();
    expect(cleared.body).not.toHaveProperty("defaultContent"); // GitBook's schema: an object when set, absent otherwise
    expect(cleared.body.urls).not.toHaveProperty("logo");
    expect(cleared.body.title).toBe("Acme Documentation");
  });

  it("rejects bad input with a 400 naming the field, and keeps what was stored", async () => {
    const cases: [unknown, string][] = [
      [{ title: "x" }, "title"],
      [{ title: "x".repeat(256) }, "title"],
      [{ hostname: "ab" }, "hostname"],
      [{ hostname: "Not_Valid" }, "hostname"],
      [{ defaultRole: "owner" }, "defaultRole"],
      [{ logo: "not a url" }, "logo"],
      [{ emailDomains: ["nodot"] }, "emailDomains"],
      [{ defaultContent: { type: "space", site: "x" } }, "defaultContent"],
      [{ title: null }, "title"],
      [{ sso: "yes" }, "sso"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.patch(`/v1/orgs/${admin.organization}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toContain(field);
    }
    const malformed = await admin.raw("PATCH", `/v1/orgs/${admin.organization}`, '{"title": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toMatch(/JSON/);
    expect((await admin.get(`/v1/orgs/${admin.organization}`)).body.title).toBe("Acme Documentation");
  });

  it("refuses a hostname another organization uses with 409", async () => {
    const res = await other.patch(`/v1/orgs/${other.organization}`, { hostname: "acme-docs" });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("hostname");
  });

  it("is 403 for a member who is not an admin and 404 for a stranger", async () => {
    const reader = await t.member(admin.organization, "rita@acme.test", "read");
    const res = await reader.patch(`/v1/orgs/${admin.organization}`, { title: "Mine now" });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("admin");
    expect((await other.patch(`/v1/orgs/${admin.organization}`, { title: "Mine now" })).status).toBe(404);
  });
});

describe("DELETE /v1/orgs/{organizationId}/link-invites/{inviteId}", () => {
  it("answers 204 with an empty body whether or not the invite existed", async () => {
    const invite = await t.gateway.db.prisma.inviteLink.create({ data: { id: "inv_test1", organizationId: admin.organization } });
    const res = await admin.delete(`/v1/orgs/${admin.organization}/link-invites/${invite.id}`);
    expect(res.status).toBe(204);
    expect(await t.gateway.db.prisma.inviteLink.count({ where: { id: invite.id } })).toBe(0);
    expect((await admin.delete(`/v1/orgs/${admin.organization}/link-invites/${invite.id}`)).status).toBe(204);
    expect((await other.delete(`/v1/orgs/${admin.organization}/link-invites/x`)).status).toBe(404);
  });
});

describe("GET /v1/email-domains/{emailDomain}/orgs", () => {
  it("lists organizations accepting the caller's email domain", async () => {
    const res = await admin.get("/v1/email-domains/acme.test/orgs");
    expect(res.status).toBe(200);
    expect(res.body.organizations.map((o: any) => o.id)).toEqual([admin.organization]);
    // A caller from another domain who is not a member learns nothing.
    expect((await other.get("/v1/email-domains/acme.test/orgs")).body.organizations).toEqual([]);
    expect((await admin.get("/v1/email-domains/not-a-domain/orgs")).status).toBe(400);
  });
});

describe("GraphQL", () => {
  it("serves the same organization and requires a token", async () => {
    const res = await admin.graphql(`query($id: String!) { organization(organizationId: $id) { id title permissions { admin } } }`, {
      id: admin.organization,
    });
    expect(res.data.organization).toEqual({ id: admin.organization, title: "Acme Documentation", permissions: { admin: true } });
    const anon = await t.caller("").graphql(`{ organizations { count } }`);
    expect(anon.status).toBe(401);
    expect(anon.errors[0].extensions.code).toBe(401);
    const hidden = await other.graphql(`query($id: String!) { organization(organizationId: $id) { id } }`, { id: admin.organization });
    expect(hidden.errors[0].extensions.code).toBe(404);
  });
});
