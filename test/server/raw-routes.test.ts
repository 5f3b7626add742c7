import http from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { log } from "../../src/core/logger.js";
import { createRawRouter, rawRoute } from "../../src/rest/raw-routes.js";

// A shared machine can be slow: generous limits, so that only real failures fail.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let stranger: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let spaceId: string;
let fileId: string;

beforeAll(async () => {
  // A short answer timeout, for the public-endpoint streaming test below.
  t = await startGateway({ integrationDeliveryTimeoutMs: 800 });
  admin = await t.bootstrap("ada@acme.test", "Acme");
  stranger = await t.bootstrap("sam@other.test", "Other");
  spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Handbook" })).body.id;
  fileId = (await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "a.png", contentType: "image/png", data: PNG })).body.id;
  expect(
    (await admin.post("/v1/integrations/shown", { title: "Shown", organization: admin.organization, visibility: "public", icon: PNG }))
      .status,
  ).toBe(201);
  expect(
    (await admin.post("/v1/integrations/hidden", { title: "Hidden", organization: admin.organization, icon: PNG, previewImages: [PNG] }))
      .status,
  ).toBe(201);
}, 180_000);
afterAll(() => t?.close());

const get = (path: string, init: RequestInit = {}) => fetch(`${t.url}${path}`, init);
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

async function expectError(res: Response, status: number, message?: RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = await res.json();
  expect(body).toEqual({ error: { code: status, message: expect.any(String) } });
  if (message) expect(body.error.message).toMatch(message);
}

describe("authentication of raw routes", () => {
  const download = () => `/v1/spaces/${spaceId}/content/files/${fileId}/download`;

  it('answers 401 with www-authenticate: Bearer on an auth "required" route without a valid token', async () => {
    for (const init of [{}, bearer("dapi_unknown"), bearer("not-a-token"), { headers: { authorization: "Basic YTpi" } }]) {
      const res = await get(download(), init);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      await expectError(res, 401, /Authorization: Bearer/);
    }
    const ok = await get(download(), bearer(admin.token));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("image/png");
    // The same token and rules as /v1: a revoked token is refused on both.
    const revocable = await t.member(admin.organization, "rev@acme.test", "read");
    expect((await get(download(), bearer(revocable.token))).status).toBe(200);
    await t.gateway.db.prisma.apiToken.updateMany({ where: { userId: revocable.user }, data: { revokedAt: new Date() } });
    expect((await get(download(), bearer(revocable.token))).status).toBe(401);
    expect((await get(`/v1/spaces/${spaceId}`, bearer(revocable.token))).status).toBe(401);
  });

  it('takes a caller without a token as anonymous on an auth "optional" route, and refuses a bad token', async () => {
    const anonymous = await get("/integrations/shown/assets/icon");
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get("content-type")).toBe("image/png");
    expect(anonymous.headers.get("cache-control")).toBe("public, max-age=300");
    expect((await get("/integrations/shown/assets/icon", bearer(stranger.token))).status).toBe(200);

    const bad = await get("/integrations/shown/assets/icon", bearer("dapi_unknown"));
    expect(bad.headers.get("www-authenticate")).toBe("Bearer");
    await expectError(bad, 401);

    // A private integration: anonymous callers and strangers are not members of its owner.
    await expectError(await get("/integrations/hidden/assets/icon"), 404);
    await expectError(await get("/integrations/hidden/assets/preview-0", bearer(stranger.token)), 404);
    const member = await get("/integrations/hidden/assets/preview-0", bearer(admin.token));
    expect(member.status).toBe(200);
    expect(member.headers.get("cache-control")).toBe("private, max-age=300");
    await expectError(await get("/integrations/hidden/assets/preview-1", bearer(admin.token)), 404);
    await expectError(await get("/integrations/hidden/assets/preview-x", bearer(admin.token)), 404);
  });

  it('does not look at the token on an auth "none" route', async () => {
    for (const init of [{}, bearer("dapi_unknown")]) {
      expect((await get("/dashboard", init)).status).toBe(200);
      await expectError(await get("/sso/saml/saml_missing/metadata", init), 404, /saml_missing/);
    }
  });
});

describe("methods", () => {
  it("answers 405 with allow for a method a known path does not take", async () => {
    const cases: [string, string, string][] = [
      ["POST", "/dashboard", "GET, HEAD, OPTIONS"],
      ["DELETE", "/dashboard/app.js", "GET, HEAD, OPTIONS"],
      ["GET", "/sso/saml/saml_missing/acs", "POST, OPTIONS"],
      ["PUT", "/sso/saml/saml_missing/start", "GET, HEAD, OPTIONS"],
      ["POST", `/v1/spaces/${spaceId}/content/files/${fileId}/download`, "GET, HEAD, OPTIONS"],
      ["PATCH", "/integrations/shown/assets/icon", "GET, HEAD, OPTIONS"],
      ["POST", "/openapi.json", "GET, HEAD, OPTIONS"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await get(path, { method, ...bearer(admin.token) });
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
      await expectError(res, 405, new RegExp(`${method} is not allowed`));
    }
  });

  it("serves HEAD wherever GET is served, without a body", async () => {
    const res = await get("/integrations/shown/assets/icon", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(await res.text()).toBe("");
    expect((await get("/docs", { method: "HEAD" })).status).toBe(200);
  });

  it("hands every method, with any token, to the integrations' public endpoints (they decide: 503 without development mode, 404 for an unknown installation)", async () => {
    const paths: [string, number][] = [
      ["/integrations/shown/public", 503],
      ["/integrations/shown/public/", 503],
      ["/integrations/shown/public/hooks/a?x=1", 503],
      ["/integrations/shown/installations/inst_1/public", 404],
      ["/integrations/shown/installations/inst_1/spaces/space_1/public/a/public/b", 404],
      ["/integrations/shown/other/public", 404],
    ];
    for (const [path, status] of paths) {
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
        const body = method === "GET" ? undefined : JSON.stringify({ hello: "world" });
        const res = await get(path, { method, body, headers: { "content-type": "application/json", authorization: "Bearer not-ours" } });
        expect(res.status, `${method} ${path}`).toBe(status);
        expect((await res.json()).error.code).toBe(status);
      }
    }
  });

  it("keeps the admin channel hidden: 404 to any request without the process's secret", async () => {
    await expectError(await get("/_admin/command"), 404);
    await expectError(await get("/_admin/command", { method: "POST", body: "{}", headers: { "x-admin-secret": "guess" } }), 404);
  });
});

describe("path parameters", () => {
  it("answers 400 for a segment that is not valid percent-encoding, on every kind of route", async () => {
    await expectError(await get("/sso/saml/%E0%A4%A/metadata"), 400, /%E0%A4%A/);
    await expectError(await get("/integrations/%zz/assets/icon"), 400, /%zz/);
    await expectError(await get(`/v1/spaces/${spaceId}/content/files/%ff%/download`, bearer(admin.token)), 400, /%ff%/);
    // Authentication comes first, as on /v1.
    await expectError(await get(`/v1/spaces/${spaceId}/content/files/%ff%/download`), 401);
  });

  it("decodes well-formed segments once", async () => {
    await expectError(
      await get(
        `/v1/spaces/${encodeURIComponent(spaceId)}/content/files/${encodeURIComponent("file nope/x")}/download`,
        bearer(admin.token),
      ),
      404,
      /"file nope\/x"/,
    );
    await expectError(await get("/sso/saml/saml%20gone/start", { redirect: "manual" }), 404, /"saml gone"/);
  });

  it("matches with one trailing slash, and only whole segments", async () => {
    expect((await get("/dashboard/")).status).toBe(200);
    expect((await get("/docs/")).status).toBe(200);
    expect((await get(`/v1/spaces/${spaceId}/content/files/${fileId}/download/`, bearer(admin.token))).status).toBe(200);
    expect((await get("/dashboardx")).status).toBe(404);
  });

  it("gives {name*} the rest of the path as sent, lazily", async () => {
    const seen: unknown[] = [];
    const route = createRawRouter(t.gateway.services, [
      rawRoute({
        methods: "*",
        path: "/t/{name}{scope*}/public{path*}",
        auth: "none",
        handler: (_services, params) => {
          seen.push(params);
          return new Response("ok");
        },
      }),
    ]);
    const call = (p: string) => route(new Request(`http://gateway.test${p}`, { method: "POST" }));
    expect((await call("/t/a%20b/public"))?.status).toBe(200);
    expect((await call("/t/a/installations/i%2F1/public/x/public/y%20z?q=1"))?.status).toBe(200);
    expect((await call("/t/a/public/"))?.status).toBe(200);
    expect(await call("/t/a/publicity")).toBeUndefined();
    expect(await call("/t/a")).toBeUndefined();
    expect(seen).toEqual([
      { name: "a b", scope: "", path: "" },
      { name: "a", scope: "/installations/i%2F1", path: "/x/public/y%20z" },
      { name: "a", scope: "", path: "/" },
    ]);
  });
});

describe("matching by first segment", () => {
  it("answers as a scan of the table in order would: routes whose first segment is a parameter too, 405 with the methods of every match", async () => {
    const route = createRawRouter(t.gateway.services, [
      rawRoute({ methods: ["GET"], path: "/a/{x}", auth: "none", handler: () => new Response("a-get") }),
      rawRoute({ methods: ["POST"], path: "/{tenant}/b", auth: "none", handler: () => new Response("tenant-b") }),
      rawRoute({ methods: ["PUT"], path: "/a/b", auth: "none", handler: () => new Response("a-b-put") }),
      rawRoute({ methods: ["GET"], path: "/", auth: "none", handler: () => new Response("home") }),
      rawRoute({ methods: ["GET"], path: "/pre-{id}", auth: "none", handler: () => new Response("pre") }),
    ]);
    const call = async (method: string, p: string) => {
      const answer = await route(new Request(`http://gateway.test${p}`, { method }));
      return answer && { status: answer.status, text: answer.status < 400 ? await answer.text() : answer.headers.get("allow") };
    };
    expect(await call("GET", "/a/b")).toEqual({ status: 200, text: "a-get" });
    expect(await call("POST", "/a/b")).toEqual({ status: 200, text: "tenant-b" });
    expect(await call("PUT", "/a/b/")).toEqual({ status: 200, text: "a-b-put" });
    expect(await call("DELETE", "/a/b")).toEqual({ status: 405, text: "GET, HEAD, POST, PUT, OPTIONS" });
    expect(await call("POST", "/zzz/b")).toEqual({ status: 200, text: "tenant-b" });
    expect(await call("GET", "/")).toEqual({ status: 200, text: "home" });
    expect(await call("GET", "/pre-7")).toEqual({ status: 200, text: "pre" });
    expect(await call("GET", "/zzz/c")).toBeUndefined();
  });
});

describe("errors and unknown paths", () => {
  it("reports an unexpected error and answers 500 with the masked message", async () => {
    const prisma = t.gateway.db.prisma as any;
    const spy = vi.spyOn(prisma.samlProvider, "findUnique").mockRejectedValue(new Error("connection to 10.0.0.7 lost at SELECT"));
    const quiet = vi.spyOn(log, "error").mockImplementation(() => undefined);
    try {
      const res = await get("/sso/saml/saml_any/metadata");
      await expectError(res.clone(), 500);
      expect(await res.json()).toEqual({ error: { code: 500, message: "Unexpected error." } });
      expect(quiet).toHaveBeenCalledWith(
        expect.objectContaining({ err: expect.objectContaining({ message: expect.stringContaining("10.0.0.7") }) }),
        "unexpected error",
      );
    } finally {
      spy.mockRestore();
      quiet.mockRestore();
    }
  });

  it("lets a path no raw route matches fall through to /v1, GraphQL and the 404", async () => {
    for (const path of [
      "/dashboard/nope.js",
      "/sso/saml/p/elsewhere",
      "/integrations/shown/assets",
      "/integrations/shown/assets/banner",
      "/docs/assets/x/y",
      "/nothing",
    ]) {
      expect((await get(path)).status, path).toBe(404);
    }
    await expectError(await get("/v1/nothing-here", bearer(admin.token)), 404);
    expect((await get(`/v1/spaces/${spaceId}`, bearer(admin.token))).status).toBe(200);
    expect((await admin.graphql("{ organizations { count } }")).data.organizations.count).toBe(1);
  });
});

describe("integration public endpoints: answer timeout", () => {
  it("relays a body that streams for longer than the timeout once the answer started; 504 when it does not start in time", async () => {
    const server = http.createServer((req, res) => {
      if (req.url === "/hook/slow-start") {
        setTimeout(() => res.end("late"), 2000);
        return;
      }
      res.writeHead(200, { "content-type": "text/plain" });
      let n = 0;
      const tick = setInterval(() => {
        res.write(`chunk ${n}\n`);
        if (++n === 4) {
          clearInterval(tick);
          res.end();
        }
      }, 500);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const tunnelUrl = `http://127.0.0.1:${(server.address() as any).port}/hook`;
      expect((await admin.put("/v1/integrations/shown/dev", { tunnelUrl })).status).toBe(204);
      const started = Date.now();
      const streamed = await get("/integrations/shown/public/export");
      expect(streamed.status).toBe(200);
      expect(await streamed.text()).toBe("chunk 0\nchunk 1\nchunk 2\nchunk 3\n");
      expect(Date.now() - started).toBeGreaterThan(1500);
      await expectError(await get("/integrations/shown/public/slow-start"), 504, /did not answer within 800 ms/);
      const events = (await admin.get("/v1/integrations/shown/events", { type: "script_fetch" })).body.items;
      expect(events.map((e: any) => [e.payload.path, e.status])).toEqual([
        ["/slow-start", "failed"],
        ["/export", "success"],
      ]);
    } finally {
      await admin.delete("/v1/integrations/shown/dev");
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
