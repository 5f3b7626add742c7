import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, type Member } from "../../helpers/fixtures.js";
import { ISO, site, sitePath, space, type Admin } from "./helpers.js";

// Many requests per test, on a machine that may be busy: generous time limits.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let creator: Member;
let reader: Member;
let org: string;
let guide: string;
let api: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, org, creator, reader } = await acmeDocs(t, {
    creator: ["cora@acme.test", "create"],
    reader: ["rita@acme.test", "read"],
  }));
  guide = await space(admin, org, "Getting Started");
  api = await space(admin, org, "API Reference");
});
afterAll(() => t?.close());

describe("POST /v1/orgs/{organizationId}/sites", () => {
  it("creates a site with the documented fields, linking the spaces at its root (the first is the default)", async () => {
    const res = await admin.post(`/v1/orgs/${org}/sites`, { title: "Product Docs", spaces: [guide, api] });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(s.id).toMatch(/^site_/);
    expect(s).toEqual({
      object: "site",
      id: s.id,
      type: "basic",
      title: "Product Docs",
      visibility: "public",
      published: false,
      siteSpaces: 2,
      createdAt: expect.stringMatching(ISO),
      adaptiveContent: { enabled: false },
      agentsContext: "included",
      features: [],
      urls: {
        location: `${t.url}/v1/orgs/${org}/sites/${s.id}`,
        app: `${t.url}/app/o/${org}/sites/${s.id}`,
        published: `${t.url}/sites/${org}/${s.id}`,
        preview: `${t.url}/sites/${org}/${s.id}`,
      },
      appliedType: "basic",
      defaultLevel: "inherit",
      permissions: {
        view: true,
        access: true,
        edit: true,
        create: true,
        admin: true,
        installIntegration: true,
        viewAdaptiveSchema: true,
        editAdaptiveSchema: true,
      },
    });
    const spaces = await admin.get(sitePath(org, s.id, "/site-spaces"));
    expect(spaces.body.count).toBe(2);
    expect(spaces.body.items.map((x: any) => [x.space.id, x.path, x.default, x.title])).toEqual([
      [guide, "getting-started", true, "Getting Started"],
      [api, "api-reference", false, "API Reference"],
    ]);
  });

  it("takes type, visibility, and create-space to make a new space for the site", async () => {
    const before = (await admin.get(`/v1/orgs/${org}/spaces`)).body.count;
    const res = await creator.post(`/v1/orgs/${org}/sites`, {
      title: "Handbook",
      type: "premium",
      visibility: "share-link",
      spaces: "create-space",
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: "premium", visibility: "share-link", siteSpaces: 1, published: false });
    expect((await admin.get(`/v1/orgs/${org}/spaces`)).body.count).toBe(before + 1);
    const [siteSpace] = (await admin.get(sitePath(org, res.body.id, "/site-spaces"))).body.items;
    expect(siteSpace.space.title).toBe("Handbook");
    expect(siteSpace.default).toBe(true);

    const empty = await admin.post(`/v1/orgs/${org}/sites`, { title: "Empty", visibility: "visitor-auth", type: "ultimate" });
    expect(empty.body).toMatchObject({ siteSpaces: 0, visibility: "visitor-auth", type: "ultimate" });
    expect(empty.body.features).toEqual([{ id: "sites-visitor-auth", plan: "premium", frozen: false, customizations: [] }]);
  });

  it("enforces the limits and values with a 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{}, "title"],
      [{ title: "x" }, "title"],
      [{ title: "x".repeat(129) }, "title"],
      [{ title: "  " }, "title"],
      [{ title: "Docs", type: "gold" }, "type"],
      [{ title: "Docs", visibility: "private" }, "visibility"],
      [{ title: "Docs", visibility: "in-collection" }, "visibility"],
      [{ title: "Docs", spaces: "new" }, "spaces"],
      [{ title: "Docs", spaces: [1, 2] }, "spaces"],
      [{ title: "Docs", unknown: true }, "unknown"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post(`/v1/orgs/${org}/sites`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toContain(field);
    }
    expect((await admin.post(`/v1/orgs/${org}/sites`, { title: "ab" })).status).toBe(201);
    expect((await admin.post(`/v1/orgs/${org}/sites`, { title: "x".repeat(128) })).status).toBe(201);
  });

  it("refuses spaces the caller cannot use, naming them", async () => {
    const unknown = await admin.post(`/v1/orgs/${org}/sites`, { title: "Docs", spaces: [guide, "spc_nope"] });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain("spc_nope");
    // A space of another organization the caller belongs to.
    const second = await t.bootstrap("ada@acme.test", "Second Org");
    const foreign = await space(second, second.organization, "Elsewhere");
    const res = await admin.post(`/v1/orgs/${org}/sites`, { title: "Docs", spaces: [foreign] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(foreign);
    // A space of an organization the caller is not in: it does not exist for them.
    const hidden = await space(other, other.organization, "Secret");
    const res2 = await admin.post(`/v1/orgs/${org}/sites`, { title: "Docs", spaces: [hidden] });
    expect(res2.status).toBe(404);
    expect(res2.body.error.message).toContain(hidden);
  });

  it("needs the create role (403 naming it) and membership (404)", async () => {
    const res = await reader.post(`/v1/orgs/${org}/sites`, { title: "Mine" });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("create");
    expect((await other.post(`/v1/orgs/${org}/sites`, { title: "Mine" })).status).toBe(404);
  });
});

describe("GET /v1/orgs/{organizationId}/sites", () => {
  it("lists with filters space, title and published, and pages", async () => {
    const org2 = (await t.bootstrap("lis@list.test", "Lists Org")) as Admin;
    const o = org2.organization;
    const s1 = await space(org2, o, "One");
    const a = await site(org2, o, { title: "Alpha Docs", spaces: [s1] });
    const b = await site(org2, o, { title: "Beta docs" });
    await site(org2, o, { title: "Gamma" });
    await org2.post(sitePath(o, b.id, "/publish"));

    const all = await org2.get(`/v1/orgs/${o}/sites`);
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(3);
    expect(all.body.items.map((s: any) => s.title)).toEqual(["Alpha Docs", "Beta docs", "Gamma"]);
    expect((await org2.get(`/v1/orgs/${o}/sites`, { space: s1 })).body.items.map((s: any) => s.id)).toEqual([a.id]);
    expect((await org2.get(`/v1/orgs/${o}/sites`, { title: "DOCS" })).body.items.map((s: any) => s.title)).toEqual([
      "Alpha Docs",
      "Beta docs",
    ]);
    expect((await org2.get(`/v1/orgs/${o}/sites`, { published: true })).body.items.map((s: any) => s.id)).toEqual([b.id]);
    expect((await org2.get(`/v1/orgs/${o}/sites`, { published: false })).body.count).toBe(2);

    const first = await org2.get(`/v1/orgs/${o}/sites`, { limit: 2 });
    expect(first.body.items).toHaveLength(2);
    const second = await org2.get(`/v1/orgs/${o}/sites`, { limit: 2, page: first.body.next.page });
    expect(second.body.items.map((s: any) => s.title)).toEqual(["Gamma"]);
    expect(second.body).not.toHaveProperty("next");
    expect((await org2.get(`/v1/orgs/${o}/sites`, { limit: 1001 })).status).toBe(400);
    expect((await org2.get(`/v1/orgs/${o}/sites`, { published: "maybe" })).status).toBe(400);
    expect((await admin.get(`/v1/orgs/${o}/sites`)).status).toBe(404);
  });
});

describe("GET /v1/orgs/{organizationId}/sites/{siteId}", () => {
  it("returns the site to members and 404 otherwise", async () => {
    const s = await site(admin, org, { title: "Readable" });
    const res = await reader.get(sitePath(org, s.id));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...s, permissions: expect.objectContaining({ view: true, edit: false, admin: false }) });
    expect((await admin.get(sitePath(org, "site_nope"))).status).toBe(404);
    const hidden = await other.get(sitePath(org, s.id));
    expect(hidden.status).toBe(404);
    // A site is only found under its own organization.
    const o2 = await site(other, other.organization, { title: "Theirs" });
    expect((await admin.get(sitePath(org, o2.id))).status).toBe(404);
  });
});

/** A valid hostname of `length` (512 or 513) characters: nine labels. */
function host(length: 512 | 513): string {
  return [...Array(7).fill("h".repeat(63)), "i".repeat(32), "j".repeat(length - 481)].join(".");
}

describe("PATCH /v1/orgs/{organizationId}/sites/{siteId}", () => {
  it("updates every documented field; null clears basename, proxy and hostname", async () => {
    const s = await site(admin, org, { title: "Patch Me", spaces: [guide, api] });
    const res = await creator.patch(sitePath(org, s.id), {
      title: "Patched",
      visibility: "unlisted",
      basename: "docs",
      adaptiveContent: { enabled: true },
      agentsContext: "excluded",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      title: "Patched",
      visibility: "unlisted",
      basename: "docs",
      adaptiveContent: { enabled: true },
      agentsContext: "excluded",
      urls: { published: `${t.url}/sites/${org}/docs` },
    });
    expect(res.body.features).toEqual([{ id: "sites-adaptive-content", plan: "premium", frozen: true, customizations: [] }]);

    const host = await admin.patch(sitePath(org, s.id), { hostname: "docs.acme.example.com" });
    expect(host.body).toMatchObject({ hostname: "docs.acme.example.com", urls: { published: "https://docs.acme.example.com" } });
    const proxied = await admin.patch(sitePath(org, s.id), { proxy: "acme.com/docs" });
    expect(proxied.body.proxy).toEqual({ origin: "acme.com/docs", target: "https://docs.acme.example.com" });
    expect(proxied.body.urls.published).toBe("https://acme.com/docs");

    const cleared = await admin.patch(sitePath(org, s.id), { basename: null, proxy: null, hostname: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty("basename");
    expect(cleared.body).not.toHaveProperty("proxy");
    expect(cleared.body).not.toHaveProperty("hostname");
    expect(cleared.body.title).toBe("Patched");
    expect(cleared.body.urls.published).toBe(`${t.url}/sites/${org}/${s.id}`);
  });

  it("moves the default site space and the default section", async () => {
    const s = await site(admin, org, { title: "Defaults", spaces: [guide, api] });
    const spaces = (await admin.get(sitePath(org, s.id, "/site-spaces"))).body.items;
    const res = await admin.patch(sitePath(org, s.id), { defaultSiteSpace: spaces[1].id });
    expect(res.status).toBe(200);
    const after = (await admin.get(sitePath(org, s.id, "/site-spaces"))).body.items;
    expect(after.map((x: any) => x.default)).toEqual([false, true]);
    expect((await admin.get(sitePath(org, s.id, "/site-spaces"), { default: true })).body.items.map((x: any) => x.id)).toEqual([
      spaces[1].id,
    ]);

    const a = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: guide, title: "Section A" })).body;
    const b = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: api, title: "Section B" })).body;
    expect([a.default, b.default]).toEqual([true, false]);
    const moved = await admin.patch(sitePath(org, s.id), { defaultSiteSection: b.id });
    expect(moved.status).toBe(200);
    const sections = (await admin.get(sitePath(org, s.id, "/sections"))).body.items;
    expect(sections.map((x: any) => [x.id, x.default])).toEqual([
      [a.id, false],
      [b.id, true],
    ]);
    // In a site with sections, defaultSiteSpace is the default of the default section.
    const other = await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: guide, sectionId: b.id });
    const setDefault = await admin.patch(sitePath(org, s.id), { defaultSiteSpace: other.body.id });
    expect(setDefault.status).toBe(200);
    expect((await admin.get(sitePath(org, s.id, "/sections"))).body.items[1].siteSpaces.map((x: any) => x.default)).toEqual([false, true]);
    const wrong = await admin.patch(sitePath(org, s.id), { defaultSiteSpace: a.siteSpaces[0].id });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("defaultSiteSpace");
    const bad = await admin.patch(sitePath(org, s.id), { defaultSiteSection: "sitesc_nope" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("defaultSiteSection");
  });

  it("enforces every limit (one past each edge) with a 400 naming the field", async () => {
    const s = await site(admin, org, { title: "Limits" });
    const cases: [unknown, string][] = [
      [{ title: "x" }, "title"],
      [{ title: "x".repeat(129) }, "title"],
      [{ title: null }, "title"],
      [{ visibility: "private" }, "visibility"],
      [{ visibility: null }, "visibility"],
      [{ basename: "" }, "basename"],
      [{ basename: "b".repeat(101) }, "basename"],
      [{ basename: "with space" }, "basename"],
      [{ adaptiveContent: {} }, "enabled"],
      [{ adaptiveContent: null }, "adaptiveContent"],
      [{ agentsContext: "maybe" }, "agentsContext"],
      [{ proxy: "a.com/" + "p".repeat(507) }, "proxy"],
      [{ proxy: "not a proxy" }, "proxy"],
      [{ proxy: "acme.com" }, "proxy"],
      [{ hostname: host(513) }, "hostname"],
      [{ hostname: "localhost" }, "hostname"],
      [{ hostname: "Docs.Acme.com" }, "hostname"],
      [{ defaultSiteSpace: "sitesp_nope" }, "defaultSiteSpace"],
      [{ defaultSiteSpace: null }, "defaultSiteSpace"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.patch(sitePath(org, s.id), body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body).slice(0, 100)).toContain(field);
    }
    // At the edges: accepted.
    const edge = await admin.patch(sitePath(org, s.id), {
      title: "x".repeat(128),
      hostname: host(512),
      basename: "b".repeat(100),
      proxy: "a.com/" + "p".repeat(506),
    });
    expect(edge.status).toBe(200);
    expect(edge.body.proxy.origin).toBe("a.com/" + "p".repeat(506));
    expect((await admin.patch(sitePath(org, s.id), { title: "ab", basename: "b" })).status).toBe(200);
    expect((await admin.get(sitePath(org, s.id))).body.title).toBe("ab");
  });

  it("keeps hostnames unique across sites and basenames unique in the organization (409)", async () => {
    const a = await site(admin, org, { title: "Host A" });
    const b = await site(admin, org, { title: "Host B" });
    expect((await admin.patch(sitePath(org, a.id), { hostname: "help.acme.example.org", basename: "help" })).status).toBe(200);
    const host = await admin.patch(sitePath(org, b.id), { hostname: "help.acme.example.org" });
    expect(host.status).toBe(409);
    expect(host.body.error.message).toContain("hostname");
    const base = await admin.patch(sitePath(org, b.id), { basename: "help" });
    expect(base.status).toBe(409);
    expect(base.body.error.message).toContain("basename");
  });

  it("needs the create role and membership", async () => {
    const s = await site(admin, org, { title: "Guarded" });
    const res = await reader.patch(sitePath(org, s.id), { title: "Nope" });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("create");
    expect((await other.patch(sitePath(org, s.id), { title: "Nope" })).status).toBe(404);
    expect((await admin.patch(sitePath(org, "site_nope"), { title: "Nope" })).status).toBe(404);
  });
});

describe("publish, unpublish and delete", () => {
  it("publishes and unpublishes (200 Site)", async () => {
    const s = await site(admin, org, { title: "Publishable" });
    const pub = await creator.post(sitePath(org, s.id, "/publish"));
    expect(pub.status).toBe(200);
    expect(pub.body).toMatchObject({ object: "site", id: s.id, published: true });
    const unpub = await creator.post(sitePath(org, s.id, "/unpublish"));
    expect(unpub.status).toBe(200);
    expect(unpub.body.published).toBe(false);
    expect((await reader.post(sitePath(org, s.id, "/publish"))).status).toBe(403);
    expect((await admin.post(sitePath(org, "site_nope", "/publish"))).status).toBe(404);
  });

  it("deletes with 204 whether or not the site existed (needs admin)", async () => {
    const s = await site(admin, org, { title: "Doomed", spaces: [guide] });
    const denied = await creator.delete(sitePath(org, s.id));
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("admin");
    expect((await admin.delete(sitePath(org, s.id))).status).toBe(204);
    expect((await admin.get(sitePath(org, s.id))).status).toBe(404);
    expect(await t.gateway.db.prisma.siteSpace.count({ where: { siteId: s.id } })).toBe(0);
    expect((await admin.delete(sitePath(org, s.id))).status).toBe(204);
    // The spaces stay.
    expect((await admin.get(`/v1/spaces/${guide}`)).status).toBe(200);
  });
});

describe("adaptive schema", () => {
  const schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    $id: "https://acme.test/visitor.json",
    type: "object",
    properties: {
      unsigned: {
        type: "object",
        description: "Unsigned claims",
        properties: { language: { type: "string", enum: ["en", "fr"] } },
        additionalProperties: false,
      },
      isBetaUser: { type: "boolean", description: "The visitor is in the beta program" },
      plan: { type: "string", description: "Plan of the visitor", enum: ["free", "pro"] },
      seats: { type: "integer", description: "Seats" },
    },
    additionalProperties: false,
  };

  it("answers a default schema, then stores a valid one and generates condition templates", async () => {
    const s = await site(admin, org, { title: "Adaptive" });
    const initial = await reader.get(sitePath(org, s.id, "/adaptive-schema"));
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      object: "site-adaptive-schema",
      jsonSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: {
          unsigned: { type: "object", description: "Unsigned claims of the visitor.", properties: {}, additionalProperties: false },
        },
        additionalProperties: false,
      },
      updatedAt: s.createdAt,
    });
    expect((await admin.get(sitePath(org, s.id, "/adaptive-schema/template-conditions"))).body).toEqual({ items: [] });

    const put = await creator.put(sitePath(org, s.id, "/adaptive-schema"), { jsonSchema: schema });
    expect(put.status).toBe(200);
    expect(put.body.object).toBe("site-adaptive-schema");
    expect(put.body.jsonSchema).toEqual(schema);
    expect(put.body.updatedAt).toMatch(ISO);
    expect(put.body.updatedAt > s.createdAt).toBe(true);
    expect((await admin.get(sitePath(org, s.id, "/adaptive-schema"))).body).toEqual(put.body);

    const templates = await reader.get(sitePath(org, s.id, "/adaptive-schema/template-conditions"));
    expect(templates.status).toBe(200);
    // The stored schema is JSON: the order of its properties is not kept (the templates follow the stored order).
    expect(templates.body.items).toHaveLength(6);
    expect(templates.body.items).toEqual(
      expect.arrayContaining([
        { description: "unsigned.language: en", condition: 'visitor.claims.unsigned.language === "en"' },
        { description: "unsigned.language: fr", condition: 'visitor.claims.unsigned.language === "fr"' },
        { description: "The visitor is in the beta program", condition: "visitor.claims.isBetaUser === true" },
        { description: "Plan of the visitor: free", condition: 'visitor.claims.plan === "free"' },
        { description: "Plan of the visitor: pro", condition: 'visitor.claims.plan === "pro"' },
        { description: "Seats: more than a given number", condition: "visitor.claims.seats > 0" },
      ]),
    );
  });

  it("refuses a schema that is not what the spec describes, naming what is wrong", async () => {
    const s = await site(admin, org, { title: "Adaptive Bad" });
    const cases: [unknown, string][] = [
      [{}, "jsonSchema"],
      [{ jsonSchema: "nope" }, "jsonSchema"],
      [{ jsonSchema: [1] }, "jsonSchema"],
      [{ jsonSchema: { type: "string" } }, "jsonSchema.type"],
      [{ jsonSchema: { type: "object", properties: { a: { type: 12 } } } }, "jsonSchema"],
      [{ jsonSchema: { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" } }, "jsonSchema.$schema"],
      [{ jsonSchema: { type: "object", additionalProperties: true } }, "jsonSchema.additionalProperties"],
      [{ jsonSchema: { type: "object", properties: { isBeta: { type: "boolean" } } } }, "jsonSchema.properties.isBeta.description"],
      [{ jsonSchema: { type: "object", properties: { tags: { type: "array", description: "x" } } } }, "jsonSchema.properties.tags.type"],
      [{ jsonSchema: { type: "object", properties: { unsigned: { type: "string" } } } }, "jsonSchema.properties.unsigned.type"],
      [{ jsonSchema: { type: "object", properties: { "not-an-identifier": { type: "boolean", description: "x" } } } }, "not-an-identifier"],
      [{ jsonSchema: { type: "object", properties: { a: { $ref: "#/definitions/missing" } } } }, "jsonSchema"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.put(sitePath(org, s.id, "/adaptive-schema"), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toContain(field);
    }
    expect((await reader.put(sitePath(org, s.id, "/adaptive-schema"), { jsonSchema: schema })).status).toBe(403);
  });
});

describe("share links and the visitor-auth key", () => {
  it("creates, lists and revokes share links (admin only)", async () => {
    const s = await site(admin, org, { title: "Shared", visibility: "share-link" });
    const created = await admin.post(sitePath(org, s.id, "/share-links"), { name: "Partners" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      object: "share-link",
      id: expect.stringMatching(/^sitesl_/),
      key: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      name: "Partners",
      createdAt: expect.stringMatching(ISO),
      // GitBook's form: the key is the first segment after the site's base.
      urls: { published: `${t.url}/sites/${org}/${s.id}/${created.body.key}` },
    });
    const second = await admin.post(sitePath(org, s.id, "/share-links"));
    expect(second.body.key).not.toBe(created.body.key);
    expect(second.body).not.toHaveProperty("name");
    const list = await admin.get(sitePath(org, s.id, "/share-links"));
    expect(list.body.count).toBe(2);
    expect(list.body.items.map((l: any) => l.id)).toEqual([created.body.id, second.body.id]);

    expect((await admin.delete(sitePath(org, s.id, `/share-links/${created.body.id}`))).status).toBe(204);
    expect((await admin.delete(sitePath(org, s.id, `/share-links/${created.body.id}`))).status).toBe(204);
    expect((await admin.delete(sitePath(org, s.id, "/share-links/sitesl_nope"))).status).toBe(204);
    const revoked = (await admin.get(sitePath(org, s.id, "/share-links"))).body.items[0];
    expect(revoked.revokedAt).toMatch(ISO);

    const tooLong = await admin.post(sitePath(org, s.id, "/share-links"), { name: "n".repeat(101) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain("name");
    const denied = await creator.post(sitePath(org, s.id, "/share-links"));
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("admin");
    expect((await creator.get(sitePath(org, s.id, "/share-links"))).status).toBe(403);
    expect((await creator.delete(sitePath(org, s.id, `/share-links/${second.body.id}`))).status).toBe(403);
  });

  it("reads the visitor-auth key generated with the site (admin only)", async () => {
    const s = await site(admin, org, { title: "Visitor Auth", visibility: "visitor-auth" });
    const res = await admin.get(sitePath(org, s.id, "/visitor-auth"));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: "site-visitor-auth",
      site: s.id,
      algorithm: "HS256",
      secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect((await admin.get(sitePath(org, s.id, "/visitor-auth"))).body.secret).toBe(res.body.secret);
    const another = await site(admin, org, { title: "Another" });
    expect((await admin.get(sitePath(org, another.id, "/visitor-auth"))).body.secret).not.toBe(res.body.secret);
    expect((await creator.get(sitePath(org, s.id, "/visitor-auth"))).status).toBe(403);
  });
});

describe("OpenAPI document", () => {
  it("documents the enumerations whose values GraphQL enums cannot spell", async () => {
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    const create = doc.paths["/v1/orgs/{organizationId}/sites"].post.requestBody.content["application/json"].schema;
    expect(create.required).toEqual(["title"]);
    expect(create.properties.visibility.enum).toEqual(["public", "unlisted", "share-link", "visitor-auth"]);
    expect(create.properties.type.$ref).toBe("#/components/schemas/SiteType");
    expect(doc.components.schemas.SiteType.enum).toEqual(["basic", "premium", "ultimate"]);
    expect(create.properties.spaces.oneOf[1].enum).toEqual(["create-space"]);
    const published = doc.paths["/v1/orgs/{organizationId}/sites/{siteId}/published"].get;
    expect(published.security).toEqual([{}, { bearerAuth: [] }]);
    expect(published.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(["shareKey", "visitorToken"]));
    expect(doc.components.schemas.Site.properties.visibility.enum).toEqual(["public", "unlisted", "share-link", "visitor-auth"]);
    expect(Object.keys(doc.components.schemas.Site.properties)).not.toContain("subdomain");
    expect(Object.keys(doc.components.schemas.Organization.properties)).not.toContain("sites");
    expect(Object.keys(doc.components.schemas.Organization.properties)).not.toContain("subdomain");
  });
});

describe("GraphQL", () => {
  it("serves sites under the organization, with its subdomain", async () => {
    await admin.patch(`/v1/orgs/${org}`, { hostname: "acme" });
    const s = await site(admin, org, { title: "Graph Site", spaces: [guide] });
    const res = await admin.graphql(
      `query($org: String!, $site: String!) {
        organization(organizationId: $org) {
          subdomain { object subdomain isActive target { type organization } }
          sites(first: 100) { totalCount edges { node { id title } } }
        }
        site(organizationId: $org, siteId: $site) {
          id urls { published }
          subdomain { subdomain }
          organization { id }
          siteSpaces { totalCount edges { node { path space { id title } } } }
        }
      }`,
      { org, site: s.id },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.organization.subdomain).toEqual({
      object: "subdomain",
      subdomain: "acme",
      isActive: true,
      target: { type: "organization", organization: org },
    });
    expect(res.data.organization.sites.edges.map((e: any) => e.node.id)).toContain(s.id);
    expect(res.data.site.urls.published).toBe(`${t.url}/sites/acme/${s.id}`);
    expect(res.data.site.subdomain).toEqual({ subdomain: "acme" });
    expect(res.data.site.organization.id).toBe(org);
    expect(res.data.site.siteSpaces.edges[0].node).toEqual({ path: "getting-started", space: { id: guide, title: "Getting Started" } });
    const hidden = await other.graphql(`query($org: String!, $site: String!) { site(organizationId: $org, siteId: $site) { id } }`, {
      org,
      site: s.id,
    });
    expect(hidden.errors[0].extensions.code).toBe(404);
  });

  it("publishes sites under SITES_DOMAIN when it is set", async () => {
    const t2 = await startGateway({ sitesDomain: "docs.example.net" });
    try {
      const a = await t2.bootstrap("sam@sub.test", "Sub Org");
      await a.patch(`/v1/orgs/${a.organization}`, { hostname: "subco" });
      const s = await site(a, a.organization, { title: "Sub Site" });
      expect(s.urls.published).toBe("https://subco.docs.example.net");
      const based = await a.patch(sitePath(a.organization, s.id), { basename: "guides" });
      expect(based.body.urls.published).toBe("https://subco.docs.example.net/guides");
    } finally {
      await t2.close();
    }
  });
});
