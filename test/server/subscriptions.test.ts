import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createClient, type Client } from "graphql-ws";
import { startGateway, type TestGateway } from "../helpers/gateway.js";

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

function wsClient(url: string, token: string | null): Client {
  return createClient({
    url: url.replace(/^http/, "ws") + "/graphql",
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

/** Subscribes and resolves with the first `count` results (or rejects with the first error). */
function collect(client: Client, variables: Record<string, unknown>, count: number): { ready: Promise<void>; results: Promise<any[]> } {
  const results: any[] = [];
  let markReady!: () => void;
  const ready = new Promise<void>((r) => (markReady = r));
  const done = new Promise<any[]>((resolve, reject) => {
    const stop = client.subscribe(
      { query: SUBSCRIPTION, variables },
      {
        next: (value) => {
          results.push(value);
          if (results.length === count) {
            stop();
            resolve(results);
          }
        },
        error: reject,
        complete: () => resolve(results),
      },
    );
    client.on("connected", () => setTimeout(markReady, 100));
  });
  return { ready, results: done };
}

describe("graphql-ws on /graphql", () => {
  it("streams a space's updates to a subscriber holding a token", async () => {
    const client = wsClient(t.url, admin.token);
    const sub = collect(client, { id: spaceId }, 2);
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
    collect(client, { id: spaceId }, 1).results.catch(() => undefined);
    expect(await closed).toBe(4403);
    await client.dispose();
  });

  it("refuses, at subscribe time, a space of another organization", async () => {
    const other = await t.bootstrap("oscar@other.test", "Other");
    const client = wsClient(t.url, other.token);
    const outcome = await collect(client, { id: spaceId }, 1).results.then(
      (r) => r,
      (errors) => errors,
    );
    expect(JSON.stringify(outcome)).toMatch(/not found/i);
    await client.dispose();
  });
});

describe("server-sent events on /graphql", () => {
  it("streams the same subscription over SSE", async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      signal: controller.signal,
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${admin.token}` },
      body: JSON.stringify({ query: SUBSCRIPTION, variables: { id: spaceId } }),
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    setTimeout(() => void admin.patch(`/v1/spaces/${spaceId}`, { emoji: "1f4d8" }), 200);
    let text = "";
    while (!text.includes("spaceUpdated")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    const line = text.split("\n").find((l) => l.startsWith("data:") && l.includes("spaceUpdated"))!;
    expect(JSON.parse(line.slice(5)).data.spaceUpdated.id).toBe(spaceId);
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
      const sub = collect(client, { id: spaceId }, 1);
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
