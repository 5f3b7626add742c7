import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, type Admin } from "../helpers/fixtures.js";
import net from "node:net";
import fc from "fast-check";
import { clientAddressOf } from "../../src/server/http.js";
import { loadConfig } from "../../src/config.js";

const LIMIT = 5;
const root = path.resolve(import.meta.dirname, "../..");

let t: TestGateway;
let admin: Admin;
let other: Admin;

beforeAll(async () => {
  // Counters are kept per deployment (database) and limit: this file's traffic and the others' never mix.
  t = await startGateway({ rateLimitPerMinute: LIMIT });
  ({ admin, other } = await acmeDocs(t));
});
afterAll(async () => {
  await t?.close();
});

const headersOf = (res: { headers: Headers }) => ({
  limit: Number(res.headers.get("x-ratelimit-limit")),
  remaining: Number(res.headers.get("x-ratelimit-remaining")),
  reset: Number(res.headers.get("x-ratelimit-reset")),
});

describe("rate limits (X-RateLimit-*, 429)", () => {
  it("counts every /v1 and /graphql request of a token, then refuses with 429 and Retry-After", async () => {
    const before = Math.floor(Date.now() / 1000);
    const seen: number[] = [];
    for (let i = 0; i < LIMIT - 1; i++) {
      const res = await admin.get("/v1/orgs");
      expect(res.status).toBe(200);
      const h = headersOf(res);
      expect(h.limit).toBe(LIMIT);
      expect(h.reset).toBeGreaterThanOrEqual(before);
      expect(h.reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
      seen.push(h.remaining);
    }
    expect(seen).toEqual([4, 3, 2, 1]);
    // GraphQL draws on the same allowance.
    const gql = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ organizations { count } }" }),
    });
    expect(gql.status).toBe(200);
    expect(headersOf(gql).remaining).toBe(0);

    const refused = await admin.get("/v1/orgs"); // checked against the OpenAPI document's 429
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({ error: { code: 429, message: `API rate limit exceeded. Please try again in ${wait} seconds` } });
    expect(headersOf(refused)).toMatchObject({ limit: LIMIT, remaining: 0 });

    const gqlRefused = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ organizations { count } }" }),
    });
    expect(gqlRefused.status).toBe(429);
    const body = await gqlRefused.json();
    expect(body.error.code).toBe(429);
    expect(body.errors[0].message).toMatch(/^API rate limit exceeded\. Please try again in \d+ seconds$/);
  });

  it("keeps one allowance per token, and one per client address for requests without a token", async () => {
    const res = await other.get("/v1/orgs");
    expect(res.status).toBe(200);
    expect(headersOf(res).remaining).toBe(LIMIT - 1);
    const anonymous = await fetch(`${t.url}/v1/orgs`);
    expect(anonymous.status).toBe(401);
    expect(headersOf(anonymous)).toMatchObject({ limit: LIMIT, remaining: LIMIT - 1 });
  });

  it("counts /graphql/ as /graphql, and runs GraphQL nowhere else (yoga took any URL ending in /graphql)", async () => {
    const post = (target: string) =>
      fetch(t.url + target, {
        method: "POST",
        headers: { authorization: `Bearer ${other.token}`, "content-type": "application/json" },
        body: JSON.stringify({ query: "{ organizations { count } }" }),
      });
    const slash = await post("/graphql/");
    expect(slash.status).toBe(200);
    expect(headersOf(slash).remaining).toBe(LIMIT - 2);
    for (const target of ["/x/graphql", "/nothing?a=/graphql", "/v2/graphql"]) {
      const res = await post(target);
      expect(res.status, target).toBe(404);
      expect(await res.json(), target).toEqual({
        error: {
          code: 404,
          message: `No route POST ${target.split("?")[0]}: see / for what this server serves (the REST API is under /v1).`,
        },
      });
    }
    // Nothing of it was drawn from the allowance.
    expect(headersOf(await other.get("/v1/orgs")).remaining).toBe(LIMIT - 3);
  });

  it("counts tokens that fail against their client address: past the limit, its tokens are refused unread (REST, GraphQL, graphql-ws); live ones go on", async () => {
    // A gateway of its own: this file's other tests keep their address allowance.
    const g = await startGateway({ rateLimitPerMinute: LIMIT });
    try {
      const live = await g.bootstrap("live@acme.test", "Live");
      expect((await live.get("/v1/orgs")).status).toBe(200); // known to the gateway from now on
      // Made-up tokens of the form of real ones, a new one each time: each has an allowance of its own.
      let n = 0;
      const madeUp = () => ({ authorization: `Bearer dapi_${"x".repeat(36)}${n++}`, "content-type": "application/json" });
      for (let i = 0; i < LIMIT; i++) expect((await fetch(`${g.url}/v1/orgs`, { headers: madeUp() })).status).toBe(401);

      const before = g.gateway.db.stats.statements;
      const refused = await fetch(`${g.url}/v1/orgs`, { headers: madeUp() });
      expect(refused.status).toBe(429);
      const wait = Number(refused.headers.get("retry-after"));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
      expect(await refused.json()).toEqual({
        error: { code: 429, message: `API rate limit exceeded. Please try again in ${wait} seconds` },
      });
      const graph = await fetch(`${g.url}/graphql`, {
        method: "POST",
        headers: madeUp(),
        body: JSON.stringify({ query: "{ organizations { count } }" }),
      });
      expect(graph.status).toBe(429);
      expect((await graph.json()).errors[0].message).toMatch(/^API rate limit exceeded\. Please try again in \d+ seconds$/);
      const socket = new WebSocket(`${g.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      await new Promise((resolve) => socket.once("open", resolve));
      socket.send(JSON.stringify({ type: "connection_init", payload: madeUp() }));
      expect(await closed).toEqual({
        code: 4429,
        reason: expect.stringMatching(/^API rate limit exceeded\. Please try again in \d+ seconds$/),
      });
      // None of them made the database look a token up.
      expect(g.gateway.db.stats.statements).toBe(before);

      // A live token goes on, on every face, with its own allowance; so do requests without a token.
      const again = await live.get("/v1/orgs");
      expect(again.status).toBe(200);
      expect(headersOf(again).remaining).toBe(LIMIT - 2);
      expect((await live.graphql("{ organizations { count } }")).data).toEqual({ organizations: { count: 1 } });
      expect((await fetch(`${g.url}/v1/orgs`)).status).toBe(401);
      // Tokens of any other form are refused as well (never looked up, still not to be sent without limit).
      expect((await fetch(`${g.url}/v1/orgs`, { headers: { authorization: "Bearer not-a-token" } })).status).toBe(429);
    } finally {
      await g.close();
    }
  });

  it("counts graphql-ws connections refused for their token against the address too", async () => {
    const g = await startGateway({ rateLimitPerMinute: LIMIT });
    try {
      const closeOf = async (token: string) => {
        const socket = new WebSocket(`${g.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
        const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
        await new Promise((resolve) => socket.once("open", resolve));
        socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${token}` } }));
        return closed;
      };
      for (let i = 0; i < LIMIT; i++) expect(await closeOf(`dapi_${"y".repeat(36)}${i}`)).toBe(4403);
      expect(await closeOf(`dapi_${"y".repeat(36)}last`)).toBe(4429);
      expect((await fetch(`${g.url}/v1/orgs`, { headers: { authorization: `Bearer dapi_${"y".repeat(40)}` } })).status).toBe(429);
    } finally {
      await g.close();
    }
  });

  it("counts the routes beside the API that read the database for any caller (integration images, SAML sign-in), not an integration's public endpoints", async () => {
    const g = await startGateway({ rateLimitPerMinute: LIMIT });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT; i++) {
        const res = await fetch(`${g.url}/integrations/nothing-${i}/assets/icon`);
        statuses.push(res.status);
        expect(headersOf(res)).toMatchObject({ limit: LIMIT, remaining: LIMIT - 1 - i });
      }
      expect(statuses).toEqual(Array(LIMIT).fill(404));
      // The client address's allowance is spent, on these routes as on /v1.
      for (const target of [
        "/integrations/nothing/assets/preview-0",
        "/sso/saml/nothing/metadata",
        "/sso/saml/nothing/start",
        "/v1/orgs",
      ]) {
        const res = await fetch(g.url + target);
        expect(res.status, target).toBe(429);
        expect((await res.json()).error.code, target).toBe(429);
      }
      expect(
        (
          await fetch(`${g.url}/sso/saml/nothing/acs`, {
            method: "POST",
            body: "SAMLResponse=x",
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).status,
      ).toBe(429);
      // Third parties call an integration's public endpoints (webhooks): they are the integration's to limit.
      expect((await fetch(`${g.url}/integrations/nothing/public/hook`, { method: "POST" })).status).not.toBe(429);
      expect((await fetch(`${g.url}/`)).status).toBe(200);
    } finally {
      await g.close();
    }
  });

  it("behind TRUST_PROXY proxies, takes the client address the outermost one wrote: made-up X-Forwarded-For entries share its allowance", async () => {
    const g = await startGateway({ rateLimitPerMinute: LIMIT, trustProxy: 1 });
    try {
      // What a proxy that appends (nginx's $proxy_add_x_forwarded_for) passes on from a client that sent its own header.
      const from = (client: string, madeUp: string) =>
        fetch(`${g.url}/v1/orgs`, { headers: { "x-forwarded-for": `${madeUp}, ${client}` } });
      for (let i = 0; i < LIMIT; i++) expect((await from("203.0.113.9", `10.0.0.${i}`)).status).toBe(401);
      expect((await from("203.0.113.9", "10.9.9.9")).status).toBe(429);
      // Another client behind the same proxy keeps its own allowance.
      const other = await from("203.0.113.10", "203.0.113.9");
      expect(other.status).toBe(401);
      expect(headersOf(other).remaining).toBe(LIMIT - 1);
    } finally {
      await g.close();
    }
  });

  it("reads X-Forwarded-For from the right, as many entries as there are trusted proxies", () => {
    expect(clientAddressOf("127.0.0.1", "1.1.1.1, 2.2.2.2", 0)).toBe("127.0.0.1");
    expect(clientAddressOf("127.0.0.1", "1.1.1.1, 2.2.2.2", 1)).toBe("2.2.2.2");
    expect(clientAddressOf("127.0.0.1", "1.1.1.1, 2.2.2.2, 3.3.3.3", 2)).toBe("2.2.2.2");
    // Fewer entries than proxies: the leftmost one there is.
    expect(clientAddressOf("127.0.0.1", "2.2.2.2", 3)).toBe("2.2.2.2");
    // Ports and brackets are not part of the address; a header joined from several is read as one list.
    expect(clientAddressOf("127.0.0.1", "1.1.1.1, 2.2.2.2:5678", 1)).toBe("2.2.2.2");
    expect(clientAddressOf("127.0.0.1", "[2001:db8::1]:443", 1)).toBe("2001:db8::1");
    expect(clientAddressOf("127.0.0.1", "2001:db8::2", 1)).toBe("2001:db8::2");
    // Anything else the connection's address.
    for (const header of ["", " , ", "unknown", "__proto__", "1.1.1.1, not-an-address", "a".repeat(5000)])
      expect(clientAddressOf("127.0.0.1", header, 1), header.slice(0, 20)).toBe("127.0.0.1");
    expect(clientAddressOf(undefined, undefined, 1)).toBe("unknown");
    // Whatever the header holds (made-up entries, prototype names, lone surrogates, commas), an address that is one, or the connection's.
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), { maxLength: 6 }).map((a) => a.join(",")),
        ),
        fc.nat(4),
        (header, hops) => {
          const address = clientAddressOf("127.0.0.1", header, hops);
          expect(address === "127.0.0.1" || net.isIP(address) !== 0).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("reads TRUST_PROXY as a number of hops, and names it when it is not one", () => {
    const hops = (value: string) => loadConfig({ TRUST_PROXY: value }).trustProxy;
    expect([hops(""), hops("0"), hops("off"), hops("false"), hops("1"), hops("true"), hops("yes"), hops("2")]).toEqual([
      0, 0, 0, 0, 1, 1, 1, 2,
    ]);
    for (const bad of ["-1", "1.5", "lots", "__proto__"]) expect(() => hops(bad), bad).toThrow(/TRUST_PROXY/);
  });

  it("leaves the other paths alone", async () => {
    for (const p of ["/healthz", "/openapi.json", "/"]) {
      const res = await fetch(t.url + p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get("x-ratelimit-limit"), p).toBeNull();
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)("rate limits across gateway processes (PostgreSQL + Redis)", () => {
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
  });

  it("shares one counter: requests to either process draw on the same allowance", async () => {
    const limit = 7;
    const first = await startGateway({ rateLimitPerMinute: limit });
    try {
      const caller = await first.bootstrap("shared@acme.test", "Shared");
      // A second gateway process on the same database and Redis, started as npm start starts it.
      let output = "";
      child = spawn(process.execPath, ["scripts/run.mjs", "src/main.ts"], {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: first.config.databaseUrl,
          PORT: "0",
          HOST: "127.0.0.1",
          RATE_LIMIT_PER_MINUTE: String(limit),
          LOG_FORMAT: "json",
        },
      });
      child.stdout!.on("data", (d) => (output += d));
      child.stderr!.on("data", (d) => (output += d));
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the second process did not start: ${output}`)), 120_000);
        child!.stdout!.on("data", () => {
          const m = /listening on (http:\/\/\S+)/.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!.replace("localhost", "127.0.0.1"));
          }
        });
        child!.once("exit", (code) => reject(new Error(`the second process exited (${code}): ${output}`)));
      });
      const remaining: number[] = [];
      for (let i = 0; i < limit; i++) {
        const base = i % 2 === 0 ? first.url : url;
        const res = await fetch(`${base}/v1/orgs`, { headers: { authorization: `Bearer ${caller.token}` } });
        expect(res.status).toBe(200);
        remaining.push(Number(res.headers.get("x-ratelimit-remaining")));
      }
      expect(remaining).toEqual([6, 5, 4, 3, 2, 1, 0]);
      const refusedHere = await fetch(`${first.url}/v1/orgs`, { headers: { authorization: `Bearer ${caller.token}` } });
      const refusedThere = await fetch(`${url}/v1/orgs`, { headers: { authorization: `Bearer ${caller.token}` } });
      expect([refusedHere.status, refusedThere.status]).toEqual([429, 429]);
    } finally {
      await first.close();
    }
  });
});
