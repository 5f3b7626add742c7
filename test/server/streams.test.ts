import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import vm from "node:vm";
import v8 from "node:v8";
import WebSocket from "ws";
import { startGateway, type Caller, type TestGateway } from "../helpers/gateway.js";
import { sseSubscribe, wsClient } from "../helpers/graphql-ws.js";
import { recordIntegrationEvents } from "../../src/events/record.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import type { Client } from "graphql-ws";

// Shared graphql-ws streams (src/graphql/streams/): one execution per event per group, access
// per subscriber, slow sockets closed, order kept.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });
// A test below collects garbage (what a live subscription keeps).
v8.setFlagsFromString("--expose-gc");

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let reader: Caller & { user: string };
let spaceId: string;

beforeAll(async () => {
  // A small send bound, so that a consumer that stops reading is over it after a few events.
  t = await startGateway({ wsMaxBufferedBytes: 64 * 1024 });
  admin = await t.bootstrap("ada@acme.test", "Acme");
  reader = await t.member(admin.organization, "rita@acme.test", "read");
  spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Handbook" })).body.id;
  await admin.post("/v1/integrations/fanout", { title: "Fan-out", organization: admin.organization });
  await admin.post("/v1/integrations/fanout/installations", { organization: admin.organization });
});
afterAll(() => t?.close());

const SPACE = `subscription($id: String!) { spaceUpdated(spaceId: $id) { id title permissions { admin edit view } } }`;
const EVENTS = `subscription { integrationEvents(integrationName: "fanout", types: ["space_content_updated"]) { id payload { eventId } } }`;
const EVENTS_FULL = `subscription { integrationEvents(integrationName: "fanout", types: ["space_content_updated"]) { id payload { eventId previous { configuration } } } }`;
const ORG_EVENTS = `subscription($org: String!) { organizationIntegrationEvents(organizationId: $org) { id } }`;

const until = async (test: () => boolean | Promise<boolean>, tries = 400) => {
  for (let i = 0; i < tries && !(await test()); i++) await new Promise((r) => setTimeout(r, 25));
};

/** Writes (`write(i)`, i = 0, 1, …, at most 100) until every subscription of `subs` received a result: they are live. */
async function untilLive(subs: { results: unknown[] }[], write: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; subs.some((s) => s.results.length === 0) && i < 100; i++) {
    await write(i);
    await until(() => subs.every((s) => s.results.length > 0), 20);
  }
}

/** A subscription that records everything it receives, and how it ended. */
function follow(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const results: any[] = [];
  let ended: "complete" | "error" | undefined;
  const done = new Promise<void>((resolve) =>
    client.subscribe(
      { query, variables },
      { next: (r) => results.push(r), error: () => ((ended = "error"), resolve()), complete: () => ((ended = "complete"), resolve()) },
    ),
  );
  return { results, done, ended: () => ended };
}

/** Records one integration event of "fanout" per id in `ids`, one after another (a burst): their ids in order. */
async function recordBurst(count: number, fields: (i: number) => Record<string, unknown> = () => ({})): Promise<string[]> {
  const prisma = t.gateway.db.prisma;
  const integration = await prisma.integration.findUniqueOrThrow({ where: { name: "fanout" } });
  const installation = await prisma.integrationInstallation.findFirstOrThrow({ where: { integrationId: integration.id } });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const [m] = await recordIntegrationEvents(t.gateway.services, [
      {
        integration,
        installation: { id: installation.id, organizationId: admin.organization },
        type: "space_content_updated",
        fields: { spaceId, revisionId: `r${i}`, ...fields(i) },
      },
    ]);
    ids.push(m!.id);
  }
  return ids;
}

describe("one execution per event per group", () => {
  it("executes an event once however many sockets share the subscription, and once per viewer", async () => {
    const clients = Array.from({ length: 12 }, () => wsClient(t.url, admin.token));
    const readerClient = wsClient(t.url, reader.token);
    const subs = clients.map((c) => follow(c, SPACE, { id: spaceId }));
    const readerSub = follow(readerClient, SPACE, { id: spaceId });
    const all = [...subs, readerSub];
    // Live once every socket received an update.
    await untilLive(all, (i) => admin.patch(`/v1/spaces/${spaceId}`, { title: `Warming ${i}` }));
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Settled" });
    await until(() => all.every((s) => s.results.at(-1)?.data?.spaceUpdated.title === "Settled"));

    const executions = await t.metric("live_stream_executions_total");
    const statements: string[] = [];
    t.gateway.db.observeStatements(() => statements.push("statement"));
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Once" });
    await until(() => all.every((s) => s.results.at(-1)?.data?.spaceUpdated.title === "Once"));
    // Two groups (the admin's twelve sockets, the reader's one): two executions.
    expect((await t.metric("live_stream_executions_total")) - executions).toBe(2);
    for (const s of all) expect(s.results.at(-1).data.spaceUpdated.title).toBe("Once");

    // Two viewers with different access never share a result.
    expect(subs[0]!.results.at(-1).data.spaceUpdated.permissions).toMatchObject({ admin: true, edit: true });
    expect(readerSub.results.at(-1).data.spaceUpdated.permissions).toMatchObject({ admin: false, edit: false, view: true });

    // A hundred more sockets of the admin cost no more statements per event.
    const more = Array.from({ length: 50 }, () => wsClient(t.url, admin.token));
    const moreSubs = more.map((c) => follow(c, SPACE, { id: spaceId }));
    await until(async () => (await t.metric("live_stream_subscriptions")) >= 63);
    const before = statements.length;
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Once more" });
    await until(() => [...all, ...moreSubs].every((s) => s.results.at(-1)?.data?.spaceUpdated.title === "Once more"));
    // The write's own statements and one execution per group: far fewer than one per socket (63).
    expect(statements.length - before).toBeLessThan(30);
    await Promise.all(more.map((c) => c.dispose()));
    for (const c of [...clients, readerClient]) await c.dispose();
  });
});

describe("groups per access grade", () => {
  const SPACE_DATA = `subscription($id: String!) { spaceUpdated(spaceId: $id) { id title updatedAt } }`;

  /** Subscribes each client to `query`, warms them up with title changes, then counts the executions of one change. */
  async function executionsOfOneChange(clients: Client[], query: string) {
    const subs = clients.map((c) => follow(c, query, { id: spaceId }));
    await untilLive(subs, (i) => admin.patch(`/v1/spaces/${spaceId}`, { title: `Grade warming ${i}` }));
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Grade settled" });
    await until(() => subs.every((s) => s.results.at(-1)?.data?.spaceUpdated.title === "Grade settled"));
    const before = await t.metric("live_stream_executions_total");
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Graded" });
    await until(() => subs.every((s) => s.results.at(-1)?.data?.spaceUpdated.title === "Graded"));
    for (const s of subs) expect(s.results.at(-1).data.spaceUpdated.title).toBe("Graded");
    const executions = (await t.metric("live_stream_executions_total")) - before;
    for (const c of clients) await c.dispose();
    return { executions, subs };
  }

  it("shares one execution between viewers with the same role when nothing selected depends on the viewer", async () => {
    const other = await t.member(admin.organization, "rolf@acme.test", "read");
    const { executions } = await executionsOfOneChange(
      [wsClient(t.url, reader.token), wsClient(t.url, other.token), wsClient(t.url, other.token)],
      SPACE_DATA,
    );
    expect(executions).toBe(1);
  });

  it("keeps viewers with different roles apart, even when the selection is the same for both", async () => {
    const { executions } = await executionsOfOneChange([wsClient(t.url, reader.token), wsClient(t.url, admin.token)], SPACE_DATA);
    expect(executions).toBe(2);
  });

  it("keeps viewers apart when the selection has a field that depends on the viewer (permissions)", async () => {
    const other = await t.member(admin.organization, "rhea@acme.test", "read");
    const { executions, subs } = await executionsOfOneChange([wsClient(t.url, reader.token), wsClient(t.url, other.token)], SPACE);
    expect(executions).toBe(2);
    for (const s of subs) expect(s.results.at(-1).data.spaceUpdated.permissions).toMatchObject({ admin: false, edit: false, view: true });
  });

  it("grades the access of one viewer's subscriptions that arrive together once, and another viewer's apart", async () => {
    // Two sockets speaking the protocol by hand, each sending its 20 subscriptions at once (a dashboard reconnecting).
    const url = t.url.replace(/^http/, "ws") + "/graphql";
    const open = async (token: string) => {
      const socket = new WebSocket(url, "graphql-transport-ws");
      const titles = new Map<string, string>();
      const acked = new Promise((resolve) =>
        socket.on("message", (data) => {
          const message = JSON.parse(String(data));
          if (message.type === "connection_ack") resolve(undefined);
          if (message.type === "next")
            titles.set(message.id, message.payload.data?.spaceUpdated?.title ?? JSON.stringify(message.payload.errors));
        }),
      );
      await new Promise((resolve) => socket.on("open", resolve));
      socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${token}` } }));
      await acked;
      return { socket, titles };
    };
    const sockets = [await open(admin.token), await open(reader.token)];
    const grades = await t.metric("live_stream_access_grades_total");
    const subscriptions = await t.metric("live_stream_subscriptions");
    for (const { socket } of sockets) {
      for (let i = 0; i < 20; i++)
        socket.send(JSON.stringify({ id: `s${i}`, type: "subscribe", payload: { query: SPACE_DATA, variables: { id: spaceId } } }));
    }
    await until(async () => (await t.metric("live_stream_subscriptions")) >= subscriptions + 40);
    expect(await t.metric("live_stream_subscriptions")).toBe(subscriptions + 40);
    // One grade per viewer (one more each should a subscription arrive after theirs settled), not one per subscription.
    const graded = (await t.metric("live_stream_access_grades_total")) - grades;
    expect(graded).toBeGreaterThanOrEqual(2);
    expect(graded).toBeLessThanOrEqual(4);
    // The two viewers, of different roles, stay in two groups: one execution each, every subscription answered.
    const executions = await t.metric("live_stream_executions_total");
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Graded together" });
    await until(() =>
      sockets.every(({ titles }) => titles.size === 20 && [...titles.values()].every((title) => title === "Graded together")),
    );
    for (const { titles } of sockets) expect([...titles.values()]).toEqual(new Array(20).fill("Graded together"));
    expect((await t.metric("live_stream_executions_total")) - executions).toBe(2);
    for (const { socket } of sockets) socket.close();
    await until(async () => (await t.metric("live_stream_subscriptions")) === subscriptions);
  });

  it("ends the subscriptions of a viewer of a shared group whose role was removed; the other viewer goes on", async () => {
    const kept = await t.member(admin.organization, "kira@acme.test", "admin");
    const gone = await t.member(admin.organization, "gina@acme.test", "admin");
    const keptClient = wsClient(t.url, kept.token);
    const goneClient = wsClient(t.url, gone.token);
    // The one who loses the role opens the group: events go on with the access of the one who keeps it.
    const goneSub = follow(goneClient, ORG_EVENTS, { org: admin.organization });
    await until(async () => (await t.metric("live_stream_subscriptions")) >= 1);
    const keptSub = follow(keptClient, ORG_EVENTS, { org: admin.organization });
    await untilLive([keptSub, goneSub], () => recordBurst(1));
    const executions = await t.metric("live_stream_executions_total");
    const [shared] = await recordBurst(1);
    await until(
      () =>
        keptSub.results.at(-1)?.data.organizationIntegrationEvents.id === shared &&
        goneSub.results.at(-1)?.data.organizationIntegrationEvents.id === shared,
    );
    expect((await t.metric("live_stream_executions_total")) - executions).toBe(1); // one group for both admins
    expect((await admin.patch(`/v1/orgs/${admin.organization}/members/${gone.user}`, { role: "read" })).status).toBe(200);
    const [after] = await recordBurst(1);
    await goneSub.done;
    expect(goneSub.results.at(-1).errors[0].message).toMatch(/needs admin/);
    expect(goneSub.results.some((r) => r.data?.organizationIntegrationEvents.id === after)).toBe(false);
    await until(() => keptSub.results.at(-1)?.data?.organizationIntegrationEvents.id === after);
    expect(keptSub.results.at(-1).data.organizationIntegrationEvents.id).toBe(after);
    expect(keptSub.ended()).toBeUndefined();
    await keptClient.dispose();
    await goneClient.dispose();
  });

  it("when the opener of a shared spaceUpdated group loses its role on the space, the other viewer receives the very next state", async () => {
    const space = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Shared" })).body.id;
    const opener = await t.member(admin.organization, "olga@acme.test", "read");
    const kept = await t.member(admin.organization, "kurt@acme.test", "read");
    const openerClient = wsClient(t.url, opener.token);
    const keptClient = wsClient(t.url, kept.token);
    const titled = (s: ReturnType<typeof follow>, title: string) => s.results.at(-1)?.data?.spaceUpdated.title === title;
    // The opener's subscription is live (its group open) before the other one joins it.
    const openerSub = follow(openerClient, SPACE_DATA, { id: space });
    await untilLive([openerSub], (i) => admin.patch(`/v1/spaces/${space}`, { title: `Opening ${i}` }));
    const keptSub = follow(keptClient, SPACE_DATA, { id: space });
    await untilLive([keptSub], (i) => admin.patch(`/v1/spaces/${space}`, { title: `Joining ${i}` }));
    const executions = await t.metric("live_stream_executions_total");
    await admin.patch(`/v1/spaces/${space}`, { title: "Both" });
    await until(() => titled(openerSub, "Both") && titled(keptSub, "Both"));
    expect((await t.metric("live_stream_executions_total")) - executions).toBe(1); // one group for both readers
    expect(titled(openerSub, "Both") && titled(keptSub, "Both")).toBe(true);

    // The opener is removed from the organization (no role on the space any more), then the space changes once.
    expect((await admin.delete(`/v1/orgs/${admin.organization}/members/${opener.user}`)).status).toBe(204);
    await admin.patch(`/v1/spaces/${space}`, { title: "After removal" });
    await openerSub.done;
    expect(openerSub.ended()).toBe("complete");
    expect(openerSub.results.at(-1).errors[0].message).toMatch(/not found|not a member/i);
    expect(openerSub.results.some((r) => r.data?.spaceUpdated.title === "After removal")).toBe(false);
    // The state of that write reaches the viewer who kept access: executed with its access, not dropped.
    await until(() => titled(keptSub, "After removal"));
    expect(keptSub.results.at(-1)).toEqual({
      data: { spaceUpdated: { id: space, title: "After removal", updatedAt: expect.any(String) } },
    });
    expect(keptSub.ended()).toBeUndefined();
    await openerClient.dispose();
    await keptClient.dispose();
  });
});

describe("access of each subscriber", () => {
  it("checks the tokens of a group's subscribers in one statement once the access cache dropped them", async () => {
    const tokens = await Promise.all(
      Array.from(
        { length: 6 },
        () => runAdminCommand(t.gateway.db.prisma, { command: "token-create", email: "ada@acme.test" }) as Promise<{ token: string }>,
      ),
    );
    const clients = tokens.map(({ token }) => wsClient(t.url, token));
    const subs = clients.map((c) => follow(c, ORG_EVENTS, { org: admin.organization }));
    await untilLive(subs, () => recordBurst(1));
    const reads: string[] = [];
    t.gateway.db.observeStatements((_s, _ok, sql) => void (/FROM "public"\."ApiToken"/.test(sql) && reads.push(sql)));
    t.gateway.services.accessCache.forget();
    const [next] = await recordBurst(1);
    await until(() => subs.every((s) => s.results.at(-1)?.data?.organizationIntegrationEvents.id === next));
    for (const s of subs) expect(s.results.at(-1).data.organizationIntegrationEvents.id).toBe(next);
    expect(reads).toHaveLength(1);
    await Promise.all(clients.map((c) => c.dispose()));
  });

  it("revokes one of two tokens sharing a stream: its subscription ends with a 401, the other goes on", async () => {
    const prisma = t.gateway.db.prisma;
    const tokens = await Promise.all(
      [1, 2].map(() => runAdminCommand(prisma, { command: "token-create", email: "rita@acme.test", label: "streams" }) as Promise<any>),
    );
    const [keptClient, revokedClient] = tokens.map((tk) => wsClient(t.url, tk.token));
    const kept = follow(keptClient!, EVENTS);
    const revoked = follow(revokedClient!, EVENTS);
    await untilLive([kept, revoked], () => recordBurst(1));
    const executions = await t.metric("live_stream_executions_total");
    const [id] = await recordBurst(1);
    await until(() => kept.results.at(-1)?.data.integrationEvents.id === id && revoked.results.at(-1)?.data.integrationEvents.id === id);
    expect((await t.metric("live_stream_executions_total")) - executions).toBe(1); // one stream for both tokens
    await runAdminCommand(prisma, { command: "token-revoke", token: tokens[1].token });
    const [after] = await recordBurst(1);
    await revoked.done;
    expect(revoked.ended()).toBe("complete");
    expect(revoked.results.at(-1).errors[0]).toMatchObject({ message: expect.stringMatching(/revoked/), extensions: { code: 401 } });
    await until(() => kept.results.at(-1)?.data.integrationEvents.id === after);
    expect(kept.results.at(-1).data.integrationEvents.id).toBe(after);
    expect(kept.ended()).toBeUndefined();
    await keptClient!.dispose();
    await revokedClient!.dispose();
  });

  it("ends a subscription whose role was removed mid-stream, with the refusal, and only that one", async () => {
    const demoted = await t.member(admin.organization, "dora@acme.test", "admin");
    const kept = wsClient(t.url, admin.token);
    const gone = wsClient(t.url, demoted.token);
    const keptSub = follow(kept, ORG_EVENTS, { org: admin.organization });
    const goneSub = follow(gone, ORG_EVENTS, { org: admin.organization });
    await untilLive([keptSub, goneSub], () => recordBurst(1));
    expect((await admin.patch(`/v1/orgs/${admin.organization}/members/${demoted.user}`, { role: "read" })).status).toBe(200);
    const before = keptSub.results.length;
    await recordBurst(1);
    await goneSub.done;
    expect(goneSub.results.at(-1).errors[0].message).toMatch(/needs admin/);
    expect(goneSub.results.at(-1).errors[0].extensions?.http).toBeUndefined();
    await until(() => keptSub.results.length > before);
    expect(keptSub.results.at(-1).data.organizationIntegrationEvents.id).toBeTruthy();
    expect(keptSub.ended()).toBeUndefined();
    await kept.dispose();
    await gone.dispose();
  });
});

describe("access of SSE subscriptions", () => {
  it("ends an SSE subscription whose role was removed mid-stream, with the refusal", async () => {
    const demoted = await t.member(admin.organization, "sven@acme.test", "admin");
    const stream = await sseSubscribe(t.url, demoted.token, ORG_EVENTS, { org: admin.organization });
    // Events until one arrived (the stream is live), then the demotion, then one more event.
    const refused = stream.firstEventWith("needs admin");
    const live = (async () => {
      const first = await sseSubscribe(t.url, demoted.token, ORG_EVENTS, { org: admin.organization });
      const seen = first.firstEventWith("organizationIntegrationEvents");
      let arrived = false;
      void seen.then(() => (arrived = true));
      for (let i = 0; !arrived && i < 100; i++) {
        await recordBurst(1);
        await new Promise((r) => setTimeout(r, 100));
      }
      await seen;
    })();
    await live;
    expect((await admin.patch(`/v1/orgs/${admin.organization}/members/${demoted.user}`, { role: "read" })).status).toBe(200);
    await recordBurst(1);
    const event = await refused;
    expect(event.errors[0].message).toMatch(/needs admin/);
  });
});

describe("slow consumers", () => {
  it("closes a socket that stops reading with 4008, while a fast one on the same gateway receives every event", async () => {
    const fast = wsClient(t.url, admin.token);
    const fastSub = follow(fast, EVENTS_FULL);
    // The slow consumer speaks the protocol by hand, so that it can stop reading its socket.
    const slow = new WebSocket(t.url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
    const received: string[] = [];
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      slow.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
    );
    slow.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.type === "connection_ack") slow.send(JSON.stringify({ id: "slow", type: "subscribe", payload: { query: EVENTS_FULL } }));
      else received.push(message.type);
    });
    await new Promise((resolve) => slow.on("open", resolve));
    slow.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}` } }));
    for (let i = 0; (fastSub.results.length === 0 || received.length === 0) && i < 100; i++) {
      await recordBurst(1);
      await until(() => fastSub.results.length > 0 && received.length > 0, 20);
    }
    const seen = fastSub.results.length;
    (slow as any)._socket.pause();
    const dropped = await t.metric("live_stream_slow_consumers_total");
    const big = "x".repeat(256 * 1024);
    const ids: string[] = [];
    for (let i = 0; i < 400 && (await t.metric("live_stream_slow_consumers_total")) === dropped; i++) {
      ids.push(...(await recordBurst(1, () => ({ previous: { configuration: { big } } }))));
    }
    expect(await t.metric("live_stream_slow_consumers_total")).toBe(dropped + 1);
    // The fast consumer received every event, in order.
    ids.push(...(await recordBurst(3)));
    await until(() => fastSub.results.length >= seen + ids.length);
    expect(fastSub.results.slice(seen).map((r) => r.data.integrationEvents.id)).toEqual(ids);
    (slow as any)._socket.resume();
    expect(await closed).toEqual({ code: 4008, reason: expect.stringMatching(/slow consumer/i) });
    await fast.dispose();
  });
});

describe("what a live subscription keeps", () => {
  it("keeps neither its connection's upgrade request nor anything holding it, and goes on delivering", async () => {
    // Each of 10,000 sockets would otherwise hold its request (headers, parser state) and, through
    // its operation's context, more: the stream keeps the subscriber's viewer alone.
    const gc = vm.runInNewContext("gc") as () => void;
    let upgrade: WeakRef<object> | undefined;
    const seen = (req: object) => (upgrade ??= new WeakRef(req));
    t.gateway.httpServer.prependOnceListener("upgrade", seen);
    const client = wsClient(t.url, admin.token);
    try {
      const sub = follow(client, SPACE, { id: spaceId });
      await untilLive([sub], (i) => admin.patch(`/v1/spaces/${spaceId}`, { title: `Kept ${i}` }));
      expect(upgrade).toBeDefined();
      for (let i = 0; i < 5 && upgrade!.deref(); i++) {
        await new Promise((r) => setTimeout(r, 20));
        gc();
      }
      expect(upgrade!.deref()).toBeUndefined();
      const before = sub.results.length;
      await admin.patch(`/v1/spaces/${spaceId}`, { title: "Still live" });
      await until(() => sub.results.some((r) => r.data?.spaceUpdated?.title === "Still live"));
      expect(sub.results.length).toBeGreaterThan(before);
      expect(sub.ended()).toBeUndefined();
    } finally {
      await client.dispose();
    }
  });
  it("lets go of the socket that opened a shared stream once it closed, while the others of the stream go on", async () => {
    const gc = vm.runInNewContext("gc") as () => void;
    const space = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Opened" })).body.id;
    let openerSocket: WeakRef<object> | undefined;
    t.gateway.httpServer.prependOnceListener("upgrade", (req: { socket: object }) => (openerSocket ??= new WeakRef(req.socket)));
    const opener = wsClient(t.url, admin.token);
    const other = wsClient(t.url, admin.token);
    try {
      const openerSub = follow(opener, SPACE, { id: space });
      await untilLive([openerSub], (i) => admin.patch(`/v1/spaces/${space}`, { title: `Opening ${i}` }));
      // The same subscription and viewer: the group the opener's context executes.
      const otherSub = follow(other, SPACE, { id: space });
      await untilLive([otherSub], (i) => admin.patch(`/v1/spaces/${space}`, { title: `Joining ${i}` }));
      await opener.dispose();
      for (let i = 0; i < 10 && openerSocket!.deref(); i++) {
        await new Promise((r) => setTimeout(r, 20));
        gc();
      }
      expect(openerSocket!.deref()).toBeUndefined();
      await admin.patch(`/v1/spaces/${space}`, { title: "After the opener" });
      await until(() => otherSub.results.some((r) => r.data?.spaceUpdated?.title === "After the opener"));
      expect(otherSub.results.at(-1)?.data?.spaceUpdated?.title).toBe("After the opener");
    } finally {
      await opener.dispose();
      await other.dispose();
    }
  });
});

describe("state streams", () => {
  it("gives a spaceUpdated subscriber that stopped reading the newest state once it reads again, without closing it", async () => {
    // 30 aliases of the title, of four bytes a character (titles count characters): each state is about 12 kB,
    // so that the network's buffers for a paused reader fill after a few hundred.
    const wide = `subscription($id: String!) { spaceUpdated(spaceId: $id) { id ${Array.from({ length: 29 }, (_, i) => `t${i}: title`).join(" ")} title } }`;
    const title = (i: number) => `State ${String(i).padStart(5, "0")} `.padEnd(100, "𝔘");
    const fast = wsClient(t.url, admin.token);
    const fastSub = follow(fast, wide, { id: spaceId });
    const fastNewest = () => fastSub.results.at(-1)?.data.spaceUpdated.title;
    // The slow reader speaks the protocol by hand, so that it can stop reading its socket.
    const slow = new WebSocket(t.url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
    const titles: string[] = [];
    let closed: number | undefined;
    slow.on("close", (code) => (closed = code));
    slow.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.type === "connection_ack")
        slow.send(JSON.stringify({ id: "slow", type: "subscribe", payload: { query: wide, variables: { id: spaceId } } }));
      else if (message.type === "next") titles.push(message.payload.data.spaceUpdated.title);
    });
    await new Promise((resolve) => slow.on("open", resolve));
    slow.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}` } }));
    let written = 0;
    const write = async () => expect((await admin.patch(`/v1/spaces/${spaceId}`, { title: title(written++) })).status).toBe(200);
    for (let i = 0; (fastSub.results.length === 0 || titles.length === 0) && i < 100; i++) {
      await write();
      await until(() => fastSub.results.length > 0 && titles.length > 0, 20);
    }
    (slow as any)._socket.pause();
    // Until the network holds all it can for the paused reader: the gateway then writes to the fast socket alone.
    for (let batch = 0; batch < 200; batch++) {
      const writes = await t.metric("live_stream_writes_total");
      for (let i = 0; i < 10; i++) await write();
      await until(() => fastNewest() === title(written - 1));
      if ((await t.metric("live_stream_writes_total")) - writes <= 10) break;
    }
    const skipped = await t.metric("live_stream_states_skipped_total");
    for (let i = 0; i < 5; i++) await write();
    const newest = title(written - 1);
    (slow as any)._socket.resume();
    await until(() => titles.at(-1) === newest);
    expect(titles.at(-1)).toBe(newest);
    expect(closed).toBeUndefined();
    // It skipped states it missed (fewer results than writes), each result newer than the one before.
    expect(titles.length).toBeLessThan(written);
    expect(await t.metric("live_stream_states_skipped_total")).toBeGreaterThan(skipped);
    expect(titles).toEqual([...new Set(titles)].sort());
    await until(() => fastNewest() === newest);
    const fastTitles = fastSub.results.map((r) => r.data.spaceUpdated.title);
    expect(fastTitles).toEqual([...new Set(fastTitles)].sort());
    slow.close();
    await fast.dispose();
  });
});

describe("order under a burst", () => {
  it("delivers every integration event to every subscriber, in the order recorded", async () => {
    const clients = [wsClient(t.url, admin.token), wsClient(t.url, admin.token), wsClient(t.url, reader.token)];
    const subs = clients.map((c) => follow(c, EVENTS));
    await untilLive(subs, () => recordBurst(1));
    const seen = subs.map((s) => s.results.length);
    const ids = await recordBurst(100);
    await until(() => subs.every((s, i) => s.results.length >= seen[i]! + ids.length));
    subs.forEach((s, i) => expect(s.results.slice(seen[i]).map((r) => r.data.integrationEvents.payload.eventId)).toEqual(ids));
    for (const c of clients) await c.dispose();
  });
});

describe("many sockets in one group", () => {
  it("gives every socket every event of a burst exactly once, in one order, each as its own message", async () => {
    const clients = Array.from({ length: 120 }, () => wsClient(t.url, admin.token));
    const subs = clients.map((c) => follow(c, EVENTS));
    await untilLive(subs, () => recordBurst(1));
    await new Promise((r) => setTimeout(r, 200));
    const seen = subs.map((s) => s.results.length);
    const deliveries = await t.metric("live_stream_deliveries_total");
    const writes = await t.metric("live_stream_writes_total");
    // Recorded concurrently: events arrive while the group is still sending the previous ones.
    const prisma = t.gateway.db.prisma;
    const integration = await prisma.integration.findUniqueOrThrow({ where: { name: "fanout" } });
    const installation = await prisma.integrationInstallation.findFirstOrThrow({ where: { integrationId: integration.id } });
    const recorded = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        recordIntegrationEvents(t.gateway.services, [
          {
            integration,
            installation: { id: installation.id, organizationId: admin.organization },
            type: "space_content_updated",
            fields: { spaceId, revisionId: `c${i}` },
          },
        ]),
      ),
    );
    const ids = recorded.map(([m]) => m!.id);
    await until(() => subs.every((s, i) => s.results.length >= seen[i]! + ids.length));
    const first = subs[0]!.results.slice(seen[0]).map((r) => r.data.integrationEvents.payload.eventId);
    expect([...first].sort()).toEqual([...ids].sort());
    subs.forEach((s, i) => expect(s.results.slice(seen[i]).map((r) => r.data.integrationEvents.payload.eventId)).toEqual(first));
    expect((await t.metric("live_stream_deliveries_total")) - deliveries).toBe(clients.length * ids.length);
    // A network write carries one or more of them.
    expect((await t.metric("live_stream_writes_total")) - writes).toBeGreaterThanOrEqual(clients.length);
    expect((await t.metric("live_stream_writes_total")) - writes).toBeLessThanOrEqual(clients.length * ids.length);
    for (const c of clients) await c.dispose();
  });
});

describe("operation ids", () => {
  it("sends each socket its messages under its own operation id, whether its client numbers operations like others or not", async () => {
    // Clients spoken by hand: three number their operation "1" (as simple clients do), the others each their own.
    const ids = ["1", crypto.randomUUID(), "1", "op-7", crypto.randomUUID(), "1"];
    const sockets = ids.map((id) => {
      const socket = new WebSocket(t.url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
      const received: { id: string; eventId: string; size: number }[] = [];
      const foreign: string[] = [];
      socket.on("message", (data) => {
        const message = JSON.parse(String(data));
        if (message.type === "connection_ack") socket.send(JSON.stringify({ id, type: "subscribe", payload: { query: EVENTS_FULL } }));
        else if (message.type === "next") {
          const event = message.payload.data.integrationEvents;
          received.push({
            id: message.id,
            eventId: event.payload.eventId,
            size: String(event.payload.previous?.configuration?.text ?? "").length,
          });
        } else if (message.type !== "ping") foreign.push(String(data).slice(0, 200));
      });
      socket.on("open", () =>
        socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}` } })),
      );
      return { id, socket, received, foreign };
    });
    for (let i = 0; sockets.some((s) => s.received.length === 0) && i < 100; i++) {
      await recordBurst(1);
      await until(() => sockets.every((s) => s.received.length > 0), 20);
    }
    const seen = sockets.map((s) => s.received.length);
    // Messages of every length a frame header tells apart (7 bits, 16 bits, 64 bits), recorded together:
    // a socket may receive several in one write.
    const sizes = [0, 2_000, 70_000, 10, 300_000, 0];
    const prisma = t.gateway.db.prisma;
    const integration = await prisma.integration.findUniqueOrThrow({ where: { name: "fanout" } });
    const installation = await prisma.integrationInstallation.findFirstOrThrow({ where: { integrationId: integration.id } });
    const recorded = await Promise.all(
      sizes.map((size, i) =>
        recordIntegrationEvents(t.gateway.services, [
          {
            integration,
            installation: { id: installation.id, organizationId: admin.organization },
            type: "space_content_updated",
            fields: { spaceId, revisionId: `id${i}`, ...(size ? { previous: { configuration: { text: "é".repeat(size / 2) } } } : {}) },
          },
        ]),
      ),
    );
    const events = recorded.map(([m]) => m!.id);
    await until(() => sockets.every((s, i) => s.received.length >= seen[i]! + events.length));
    const sizeOf = new Map(recorded.map(([m], i) => [m!.id, sizes[i]! / 2]));
    const order = sockets[0]!.received.slice(seen[0]).map((r) => r.eventId);
    expect([...order].sort()).toEqual([...events].sort());
    sockets.forEach((s, i) => {
      const mine = s.received.slice(seen[i]);
      expect(mine.map((r) => r.eventId)).toEqual(order);
      expect(mine.every((r) => r.id === s.id)).toBe(true);
      expect(mine.map((r) => r.size)).toEqual(order.map((id) => sizeOf.get(id)));
      expect(s.foreign).toEqual([]);
    });
    for (const s of sockets) s.socket.close();
  });
});

describe("live subscriptions per token (LIVE_SUBSCRIPTIONS_PER_TOKEN)", () => {
  let capped: TestGateway;
  afterAll(() => capped?.close());

  it("refuses the subscription past the cap with a 429 for that operation; the others and the socket go on", async () => {
    capped = await startGateway({ liveSubscriptionsPerToken: 3 });
    const owner = await capped.bootstrap("cap@acme.test", "Capped");
    const other = await capped.member(owner.organization, "otto@acme.test", "read");
    const space = (await owner.post(`/v1/orgs/${owner.organization}/spaces`, { title: "Capped" })).body.id;
    const client = wsClient(capped.url, owner.token);
    const subs = [1, 2, 3].map(() => follow(client, SPACE, { id: space }));
    const waitLive = async (list: ReturnType<typeof follow>[], title: string) => {
      for (let i = 0; list.some((s) => s.results.at(-1)?.data?.spaceUpdated.title !== title) && i < 100; i++) {
        await owner.patch(`/v1/spaces/${space}`, { title });
        await until(() => list.every((s) => s.results.at(-1)?.data?.spaceUpdated.title === title), 20);
      }
    };
    await waitLive(subs, "Three");
    // The fourth of the token, on the same socket and on another: refused, each for itself.
    const fourth = follow(client, SPACE, { id: space });
    const elsewhere = wsClient(capped.url, owner.token);
    const fifth = follow(elsewhere, SPACE, { id: space });
    await Promise.all([fourth.done, fifth.done]);
    for (const refused of [fourth, fifth]) {
      expect(refused.results).toHaveLength(1);
      expect(refused.results[0].errors[0]).toMatchObject({
        message: expect.stringMatching(/LIVE_SUBSCRIPTIONS_PER_TOKEN/),
        extensions: { code: 429 },
      });
      expect(refused.results[0].errors[0].extensions.http).toBeUndefined();
    }
    // Over SSE too: the cap is the token's.
    const sseRefused = await fetch(`${capped.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ query: SPACE, variables: { id: space } }),
    });
    expect(await sseRefused.text()).toMatch(/LIVE_SUBSCRIPTIONS_PER_TOKEN/);
    // Another token is not affected; the three go on.
    const otherClient = wsClient(capped.url, other.token);
    const otherSub = follow(otherClient, SPACE, { id: space });
    await waitLive([...subs, otherSub], "Four");
    for (const s of subs) expect(s.ended()).toBeUndefined();
    // Once one completes, its place is free again.
    await client.dispose();
    const again = wsClient(capped.url, owner.token);
    await until(async () => (await fetch(`${capped.url}/metrics`).then((r) => r.text())).includes("live_stream_subscriptions 1"));
    const later = [1, 2, 3].map(() => follow(again, SPACE, { id: space }));
    await waitLive(later, "Five");
    for (const s of later) expect(s.results.at(-1).data.spaceUpdated.title).toBe("Five");
    await again.dispose();
    await elsewhere.dispose();
    await otherClient.dispose();
  });

  it("caps the graphql-ws connections a token holds open at the same number: the next is closed with 4429, another token's are not", async () => {
    const owner = await capped.bootstrap("sockets@acme.test", "Sockets");
    const other = await capped.bootstrap("others@acme.test", "Others");
    const open = async (token: string) => {
      const socket = new WebSocket(`${capped.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      await new Promise((resolve) => socket.once("open", resolve));
      socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${token}` } }));
      const first = await Promise.race([
        new Promise<string>((resolve) => socket.once("message", (data) => resolve(JSON.parse(String(data)).type))),
        closed.then(() => "closed"),
      ]);
      return { socket, closed, acked: first === "connection_ack" };
    };
    const held = [await open(owner.token), await open(owner.token), await open(owner.token)];
    expect(held.map((h) => h.acked)).toEqual([true, true, true]);
    const fourth = await open(owner.token);
    expect(fourth.acked).toBe(false);
    expect(await fourth.closed).toEqual({ code: 4429, reason: expect.stringMatching(/LIVE_SUBSCRIPTIONS_PER_TOKEN/) });
    expect((await open(other.token)).acked).toBe(true);
    // A connection closed gives its place back.
    held[0]!.socket.close();
    await held[0]!.closed;
    await until(async () => (await open(owner.token)).acked, 20);
  });
});
