import { type GitBookAPI, GitBookAPIError } from "@gitbook/api";
import { decodeJwt, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, statementsOf } from "../../helpers/fixtures.js";
import { eventually } from "../../helpers/eventually.js";
import { gitbookClient } from "../../helpers/gitbook-client.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

/**
 * POST /v1/urls/published and the site token it mints, through GitBook's own client (the calls
 * GitBook's reader makes). Every answer is checked against /openapi.json and GitBook's schema.
 */

vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let org: string;
let port: string;
const ids: Record<string, string> = {};
const sites: Record<string, any> = {};

/** GitBook's client on this server, with `token` (none: an anonymous visitor); every answer checked. */
const client = (token?: string): GitBookAPI => gitbookClient(t, token);

async function lookup(url: string, opts: { token?: string; visitor?: Record<string, unknown> } = {}): Promise<any> {
  const res = await client(opts.token).urls.resolvePublishedContentByUrl({ url, visitor: opts.visitor as any });
  return res.data;
}

/** The HTTP status the lookup of `url` fails with. */
async function lookupStatus(url: string, opts: { token?: string; visitor?: Record<string, unknown> } = {}): Promise<number> {
  const err = await lookup(url, opts).then(
    () => 200,
    (e: unknown) => e,
  );
  if (err === 200) return 200;
  expect(err).toBeInstanceOf(GitBookAPIError);
  return (err as GitBookAPIError).code;
}

async function siteSpaceIds(caller: Caller, siteId: string): Promise<Record<string, string>> {
  const items = (await caller.get(sitePath(org, siteId, "/site-spaces"))).body.items as any[];
  return Object.fromEntries(items.map((s) => [s.path, s.id]));
}

beforeAll(async () => {
  // The integration event dispatcher polls the database every second by default: kept quiet for statement counts.
  t = await startGateway({ sitesDomain: "docs.test", integrationDispatchPollMs: 60 * 60 * 1000 });
  ({ admin, other, org } = await acmeDocs(t));
  port = new URL(t.url).port;
  expect((await admin.patch(`/v1/orgs/${org}`, { hostname: "acme" })).status).toBe(200);
  for (const title of ["V2", "V1", "Handbook", "Private", "Secure", "Draft", "API", "Lone"]) ids[title] = await space(admin, org, title);

  // guide: https://acme.docs.test/guide, site spaces v2 (default) and v1.
  sites.guide = await site(admin, org, { title: "Guide", spaces: [ids.V2, ids.V1] });
  const ss = await siteSpaceIds(admin, sites.guide.id);
  Object.assign(ids, { ssV2: ss.v2!, ssV1: ss.v1! });
  await admin.patch(sitePath(org, sites.guide.id), { basename: "guide" });
  await admin.post(sitePath(org, sites.guide.id, "/publish"));

  // handbook: on its own host.
  sites.handbook = await site(admin, org, { title: "Handbook", spaces: [ids.Handbook] });
  await admin.patch(sitePath(org, sites.handbook.id), { hostname: "docs.acme.example.com" });
  await admin.post(sitePath(org, sites.handbook.id, "/publish"));

  sites.private = await site(admin, org, { title: "Private", spaces: [ids.Private], visibility: "share-link" });
  await admin.patch(sitePath(org, sites.private.id), { basename: "private" });
  await admin.post(sitePath(org, sites.private.id, "/publish"));
  ids.shareKey = (await admin.post(sitePath(org, sites.private.id, "/share-links"), { name: "Partners" })).body.key;

  sites.secure = await site(admin, org, { title: "Secure", spaces: [ids.Secure], visibility: "visitor-auth" });
  await admin.patch(sitePath(org, sites.secure.id), { basename: "secure" });
  await admin.post(sitePath(org, sites.secure.id, "/publish"));
  ids.secret = (await admin.get(sitePath(org, sites.secure.id, "/visitor-auth"))).body.secret;

  sites.draft = await site(admin, org, { title: "Draft", spaces: [ids.Draft] });
  await admin.patch(sitePath(org, sites.draft.id), { basename: "draft" });

  // portal: sections docs (v2 default, v1) and api.
  sites.portal = await site(admin, org, { title: "Portal" });
  const p = (suffix: string) => sitePath(org, sites.portal.id, suffix);
  await admin.patch(p(""), { basename: "portal" });
  const docs = (await admin.post(p("/sections"), { spaceId: ids.V2, title: "Docs" })).body;
  await admin.post(p("/site-spaces"), { spaceId: ids.V1, sectionId: docs.id });
  const api = (await admin.post(p("/sections"), { spaceId: ids.API, title: "API" })).body;
  await admin.patch(p(""), { defaultSiteSection: docs.id });
  Object.assign(ids, { docs: docs.id, api: api.id });
  await admin.post(p("/publish"));
});
afterAll(() => t?.close());

describe("POST /v1/urls/published", () => {
  it("resolves a site under SITES_DOMAIN: default site space at the root, another by its path, a page path", async () => {
    const a = await lookup("https://acme.docs.test/guide");
    expect(a).toMatchObject({
      organization: org,
      site: sites.guide.id,
      siteSpace: ids.ssV2,
      space: ids.V2,
      siteBasePath: "/guide/",
      basePath: "/guide/",
      pathname: "",
      canonicalUrl: "https://acme.docs.test/guide",
      complete: false,
    });
    expect(a.apiToken).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const b = await lookup("https://acme.docs.test/guide/v1/intro");
    expect(b).toMatchObject({
      siteSpace: ids.ssV1,
      space: ids.V1,
      siteBasePath: "/guide/",
      basePath: "/guide/v1/",
      pathname: "intro",
      canonicalUrl: "https://acme.docs.test/guide/v1/intro",
      complete: true,
    });
    const c = await lookup("https://acme.docs.test//guide/getting-started/install/");
    expect(c).toMatchObject({ siteSpace: ids.ssV2, basePath: "/guide/", pathname: "getting-started/install", complete: true });
    // The scheme does not matter.
    expect((await lookup("http://acme.docs.test/guide/v1")).siteSpace).toBe(ids.ssV1);
  });

  it("resolves /sites/<organization>/<site> under PUBLIC_URL by hostname or id, basename or site id", async () => {
    const byName = await lookup(`https://127.0.0.1/sites/acme/guide/v1/a/b`);
    expect(byName).toMatchObject({
      siteSpace: ids.ssV1,
      siteBasePath: "/sites/acme/guide/",
      basePath: "/sites/acme/guide/v1/",
      pathname: "a/b",
    });
    expect(byName.canonicalUrl).toBe("https://127.0.0.1/sites/acme/guide/v1/a/b");
    const byId = await lookup(`http://127.0.0.1:${port}/sites/${org}/${sites.guide.id}`);
    expect(byId).toMatchObject({ siteSpace: ids.ssV2, siteBasePath: `/sites/${org}/${sites.guide.id}/`, pathname: "" });
  });

  it("resolves a custom hostname at its root; unknown hosts and paths are 404", async () => {
    expect(await lookup("https://docs.acme.example.com/")).toMatchObject({
      site: sites.handbook.id,
      space: ids.Handbook,
      siteBasePath: "/",
      basePath: "/",
      pathname: "",
      canonicalUrl: "https://docs.acme.example.com/",
      complete: true,
    });
    expect((await lookup("https://docs.acme.example.com/~gitbook/icon")).pathname).toBe("~gitbook/icon");
    expect(await lookupStatus("https://nowhere.example.com/")).toBe(404);
    expect(await lookupStatus("https://acme.docs.test/unknown-site")).toBe(404);
    expect(await lookupStatus("https://other.docs.test/guide")).toBe(404);
    expect(await lookupStatus("not a url")).toBe(400);
  });

  it("follows sections: the default variant of the default section at the base, the others below the section", async () => {
    const root = await lookup("https://acme.docs.test/portal");
    expect(root).toMatchObject({ siteSection: ids.docs, space: ids.V2, basePath: "/portal/", pathname: "", complete: false });
    expect(await lookup("https://acme.docs.test/portal/docs/v1/x")).toMatchObject({
      siteSection: ids.docs,
      space: ids.V1,
      basePath: "/portal/docs/v1/",
      pathname: "x",
      complete: true,
    });
    expect(await lookup("https://acme.docs.test/portal/api/ref")).toMatchObject({
      siteSection: ids.api,
      space: ids.API,
      basePath: "/portal/api/",
      pathname: "ref",
      complete: true,
    });
    expect(await lookup("https://acme.docs.test/portal/some/page")).toMatchObject({
      siteSection: ids.docs,
      space: ids.V2,
      basePath: "/portal/",
      pathname: "some/page",
      complete: true,
    });
    // The published structure links each item where the lookup finds it.
    const published = (await client().orgs.getPublishedContentSite(org, sites.portal.id)).data as any;
    const urls = published.structure.structure.flatMap((s: any) => [s.urls.published, ...s.siteSpaces.map((x: any) => x.urls.published)]);
    expect(urls).toEqual([
      "https://acme.docs.test/portal",
      "https://acme.docs.test/portal",
      "https://acme.docs.test/portal/docs/v1",
      "https://acme.docs.test/portal/api",
      "https://acme.docs.test/portal/api",
    ]);
  });

  it("opens a share-link site only with a live share key, as a path segment after the site's base", async () => {
    expect(await lookupStatus("https://acme.docs.test/private")).toBe(404);
    expect(await lookupStatus("https://acme.docs.test/private/not-a-key/intro")).toBe(404);
    const shared = await lookup(`https://acme.docs.test/private/${ids.shareKey}/intro`);
    expect(shared).toMatchObject({
      site: sites.private.id,
      shareKey: ids.shareKey,
      siteBasePath: `/private/${ids.shareKey}/`,
      basePath: `/private/${ids.shareKey}/`,
      pathname: "intro",
    });
    expect(decodeJwt(shared.apiToken).shareKey).toBe(ids.shareKey);
    // The published structure read with the token links with the key in the path.
    const published = (await client(shared.apiToken).orgs.getPublishedContentSite(org, sites.private.id, { shareKey: ids.shareKey })).data;
    expect((published.structure.structure[0] as any).urls.published).toBe(`https://acme.docs.test/private/${ids.shareKey}`);
    // GitBook's reader reads the space with the key too.
    expect((await client(shared.apiToken).spaces.getSpaceById(ids.Private, { shareKey: ids.shareKey })).data.id).toBe(ids.Private);
    const link = (await admin.get(sitePath(org, sites.private.id, "/share-links"))).body.items[0];
    expect(link.urls.published).toBe(`https://acme.docs.test/private/${ids.shareKey}`);
  });

  it("needs a valid visitor token for a visitor-auth site (401 without one or with a bad one)", async () => {
    expect(await lookupStatus("https://acme.docs.test/secure")).toBe(401);
    const forged = await new SignJWT({ plan: "pro" }).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode("not the key"));
    expect(await lookupStatus("https://acme.docs.test/secure", { visitor: { jwtToken: forged } })).toBe(401);
    const jwtToken = await new SignJWT({ plan: "pro" }).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(ids.secret));
    const ok = await lookup("https://acme.docs.test/secure/page", { visitor: { jwtToken, unsignedClaims: { lang: "fr" } } });
    expect(ok).toMatchObject({ site: sites.secure.id, space: ids.Secure, pathname: "page" });
    expect(decodeJwt(ok.apiToken).claims).toEqual({ plan: "pro", unsigned: { lang: "fr" } });
    // The site token stands for the visitor token on the site's own reads.
    expect((await client(ok.apiToken).orgs.getPublishedContentSite(org, sites.secure.id)).data.site.id).toBe(sites.secure.id);
  });

  it("is 404 to visitors for an unpublished site; a member previews it", async () => {
    expect(await lookupStatus("https://acme.docs.test/draft")).toBe(404);
    expect(await lookupStatus("https://acme.docs.test/draft", { token: other.token })).toBe(404);
    const preview = await lookup("https://acme.docs.test/draft", { token: admin.token });
    expect(preview).toMatchObject({ site: sites.draft.id, space: ids.Draft });
    expect(decodeJwt(preview.apiToken).draft).toBe(true);
    // The preview token reads the unpublished site's structure and space.
    expect((await client(preview.apiToken).spaces.getSpaceById(ids.Draft)).data.id).toBe(ids.Draft);
  });

  it("answers a URL that names no site from memory: no SQL statement once it was looked up", async () => {
    const miss = async (url: string) => {
      const res = await fetch(`${t.url}/v1/urls/published`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url }),
      });
      expect(res.status).toBe(404);
    };
    for (const url of ["https://nowhere.example.com/a/b", "https://acme.docs.test/no-such-site/x", `https://127.0.0.1/sites/nobody/x`]) {
      await miss(url);
      expect(await statementsOf(t, () => miss(url)), url).toBe(0);
    }
  });

  it("accepts GitBook's reader body: redirectOnError, visitor type and cacheBust", async () => {
    const res = await fetch(`${t.url}/v1/urls/published`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        url: "https://acme.docs.test/guide/v1/intro",
        visitor: { unsignedClaims: {}, type: "human" },
        redirectOnError: false,
        cacheBust: "x1",
      }),
    });
    const body = await res.json();
    t.openapi.check("POST", "/v1/urls/published", res.status, body, JSON.stringify(body));
    expect(res.status).toBe(200);
    expect(body.siteSpace).toBe(ids.ssV1);
    const bad = await fetch(`${t.url}/v1/urls/published`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "https://acme.docs.test/guide", visitor: { unsignedClaims: [1] } }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain("unsignedClaims");
    // The same field over GraphQL.
    const gql = await admin.graphql(
      `query($u: String!) { publishedContentByUrl(url: $u) { siteSpace basePath pathname complete apiToken } }`,
      {
        u: "https://acme.docs.test/guide/v1/intro",
      },
    );
    expect(gql.data?.publishedContentByUrl).toMatchObject({
      siteSpace: ids.ssV1,
      basePath: "/guide/v1/",
      pathname: "intro",
      complete: true,
    });
  });
});

describe("site tokens", () => {
  it("are JWTs of GitBook's SiteAPIToken shape, the same all day, expiring at 00:05 the next day", async () => {
    const first = await lookup("https://acme.docs.test/guide/v1/intro");
    const again = await lookup("https://acme.docs.test/guide/v1/other");
    expect(again.apiToken).toBe(first.apiToken);
    const payload = decodeJwt(first.apiToken);
    expect(payload).toMatchObject({
      kind: "site",
      organization: org,
      site: sites.guide.id,
      siteSpace: ids.ssV1,
      space: ids.V1,
      claims: {},
    });
    expect([...(payload.spaces as string[])].sort()).toEqual([ids.V1, ids.V2].sort());
    const dayStart = Math.floor(Date.now() / 86_400_000) * 86_400;
    expect(payload.iat).toBe(dayStart);
    expect(payload.exp).toBe(dayStart + 86_400 + 300);
    const other = await lookup("https://acme.docs.test/guide");
    expect(other.apiToken).not.toBe(first.apiToken);
  });

  it("read the site's published structure and its spaces, nothing else; every write is 403", async () => {
    const { apiToken } = await lookup("https://acme.docs.test/guide/v1");
    const api = client(apiToken);
    const published = (await api.orgs.getPublishedContentSite(org, sites.guide.id)).data;
    expect(published.site.id).toBe(sites.guide.id);
    expect(published.customizations.site.styling.theme).toBe("clean");
    expect(Object.keys(published.customizations.siteSpaces).sort()).toEqual([ids.ssV1, ids.ssV2].sort());
    const spaceRead = (await api.spaces.getSpaceById(ids.V1)).data;
    expect(spaceRead).toMatchObject({ id: ids.V1, organization: org });
    expect(spaceRead.permissions.edit).toBe(false);

    const status = (p: Promise<unknown>) =>
      p.then(
        () => 200,
        (e: GitBookAPIError) => e.code,
      );
    expect(await status(api.spaces.getSpaceById(ids.Handbook))).toBe(404);
    expect(await status(api.orgs.getOrganizationById(org))).toBe(404);
    expect(await status(api.spaces.updateSpaceById(ids.V1, { title: "Hacked" }))).toBe(403);
    expect(await status(api.orgs.createSpace(org, { title: "Nope" }))).toBe(403);
    // Another site's published structure: the token is no visitor token there.
    expect(await status(api.orgs.getPublishedContentSite(org, sites.secure.id))).toBe(401);
    // GraphQL goes through the same door.
    const gql = await t
      .caller(apiToken)
      .graphql(`mutation { siteUnpublish(organizationId: "${org}", siteId: "${sites.guide.id}") { id } }`);
    expect(gql.errors?.[0]?.extensions?.code).toBe(403);
    const q = await t.caller(apiToken).graphql(`query($id: String!) { space(spaceId: $id) { id } }`, { id: ids.V2 });
    expect(q.data?.space?.id).toBe(ids.V2);
  });

  it("stop working once the site no longer grants them: unpublished, share link revoked", async () => {
    const { apiToken } = await lookup("https://docs.acme.example.com/");
    expect((await client(apiToken).spaces.getSpaceById(ids.Handbook)).data.id).toBe(ids.Handbook);
    await admin.post(sitePath(org, sites.handbook.id, "/unpublish"));
    expect((await t.caller(apiToken).get(`/v1/spaces/${ids.Handbook}`)).status).toBe(401);
    await admin.post(sitePath(org, sites.handbook.id, "/publish"));

    const shared = await lookup(`https://acme.docs.test/private/${ids.shareKey}`);
    expect((await t.caller(shared.apiToken).get(`/v1/spaces/${ids.Private}`)).status).toBe(200);
    const link = (await admin.get(sitePath(org, sites.private.id, "/share-links"))).body.items[0];
    await admin.delete(sitePath(org, sites.private.id, `/share-links/${link.id}`));
    expect((await t.caller(shared.apiToken).get(`/v1/spaces/${ids.Private}`)).status).toBe(401);
    expect(await lookupStatus(`https://acme.docs.test/private/${ids.shareKey}`)).toBe(404);
  });

  it("a forged or tampered token is refused with 401", async () => {
    const { apiToken } = await lookup("https://acme.docs.test/guide");
    const [h, p, s] = apiToken.split(".");
    const payload = JSON.parse(Buffer.from(p, "base64url").toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, spaces: [ids.Handbook] })).toString("base64url")}.${s}`;
    expect((await t.caller(tampered).get(`/v1/spaces/${ids.Handbook}`)).status).toBe(401);
    const forged = await new SignJWT(payload).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode("guess"));
    expect((await t.caller(forged).get(`/v1/spaces/${ids.V2}`)).status).toBe(401);
  });
});

describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)("two gateways on one database and Redis", () => {
  it("a site change made through one drops what the other kept of which site a URL names", async () => {
    const second = await startGateway({ sitesDomain: "docs.test", databaseUrl: t.config.databaseUrl });
    try {
      const at = async (url: string) =>
        (
          await fetch(`${second.url}/v1/urls/published`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ url }),
          })
        ).status;
      // Kept by the second gateway: a hit and a miss.
      expect(await at("https://acme.docs.test/guide")).toBe(200);
      expect(await at("https://acme.docs.test/moved")).toBe(404);
      expect((await admin.patch(sitePath(org, sites.guide.id), { basename: "moved" })).status).toBe(200);
      await eventually(async () => (await at("https://acme.docs.test/moved")) === 200 || undefined);
      expect(await at("https://acme.docs.test/guide")).toBe(404);
      // A share link revoked through the first gateway closes the site on the second.
      const key = (await admin.post(sitePath(org, sites.private.id, "/share-links"), {})).body;
      expect(await at(`https://acme.docs.test/private/${key.key}`)).toBe(200);
      await admin.delete(sitePath(org, sites.private.id, `/share-links/${key.id}`));
      await eventually(async () => (await at(`https://acme.docs.test/private/${key.key}`)) === 404 || undefined);
    } finally {
      await admin.patch(sitePath(org, sites.guide.id), { basename: "guide" });
      await second.close();
    }
  });
});
