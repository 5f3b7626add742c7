import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created } from "../helpers/fixtures.js";
import { wsClient } from "../helpers/graphql-ws.js";
import { pubsubFailures } from "../../src/core/messaging/pubsub.js";
import { freePort } from "../helpers/ports.js";
import { startRedis, stopRedis } from "../helpers/redis-server.js";
import { eventually } from "../helpers/eventually.js";

/**
 * Redis carries only the pub/sub: with REDIS_URL set, a Redis outage must not stop writes nor the
 * gateway. Publishing fails soft (counted, logged once), subscriptions resume when Redis is back.
 * A private Redis server on a free port is started and killed here.
 */

let redis: ChildProcess | undefined;
let t: TestGateway | undefined;
afterAll(async () => {
  await t?.close();
  if (redis) await stopRedis(redis);
});

describe("a Redis outage", () => {
  it("keeps writes succeeding, counts failed publishes, and resumes subscriptions when Redis is back", { timeout: 120_000 }, async () => {
    const port = await freePort();
    redis = await startRedis(port);
    t = await startGateway({ redisUrl: `redis://127.0.0.1:${port}` });
    const { admin } = await acmeDocs(t);
    const space = created(await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Before" }));

    const received: string[] = [];
    const client = wsClient(t.url, admin.token);
    const stop = client.subscribe(
      { query: `subscription($id: String!) { spaceUpdated(spaceId: $id) { title } }`, variables: { id: space.id } },
      { next: (v: any) => received.push(v.data?.spaceUpdated?.title), error: () => undefined, complete: () => undefined },
    );
    try {
      // Live before the outage.
      await eventually(async () => {
        await admin.patch(`/v1/spaces/${space.id}`, { title: "Live" });
        return received.includes("Live");
      });

      const failuresBefore = pubsubFailures.publish;
      const outagesBefore = pubsubFailures.outages;
      await stopRedis(redis);
      // Writes go on while Redis is away, each one publishing into the void.
      for (let i = 1; i <= 6; i++) {
        const res = await admin.patch(`/v1/spaces/${space.id}`, { title: `Offline ${i}` });
        expect(res.status).toBe(200);
        expect((await admin.post(`/v1/spaces/${space.id}/content/pages`, { title: `Page ${i}` })).status).toBe(201);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await admin.get(`/v1/spaces/${space.id}`)).body.title).toBe("Offline 6");
      expect(pubsubFailures.publish).toBeGreaterThan(failuresBefore);
      // One outage, however many failed publishes and reconnection attempts.
      expect(pubsubFailures.outages).toBe(outagesBefore + 1);
      // Made-up tokens while the rate-limit counters are out of reach (REST, and a graphql-ws connection): refused one by one, never a 5xx.
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${t!.url}/v1/orgs`, { headers: { authorization: `Bearer dapi_${"z".repeat(36)}${i}` } });
        expect(res.status).toBe(401);
      }
      const refused = await new Promise<number>((resolve) => {
        const socket = new WebSocket(`${t!.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
        socket.once("open", () =>
          socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: "Bearer dapi_made_up" } })),
        );
        socket.once("close", (code) => resolve(code));
      });
      expect(refused).toBe(4403);
      // GraphQL writes too.
      const gql = await admin.graphql(`mutation($id: String!) { spaceUpdate(spaceId: $id, title: "Offline GraphQL") { title } }`, {
        id: space.id,
      });
      expect(gql.errors).toBeUndefined();

      // Redis back on the same port: the subscription follows again without reconnecting.
      redis = await startRedis(port);
      await eventually(async () => {
        await admin.patch(`/v1/spaces/${space.id}`, { title: "Back" });
        return received.includes("Back");
      }, 30_000);
      expect(received.filter((title) => title?.startsWith("Offline"))).toEqual([]);
      expect((await admin.get("/v1/orgs")).status).toBe(200);
    } finally {
      stop();
      await client.dispose();
    }
  });
});
