import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created } from "../helpers/fixtures.js";
import { freePort } from "../helpers/ports.js";
import { startRedis, stopRedis } from "../helpers/redis-server.js";
import { stallingProxy } from "../helpers/stalling-proxy.js";
import { wsClient } from "../helpers/graphql-ws.js";

/**
 * A Redis that stops answering without closing anything (a paused server, a network path that
 * drops packets): every use of it — the rate-limit counters, the response cache, the pub/sub —
 * gives up after a bounded wait and the gateway serves without it (counting in memory, reading
 * the database), as when Redis is down; once it answers again, it is used again. Before, one
 * stalled connection held every /v1 request (the rate-limit counters' client had no bound).
 * A private Redis behind a proxy that can stall is used here.
 */

let redis: ChildProcess | undefined;
let proxy: Awaited<ReturnType<typeof stallingProxy>> | undefined;
let t: TestGateway | undefined;
beforeAll(async () => {
  const port = await freePort();
  redis = await startRedis(port);
  proxy = await stallingProxy(port);
  t = await startGateway({ redisUrl: `redis://127.0.0.1:${proxy.port}`, rateLimitPerMinute: 1000, responseCache: "on" });
}, 180_000);
afterAll(async () => {
  proxy?.resume();
  await t?.close();
  await proxy?.close();
  if (redis) await stopRedis(redis);
});

/** A request that has not answered in 20 s is taken as one that never will. */
const LIVENESS_MS = 20_000;

describe("a stalled Redis", () => {
  it("does not hold requests: REST and GraphQL reads and writes answer, and see the writes, until Redis answers again", {
    timeout: 180_000,
  }, async () => {
    const { admin } = await acmeDocs(t!);
    const space = created(await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Before" }));
    const get = () =>
      fetch(`${t!.url}/v1/spaces/${space.id}`, {
        headers: { authorization: `Bearer ${admin.token}` },
        signal: AbortSignal.timeout(LIVENESS_MS),
      });
    // Answered, and kept by the response cache (in Redis).
    for (let i = 0; i < 2; i++) expect((await (await get()).json()).title).toBe("Before");

    proxy!.stall();
    for (let round = 1; round <= 3; round++) {
      const patched = await fetch(`${t!.url}/v1/spaces/${space.id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
        body: JSON.stringify({ title: `Stalled ${round}` }),
        signal: AbortSignal.timeout(LIVENESS_MS),
      });
      expect(patched.status).toBe(200);
      const read = await get();
      expect(read.status).toBe(200);
      // Counted in memory meanwhile: the limit's headers are still there.
      expect(read.headers.get("x-ratelimit-limit")).toBe("1000");
      // Never the answer kept before the write.
      expect((await read.json()).title).toBe(`Stalled ${round}`);
      const graph = await fetch(`${t!.url}/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
        body: JSON.stringify({ query: `query($id: String!) { space(spaceId: $id) { title } }`, variables: { id: space.id } }),
        signal: AbortSignal.timeout(LIVENESS_MS),
      });
      expect((await graph.json()).data.space.title).toBe(`Stalled ${round}`);
    }

    proxy!.resume();
    const patched = await admin.patch(`/v1/spaces/${space.id}`, { title: "After" });
    expect(patched.status).toBe(200);
    expect((await (await get()).json()).title).toBe("After");
  });

  it("connections dropped without a word (a firewall that forgot them) are found and made again: live updates resume", {
    timeout: 120_000,
  }, async () => {
    const { admin } = await acmeDocs(t!);
    const space = created(await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Watched" }));
    const received: string[] = [];
    const client = wsClient(t!.url, admin.token);
    const stop = client.subscribe(
      { query: `subscription($id: String!) { spaceUpdated(spaceId: $id) { title } }`, variables: { id: space.id } },
      { next: (v: any) => received.push(v.data?.spaceUpdated?.title), error: () => undefined, complete: () => undefined },
    );
    const editsUntilSeen = async (prefix: string) => {
      const deadline = Date.now() + LIVENESS_MS + 10_000;
      for (let i = 0; Date.now() < deadline; i++) {
        expect((await admin.patch(`/v1/spaces/${space.id}`, { title: `${prefix} ${i}` })).status).toBe(200);
        await new Promise((r) => setTimeout(r, 250));
        if (received.some((title) => title?.startsWith(prefix))) return;
      }
      throw new Error(`no "${prefix}" update arrived`);
    };
    try {
      // Through Redis: the gateway's publish, then its subscriber.
      await editsUntilSeen("Live");
      proxy!.sever();
      await editsUntilSeen("After");
    } finally {
      stop();
      await client.dispose();
    }
  });
});
