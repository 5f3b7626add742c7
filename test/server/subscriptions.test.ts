import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { collect, firstOutcome, sseSubscribe, wsClient } from "../helpers/graphql-ws.js";
import { runAdminCommand } from "../../src/cli/commands.js";

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let spaceId: string;

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme");
  spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Handbook" })).body.id;
});
afterAll(() => t?.close());

const SUBSCRIPTION = `subscription($id: String!) { spaceUpdated(spaceId: $id) { id title editMode } }`;

describe("graphql-ws on /graphql", () => {
  it("streams a space's updates to a subscriber holding a token", async () => {
    const client = wsClient(t.url, admin.token);
    const sub = collect(client, SUBSCRIPTION, { id: spaceId }, 2);
    await sub.ready;
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Staff handbook" });
    await admin.patch(`/v1/spaces/${spaceId}`, { editMode: "locked" });
    const results = await sub.results;
    expect(results.map((r) => r.data.spaceUpdated)).toEqual([
      { id: spaceId, title: "Staff handbook", editMode: "live" },
      { id: spaceId, title: "Staff handbook", editMode: "locked" },
    ]);
    await client.dispose();
    // Live again for the tests below, which change its title and emoji (refused while locked).
    expect((await admin.patch(`/v1/spaces/${spaceId}`, { editMode: "live" })).status).toBe(200);
  });

  it("refuses a connection without a valid token", async () => {
    const client = wsClient(t.url, null);
    const closed = new Promise<number>((resolve) => client.on("closed", (e: any) => resolve(e.code)));
    collect(client, SUBSCRIPTION, { id: spaceId }, 1).results.catch(() => undefined);
    expect(await closed).toBe(4403);
    await client.dispose();
  });

  it("refuses, at subscribe time, a space of another organization", async () => {
    const other = await t.bootstrap("oscar@other.test", "Other");
    const client = wsClient(t.url, other.token);
    const outcome = await firstOutcome(client, SUBSCRIPTION, { id: spaceId });
    expect(JSON.stringify(outcome)).toMatch(/not found/i);
    await client.dispose();
  });
});

describe("a revoked token's live subscriptions", () => {
  /** A member's spaceUpdated subscription through the gateway at `url`: what it received, and when it completed. */
  async function subscriber(url: string, email: string) {
    const member = await t.member(admin.organization, email, "read");
    const client = wsClient(url, member.token);
    const results: any[] = [];
    const completed = new Promise<void>((resolve, reject) =>
      client.subscribe(
        { query: SUBSCRIPTION, variables: { id: spaceId } },
        { next: (r) => results.push(r), error: reject, complete: resolve },
      ),
    );
    completed.catch(() => undefined); // awaited by the test; a socket closed after a failure is not a second failure
    return { member, client, results, completed };
  }
  const until = async (test: () => boolean, tries = 200) => {
    for (let i = 0; i < tries && !test(); i++) await new Promise((r) => setTimeout(r, 50));
  };
  /**
   * Changes the space until every subscriber has received an update (with Redis, a subscription
   * is live a moment after it is made), then once more and waits for that last one: no earlier
   * update can arrive after it. Forgets what they received.
   */
  async function untilLive(...subs: { results: any[] }[]) {
    for (let i = 0; subs.some((s) => s.results.length === 0) && i < 100; i++) {
      await admin.patch(`/v1/spaces/${spaceId}`, { title: `Before revoking ${i}` });
      await until(() => subs.every((s) => s.results.length > 0), 10);
    }
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Live" });
    await until(() => subs.every((s) => s.results.at(-1)?.data?.spaceUpdated?.title === "Live"));
    for (const s of subs) expect(s.results.at(-1).data.spaceUpdated.title).toBe("Live");
    for (const s of subs) s.results.length = 0;
  }
  const outcomes = (results: any[]) => results.map((r) => r.data?.spaceUpdated?.title ?? r.errors?.[0]?.extensions?.code);

  it("stop receiving once the token is revoked: one 401 error, then the subscription completes", async () => {
    const revoked = await subscriber(t.url, "rita@acme.test");
    const untouched = await subscriber(t.url, "sam@acme.test");
    await untilLive(revoked, untouched);
    expect(await runAdminCommand(t.gateway.db.prisma, { command: "token-revoke", token: revoked.member.token })).toBeTruthy();
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "After revoking" });
    await revoked.completed;
    expect(outcomes(revoked.results)).toEqual([401]);
    expect(revoked.results[0].errors[0].message).toMatch(/revoked/);
    await admin.patch(`/v1/spaces/${spaceId}`, { title: "Later still" });
    // Another token's subscription to the same space goes on.
    await until(() => untouched.results.length >= 2);
    expect(outcomes(untouched.results)).toEqual(["After revoking", "Later still"]);
    expect(outcomes(revoked.results)).toEqual([401]);
    await revoked.client.dispose();
    await untouched.client.dispose();
    // A new connection with the revoked token is refused.
    const again = wsClient(t.url, revoked.member.token);
    const closed = new Promise<number>((resolve) => again.on("closed", (e: any) => resolve(e.code)));
    collect(again, SUBSCRIPTION, { id: spaceId }, 1).results.catch(() => undefined);
    expect(await closed).toBe(4403);
    await again.dispose();
  });

  it.runIf(process.env.REDIS_URL && process.env.DATABASE_URL)(
    "stop on another gateway too (revoked through one, subscribed on the other)",
    async () => {
      const { createGateway } = await import("../../src/server.js");
      const second = await createGateway({ ...t.config, port: 0 });
      const port = await second.listen(0);
      try {
        const sub = await subscriber(`http://127.0.0.1:${port}`, "una@acme.test");
        await untilLive(sub);
        await runAdminCommand(t.gateway.db.prisma, { command: "token-revoke", token: sub.member.token });
        await admin.patch(`/v1/spaces/${spaceId}`, { title: "Not seen" });
        await sub.completed;
        expect(outcomes(sub.results)).toEqual([401]);
        await sub.client.dispose();
      } finally {
        await second.close();
      }
    },
  );
});

describe("server-sent events on /graphql", () => {
  it("streams the same subscription over SSE", async () => {
    const stream = await sseSubscribe(t.url, admin.token, SUBSCRIPTION, { id: spaceId });
    expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
    setTimeout(() => void admin.patch(`/v1/spaces/${spaceId}`, { emoji: "1f4d8" }), 200);
    const event = await stream.firstEventWith("spaceUpdated");
    expect(event.data.spaceUpdated.id).toBe(spaceId);
  });
});

describe.runIf(process.env.REDIS_URL && process.env.DATABASE_URL)("Redis pub/sub between gateways", () => {
  it("delivers an update made through one gateway to a subscriber of another", async () => {
    // A second gateway on the same PostgreSQL database and Redis.
    const { createGateway } = await import("../../src/server.js");
    const second = await createGateway({ ...t.config, port: 0 });
    const port = await second.listen(0);
    try {
      const client = wsClient(`http://127.0.0.1:${port}`, admin.token);
      const sub = collect(client, SUBSCRIPTION, { id: spaceId }, 1);
      await sub.ready;
      await admin.patch(`/v1/spaces/${spaceId}`, { title: "Handbook via Redis" });
      const [result] = await sub.results;
      expect(result.data.spaceUpdated.title).toBe("Handbook via Redis");
      await client.dispose();
    } finally {
      await second.close();
    }
  });
});
