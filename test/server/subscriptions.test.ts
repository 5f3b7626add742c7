import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { collect, firstOutcome, sseSubscribe, wsClient } from "../helpers/graphql-ws.js";

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
