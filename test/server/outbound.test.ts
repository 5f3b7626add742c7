import http from "node:http";
import os from "node:os";
import dns from "node:dns/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { eventually } from "../helpers/eventually.js";
import { outboundFetch, parseAllowedNetworks } from "../../src/core/support/outbound.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

// A gateway with the default outbound policy: public unicast addresses only.
let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let server: http.Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  t = await startGateway({ outboundAllowedNetworks: [] });
  admin = await t.bootstrap("ada@acme.test", "Acme");
  server = http.createServer((req, res) => {
    hits++;
    if (req.url === "/redirect") {
      res.writeHead(302, { location: `http://127.0.0.2:${port}/secret` });
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "text/markdown" });
    res.end("# Secret\n\ninternal");
  });
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  port = (server.address() as any).port;
}, 120_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await t?.close();
});

describe("outbound requests to private addresses", () => {
  it("refuses a private literal address or localhost as a tunnel, import or OpenAPI source URL (400 naming the field)", async () => {
    await admin.post("/v1/integrations/probe", { title: "Probe", organization: admin.organization });
    for (const tunnelUrl of [
      `http://127.0.0.1:${port}/hook`,
      "http://localhost:8080/",
      "http://[::1]:8080/",
      "http://169.254.169.254/latest/meta-data",
      "http://10.1.2.3/",
    ]) {
      const res = await admin.put("/v1/integrations/probe/dev", { tunnelUrl });
      expect(res.status, tunnelUrl).toBe(400);
      expect(res.body.error.message).toContain("tunnelUrl");
      expect(res.body.error.message).toContain("OUTBOUND_ALLOWED_NETWORKS");
    }
    const space = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Docs" })).body.id;
    const imported = await admin.post(`/v1/spaces/${space}/content/import`, { url: `http://127.0.0.1:${port}/doc.md`, source: "markdown" });
    expect(imported.status).toBe(400);
    expect(imported.body.error.message).toContain("url:");
    const spec = await admin.post(`/v1/orgs/${admin.organization}/openapi`, {
      slug: "internal",
      source: { url: `http://127.0.0.1:${port}/spec.yaml` },
    });
    expect(spec.status).toBe(400);
    expect(spec.body.error.message).toContain("source.url");
    expect(hits).toBe(0);
  });

  it("refuses, when connecting, a host name that resolves to a private address and a redirect to one", async () => {
    // This machine's own name resolves to a loopback or private address (/etc/hosts).
    const own = os.hostname();
    const { address } = await dns.lookup(own);
    expect(address).toMatch(/^(127\.|10\.|172\.(1[6-9]|2\d|3[01])\.|192\.168\.|::1$|f[cd])/);
    const space = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "More docs" })).body.id;
    const res = await admin.post(`/v1/spaces/${space}/content/import`, { url: `http://${own}:${port}/doc.md`, source: "markdown" });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("private or reserved address");
    expect(hits).toBe(0);

    // An integration's tunnel named by host name: each delivery attempt is refused and traced.
    expect((await admin.put("/v1/integrations/probe/dev", { tunnelUrl: `http://${own}:${port}/hook` })).status).toBe(204);
    await admin.post("/v1/integrations/probe/installations", { organization: admin.organization });
    const event = await eventually(async () =>
      (await admin.get("/v1/integrations/probe/events")).body.items.find((e: any) => e.payload.type === "installation_setup"),
    );
    const trace = await eventually(async () => {
      const logs = (await admin.get(`/v1/integrations/probe/events/${event.id}`)).body.trace.logs;
      return logs.some((l: any) => l.message.includes("OUTBOUND_REFUSED")) ? logs : null;
    });
    expect(trace.map((l: any) => l.message).join("\n")).toContain("private or reserved address");
    expect(hits).toBe(0);

    // Through the public endpoint: 502, nothing reaches the private address.
    const pub = await fetch(`${t.url}/integrations/probe/public/x`);
    expect(pub.status).toBe(502);
    expect(hits).toBe(0);
  });

  it("follows the policy on redirects, and allows what OUTBOUND_ALLOWED_NETWORKS lists", async () => {
    const allowLoopback = { outboundAllowedNetworks: parseAllowedNetworks("127.0.0.0/8") };
    const ok = await outboundFetch(allowLoopback, `http://127.0.0.1:${port}/doc.md`);
    expect(await ok.text()).toContain("# Secret");
    expect(hits).toBe(1);
    await expect(outboundFetch({ outboundAllowedNetworks: [] }, `http://127.0.0.1:${port}/doc.md`)).rejects.toThrow();
    expect(hits).toBe(1);
    // A redirect is a new connection: with only 127.0.0.1 allowed, the redirect to 127.0.0.2 is refused.
    await expect(outboundFetch({ outboundAllowedNetworks: ["127.0.0.1"] }, `http://127.0.0.1:${port}/redirect`)).rejects.toThrow();
    expect(hits).toBe(2);
    const followed = await outboundFetch({ outboundAllowedNetworks: ["127.0.0.0/8"] }, `http://127.0.0.1:${port}/redirect`);
    expect(followed.status).toBe(200);
    expect(hits).toBe(4);
    expect(() => parseAllowedNetworks("10.0.0.0/8, nonsense")).toThrow(/nonsense/);
    expect(parseAllowedNetworks("10.0.0.0/8, fd00::/8 192.168.1.5")).toEqual(["10.0.0.0/8", "fd00::/8", "192.168.1.5"]);
  });
});
