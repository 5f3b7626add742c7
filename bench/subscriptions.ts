import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { loadConfig } from "../src/config.js";
import { createGateway } from "../src/server.js";
import { configureLogging } from "../src/core/logger.js";
import { runAdminCommand } from "../src/cli/commands.js";
import { recordIntegrationEvents } from "../src/events/record.js";

/**
 * Subscription fan-out on one gateway process: SUBSCRIBERS graphql-ws clients (one connection
 * each, held by a worker thread so that the gateway's event loop only serves them) follow one
 * integration's events. Two phases:
 *
 * - paced: RATE events per second are recorded (each in its own transaction, as a mutation
 *   records them) for PACED events; reports the latency from the start of recording an event to
 *   its arrival at a subscriber (p50, p99);
 * - burst: BURST events are recorded back to back; reports deliveries per second (events × subscribers
 *   delivered, over the time from the first record to the last arrival) and the same latencies.
 *
 *   npm run bench                      (every benchmark)
 *   npx tsx bench/subscriptions.ts     (this one; env BENCH_SUBSCRIBERS, BENCH_RATE, BENCH_PACED, BENCH_BURST)
 */
export async function subscriptionFanOut() {
  const subscribers = Number(process.env.BENCH_SUBSCRIBERS || 200);
  const rate = Number(process.env.BENCH_RATE || 10);
  const paced = Number(process.env.BENCH_PACED || 50);
  const burst = Number(process.env.BENCH_BURST || 200);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-bench-"));
  const config = { ...loadConfig({ ...process.env, PORT: "0", LOG_LEVEL: process.env.LOG_LEVEL || "silent" }), dataDir, host: "127.0.0.1" };
  configureLogging(config);
  const gateway = await createGateway(config);
  const port = await gateway.listen(0);
  const url = `http://127.0.0.1:${port}`;
  let worker: Worker | undefined;
  try {
    const boot = (await runAdminCommand(gateway.db.prisma, { command: "bootstrap", email: "bench@acme.test", org: "Bench" })) as any;
    const headers = { authorization: `Bearer ${boot.token}`, "content-type": "application/json" };
    await fetch(`${url}/v1/integrations/bench`, { method: "POST", headers, body: JSON.stringify({ title: "Bench", organization: boot.organization }) });
    const installation = await (
      await fetch(`${url}/v1/integrations/bench/installations`, { method: "POST", headers, body: JSON.stringify({ organization: boot.organization }) })
    ).json();
    const integration = await gateway.db.prisma.integration.findUniqueOrThrow({ where: { name: "bench" } });
    const record = async (revisionId: string) =>
      (
        await recordIntegrationEvents(gateway.services, [
          { integration, installation: { id: installation.id, organizationId: boot.organization }, type: "space_content_updated", fields: { spaceId: "spc_bench", revisionId } },
        ])
      )[0]!.id;

    worker = new Worker(new URL("./subscribers-worker.mjs", import.meta.url), {
      workerData: {
        url: `ws://127.0.0.1:${port}/graphql`,
        token: boot.token,
        subscribers,
        query: `subscription { integrationEvents(integrationName: "bench") { id status payload { type revisionId } } }`,
      },
    });
    const messages: any[] = [];
    const waiters: ((m: any) => boolean)[] = [];
    worker.on("message", (m) => {
      if (m.kind === "error") console.error("subscriber error:", m.message);
      messages.push(m);
      for (const w of [...waiters]) if (w(m)) waiters.splice(waiters.indexOf(w), 1);
    });
    const next = (kind: string) =>
      new Promise<any>((resolve) => {
        const found = messages.find((m) => m.kind === kind);
        if (found) {
          messages.splice(messages.indexOf(found), 1);
          return resolve(found);
        }
        waiters.push((m) => (m.kind === kind ? (messages.splice(messages.indexOf(m), 1), resolve(m), true) : false));
      });
    await next("connected");
    // Every subscription is live once each subscriber received a warm-up event.
    const warm = next("warm");
    let warmed = false;
    void warm.then(() => (warmed = true));
    while (!warmed) {
      await record("warmup");
      await Promise.race([warm, new Promise((r) => setTimeout(r, 300))]);
    }

    const recordedAt = new Map<string, number>();
    const phases: { name: string; ids: string[]; start: number }[] = [];
    // Paced phase.
    let phase = { name: `paced (${rate} events/s)`, ids: [] as string[], start: Date.now() };
    for (let i = 0; i < paced; i++) {
      const due = phase.start + (i * 1000) / rate;
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      const before = Date.now();
      const id = await record(`paced-${i}`);
      recordedAt.set(id, before);
      phase.ids.push(id);
    }
    phases.push(phase);
    await new Promise((r) => setTimeout(r, 2000));
    // Burst phase.
    phase = { name: `burst (${burst} events back to back)`, ids: [], start: Date.now() };
    for (let i = 0; i < burst; i++) {
      const before = Date.now();
      const id = await record(`burst-${i}`);
      recordedAt.set(id, before);
      phase.ids.push(id);
    }
    const burstRecordedIn = Date.now() - phase.start;
    phases.push(phase);

    // Wait for every delivery (or 60 s).
    const expected = (paced + burst) * subscribers;
    const deadline = Date.now() + 60_000;
    let arrivals: number[] = [];
    while (Date.now() < deadline) {
      worker.postMessage("report");
      arrivals = (await next("report")).arrivals;
      if (arrivals.length / 2 >= expected) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const arrivedAt = new Map<string, number[]>();
    for (let i = 0; i < arrivals.length; i += 2) {
      const list = arrivedAt.get(arrivals[i] as unknown as string) ?? [];
      list.push(arrivals[i + 1]!);
      arrivedAt.set(arrivals[i] as unknown as string, list);
    }
    const lines: string[] = [];
    const results: Record<string, unknown>[] = [];
    for (const p of phases) {
      const latencies: number[] = [];
      let last = p.start;
      for (const id of p.ids) {
        for (const at of arrivedAt.get(id) ?? []) {
          latencies.push(at - recordedAt.get(id)!);
          if (at > last) last = at;
        }
      }
      latencies.sort((a, b) => a - b);
      const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor((q / 100) * latencies.length))] ?? NaN;
      const elapsed = last - p.start;
      const r = {
        phase: p.name,
        deliveries: latencies.length,
        expected: p.ids.length * subscribers,
        deliveriesPerSecond: Math.round((latencies.length / elapsed) * 1000),
        p50: pct(50),
        p99: pct(99),
      };
      results.push(r);
      lines.push(
        `  ${r.phase}: ${r.deliveries}/${r.expected} deliveries in ${elapsed} ms = ${r.deliveriesPerSecond} deliveries/s; ` +
          `record → delivery latency p50 ${r.p50} ms, p99 ${r.p99} ms`,
      );
    }
    console.log(
      `subscription fan-out: ${subscribers} graphql-ws subscribers on one gateway (${gateway.db.kind}, ${config.redisUrl ? "Redis" : "in-process"} pub/sub), ` +
        `burst recorded at ${Math.round((burst / burstRecordedIn) * 1000)} events/s\n` +
        lines.join("\n"),
    );
    return results;
  } finally {
    if (worker) {
      worker.postMessage("stop");
      await new Promise((r) => setTimeout(r, 500));
      await worker.terminate();
    }
    await gateway.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  subscriptionFanOut().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
