import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgres, startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, type Admin } from "../helpers/fixtures.js";
import { stallingProxy } from "../helpers/stalling-proxy.js";

/**
 * A PostgreSQL that stops answering without closing anything: a managed database failing over
 * (the old primary's connections go silent), a network path that drops packets, a firewall that
 * forgot the connections. A statement the gateway sent waits at most its bound (the statement
 * bound and a margin, here 1.5 + 5 s): the request answers 503 with Retry-After and the connection
 * is discarded, so the pool makes new ones and the gateway serves again as soon as the database
 * answers — instead of ten connections waiting without end and every request answering 503 after
 * its wait for one, for good. A fresh database behind a proxy that can stall (test/helpers).
 */

const postgres = !!process.env.DATABASE_URL;
/** A request that has not answered in 30 s is taken as one that never will. */
const LIVENESS_MS = 30_000;

describe.skipIf(!postgres)("a PostgreSQL that stops answering", () => {
  let t: TestGateway;
  let admin: Admin;
  let proxy: Awaited<ReturnType<typeof stallingProxy>>;
  let drop: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const db = await freshPostgres(process.env.DATABASE_URL!);
    drop = db.drop;
    const url = new URL(db.url);
    proxy = await stallingProxy(Number(url.port || 5432));
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    t = await startGateway({ databaseUrl: url.toString(), dbStatementTimeoutMs: 1_500, dbLockTimeoutMs: 500 });
    ({ admin } = await acmeDocs(t));
  }, 180_000);
  afterAll(async () => {
    proxy?.resume();
    await t?.close();
    await proxy?.close();
    await drop();
  });

  const get = (id: string) =>
    fetch(`${t.url}/v1/spaces/${id}`, { headers: { authorization: `Bearer ${admin.token}` }, signal: AbortSignal.timeout(LIVENESS_MS) });

  /** GETs until one answers 200 (the gateway serves again), at most for LIVENESS_MS. */
  async function servesAgain(id: string): Promise<number> {
    const deadline = Date.now() + LIVENESS_MS;
    for (let tries = 1; ; tries++) {
      const res = await get(id);
      if (res.status === 200) return tries;
      expect(res.status).toBe(503);
      if (Date.now() > deadline) throw new Error("the gateway did not serve again");
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it("connections dropped without a word (failover): requests answer 503, then the gateway serves again on new connections", {
    timeout: 120_000,
  }, async () => {
    const space = await createSpace(admin, admin.organization, { title: "Before" });
    expect((await get(space.id)).status).toBe(200);
    proxy.sever();
    // More requests than the pool has connections (10), all at once: each answers, none waits for good.
    const answers = await Promise.all(Array.from({ length: 12 }, () => get(space.id)));
    for (const res of answers) {
      expect([200, 503]).toContain(res.status);
      if (res.status === 503) expect(res.headers.get("retry-after")).toBe("1");
    }
    await servesAgain(space.id);
    const patched = await admin.patch(`/v1/spaces/${space.id}`, { title: "After" });
    expect(patched.status).toBe(200);
    expect((await (await get(space.id)).json()).title).toBe("After");
  });

  it("a database that stalls and comes back: requests answer meanwhile, and the gateway serves again", { timeout: 120_000 }, async () => {
    const space = await createSpace(admin, admin.organization, { title: "Stalled" });
    proxy.stall();
    try {
      const answers = await Promise.all(Array.from({ length: 12 }, () => get(space.id)));
      for (const res of answers) expect(res.status).toBe(503);
    } finally {
      proxy.resume();
    }
    await servesAgain(space.id);
  });
});
