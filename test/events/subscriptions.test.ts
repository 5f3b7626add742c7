import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../helpers/gateway.js";
import { collect, firstOutcome, sseSubscribe, wsClient } from "../helpers/graphql-ws.js";
import { startReceiver } from "./receiver.js";
import { client, processStorage, startServerProcess, type ServerProcess } from "./processes.js";
import { Redis } from "ioredis";

// A shared machine can be slow: generous limits, so that only real failures fail.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let other: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let reader: Caller & { user: string };
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  t = await startGateway({ integrationDispatchPollMs: 100, integrationRetryBaseMs: 100 });
  admin = await t.bootstrap("ada@acme.test", "Acme");
  other = await t.bootstrap("oscar@other.test", "Other");
  reader = await t.member(admin.organization, "rita@acme.test", "read");
  receiver = await startReceiver();
  await admin.post("/v1/integrations/live", { title: "Live", organization: admin.organization, visibility: "public" });
  await admin.post("/v1/integrations/secretive", { title: "Secretive", organization: admin.organization });
  await admin.put("/v1/integrations/live/dev", { tunnelUrl: receiver.url });
}, 180_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

const FIELDS =
  "id integrationId installationId createdAt status payload { eventId type installationId status previous { status configuration } }";
const INTEGRATION_EVENTS = `subscription($name: String!, $types: [String!], $statuses: [IntegrationEventStatus!]) {
  integrationEvents(integrationName: $name, types: $types, statuses: $statuses) { ${FIELDS} } }`;
const SPACE_UPDATED = `subscription($id: String!) { spaceUpdated(spaceId: $id) { id title } }`;
const ORGANIZATION_EVENTS = `subscription($org: String!, $types: [String!]) { organizationIntegrationEvents(organizationId: $org, types: $types) { ${FIELDS} } }`;

describe("integrationEvents over graphql-ws", () => {
  it("streams new events and their status changes to members of the owner organization", async () => {
    const c = wsClient(t.url, reader.token);
    const sub = collect(c, INTEGRATION_EVENTS, { name: "live" }, 2);
    await sub.ready;
    const inst = (await admin.post("/v1/integrations/live/installations", { organization: admin.organization })).body;
    const results = await sub.results;
    const [recorded, delivered] = results.map((r) => r.data.integrationEvents);
    expect(recorded).toMatchObject({
      installationId: inst.id,
      status: "pending",
      payload: { type: "installation_setup", installationId: inst.id, status: "active", previous: null },
    });
    expect(delivered).toMatchObject({ id: recorded.id, status: "success" });
    expect(new Date(recorded.createdAt).toISOString()).toBe(recorded.createdAt);
    await c.dispose();
  });

  it("filters by types and statuses", async () => {
    const c = wsClient(t.url, admin.token);
    const sub = collect(c, INTEGRATION_EVENTS, { name: "live", types: ["installation_setup"], statuses: ["success"] }, 1);
    await sub.ready;
    const inst = (await admin.get("/v1/integrations/live/installations")).body.items[0];
    await admin.patch(`/v1/integrations/live/installations/${inst.id}`, { configuration: { a: 1 } });
    const [result] = await sub.results;
    expect(result.data.integrationEvents).toMatchObject({
      status: "success",
      payload: { previous: { status: "active", configuration: {} } },
    });
    await c.dispose();
  });

  it("refuses, at subscribe time, callers who may not read the events", async () => {
    for (const [caller, query, variables, message] of [
      [other, INTEGRATION_EVENTS, { name: "live" }, /Events of integration .*live.* not found/],
      [other, INTEGRATION_EVENTS, { name: "secretive" }, /not found/],
      [other, ORGANIZATION_EVENTS, { org: admin.organization }, /not found/],
      [reader, ORGANIZATION_EVENTS, { org: admin.organization }, /needs admin/],
    ] as const) {
      const c = wsClient(t.url, caller.token);
      const outcome = await firstOutcome(c, query, variables);
      expect(JSON.stringify(outcome)).toMatch(message);
      await c.dispose();
    }
  });

  it("streams every installation's events of an organization to its admins", async () => {
    const c = wsClient(t.url, other.token);
    const sub = collect(c, ORGANIZATION_EVENTS, { org: other.organization, types: ["installation_setup"] }, 1);
    await sub.ready;
    const inst = (await other.post("/v1/integrations/live/installations", { organization: other.organization })).body;
    const [result] = await sub.results;
    // all = false: the owner's tunnel does not get another organization's events.
    expect(result.data.organizationIntegrationEvents).toMatchObject({
      installationId: inst.id,
      status: "skipped",
      payload: { type: "installation_setup" },
    });
    await c.dispose();
  });
});

describe("integrationEvents over server-sent events", () => {
  it("streams the same subscription on /graphql with Accept: text/event-stream", async () => {
    const stream = await sseSubscribe(t.url, admin.token, INTEGRATION_EVENTS, { name: "live", statuses: ["pending"] });
    expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
    const inst = (await admin.get("/v1/integrations/live/installations")).body.items.find(
      (i: any) => i.target.organization === admin.organization,
    );
    setTimeout(() => void admin.patch(`/v1/integrations/live/installations/${inst.id}`, { configuration: { a: 2 } }), 300);
    const event = await stream.firstEventWith("integrationEvents");
    expect(event.data.integrationEvents).toMatchObject({
      status: "pending",
      payload: { type: "installation_setup", previous: { configuration: { a: 1 } } },
    });
  });

  it("refuses a caller who may not read the events, with no stream", async () => {
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${other.token}` },
      body: JSON.stringify({ query: INTEGRATION_EVENTS, variables: { name: "secretive" } }),
    });
    const text = await res.text();
    expect(text).toMatch(/not found/);
    expect(text).not.toContain('"integrationEvents":{');
  });
});

describe.runIf(process.env.DATABASE_URL && process.env.REDIS_URL)("two gateway processes sharing PostgreSQL and Redis", () => {
  const processes: ServerProcess[] = [];
  let storage: Awaited<ReturnType<typeof processStorage>>;
  let boot: { token: string; organization: string };
  beforeAll(async () => {
    storage = await processStorage();
    const env = { ...storage.env, REDIS_URL: process.env.REDIS_URL! };
    processes.push(...(await Promise.all([startServerProcess(env), startServerProcess(env)])));
    boot = await storage.admin({ command: "bootstrap", email: "ada@acme.test", org: "Acme" });
  }, 180_000);
  afterAll(async () => {
    for (const p of processes) await p.stop().catch(() => undefined);
    await storage?.cleanup();
  });

  it("delivers an event recorded through process A to a graphql-ws subscriber of process B", async () => {
    const [a, b] = processes;
    const apiA = client(a!.url, boot.token);
    expect((await apiA.post("/v1/integrations/shared", { title: "Shared", organization: boot.organization })).status).toBe(201);
    const c = wsClient(b!.url, boot.token);
    const sub = collect(c, INTEGRATION_EVENTS, { name: "shared" }, 1);
    await sub.ready;
    const inst = (await apiA.post("/v1/integrations/shared/installations", { organization: boot.organization })).body;
    const [result] = await sub.results;
    expect(result.data.integrationEvents).toMatchObject({ installationId: inst.id, payload: { type: "installation_setup" } });
    await c.dispose();
  });

  it("publishes one Redis message per event, however many subscribers of either process follow it", async () => {
    const [a, b] = processes;
    const apiA = client(a!.url, boot.token);
    const spaceId = (await apiA.post(`/v1/orgs/${boot.organization}/spaces`, { title: "Counted" })).body.id;
    expect((await apiA.post("/v1/integrations/counted", { title: "Counted", organization: boot.organization })).status).toBe(201);
    // Somewhere to deliver to: each event is pending, then a success.
    expect((await apiA.put("/v1/integrations/counted/dev", { tunnelUrl: receiver.url })).status).toBe(204);
    // Everything published on this Redis from here on (other test files share it: only this test's ids count).
    const monitor = new Redis(process.env.REDIS_URL!);
    const seen: { channel: string; message: string }[] = [];
    monitor.on("pmessage", (_pattern: string, channel: string, message: string) => seen.push({ channel, message }));
    await monitor.psubscribe("*");
    const clients = [a, b, a, b, a, b].map((p) => wsClient(p!.url, boot.token));
    try {
      const subs = clients.flatMap((c) => [
        collect(c, SPACE_UPDATED, { id: spaceId }, 1),
        collect(c, INTEGRATION_EVENTS, { name: "counted" }, 1),
        collect(c, ORGANIZATION_EVENTS, { org: boot.organization, types: ["installation_setup"] }, 1),
      ]);
      await Promise.all(subs.map((s) => s.ready));
      expect((await apiA.patch(`/v1/spaces/${spaceId}`, { title: "Counted twice" })).status).toBe(200);
      const installation = await apiA.post("/v1/integrations/counted/installations", { organization: boot.organization });
      expect(installation.status).toBe(201);
      const results = await Promise.all(subs.map((s) => s.results));
      expect(results.every((r) => r.length === 1)).toBe(true);
      // The delivery's status change is published too: wait for it.
      const ours = () =>
        seen.flatMap(({ channel, message }) => {
          const routed = channel === "integration:event" ? JSON.parse(message) : null;
          return routed?.detail?.installationId === installation.body.id ? [routed] : [];
        });
      await vi.waitFor(() => expect(ours().map((m) => m.detail.status)).toEqual(["pending", "success"]), { timeout: 30_000 });

      expect(seen.filter((m) => m.channel === `space:updated:${spaceId}`)).toHaveLength(1);
      // Each event once per status, for its integration's streams, its organization's and (pending) the dispatchers.
      const published = ours().map((m) => `${m.detail.id} ${m.detail.status}`);
      expect(published).toEqual([...new Set(published)]);
      const pending = ours().find((m) => m.detail.status === "pending");
      expect(pending.keys).toEqual([pending.detail.integrationId, boot.organization, "dispatch"]);
      // No channel of its own per stream.
      expect(seen.filter((m) => m.channel.startsWith("integration:event:") && m.message.includes(installation.body.id))).toEqual([]);
    } finally {
      await Promise.all(clients.map((c) => c.dispose()));
      monitor.disconnect();
    }
  });
});

describe.skipIf(process.env.DATABASE_URL && process.env.REDIS_URL)("two gateway processes sharing PostgreSQL and Redis", () => {
  it.skip("needs DATABASE_URL and REDIS_URL: two embedded databases would not share events (CI's second pass sets both)", () => undefined);
});
