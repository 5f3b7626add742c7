import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, type Member } from "../../helpers/fixtures.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

// Many requests per test, on a machine that may be busy: generous time limits.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let reader: Member;
let anonymous: Caller;
let org: string;
let portal: any;
let secret: string;
const ids: Record<string, string> = {};

const SCHEMA = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: {
    unsigned: { type: "object", properties: { lang: { type: "string" } } },
    isBetaUser: { type: "boolean", description: "Beta program member" },
    plan: { type: "string", description: "Plan", enum: ["free", "pro"] },
  },
  additionalProperties: false,
};

async function jwt(claims: Record<string, unknown>, key = secret, opts: { alg?: string; expiresIn?: string | number } = {}) {
  let builder = new SignJWT(claims).setProtectedHeader({ alg: opts.alg ?? "HS256" }).setIssuedAt();
  if (opts.expiresIn !== undefined) builder = builder.setExpirationTime(opts.expiresIn);
  return builder.sign(new TextEncoder().encode(key));
}

/** GET …/published with a visitor token in the x-visitor-token header. */
async function publishedWithHeader(siteId: string, token: string, query: Record<string, string> = {}) {
  const qs = new URLSearchParams(query).toString();
  const res = await fetch(`${t.url}${sitePath(org, siteId, "/published")}${qs ? `?${qs}` : ""}`, { headers: { "x-visitor-token": token } });
  const body = await res.json();
  t.openapi.check("GET", sitePath(org, siteId, "/published"), res.status, body, JSON.stringify(body));
  return { status: res.status, body };
}

/** The structure as [section title, [site space titles]] pairs. */
function outline(body: any): [string, string[]][] {
  return body.structure.structure.map((s: any) => [s.title, s.siteSpaces.map((x: any) => x.title)]);
}

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, org, reader } = await acmeDocs(t, { reader: ["rita@acme.test", "read"] }));
  anonymous = t.caller("");
  for (const title of ["Guide", "Pro Guide", "API", "Beta", "French"]) ids[title] = await space(admin, org, title);

  portal = await site(admin, org, { title: "Portal" });
  const p = (suffix: string) => sitePath(org, portal.id, suffix);
  expect((await admin.put(p("/adaptive-schema"), { jsonSchema: SCHEMA })).status).toBe(200);
  const docs = (await admin.post(p("/sections"), { spaceId: ids.Guide, title: "Docs" })).body;
  const pro = (await admin.post(p("/site-spaces"), { spaceId: ids["Pro Guide"], sectionId: docs.id })).body;
  const french = (await admin.post(p("/site-spaces"), { spaceId: ids.French, sectionId: docs.id })).body;
  await admin.patch(p(`/site-spaces/${pro.id}`), { condition: 'visitor.claims.plan === "pro"' });
  await admin.patch(p(`/site-spaces/${french.id}`), { condition: 'visitor.claims.unsigned.lang === "fr"' });
  const api = (await admin.post(p("/sections"), { spaceId: ids.API, title: "API" })).body;
  const beta = (await admin.post(p("/sections"), { spaceId: ids.Beta, title: "Beta" })).body;
  await admin.patch(p(`/sections/${beta.id}`), { condition: "visitor.claims.isBetaUser === true" });
  const group = (await admin.post(p("/section-groups"), { title: "Reference", sections: [api.id, beta.id] })).body;
  Object.assign(ids, { docs: docs.id, pro: pro.id, api: api.id, beta: beta.id, group: group.id });
  secret = (await admin.get(p("/visitor-auth"))).body.secret;
});
afterAll(() => t?.close());

describe("GET /v1/orgs/{organizationId}/sites/{siteId}/published", () => {
  it("is 404 to visitors while the site is unpublished; members preview it", async () => {
    const res = await anonymous.get(sitePath(org, portal.id, "/published"));
    expect(res.status).toBe(404);
    expect((await other.get(sitePath(org, portal.id, "/published"))).status).toBe(404);
    const preview = await reader.get(sitePath(org, portal.id, "/published"));
    expect(preview.status).toBe(200);
    expect(preview.body.site.published).toBe(false);
    // A member without a visitor token has no claims: conditional items are left out.
    expect(outline(preview.body)).toEqual([
      ["Docs", ["Guide"]],
      ["API", ["API"]],
    ]);
  });

  it("serves a published public site to three different visitors: anonymous, with claims, with unsigned claims", async () => {
    await admin.post(sitePath(org, portal.id, "/publish"));
    const anon = await anonymous.get(sitePath(org, portal.id, "/published"));
    expect(anon.status).toBe(200);
    expect(anon.body.object).toBe("published-content-site");
    expect(anon.body.site).toMatchObject({ object: "site", id: portal.id, title: "Portal", published: true, visibility: "public" });
    expect(anon.body.structure.type).toBe("sections");
    expect(outline(anon.body)).toEqual([
      ["Docs", ["Guide"]],
      ["API", ["API"]],
    ]);
    const [docs, api] = anon.body.structure.structure;
    expect(docs).toMatchObject({
      object: "site-section",
      id: ids.docs,
      default: true,
      path: "docs",
      // The default section (and its default site space) is the site's root (GitBook's convention).
      urls: { published: `${t.url}/sites/${org}/${portal.id}` },
    });
    expect(api).toMatchObject({ object: "site-section", id: ids.api, default: false, sectionGroup: ids.group });
    expect(docs.siteSpaces[0]).toMatchObject({
      object: "site-space",
      default: true,
      space: { object: "space", id: ids.Guide, title: "Guide" },
    });
    // Visitors get no permission on the spaces.
    expect(docs.siteSpaces[0].space.permissions).toMatchObject({ view: false, edit: false, admin: false });

    const token = await jwt({ sub: "visitor-1", isBetaUser: true, plan: "pro" });
    const beta = await publishedWithHeader(portal.id, token);
    expect(beta.status).toBe(200);
    expect(outline(beta.body)).toEqual([
      ["Docs", ["Guide", "Pro Guide"]],
      ["API", ["API"]],
      ["Beta", ["Beta"]],
    ]);
    expect(beta.body.structure.structure[2]).toMatchObject({
      id: ids.beta,
      sectionGroup: ids.group,
      condition: "visitor.claims.isBetaUser === true",
    });

    const free = await anonymous.get(sitePath(org, portal.id, "/published"), {
      visitorToken: await jwt({ plan: "free" }),
      "visitor.lang": "fr",
    });
    expect(free.status).toBe(200);
    expect(outline(free.body)).toEqual([
      ["Docs", ["Guide", "French"]],
      ["API", ["API"]],
    ]);
    // A member's API token works too, and any caller with a token is a visitor of a published site.
    expect((await other.get(sitePath(org, portal.id, "/published"))).status).toBe(200);
  });

  it("refuses visitor tokens that do not verify (401)", async () => {
    const cases = [
      await jwt({ plan: "pro" }, "not-the-site-key"),
      await jwt({ plan: "pro" }, secret, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      await jwt({ plan: "pro" }, secret, { alg: "HS512" }),
      "not.a.jwt",
    ];
    for (const token of cases) {
      const res = await anonymous.get(sitePath(org, portal.id, "/published"), { visitorToken: token });
      expect(res.status, token).toBe(401);
      expect(res.body.error.message).toContain("visitorToken");
    }
    // A bad API token is never taken for an anonymous visitor.
    expect((await t.caller("dapi_unknown").get(sitePath(org, portal.id, "/published"))).status).toBe(401);
  });

  it("serves a share-link site only with the key of a share link that is not revoked", async () => {
    await admin.patch(sitePath(org, portal.id), { visibility: "share-link" });
    expect((await anonymous.get(sitePath(org, portal.id, "/published"))).status).toBe(404);
    expect((await anonymous.get(sitePath(org, portal.id, "/published"), { shareKey: "wrongkey" })).status).toBe(404);
    const link = (await admin.post(sitePath(org, portal.id, "/share-links"), { name: "Partners" })).body;
    const shared = await anonymous.get(sitePath(org, portal.id, "/published"), { shareKey: link.key });
    expect(shared.status).toBe(200);
    expect(outline(shared.body)).toEqual([
      ["Docs", ["Guide"]],
      ["API", ["API"]],
    ]);
    expect(shared.body.structure.structure[0].urls.published).toBe(`${t.url}/sites/${org}/${portal.id}/${link.key}`);
    // The share key and visitor claims together.
    const both = await anonymous.get(sitePath(org, portal.id, "/published"), {
      shareKey: link.key,
      visitorToken: await jwt({ isBetaUser: true }),
    });
    expect(outline(both.body).map(([title]) => title)).toEqual(["Docs", "API", "Beta"]);
    // A key of another site does not open this one.
    const elsewhere = await site(admin, org, { title: "Elsewhere", visibility: "share-link" });
    const otherKey = (await admin.post(sitePath(org, elsewhere.id, "/share-links"))).body.key;
    expect((await anonymous.get(sitePath(org, portal.id, "/published"), { shareKey: otherKey })).status).toBe(404);
    // Revoked: closed again. Members still preview.
    await admin.delete(sitePath(org, portal.id, `/share-links/${link.id}`));
    expect((await anonymous.get(sitePath(org, portal.id, "/published"), { shareKey: link.key })).status).toBe(404);
    expect((await reader.get(sitePath(org, portal.id, "/published"))).status).toBe(200);
    expect((await anonymous.get(sitePath(org, portal.id, "/published"), { shareKey: "bad key!" })).status).toBe(400);
  });

  it("serves a visitor-auth site only with a signed visitor token", async () => {
    await admin.patch(sitePath(org, portal.id), { visibility: "visitor-auth" });
    const none = await anonymous.get(sitePath(org, portal.id, "/published"));
    expect(none.status).toBe(401);
    expect(none.body.error.message).toContain("visitorToken");
    const signed = await publishedWithHeader(portal.id, await jwt({ sub: "v2", isBetaUser: true, plan: "free" }));
    expect(signed.status).toBe(200);
    expect(outline(signed.body)).toEqual([
      ["Docs", ["Guide"]],
      ["API", ["API"]],
      ["Beta", ["Beta"]],
    ]);
    expect((await anonymous.get(sitePath(org, portal.id, "/published"), { visitorToken: await jwt({}) })).status).toBe(200);
    expect((await reader.get(sitePath(org, portal.id, "/published"))).status).toBe(200);
    await admin.patch(sitePath(org, portal.id), { visibility: "public" });
  });

  it("accepts a member's visitor claims from ping on the organization's visitor-auth sites, not another organization's", async () => {
    await admin.patch(sitePath(org, portal.id), { visibility: "visitor-auth" });
    try {
      const claims = (await reader.post(`/v1/orgs/${org}/ping`)).body.serviceVisitorClaims;
      const res = await anonymous.get(sitePath(org, portal.id, "/published"), { visitorToken: claims });
      expect(res.status).toBe(200);
      expect((await publishedWithHeader(portal.id, claims)).status).toBe(200);
      const theirs = (await other.post(`/v1/orgs/${other.organization}/ping`)).body.serviceVisitorClaims;
      const refused = await anonymous.get(sitePath(org, portal.id, "/published"), { visitorToken: theirs });
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toContain("signature");
      const tampered = claims.slice(0, -2) + (claims.endsWith("AA") ? "BB" : "AA");
      expect((await anonymous.get(sitePath(org, portal.id, "/published"), { visitorToken: tampered })).status).toBe(401);
    } finally {
      await admin.patch(sitePath(org, portal.id), { visibility: "public" });
    }
  });

  it("serves root site spaces (type siteSpaces), hiding conditional ones, deleted spaces, and reassigning the default", async () => {
    const flat = await site(admin, org, { title: "Flat", spaces: [ids.Beta, ids.Guide, ids.API] });
    await admin.put(sitePath(org, flat.id, "/adaptive-schema"), { jsonSchema: SCHEMA });
    const roots = (await admin.get(sitePath(org, flat.id, "/site-spaces"))).body.items;
    await admin.patch(sitePath(org, flat.id, `/site-spaces/${roots[0].id}`), { condition: "visitor.claims.isBetaUser" });
    await admin.post(sitePath(org, flat.id, "/publish"));
    const doomed = await space(admin, org, "Doomed");
    await admin.post(sitePath(org, flat.id, "/site-spaces"), { spaceId: doomed });
    await admin.delete(`/v1/spaces/${doomed}`);

    const anon = await anonymous.get(sitePath(org, flat.id, "/published"));
    expect(anon.status).toBe(200);
    expect(anon.body.structure.type).toBe("siteSpaces");
    expect(anon.body.structure.structure.map((s: any) => [s.object, s.title, s.default])).toEqual([
      ["site-space", "Guide", true],
      ["site-space", "API", false],
    ]);
    const secretKey = (await admin.get(sitePath(org, flat.id, "/visitor-auth"))).body.secret;
    const beta = await anonymous.get(sitePath(org, flat.id, "/published"), { visitorToken: await jwt({ isBetaUser: true }, secretKey) });
    expect(beta.body.structure.structure.map((s: any) => [s.title, s.default])).toEqual([
      ["Beta", true],
      ["Guide", false],
      ["API", false],
    ]);
    // The key of another site does not verify here.
    expect((await anonymous.get(sitePath(org, flat.id, "/published"), { visitorToken: await jwt({ isBetaUser: true }) })).status).toBe(401);
  });

  it("is served over GraphQL too, with the visitor token as an argument", async () => {
    const res = await reader.graphql(
      `query($org: String!, $site: String!, $token: String) {
        sitePublished(organizationId: $org, siteId: $site, visitorToken: $token) {
          object
          site { id }
          structure {
            type
            structure {
              __typename
              ... on SiteSection { title siteSpaces(first: 10) { totalCount nodes { title space { id } } } }
              ... on SiteSpace { title }
            }
          }
        }
      }`,
      { org, site: portal.id, token: await jwt({ isBetaUser: true, plan: "pro" }) },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.sitePublished.structure.type).toBe("sections");
    expect(res.data.sitePublished.structure.structure.map((s: any) => [s.__typename, s.title])).toEqual([
      ["SiteSection", "Docs"],
      ["SiteSection", "API"],
      ["SiteSection", "Beta"],
    ]);
    expect(res.data.sitePublished.structure.structure[0].siteSpaces.nodes.map((x: any) => x.title)).toEqual(["Guide", "Pro Guide"]);
    const anon = await t.caller("").graphql(`query { sitePublished(organizationId: "${org}", siteId: "${portal.id}") { object } }`);
    expect(anon.status).toBe(401);
  });

  it("answers 404 for a site of another organization or none", async () => {
    expect((await anonymous.get(sitePath(other.organization, portal.id, "/published"))).status).toBe(404);
    expect((await anonymous.get(sitePath(org, "site_nope", "/published"))).status).toBe(404);
  });
});
