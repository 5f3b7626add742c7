import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, createSpace, expectError, type Admin } from "../../helpers/fixtures.js";
import { failure, gitbookClient } from "../../helpers/gitbook-client.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 240_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let spaceId: string;
let site: http.Server;
let origin: string;

const PAGE = `<!doctype html><html><head>
<title>Ignored when og:title is there</title>
<meta property="og:title" content="Widgets &amp; gadgets">
<meta property="og:site_name" content="Acme Shop">
<link rel="stylesheet" href="/style.css">
<link rel="shortcut icon" href="/favicon.png">
</head><body><script>document.title = "not this"</script><h1>Widgets</h1></body></html>`;

beforeAll(async () => {
  site = http.createServer((req, res) => {
    if (req.url === "/widgets") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
    if (req.url === "/plain") return res.writeHead(200, { "content-type": "text/html" }).end("<title> Just a  title </title>");
    if (req.url === "/huge") return res.writeHead(200, { "content-type": "text/html" }).end(`<title>Huge</title>${"x".repeat(2_000_000)}`);
    if (req.url === "/data.json") return res.writeHead(200, { "content-type": "application/json" }).end("{}");
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  // The test's page is on this machine: let the outbound policy reach this one address.
  t = await startGateway({ outboundAllowedNetworks: ["127.0.0.1"] });
  ({ admin, other } = await acmeDocs(t));
  spaceId = (await createSpace(admin, admin.organization, { title: "Embeds" })).id;
});

afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => site?.close(resolve));
});

describe("GET /v1/spaces/{spaceId}/embed (GitBook's getEmbedByUrlInSpace)", () => {
  it("answers a link embed with the page's title, site name and icon", async () => {
    const embed = (await gitbookClient(t, admin.token).spaces.getEmbedByUrlInSpace(spaceId, { url: `${origin}/widgets` })).data;
    expect(embed).toEqual({ type: "link", title: "Widgets & gadgets", site: "Acme Shop", icon: `${origin}/favicon.png` });
    const plain = (await admin.get(`/v1/spaces/${spaceId}/embed`, { url: `${origin}/plain` })).body;
    expect(plain).toEqual({ type: "link", title: "Just a title", site: "127.0.0.1" });
  });

  it("falls back to the URL's host when the page cannot be read: missing, not HTML, too large, or refused by the outbound policy", async () => {
    const host = { type: "link", title: "127.0.0.1", site: "127.0.0.1" };
    for (const path of ["/missing", "/data.json", "/huge"]) {
      expect((await admin.get(`/v1/spaces/${spaceId}/embed`, { url: `${origin}${path}` })).body).toEqual(host);
    }
    // A private address the policy does not allow is never contacted.
    expect((await admin.get(`/v1/spaces/${spaceId}/embed`, { url: "http://10.255.255.1/admin" })).body).toEqual({
      type: "link",
      title: "10.255.255.1",
      site: "10.255.255.1",
    });
  });

  it("refuses a URL that is not http(s) with a 400 naming url, and hides spaces the caller cannot read", async () => {
    expectError(await admin.get(`/v1/spaces/${spaceId}/embed`, { url: "javascript:alert(1)" }), 400, "url");
    expectError(await admin.get(`/v1/spaces/${spaceId}/embed`, { url: "not a url" }), 400, "url");
    expectError(await admin.get(`/v1/spaces/${spaceId}/embed`), 400, "url");
    expect(await failure(gitbookClient(t, other.token).spaces.getEmbedByUrlInSpace(spaceId, { url: `${origin}/widgets` }))).toMatchObject({
      code: 404,
    });
  });

  it("is the spaceEmbed field of the graph", async () => {
    const res = await admin.graphql(`query($s: String!, $u: String!) { spaceEmbed(spaceId: $s, url: $u) { type title site icon } }`, {
      s: spaceId,
      u: `${origin}/widgets`,
    });
    expect(res.errors).toBeUndefined();
    expect(res.data.spaceEmbed).toMatchObject({ type: "link", title: "Widgets & gadgets" });
  });
});
