import http from "node:http";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PUBLISHED_CSP } from "../../src/published/layout.js";
import { STYLESHEET_PATH } from "../../src/published/stylesheet.js";
import type { TestGateway } from "../helpers/gateway.js";
import { startGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, type Admin } from "../helpers/fixtures.js";

/**
 * The reader at every `urls.published` (src/published/routes.ts), through HTTP as a browser or a
 * crawler asks: the README's flow (a space with pages, a site showing it, published), then its
 * pages, twins and access rules.
 */

vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let org: string;
let published: string;
const ids: Record<string, string> = {};

async function page(spaceId: string, body: Record<string, unknown>): Promise<string> {
  const res = await admin.post(`/v1/spaces/${spaceId}/content/pages`, body);
  if (res.status !== 201) throw new Error(`page: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

async function createSite(body: Record<string, unknown>, publish = true): Promise<any> {
  const res = await admin.post(`/v1/orgs/${org}/sites`, body);
  if (res.status !== 201) throw new Error(`site: ${res.status} ${JSON.stringify(res.body)}`);
  if (publish) expect((await admin.post(`/v1/orgs/${org}/sites/${res.body.id}/publish`)).status).toBe(200);
  return res.body;
}

/** A GET as an anonymous visitor (no token), following no redirect. */
async function visit(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

beforeAll(async () => {
  t = await startGateway({ sitesDomain: "docs.test" });
  ({ admin, org } = await acmeDocs(t));
  ids.space = (await createSpace(admin, org, { title: "User guide" })).id;
  ids.start = await page(ids.space, {
    title: "Getting started",
    description: "Install and run the tool.",
    markdown: "# Getting started\n\nInstall the **tool**.\n\n## Install\n\nRun `npm install`.\n\n## Run\n\nRun `npm start`.",
  });
  ids.nested = await page(ids.space, { title: "Configuration", parent: ids.start, markdown: "Set `PORT` to choose the port." });
  ids.hostile = await page(ids.space, {
    title: "Hostile",
    markdown: [
      "Before <script>alert('x')</script> after.",
      "",
      '<img src="x" onerror="alert(1)">',
      "",
      '<iframe src="https://evil.example"></iframe>',
      "",
      "[click](javascript:alert(1)) and [home](https://example.com)",
    ].join("\n"),
  });
  const site = await createSite({ title: "Acme docs", spaces: [ids.space] });
  ids.site = site.id;
  published = site.urls.published;
});

afterAll(async () => {
  await t?.close();
});

describe("a published site", () => {
  it("answers its published URL with the first page as HTML, with the CSP", async () => {
    expect(published.startsWith(`${t.url}/sites/`)).toBe(true);
    const res = await visit(published);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(PUBLISHED_CSP);
    expect(res.headers.get("cache-control")).toMatch(/^public/);
    expect(res.text).toContain("<title>Getting started · Acme docs</title>");
    expect(res.text).toContain("<strong>tool</strong>");
    expect(res.text).toMatch(/<h2 id="install">/);
    // The markdown's own title is the page's h1, the description its lead after it.
    expect(res.text).toMatch(/<h1 id="getting-started">Getting started<\/h1>\s*<p class="lead">Install and run the tool.<\/p>/);
    expect(res.text).toContain(`<a class="brand" href="${published}">`);
    // Navigation from the page tree, and the stylesheet it links is served.
    expect(res.text).toContain(`href="${published}/getting-started/configuration"`);
    const css = await visit(`${t.url}${STYLESHEET_PATH}`);
    expect(css.status).toBe(200);
    expect(css.headers.get("cache-control")).toContain("immutable");
    expect(res.text).toContain(STYLESHEET_PATH);
  });

  it("answers a nested page at its path, and 304 for its ETag", async () => {
    const url = `${published}/getting-started/configuration`;
    const res = await visit(url);
    expect(res.status).toBe(200);
    expect(res.text).toContain("<h1>Configuration</h1>");
    expect(res.text).toContain("<code>PORT</code>");
    expect(res.text).toContain(`<link rel="canonical" href="${url}">`);
    const etag = res.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await visit(url, { "if-none-match": etag! });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
  });

  it("answers the 404 page for a path that leads nowhere", async () => {
    const res = await visit(`${published}/no/such/page`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(PUBLISHED_CSP);
    expect(res.text).toContain("Page not found");
    // With the site's navigation, so the reader can go on.
    expect(res.text).toContain(`href="${published}/getting-started"`);
    expect((await visit(`${published}/~nothing`)).status).toBe(404);
    expect((await visit(`${published}/~%E0%A4%A`)).status).toBe(404);
  });

  it("serves each page's markdown at <page>.md", async () => {
    const res = await visit(`${published}/getting-started/configuration.md`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(res.text).toBe("# Configuration\n\nSet `PORT` to choose the port.\n");
    expect((await visit(`${published}/nothing.md`)).status).toBe(404);
  });

  it("lists every page in sitemap.xml, names it in robots.txt, links the .md pages in llms.txt, and holds every page in llms-full.txt", async () => {
    const sitemap = await visit(`${published}/sitemap.xml`);
    expect(sitemap.status).toBe(200);
    expect(sitemap.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    const locs = [...sitemap.text.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    expect(locs).toEqual([`${published}/getting-started`, `${published}/getting-started/configuration`, `${published}/hostile`]);

    const robots = await visit(`${published}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(robots.text).toContain(`Sitemap: ${published}/sitemap.xml`);
    expect(robots.text).not.toContain("Disallow");

    const llms = await visit(`${published}/llms.txt`);
    expect(llms.status).toBe(200);
    expect(llms.text).toContain("# Acme docs");
    expect(llms.text).toContain(`- [Getting started](${published}/getting-started.md): Install and run the tool.`);

    const full = await visit(`${published}/llms-full.txt`);
    expect(full.status).toBe(200);
    expect(full.text).toContain(
      `Source: ${published}/getting-started/configuration\n\n# Configuration\n\nSet \`PORT\` to choose the port.`,
    );
  });

  it("renders hostile markdown inert", async () => {
    const res = await visit(`${published}/hostile`);
    expect(res.status).toBe(200);
    expect(res.text).toContain("Before");
    for (const bad of ["<script", "onerror", "<iframe", "javascript:"]) expect(res.text.toLowerCase()).not.toContain(bad);
    expect(res.text).toContain('href="https://example.com"');
  });

  it("answers a results page for ~search", async () => {
    const res = await visit(`${published}/~search?q=install`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBe(PUBLISHED_CSP);
    expect(res.text).toContain(`href="${published}/getting-started"`);
    expect(res.text).toContain("<mark>");
  });
});

describe("access", () => {
  it("is 404 to anonymous visitors while the site is unpublished", async () => {
    const draft = await createSite({ title: "Draft docs", spaces: [ids.space] }, false);
    for (const path of ["", "/getting-started", "/sitemap.xml", "/getting-started.md"]) {
      const res = await visit(`${draft.urls.published}${path}`);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("Getting started");
    }
    // A member previews it with their token, privately.
    const preview = await visit(`${draft.urls.published}/getting-started`, { authorization: `Bearer ${admin.token}` });
    expect(preview.status).toBe(200);
    expect(preview.text).toContain("Install the");
    expect(preview.headers.get("cache-control")).toMatch(/^private/);
    const head = await fetch(published, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  it("needs a live share key on a share-link site, kept in its links", async () => {
    const site = await createSite({ title: "Partner docs", spaces: [ids.space], visibility: "share-link" });
    const key = (await admin.post(`/v1/orgs/${org}/sites/${site.id}/share-links`, { name: "Partners" })).body.key as string;
    const url = site.urls.published as string;
    expect((await visit(url)).status).toBe(404);
    expect((await visit(`${url}/getting-started?share=nope`)).status).toBe(404);

    const res = await visit(`${url}?share=${key}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain("Getting started");
    expect(res.headers.get("cache-control")).toMatch(/^private/);
    expect(res.text).toContain('<meta name="robots" content="noindex, nofollow">');
    // Its links carry the key as a path segment, which answers too.
    expect(res.text).toContain(`href="${url}/${key}/getting-started/configuration"`);
    expect((await visit(`${url}/${key}/getting-started/configuration`)).status).toBe(200);

    const robots = await visit(`${url}/${key}/robots.txt`);
    expect(robots.text).toContain("Disallow: /");
  });

  it("answers 401 on a visitor-auth site without a visitor token, and keeps a valid one in a cookie", async () => {
    const site = await createSite({ title: "Secure docs", spaces: [ids.space], visibility: "visitor-auth" });
    const secret = (await admin.get(`/v1/orgs/${org}/sites/${site.id}/visitor-auth`)).body.secret as string;
    const url = site.urls.published as string;
    const denied = await visit(`${url}/getting-started`);
    expect(denied.status).toBe(401);
    expect(denied.text).toContain("Sign-in required");
    expect(denied.text).not.toContain("Install the");
    expect((await visit(`${url}?jwt_token=not.a.jwt`)).status).toBe(401);

    const token = await new SignJWT({ plan: "pro" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(secret));
    const res = await visit(`${url}?jwt_token=${token}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain("Install the");
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toContain("HttpOnly");
    const kept = await visit(`${url}/getting-started/configuration`, { cookie: cookie.split(";")[0]! });
    expect(kept.status).toBe(200);
    expect(kept.text).toContain("<code>PORT</code>");
  });
});

/** A GET sent to the gateway with another Host header (a site's subdomain). */
function onHost(host: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on("error", reject);
  });
}

describe("on a SITES_DOMAIN subdomain", () => {
  it("answers every path of the organization's host as its sites' reader", async () => {
    expect((await admin.patch(`/v1/orgs/${org}`, { hostname: "acme" })).status).toBe(200);
    const site = await createSite({ title: "Guide", spaces: [ids.space] });
    expect((await admin.patch(`/v1/orgs/${org}/sites/${site.id}`, { basename: "guide" })).status).toBe(200);
    const url = (await admin.get(`/v1/orgs/${org}/sites/${site.id}`)).body.urls.published;
    expect(url).toBe("https://acme.docs.test/guide");

    const home = await onHost("acme.docs.test", "/guide");
    expect(home.status).toBe(200);
    expect(home.headers["content-security-policy"]).toBe(PUBLISHED_CSP);
    expect(home.text).toContain("<title>Getting started · Guide</title>");
    expect(home.text).toContain('href="https://acme.docs.test/guide/getting-started/configuration"');
    const md = await onHost("acme.docs.test", "/guide/getting-started/configuration.md");
    expect(md.status).toBe(200);
    expect(md.text).toContain("Set `PORT`");
    expect((await onHost("acme.docs.test", STYLESHEET_PATH)).status).toBe(200);
    expect((await onHost("acme.docs.test", "/guide/nothing")).status).toBe(404);
    expect((await onHost("other.docs.test", "/guide")).status).toBe(404);
    // The API's own host is not a site's.
    expect((await visit(`${t.url}/v1/orgs/${org}/sites/${site.id}`, { authorization: `Bearer ${admin.token}` })).status).toBe(200);
  });
});
