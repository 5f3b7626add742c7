import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { startReceiver } from "./receiver.js";
import { eventually } from "../helpers/eventually.js";
import { verifySignature } from "../../src/events/signing.js";
import { recordIntegrationEvents } from "../../src/events/record.js";
import { createDispatcher, backoffMs } from "../../src/events/delivery.js";
import type { IntegrationEventMessage } from "../../src/events/messages.js";

// A shared machine can be slow: generous limits, so that only real failures fail.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let other: Awaited<ReturnType<TestGateway["bootstrap"]>>;

const RETRY_BASE = 150;

beforeAll(async () => {
  t = await startGateway({
    integrationRetryBaseMs: RETRY_BASE,
    integrationRetryMaxMs: 2_000,
    integrationMaxAttempts: 3,
    integrationDeliveryTimeoutMs: 3_000,
    integrationDispatchPollMs: 100,
    integrationClaimLeaseMs: 30_000,
  });
  admin = await t.bootstrap("ada@acme.test", "Acme");
  other = await t.bootstrap("oscar@other.test", "Other");
}, 180_000);
afterAll(() => t?.close());

/** Publishes a public integration with development mode on `tunnelUrl`; returns its signing secret. */
async function integration(name: string, tunnelUrl: string, extra: Record<string, unknown> = {}, all = false) {
  const res = await admin.post(`/v1/integrations/${name}`, {
    title: name,
    organization: admin.organization,
    visibility: "public",
    ...extra,
  });
  expect(res.status).toBe(201);
  expect((await admin.put(`/v1/integrations/${name}/dev`, { tunnelUrl, all })).status).toBe(204);
  return (await admin.get(`/v1/integrations/${name}/signing-secret`)).body.signingSecret as string;
}

/** `count` space_content_updated events of `integration`'s installation `installationId` in admin's organization, one revision each. */
function contentEvents(
  integration: Parameters<typeof recordIntegrationEvents>[1][number]["integration"],
  installationId: string,
  spaceId: string,
  count: number,
) {
  return Array.from({ length: count }, (_, i) => ({
    integration,
    installation: { id: installationId, organizationId: admin.organization },
    type: "space_content_updated" as const,
    fields: { spaceId, revisionId: `rev_${i}` },
  }));
}

async function eventOf(name: string, id: string) {
  return (await admin.get(`/v1/integrations/${name}/events/${id}`)).body;
}

function signed(secret: string, r: { body: string; headers: Record<string, any> }) {
  return verifySignature(secret, r.body, { signature: r.headers["x-signature"], timestamp: r.headers["x-signature-timestamp"] });
}

describe("event delivery to the development tunnel", () => {
  it("retries with exponential backoff until the receiver succeeds: three attempts in the trace, one success, valid signatures", async () => {
    const receiver = await startReceiver([{ status: 500, body: { error: "boom" } }, { status: 503 }, { status: 200 }]);
    try {
      const secret = await integration("retrying", receiver.url);
      const inst = (await admin.post("/v1/integrations/retrying/installations", { organization: admin.organization })).body;
      const id = (await admin.get("/v1/integrations/retrying/events")).body.items[0].id;
      const done = await eventually(async () => {
        const e = await eventOf("retrying", id);
        return e.event.status === "success" ? e : null;
      });
      expect(receiver.received).toHaveLength(3);
      for (const r of receiver.received) {
        expect(r.json).toEqual({ eventId: id, type: "installation_setup", installationId: inst.id, status: "active" });
        expect(r.headers["content-type"]).toBe("application/json");
        expect(r.headers["x-integration-event-id"]).toBe(id);
        expect(r.headers["x-integration-event-type"]).toBe("installation_setup");
        expect(r.headers["x-integration-event-attempt"]).toBe(String(receiver.received.indexOf(r) + 1));
        expect(r.headers["x-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
        expect(signed(secret, r)).toBe(true);
        expect(r.headers).not.toHaveProperty("content-security-policy");
      }
      expect(signed("whsec_wrong", receiver.received[0]!)).toBe(false);
      // Exponential backoff: about 150 ms, then 300 ms between attempts.
      const gaps = [receiver.received[1]!.at - receiver.received[0]!.at, receiver.received[2]!.at - receiver.received[1]!.at];
      expect(gaps[0]).toBeGreaterThanOrEqual(RETRY_BASE - 20);
      expect(gaps[1]).toBeGreaterThanOrEqual(2 * RETRY_BASE - 20);
      const attempts = done.trace.logs.filter((l: any) => l.message.startsWith("Attempt"));
      expect(attempts.map((l: any) => l.level)).toEqual(["warning", "warning", "info"]);
      expect(attempts[0].message).toContain("HTTP 500");
      expect(attempts[1].message).toContain("HTTP 503");
      expect(attempts[2].message).toContain("delivered");
      expect(done.event.status).toBe("success");
      const row = await t.gateway.db.prisma.integrationEvent.findUniqueOrThrow({ where: { id } });
      expect(row.attempts).toBe(3);
      // The whole trace, oldest first: the entry its row implies (recorded), then the attempts stored.
      expect(done.trace.logs.map((l: any) => l.message)).toEqual([`Recorded ${row.type} event.`, ...attempts.map((l: any) => l.message)]);
      expect(done.trace.logs[0].timestamp).toBe(row.createdAt.toISOString());
      const times = done.trace.logs.map((l: any) => Date.parse(l.timestamp));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(row.deliveredAt).toBeInstanceOf(Date);
    } finally {
      await receiver.close();
    }
  });

  it("marks an event failed after the last attempt; a timeout counts as a failure", async () => {
    const receiver = await startReceiver([{ status: 200, delayMs: 5_000 }, { status: 502 }]);
    try {
      await integration("failing", receiver.url);
      await admin.post("/v1/integrations/failing/installations", { organization: admin.organization });
      const id = (await admin.get("/v1/integrations/failing/events")).body.items[0].id;
      const done = await eventually(async () => {
        const e = await eventOf("failing", id);
        return e.event.status === "failed" ? e : null;
      });
      expect(receiver.received).toHaveLength(3);
      const attempts = done.trace.logs.filter((l: any) => l.message.startsWith("Attempt"));
      expect(attempts.map((l: any) => l.level)).toEqual(["warning", "warning", "error"]);
      expect(attempts[0].message).toContain("timed out after 3000 ms");
      expect(attempts[2].message).toContain("Giving up");
      expect((await admin.get("/v1/integrations/failing/events", { status: "failed" })).body.count).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  it("forwards only the owner organization's events unless `all` is true", async () => {
    const receiver = await startReceiver();
    try {
      await integration("owner-only", receiver.url);
      await other.post("/v1/integrations/owner-only/installations", { organization: other.organization });
      const skipped = (await admin.get("/v1/integrations/owner-only/events")).body.items[0];
      expect(skipped.status).toBe("skipped");
      expect((await eventOf("owner-only", skipped.id)).trace.logs.map((l: any) => l.message).join(" ")).toContain("owner organization");
      await admin.post("/v1/integrations/owner-only/installations", { organization: admin.organization });
      await receiver.waitFor(1);

      await admin.put("/v1/integrations/owner-only/dev", { tunnelUrl: receiver.url, all: true });
      const theirs = (await other.get("/v1/integrations/owner-only/installations")).body.items[0];
      await other.patch(`/v1/integrations/owner-only/installations/${theirs.id}`, { configuration: { x: 1 } });
      await receiver.waitFor(2);
      expect(receiver.received[1]!.json).toMatchObject({
        type: "installation_setup",
        installationId: theirs.id,
        previous: { status: "active", configuration: {} },
      });
      expect(receiver.received.map((r) => r.json.installationId)).not.toContain(
        skipped.payload.installationId === theirs.id ? "none" : skipped.payload.installationId,
      );
    } finally {
      await receiver.close();
    }
  });

  it("sends the content security policy with script-fetch and block-fetch events", async () => {
    const receiver = await startReceiver();
    try {
      await integration("with-csp", receiver.url, { contentSecurityPolicy: "default-src 'self'" });
      const inst = (await admin.post("/v1/integrations/with-csp/installations", { organization: admin.organization })).body;
      await receiver.waitFor(1);
      const row = await t.gateway.db.prisma.integration.findUniqueOrThrow({ where: { name: "with-csp" } });
      await recordIntegrationEvents(t.gateway.services, [
        {
          integration: row,
          installation: { id: inst.id, organizationId: admin.organization },
          type: "block_fetch",
          fields: { blockId: "b" },
        },
        { integration: row, installation: { id: inst.id, organizationId: admin.organization }, type: "script_fetch" },
      ]);
      await receiver.waitFor(3);
      const byType = Object.fromEntries(receiver.received.map((r) => [r.json.type, r.headers["content-security-policy"]]));
      expect(byType).toEqual({ installation_setup: undefined, block_fetch: "default-src 'self'", script_fetch: "default-src 'self'" });
    } finally {
      await receiver.close();
    }
  });

  it("publishes status changes on the integration's topic", async () => {
    const receiver = await startReceiver([{ status: 500 }, { status: 200 }]);
    try {
      await integration("published", receiver.url);
      const row = await t.gateway.db.prisma.integration.findUniqueOrThrow({ where: { name: "published" } });
      const seen: IntegrationEventMessage[] = [];
      const iterator = t.gateway.services.pubsub.subscribe("integration:event", row.id)[Symbol.asyncIterator]();
      const reading = (async () => {
        for (;;) {
          const { value, done } = await iterator.next();
          if (done) return;
          seen.push(value);
          if (value.status === "success") return;
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      await admin.post("/v1/integrations/published/installations", { organization: admin.organization });
      await reading;
      await iterator.return?.();
      expect(seen.map((m) => m.status)).toEqual(["pending", "success"]);
      // The delivered status is told with the event as it was recorded (read back by the dispatcher's claim): same time, payload, installation and organization.
      const [recorded, delivered] = seen;
      expect({ ...delivered, status: "pending" }).toStrictEqual(recorded);
      const stored = await t.gateway.db.prisma.integrationEvent.findUniqueOrThrow({ where: { id: recorded!.id } });
      expect(delivered!.createdAt).toBe(stored.createdAt.toISOString());
    } finally {
      await receiver.close();
    }
  });

  it("never sends one attempt twice when several dispatchers share the outbox", async () => {
    const receiver = await startReceiver([{ status: 200, delayMs: 30 }]);
    const extra = [1, 2].map(() =>
      createDispatcher({ prisma: t.gateway.db.prisma, pubsub: t.gateway.services.pubsub, config: t.config, concurrency: 4 }),
    );
    try {
      await integration("shared", receiver.url);
      const inst = (await admin.post("/v1/integrations/shared/installations", { organization: admin.organization })).body;
      await receiver.waitFor(1);
      for (const d of extra) await d.start();
      const row = await t.gateway.db.prisma.integration.findUniqueOrThrow({ where: { name: "shared" } });
      await recordIntegrationEvents(t.gateway.services, contentEvents(row, inst.id, "spc_x", 30));
      for (const d of extra) d.wake();
      await receiver.waitFor(31);
      await new Promise((r) => setTimeout(r, 300));
      await eventually(
        async () => (await t.gateway.db.prisma.integrationEvent.count({ where: { integrationId: row.id, status: "pending" } })) === 0,
        60_000,
      );
      expect(await t.gateway.db.prisma.integrationEvent.count({ where: { integrationId: row.id, status: "success" } })).toBe(31);
      // Each claim is one attempt of one dispatcher: an (event, attempt) pair arrives once. (An event may
      // legitimately arrive again as a later attempt when an answer was slower than the delivery timeout.)
      const pairs = receiver.received.map((r) => `${r.json.eventId}#${r.headers["x-integration-event-attempt"]}`);
      expect(new Set(pairs).size).toBe(pairs.length);
      expect(new Set(receiver.received.map((r) => r.json.eventId)).size).toBe(31);
      const rows = await t.gateway.db.prisma.integrationEvent.findMany({
        where: { integrationId: row.id },
        select: { id: true, attempts: true },
      });
      // An attempt that timed out may not have reached the receiver: at most one arrival per attempt.
      for (const r of rows) expect(receiver.received.filter((x) => x.json.eventId === r.id).length).toBeLessThanOrEqual(r.attempts);
    } finally {
      for (const d of extra) await d.stop();
      await receiver.close();
    }
  });

  it("claims a batch and reads what delivering it needs in one statement, and a delivery that ends claims again only when something may be due", async () => {
    const receiver = await startReceiver();
    try {
      await integration("batched", receiver.url);
      const inst = (await admin.post("/v1/integrations/batched/installations", { organization: admin.organization })).body;
      await receiver.waitFor(1);
      await new Promise((r) => setTimeout(r, 300));
      const row = await t.gateway.db.prisma.integration.findUniqueOrThrow({ where: { name: "batched" } });
      const statements: string[] = [];
      t.gateway.db.observeStatements((_s, ok, sql) => {
        if (ok) statements.push(sql);
      });
      // Ten events recorded together: the dispatcher (16 deliveries at once) claims them with one statement.
      await recordIntegrationEvents(t.gateway.services, contentEvents(row, inst.id, "spc_batched", 10));
      await receiver.waitFor(11);
      await eventually(
        async () => (await t.gateway.db.prisma.integrationEvent.count({ where: { integrationId: row.id, status: "pending" } })) === 0,
      );
      await new Promise((r) => setTimeout(r, 300));
      const claims = statements.filter((s) => /^WITH "claimed" AS \(\s*UPDATE "IntegrationEvent"\s+SET "attempts"/.test(s)).length;
      // (This test's own counts of pending events aside.)
      const reads = statements.filter(
        (s) => /\bFROM "public"\."(IntegrationEvent|Integration|IntegrationInstallation)"/.test(s) && !/\bCOUNT\(/.test(s),
      ).length;
      // The claim read what delivering the events needs with them: no other read of events, integrations or installations.
      expect(reads).toBe(0);
      // One claim took the ten; the ten deliveries that ended claimed nothing more (nothing was due).
      // (On a shared database the dispatcher also polls, here every 100 ms, for what another process left.)
      if (!t.config.databaseUrl) expect(claims).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  // On PostgreSQL the dispatchers also poll, which would hide a claim that is never tried again.
  it.skipIf(!!process.env.DATABASE_URL)(
    "a claim that failed is tried again without another wake-up (no poll on the embedded database)",
    async () => {
      const receiver = await startReceiver();
      const prisma = t.gateway.db.prisma;
      // A dispatcher whose first claim fails (the database away for a moment).
      let failures = 1;
      const flaky = new Proxy(prisma, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (prop !== "$queryRawUnsafe") return typeof value === "function" ? value.bind(target) : value;
          return (...args: unknown[]) =>
            failures-- > 0 ? Promise.reject(new Error("claim failed")) : (value as Function).apply(target, args);
        },
      });
      const dispatcher = createDispatcher({ prisma: flaky, pubsub: t.gateway.services.pubsub, config: t.config, exclusive: true });
      try {
        await integration("stranded", receiver.url);
        const inst = (await admin.post("/v1/integrations/stranded/installations", { organization: admin.organization })).body;
        await receiver.waitFor(1);
        const row = await prisma.integration.findUniqueOrThrow({ where: { name: "stranded" } });
        // Written as recording does, without waking the gateway's own dispatcher: this one alone looks.
        await prisma.integrationEvent.create({
          data: {
            id: "iev_stranded",
            integrationId: row.id,
            installationId: inst.id,
            type: "space_content_updated",
            payload: { spaceId: "spc_s" },
            nextAttemptAt: new Date(),
          },
        });
        await dispatcher.start();
        await receiver.waitFor(2);
        expect(failures).toBeLessThan(0); // the failed claim happened, and a later one delivered
        expect(receiver.received[1]!.headers["x-integration-event-id"]).toBe("iev_stranded");
        // The failed statement claimed nothing: the first attempt is the one delivered.
        expect(receiver.received[1]!.headers["x-integration-event-attempt"]).toBe("1");
      } finally {
        await dispatcher.stop();
        await receiver.close();
      }
    },
  );

  it("retries failed claims with one timer, however many wake-ups failed meanwhile", async () => {
    let calls = 0;
    const failing = new Proxy(t.gateway.db.prisma, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "$queryRawUnsafe") return typeof value === "function" ? value.bind(target) : value;
        return () => {
          calls++;
          return Promise.reject(new Error("database away"));
        };
      },
    });
    const dispatcher = createDispatcher({ prisma: failing, pubsub: t.gateway.services.pubsub, config: t.config, exclusive: true });
    try {
      await dispatcher.start();
      // Twenty wake-ups (events recorded) while the database is away, each claim failing.
      for (let i = 0; i < 20; i++) {
        dispatcher.wake();
        await new Promise((r) => setTimeout(r, 10));
      }
      await new Promise((r) => setTimeout(r, 100));
      const before = calls;
      // Two retry periods (CLAIM_RETRY_MS, 1 s): a claim each, not one for every failed wake-up.
      await new Promise((r) => setTimeout(r, 2_100));
      expect(calls - before).toBeGreaterThanOrEqual(1);
      expect(calls - before).toBeLessThanOrEqual(3);
    } finally {
      await dispatcher.stop();
    }
  });

  // On PostgreSQL the dispatchers also poll: the gateway's own could deliver the event meant for this one.
  it.skipIf(!!process.env.DATABASE_URL)(
    "a new event is delivered while deliveries to a receiver that does not answer hold most of the room",
    async () => {
      // The installation's event is answered; every later request to `slow` hangs.
      const slow = await startReceiver((_req, n) => (n === 0 ? { status: 200 } : "hang"));
      const fast = await startReceiver();
      const prisma = t.gateway.db.prisma;
      // Room for 4: three deliveries that hang leave less than half of it.
      const dispatcher = createDispatcher({
        prisma,
        pubsub: t.gateway.services.pubsub,
        config: { ...t.config, integrationDeliveryTimeoutMs: 30_000 },
        exclusive: true,
        concurrency: 4,
      });
      const ids: string[] = [];
      try {
        const rows: { integrationId: string; installationId: string }[] = [];
        for (const [name, receiver] of [
          ["held-slow", slow],
          ["held-fast", fast],
        ] as const) {
          await integration(name, receiver.url);
          const inst = (await admin.post(`/v1/integrations/${name}/installations`, { organization: admin.organization })).body;
          await receiver.waitFor(1);
          rows.push({
            integrationId: (await prisma.integration.findUniqueOrThrow({ where: { name } })).id,
            installationId: inst.id as string,
          });
        }
        // The installations' own events settled: this dispatcher's start releases claims still in flight.
        await eventually(async () => (await prisma.integrationEvent.count({ where: { status: "pending" } })) === 0);
        // Written as recording does, without waking the gateway's own dispatcher: this one alone looks.
        const create = async (at: (typeof rows)[number], id: string) => {
          ids.push(id);
          await prisma.integrationEvent.create({
            data: { id, ...at, type: "space_content_updated", payload: { spaceId: id }, nextAttemptAt: new Date() },
          });
        };
        for (let i = 0; i < 3; i++) await create(rows[0]!, `iev_held_${i}`);
        await dispatcher.start();
        await slow.waitFor(4);
        await create(rows[1]!, "iev_held_fast");
        dispatcher.wake();
        // Delivered while the three still hang (they would for 30 s).
        await fast.waitFor(2, 5_000);
        expect(fast.received[1]!.json).toEqual({ spaceId: "iev_held_fast" });
        expect(
          slow.received
            .slice(1)
            .map((r) => r.json.spaceId)
            .sort(),
        ).toEqual(["iev_held_0", "iev_held_1", "iev_held_2"]);
      } finally {
        await dispatcher.stop();
        await prisma.integrationEvent.deleteMany({ where: { id: { in: ids } } });
        await slow.close();
        await fast.close();
      }
    },
  );

  it("computes the backoff as base × 2^(attempt − 1), capped", () => {
    expect([1, 2, 3, 4, 10].map((a) => backoffMs(a, 100, 1_000))).toEqual([100, 200, 400, 800, 1_000]);
  });
});
