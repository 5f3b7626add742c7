import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, forgetKept, type Admin } from "../helpers/fixtures.js";
import { collect, wsClient } from "../helpers/graphql-ws.js";
import { createLogger, log } from "../../src/core/logger.js";
import { pendingMigrations } from "../../src/server/health.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { writtenTogether } from "../helpers/together.js";
import { Registry } from "prom-client";

/** The request log lines the gateway writes, parsed. */
const lines: any[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const text of String(chunk).split("\n")) if (text.trim()) lines.push(JSON.parse(text));
    done();
  },
});

let t: TestGateway;
let admin: Admin;
let org: string;

beforeAll(async () => {
  t = await startGateway({ metricsToken: undefined }, { logger: createLogger({ level: "debug", format: "json", destination: sink }) });
  ({ admin, org } = await acmeDocs(t));
});
afterAll(async () => {
  await t?.close();
});

/** The log line of the request answered with this X-Request-Id. */
async function lineOf(requestId: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const found = lines.find((l) => l.reqId === requestId && l.msg && l.route);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no log line for request ${requestId}: ${JSON.stringify(lines.slice(-5))}`);
}

describe("request logs", () => {
  it("writes one JSON line per request: id, method, route pattern, status, duration, viewer, operation — never the token", async () => {
    const space = await createSpace(admin, org, { title: "Logged" });
    const res = await fetch(`${t.url}/v1/spaces/${space.id}?shareKey=secret-in-query`, {
      headers: { authorization: `Bearer ${admin.token}`, "x-request-id": "req-rest-1" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("req-rest-1");
    const line = await lineOf("req-rest-1");
    expect(line).toMatchObject({
      level: 30,
      reqId: "req-rest-1",
      method: "GET",
      route: "/v1/spaces/{spaceId}",
      path: `/v1/spaces/${space.id}`,
      status: 200,
      viewer: admin.user,
      operation: "Query.space",
      msg: "GET /v1/spaces/{spaceId} 200",
    });
    expect(typeof line.durationMs).toBe("number");
    expect(typeof line.time).toBe("string");
    expect(lines.filter((l) => l.reqId === "req-rest-1")).toHaveLength(1);
    const all = JSON.stringify(lines);
    expect(all).not.toContain(admin.token);
    expect(all).not.toContain("secret-in-query");
  });

  it("names the GraphQL operation, and generates an id when none (or a malformed one) is sent", async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json", "x-request-id": "bad id with spaces" },
      body: JSON.stringify({ query: "query MyOrgs { organizations { count } }" }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get("x-request-id")!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lineOf(id)).toMatchObject({ route: "/graphql", method: "POST", status: 200, operation: "MyOrgs", viewer: admin.user });
  });

  it("logs a refused request without a viewer, and an unknown path under one route label", async () => {
    const refused = await fetch(`${t.url}/v1/orgs`, {
      headers: { authorization: "Bearer dapi_not-a-live-token", "x-request-id": "req-401" },
    });
    expect(refused.status).toBe(401);
    const line = await lineOf("req-401");
    expect(line).toMatchObject({ route: "/v1/orgs", status: 401 });
    expect(line.viewer).toBeUndefined();
    const unknown = await fetch(`${t.url}/no/such/thing/${Math.random()}`, { headers: { "x-request-id": "req-404" } });
    expect(unknown.status).toBe(404);
    expect(await lineOf("req-404")).toMatchObject({ route: "*", status: 404 });
  });

  it("keeps the first 512 characters of a long path, and says how long it was", async () => {
    const id = "s".repeat(10_000);
    const res = await fetch(`${t.url}/v1/spaces/${id}?q=${"x".repeat(100)}`, {
      headers: { authorization: `Bearer ${admin.token}`, "x-request-id": "req-long" },
    });
    expect(res.status).toBe(404);
    const line = await lineOf("req-long");
    expect(line).toMatchObject({ route: "/v1/spaces/{spaceId}", status: 404 });
    expect(line.path).toBe(`/v1/spaces/${id.slice(0, 512 - "/v1/spaces/".length)}… (${"/v1/spaces/".length + id.length} characters)`);
    const short = await fetch(`${t.url}/v1/spaces/short?q=1`, {
      headers: { authorization: `Bearer ${admin.token}`, "x-request-id": "req-short" },
    });
    expect(short.status).toBe(404);
    expect((await lineOf("req-short")).path).toBe("/v1/spaces/short");
  });

  it("reports an unexpected error with the id of the request it happened in", async () => {
    const prisma = t.gateway.db.prisma as any;
    const spy = vi.spyOn(prisma.organization, "findMany").mockRejectedValue(new Error("database went away"));
    // (The page is read, not one kept from an earlier request.)
    await forgetKept(t.gateway);
    const reported = vi.spyOn(log, "error").mockImplementation(() => undefined as any);
    try {
      const res = await fetch(`${t.url}/v1/orgs`, { headers: { authorization: `Bearer ${admin.token}`, "x-request-id": "req-500" } });
      expect(res.status).toBe(500);
      expect(reported).toHaveBeenCalledWith(
        expect.objectContaining({ err: expect.objectContaining({ message: "database went away" }) }),
        "unexpected error",
      );
      const line = await lineOf("req-500");
      expect(line).toMatchObject({ level: 50, status: 500, route: "/v1/orgs" });
    } finally {
      spy.mockRestore();
      reported.mockRestore();
    }
  });

  it("logs a fault once, at error level, and a client's mistake never as an error (a long value it sent included)", async () => {
    const headers = { authorization: `Bearer ${admin.token}`, "content-type": "application/json" };
    const long = "x".repeat(5_000);
    const reported = vi.spyOn(log, "error").mockImplementation(() => undefined as any);
    try {
      // Mistakes: an unknown enum value, long enough that its echo is cut, on both faces; a list where one value goes.
      const rest = await fetch(`${t.url}/v1/orgs/${org}/members?order=${long}`, { headers });
      expect(rest.status).toBe(400);
      expect((await rest.json()).error.message).toContain("…(5000 characters)");
      const twice = await fetch(`${t.url}/v1/orgs/${org}/members?order=asc&order=${long}`, { headers });
      expect(twice.status).toBe(400);
      const graph = await fetch(`${t.url}/graphql`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          query: `query($o: Order) { organizationMembers(organizationId: "${org}", order: $o) { count } }`,
          variables: { o: long },
        }),
      });
      expect((await graph.json()).errors[0].message).toContain("…(5000 characters)");
      expect(reported).not.toHaveBeenCalled();

      // A fault: reported once per request, on each face.
      const prisma = t.gateway.db.prisma as any;
      const spy = vi.spyOn(prisma.organization, "findMany").mockRejectedValue(new Error("database went away"));
      await forgetKept(t.gateway);
      try {
        expect((await fetch(`${t.url}/v1/orgs`, { headers })).status).toBe(500);
        expect(reported).toHaveBeenCalledTimes(1);
        const answer = await fetch(`${t.url}/graphql`, {
          method: "POST",
          headers,
          body: JSON.stringify({ query: "{ organizations { items { id } } }" }),
        });
        expect((await answer.json()).errors[0].message).toBe("Unexpected error.");
        expect(reported).toHaveBeenCalledTimes(2);
        for (const [fields] of reported.mock.calls)
          expect(fields).toMatchObject({ err: expect.objectContaining({ message: "database went away" }) });
      } finally {
        spy.mockRestore();
      }
    } finally {
      reported.mockRestore();
    }
  });

  it("puts the request id on every line logged while the request is handled", async () => {
    const captured: any[] = [];
    const logger = createLogger({
      level: "info",
      format: "json",
      destination: new Writable({
        write(chunk, _e, done) {
          captured.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    });
    const { requestScope } = await import("../../src/core/logger.js");
    requestScope.run({ reqId: "scoped-1" }, () => logger.warn("inside"));
    logger.warn("outside");
    expect(captured[0]).toMatchObject({ reqId: "scoped-1", msg: "inside", level: 40 });
    expect(captured[1].reqId).toBeUndefined();
  });

  it("logs SQL statements only when LOG_SQL asks for it", async () => {
    const debug = vi.spyOn(log, "debug").mockImplementation(() => undefined as any);
    try {
      await admin.get("/v1/orgs");
      expect(debug.mock.calls.filter((c) => (c[0] as any)?.sql)).toHaveLength(0);
      const sql = await startGateway({ logSql: true });
      try {
        const boss = await sql.bootstrap("sql@acme.test", "SQL Org");
        await boss.get("/v1/orgs");
        const statements = debug.mock.calls.filter((c) => typeof (c[0] as any)?.sql === "string");
        expect(statements.length).toBeGreaterThan(0);
        expect(statements[0]![1]).toBe("sql");
      } finally {
        await sql.close();
      }
    } finally {
      debug.mockRestore();
    }
  });
});

describe("GET /metrics", () => {
  const scrape = async (token?: string) => {
    const res = await fetch(`${t.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };

  it("renders once for the scrapes that arrive while it renders", async () => {
    const original = Registry.prototype.metrics;
    let renderings = 0;
    const spy = vi.spyOn(Registry.prototype, "metrics").mockImplementation(async function (this: Registry) {
      renderings++;
      await new Promise((resolve) => setTimeout(resolve, 100));
      return original.call(this);
    });
    try {
      const scrapes = await Promise.all(Array.from({ length: 20 }, () => scrape()));
      for (const s of scrapes) expect(s.status).toBe(200);
      expect(new Set(scrapes.map((s) => s.text)).size).toBeLessThanOrEqual(renderings);
      expect(renderings).toBeLessThanOrEqual(3);
    } finally {
      spy.mockRestore();
    }
  });

  it("serves Prometheus text: HTTP durations by route and status, GraphQL operations, SQL statements, sockets, backlog", async () => {
    await admin.get("/v1/orgs");
    await admin.graphql("query CountOrgs { organizations { count } }");
    const { status, type, text } = await scrape();
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain/);
    expect(text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/v1\/orgs",status="200"\} [1-9]/m);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.1",method="GET",route="\/v1\/orgs",status="200"\}/m);
    expect(text).toMatch(/^graphql_envelop_request_duration_count\{operationName="CountOrgs",operationType="query"\} 1$/m);
    expect(text).toMatch(/^db_statement_duration_seconds_count\{outcome="ok"\} [1-9]/m);
    expect(text).toMatch(/^websocket_connections 0$/m);
    expect(text).toMatch(/^graphql_subscriptions 0$/m);
    expect(text).toMatch(/^integration_events_pending \d+$/m);
    expect(text).toMatch(/^# TYPE integration_event_deliveries_total counter$/m);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^pubsub_publish_failures_total \d+$/m);
    expect(text).toMatch(/^pubsub_outages_total \d+$/m);
    // Queries of one shape with other values are answered from kept query plans.
    const plans = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1]);
    expect(plans("query_plan_cache_misses_total")).toBeGreaterThan(0);
    const before = plans("query_plan_cache_hits_total");
    for (let i = 0; i < 3; i++) expect((await admin.get(`/v1/spaces/spc_metrics_${i}`)).status).toBe(404); // one shape, other ids
    const after = Number(/^query_plan_cache_hits_total (\d+)$/m.exec((await scrape()).text)?.[1]);
    expect(after).toBeGreaterThan(before);
    // Reads of requests under way together (core/graph/loaders.ts): rows by key, and identical list pages and counts.
    const shared = async () => {
      const metrics = (await scrape()).text;
      const read = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(metrics)?.[1]);
      return {
        statements: read("shared_reads_statements_total"),
        joined: read("shared_reads_joined_total"),
        identical: read("shared_reads_identical_total"),
      };
    };
    const spaces = [];
    for (let i = 0; i < 8; i++) spaces.push((await createSpace(admin, org, { title: `Read together ${i}` })).id);
    const sharedBefore = await shared();
    await Promise.all(spaces.map((id) => admin.get(`/v1/spaces/${id}`)));
    // The same list asked together with two tokens of one person (requests written together:
    // test/helpers/together.ts): the GETs of each token share one answer (request coalescing), and
    // the two answers' identical page reads are one.
    const { token: second } = (await runAdminCommand(t.gateway.db.prisma, { command: "token-create", email: "ada@acme.test" })) as {
      token: string;
    };
    // Used once first: both tokens' answers then find their caller in the access cache, and reach the page's read in the same turn.
    expect((await t.caller(second).get(`/v1/orgs/${org}`)).status).toBe(200);
    const coalesced = async () => Number(/^coalesced_requests_total (\d+)$/m.exec((await scrape()).text)?.[1]);
    const coalescedBefore = await coalesced();
    // Whether the two answers reach the page's read in one turn depends on how long each one's
    // earlier statements took (on PostgreSQL they vary), so the counters are read after up to five
    // rounds of the same requests (shared-reads.test.ts measures the sharing itself).
    let sharedAfter = sharedBefore;
    for (let round = 0; round < 5 && !(sharedAfter.identical > sharedBefore.identical); round++) {
      await forgetKept(t.gateway);
      const answers = await writtenTogether(
        t.url,
        admin.token,
        spaces.map((_, i): { path: string; headers?: Record<string, string> } => ({
          path: `/v1/orgs/${org}/spaces`,
          ...(i % 2 ? { headers: { authorization: `Bearer ${second}` } } : {}),
        })),
      );
      expect(answers.map((a) => a?.status)).toEqual(spaces.map(() => 200));
      sharedAfter = await shared();
    }
    expect(sharedAfter.statements).toBeGreaterThan(sharedBefore.statements);
    expect(sharedAfter.joined).toBeGreaterThanOrEqual(sharedBefore.joined);
    expect(sharedAfter.identical).toBeGreaterThan(sharedBefore.identical);
    expect(await coalesced()).toBeGreaterThan(coalescedBefore);
  });

  it("counts open WebSockets and running subscriptions", async () => {
    const space = await createSpace(admin, org, { title: "Watched" });
    const client = wsClient(t.url, admin.token);
    const stream = collect(client, `subscription($id: String!) { spaceUpdated(spaceId: $id) { id } }`, { id: space.id }, 1);
    await stream.ready;
    // The subscription starts once the server has set it up (with Redis, once it is subscribed there).
    let text = "";
    await expect
      .poll(async () => {
        text = (await scrape()).text;
        return /^websocket_connections 1$/m.test(text) && /^graphql_subscriptions 1$/m.test(text);
      })
      .toBe(true);
    const passes = () => Number(/^live_stream_pass_duration_seconds_count (\d+)$/m.exec(text)?.[1]);
    const passesBefore = passes();
    await admin.patch(`/v1/spaces/${space.id}`, { title: "Watched 2" });
    await stream.results;
    // The delivery's pass over the stream's one socket.
    text = (await scrape()).text;
    expect(passes()).toBeGreaterThan(passesBefore);
    // A pass over one socket never pauses (pacing starts past 64 sockets).
    expect(text).toMatch(/^live_stream_pause_seconds_total 0$/m);
    await client.dispose();
    for (let i = 0; i < 100 && /^websocket_connections 1$/m.test(text); i++) {
      await new Promise((r) => setTimeout(r, 20));
      text = (await scrape()).text;
    }
    expect(text).toMatch(/^websocket_connections 0$/m);
    expect(text).toMatch(/^graphql_subscriptions 0$/m);
    // The socket's own log line, when it closed.
    await expect
      .poll(() => lines.find((l) => l.status === 101 && l.route === "/graphql"))
      .toMatchObject({ method: "GET", closeCode: expect.any(Number), msg: expect.stringMatching(/^WebSocket \/graphql closed/) });
  });

  it("reports the process's open files and handles without listing them on the event loop", async () => {
    const before = Number(/^process_open_fds (\d+)$/m.exec((await scrape()).text)?.[1]);
    expect(before).toBeGreaterThan(0);
    // Ten more sockets open: the count follows, read off the event loop (readdirSync of /proc/self/fd
    // and process._getActiveHandles() take milliseconds a scrape with thousands of sockets open).
    const clients = Array.from({ length: 10 }, () => wsClient(t.url, admin.token));
    const streams = clients.map((c) =>
      collect(c, `subscription { organizationIntegrationEvents(organizationId: "${org}") { id } }`, {}, 1),
    );
    await Promise.all(streams.map((s) => s.ready));
    const readdirSync = vi.spyOn(fs, "readdirSync");
    const handles = vi.spyOn(process as unknown as { _getActiveHandles: () => unknown[] }, "_getActiveHandles");
    try {
      let text = "";
      await expect
        .poll(async () => {
          text = (await scrape()).text;
          return Number(/^process_open_fds (\d+)$/m.exec(text)?.[1]);
        })
        .toBeGreaterThanOrEqual(before + 10);
      expect(readdirSync).not.toHaveBeenCalled();
      expect(handles).not.toHaveBeenCalled();
      expect(text).toMatch(/^nodejs_active_resources\{type="TCPSocketWrap"\} \d+$/m);
      expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
      expect(text).toMatch(/^nodejs_heap_space_size_used_bytes\{space="old"\} \d+$/m);
      expect(text).not.toMatch(/^nodejs_active_handles/m);
    } finally {
      readdirSync.mockRestore();
      handles.mockRestore();
      for (const c of clients) await c.dispose();
    }
  });

  it("requires METRICS_TOKEN when it is set", async () => {
    const guarded = await startGateway({ metricsToken: "m3trics" });
    try {
      const none = await fetch(`${guarded.url}/metrics`);
      expect(none.status).toBe(401);
      expect(await none.json()).toEqual({ error: { code: 401, message: expect.stringContaining("METRICS_TOKEN") } });
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
      const ok = await fetch(`${guarded.url}/metrics`, { headers: { authorization: "Bearer m3trics" } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain("http_request_duration_seconds");
    } finally {
      await guarded.close();
    }
  });
});

describe("health", () => {
  it("GET /healthz answers while the process is up; /health redirects to it", async () => {
    const res = await fetch(`${t.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    const old = await fetch(`${t.url}/health`, { redirect: "manual" });
    expect(old.status).toBe(308);
    expect(old.headers.get("location")).toBe("/healthz");
    // Yoga's own check no longer answers every path that ends with /health.
    expect((await fetch(`${t.url}/v1/spaces/health`, { headers: { authorization: `Bearer ${admin.token}` } })).status).toBe(404);
  });

  it("GET /readyz checks the database, the migrations and (when configured) Redis", async () => {
    const res = await fetch(`${t.url}/readyz`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.status).toBe("ready");
    expect(body.checks.database).toMatchObject({ ok: true });
    expect(body.checks.migrations).toMatchObject({ ok: true });
    if (process.env.REDIS_URL) expect(body.checks.redis).toMatchObject({ ok: true });
    else expect(body.checks.redis).toBeUndefined();
  });

  it("GET /readyz: probes that arrive while the checks run share them", async () => {
    // Checks that take 100 ms, so that the probes overlap whatever the database's speed.
    const prisma = t.gateway.db.prisma as any;
    const original = prisma.$queryRawUnsafe.bind(prisma);
    let calls = 0;
    const spy = vi.spyOn(prisma, "$queryRawUnsafe").mockImplementation(async (...args: unknown[]) => {
      calls++;
      await new Promise((resolve) => setTimeout(resolve, 100));
      return original(...args);
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => fetch(`${t.url}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() }))),
      );
      for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: { status: "ready" } });
      // A round is two statements (SELECT 1, the applied migrations): one round each would be 40.
      expect(calls).toBeLessThanOrEqual(6);
    } finally {
      spy.mockRestore();
    }
  });

  it("answers 503 naming the check that failed", async () => {
    const prisma = t.gateway.db.prisma as any;
    const spy = vi.spyOn(prisma, "$queryRawUnsafe").mockRejectedValue(new Error("connection refused"));
    try {
      const res = await fetch(`${t.url}/readyz`);
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body.status).toBe("unavailable");
      expect(body.checks.database).toMatchObject({ ok: false, error: "connection refused" });
      expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    } finally {
      spy.mockRestore();
    }
  });

  it("knows a migration that is not applied", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-migrations-"));
    try {
      const applied = (await t.gateway.db.prisma.$queryRawUnsafe<{ name: string }[]>(`SELECT name FROM "_migrations" ORDER BY name`)).map(
        (r) => r.name,
      );
      for (const name of [...applied, "99990101000000_not_yet"]) {
        fs.mkdirSync(path.join(dir, name));
        fs.writeFileSync(path.join(dir, name, "migration.sql"), "SELECT 1;");
      }
      expect(await pendingMigrations(t.gateway.db.prisma, dir)).toEqual(["99990101000000_not_yet"]);
      expect(await pendingMigrations(t.gateway.db.prisma)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
