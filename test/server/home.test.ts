import WebSocket from "ws";
import { createClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { wsClient } from "../helpers/graphql-ws.js";

// A shared machine can be slow: generous limits, so that only real failures fail.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });

const MISSING = /^Authentication required: send an API token as 'Authorization: Bearer <token>'\.$/;
const INVALID = /^Invalid or revoked token: /;

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let revoked: Awaited<ReturnType<TestGateway["member"]>>;

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme");
  revoked = await t.member(admin.organization, "rev@acme.test", "read");
  await t.gateway.db.prisma.apiToken.updateMany({ where: { userId: revoked.user }, data: { revokedAt: new Date() } });
}, 180_000);
afterAll(() => t?.close());

async function errorOf(res: Response, status: number): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = await res.json();
  expect(body).toEqual({ error: { code: status, message: expect.any(String) } });
  return body.error.message;
}

describe("GET /", () => {
  it("serves a landing page linking the reference, GraphQL, the dashboard, the OpenAPI document and the health endpoints", async () => {
    const res = await fetch(`${t.url}/`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    for (const path of ["/docs", "/graphql", "/dashboard", "/openapi.json", "/healthz", "/readyz", "/favicon.ico"]) {
      expect(html).toContain(`href="${path}"`);
    }
    expect(html).toContain("npm run admin -- bootstrap");
    // Every page it links to the server's own reference exists.
    for (const path of ["/docs", "/dashboard", "/openapi.json", "/healthz", "/readyz", "/favicon.ico"])
      expect((await fetch(`${t.url}${path}`)).status, path).toBe(200);
  });

  it("answers the same links as JSON to a client asking for JSON", async () => {
    const res = await fetch(`${t.url}/`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.links).toMatchObject({
      docs: `${t.url}/docs`,
      graphql: `${t.url}/graphql`,
      healthz: `${t.url}/healthz`,
      readyz: `${t.url}/readyz`,
    });
  });

  it("serves /favicon.ico as an icon", async () => {
    const res = await fetch(`${t.url}/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/x-icon");
    const bytes = Buffer.from(await res.arrayBuffer());
    // ICONDIR: reserved 0, type 1 (icon), one image whose data is a PNG.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4)]).toEqual([0, 1, 1]);
    const offset = bytes.readUInt32LE(18);
    expect(bytes.subarray(offset, offset + 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  });
});

describe("unknown paths", () => {
  it("answer a JSON 404 in the documented error shape, whatever the method", async () => {
    for (const [method, path] of [
      ["GET", "/nope"],
      ["GET", "/docs/nothing/here"],
      ["POST", "/some/where"],
      ["DELETE", "/index.html"],
      ["GET", "/dashboard/nope.js"],
    ] as const) {
      const message = await errorOf(await fetch(`${t.url}${path}`, { method }), 404);
      expect(message).toContain(`${method} ${path}`);
    }
  });

  it("leave /v1 and /graphql their own answers", async () => {
    expect(await errorOf(await fetch(`${t.url}/v1/orgs`), 401)).toMatch(MISSING);
    const gql = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${admin.token}` },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    expect(await gql.json()).toEqual({ data: { __typename: "Query" }, extensions: { cost: { requested: 0, limit: 500_000 } } });
  });
});

describe("a token that was sent but is not live", () => {
  const bad = () => [`Bearer ${revoked.token}`, "Bearer dapi_unknown", "Bearer not-a-token", "Basic YTpi", "Bearer"];

  it("is refused on /v1 as an invalid or revoked token, and a missing one as missing", async () => {
    for (const authorization of bad()) {
      const res = await fetch(`${t.url}/v1/orgs`, { headers: { authorization } });
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(await errorOf(res, 401)).toMatch(INVALID);
    }
    expect(await errorOf(await fetch(`${t.url}/v1/orgs`), 401)).toMatch(MISSING);
  });

  it("is refused the same way on a raw route", async () => {
    const space = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Handbook" })).body;
    const file = (
      await admin.post(`/v1/spaces/${space.id}/content/files`, {
        name: "a.txt",
        contentType: "text/plain",
        data: Buffer.from("hi").toString("base64"),
      })
    ).body;
    const download = `${t.url}/v1/spaces/${space.id}/content/files/${file.id}/download`;
    for (const authorization of bad()) expect(await errorOf(await fetch(download, { headers: { authorization } }), 401)).toMatch(INVALID);
    expect(await errorOf(await fetch(download), 401)).toMatch(MISSING);
    expect((await fetch(download, { headers: { authorization: `Bearer ${admin.token}` } })).status).toBe(200);
  });

  it("is refused the same way over GraphQL over HTTP", async () => {
    const ask = async (authorization?: string) => {
      const res = await fetch(`${t.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ query: "{ __typename }" }),
      });
      expect(res.status).toBe(401);
      const body = await res.json();
      expect(body.errors[0].extensions.code).toBe(401);
      return body.errors[0].message as string;
    };
    for (const authorization of bad()) expect(await ask(authorization)).toMatch(INVALID);
    expect(await ask()).toMatch(MISSING);
  });

  it("closes a graphql-ws connection with 4403 and the same message", async () => {
    const closeOf = async (connectionParams: Record<string, unknown>) => {
      const client = createClient({
        url: t.url.replace(/^http/, "ws") + "/graphql",
        webSocketImpl: WebSocket,
        connectionParams,
        retryAttempts: 0,
        lazy: true,
      });
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        client.on("closed", (e: any) => resolve({ code: e.code, reason: e.reason })),
      );
      const refused = new Promise((resolve) =>
        client.subscribe(
          { query: "subscription { __typename }" },
          { next: () => undefined, error: resolve, complete: () => resolve(null) },
        ),
      );
      const answer = await closed;
      await refused;
      await client.dispose();
      return answer;
    };
    for (const authorization of bad()) {
      const closed = await closeOf({ authorization });
      expect(closed.code).toBe(4403);
      expect(closed.reason).toMatch(INVALID);
    }
    const missing = await closeOf({});
    expect(missing.code).toBe(4403);
    expect(missing.reason).toMatch(MISSING);
    // A live token still connects.
    const live = wsClient(t.url, admin.token);
    const connected = new Promise<void>((resolve) => live.on("connected", () => resolve()));
    live.subscribe({ query: "subscription { __typename }" }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    await connected;
    await live.dispose();
  });
});
