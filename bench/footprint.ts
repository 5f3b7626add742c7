import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { freePort } from "../test/helpers/ports.js";
import { ended, int, root, runWhenMain, sleep } from "./common.js";
import { cpuOf, folderBytes, type Seeded, Server, seed, serverEnv } from "./restart.js";

/**
 * The server's footprint beside its floor, in one run on one data folder (embedded database):
 * - PGlite alone: the project's own @electric-sql/pglite in a bare `node` process opening the data
 *   folder and answering `select 1`;
 * - a restart of the server on that folder (`node <the start script's flags> scripts/run.mjs
 *   src/main.ts`, as `npm start` runs it) to its first authenticated answer;
 * - the same server after a mixed load (REST reads and writes, GraphQL, WebSocket subscribe and
 *   terminate cycles), once it settled;
 * - a first start on an empty folder (all migrations), to its first 200 of /readyz.
 * Each: time from spawn, CPU by then (/proc/<pid>/stat), peak resident memory (VmHWM) and the
 * resident memory after BENCH_SETTLE_SECONDS (5) idle. Then the issue's targets, met or missed.
 * BENCH_FOOTPRINT_SPACES spaces with a page each (20), BENCH_LOAD_SECONDS of load (15);
 * BENCH_FOOTPRINT_FLAGS replaces the start script's node flags (to measure others). Last, where
 * a memory cgroup can be made (cgroup v1 `memory.limit_in_bytes` or v2 `memory.max`, as root), a
 * restart inside a BENCH_MEMORY_LIMIT_MB limit (512; 0 skips it) must answer; skipped elsewhere.
 *
 *   npm run bench -- footprint
 */
export async function footprint() {
  const spaces = int("BENCH_FOOTPRINT_SPACES", 20);
  const settleMs = int("BENCH_SETTLE_SECONDS", 5) * 1000;
  const loadSeconds = int("BENCH_LOAD_SECONDS", 15);
  const limitMb = int("BENCH_MEMORY_LIMIT_MB", 512);
  if (process.env.DATABASE_URL) console.log("footprint: the embedded database only; DATABASE_URL is ignored");
  const flags = process.env.BENCH_FOOTPRINT_FLAGS?.split(/\s+/).filter(Boolean) ?? startFlags();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-footprint-"));
  const env = await serverEnv({ DATABASE_URL: "", DATA_DIR: dataDir });
  const serverCommand: [string, string[]] = [process.execPath, [...flags, "scripts/run.mjs", "src/main.ts"]];
  // dist/ built just before each start: none of the starts timed includes a rebuild (scripts/run.mjs
  // rebuilds when src/ changed since, as it does while someone edits the sources).
  const start = () => {
    spawnSync(process.execPath, ["scripts/build.mjs", "--quiet"], { cwd: root, stdio: "inherit" });
    return Server.start(env, serverCommand);
  };
  console.log(
    `server: node ${flags.join(" ")} scripts/run.mjs src/main.ts; ${spaces} spaces with a page each; settle ${settleMs / 1000} s`,
  );
  let server: Server | undefined;
  try {
    // (d) A first start: the empty folder gets its database and every migration.
    server = await start();
    const firstTiming = await server.ready();
    const first = await settle(server.processId!, firstTiming.ready, firstTiming.cpuMs, settleMs);
    const seeded = await seed(env, server, spaces);
    await server.stop();
    server = undefined;
    console.log(`  data folder: ${(folderBytes(dataDir) / 1e6).toFixed(0)} MB`);

    // (a) The floor: PGlite alone on the same folder.
    const floor = await pgliteAlone(path.join(dataDir, "pglite"), settleMs, []);
    // The same with the server's node flags: what they change of the floor itself.
    const flagged = flags.length ? await pgliteAlone(path.join(dataDir, "pglite"), settleMs, flags) : undefined;

    // (b) A restart on the same folder, to its first authenticated answer.
    server = await start();
    const restartTiming = await server.ready(seeded);
    const pid = server.processId!;
    const restart = await settle(pid, restartTiming.answer, restartTiming.cpuMs, settleMs);
    const restartHeap = await heapOf(server.url);

    // (c) A mixed load, then idle.
    const cpuBefore = cpuOf(pid);
    const load = await mixedLoad(server.url, seeded, loadSeconds);
    const cpuPerRequest = (cpuOf(pid) - cpuBefore) / load.requests;
    const afterLoad = await settle(pid, NaN, cpuOf(pid), settleMs);
    const afterLoadHeap = await heapOf(server.url);
    await server.stop();
    server = undefined;

    // (e) A restart inside a memory limit (a small host), where this machine lets the bench make one.
    const limited = limitMb ? await inMemoryLimit(env, serverCommand, seeded, limitMb) : "skipped (BENCH_MEMORY_LIMIT_MB=0)";

    console.log(
      `  restart: listening ${sec(restartTiming.listening)}, /readyz ${sec(restartTiming.ready)}, first authenticated answer ${sec(restartTiming.answer)}`,
    );
    console.log(`  where the steady memory is (GET /metrics): after the restart ${restartHeap}; after the load ${afterLoadHeap}`);
    console.log(`  load: ${load.summary} in ${loadSeconds} s; the server's CPU per request: ${cpuPerRequest.toFixed(2)} ms`);
    const rows: [string, Figures][] = [
      ["PGlite alone (bare node)", floor],
      ...(flagged ? [["PGlite alone (server's flags)", flagged] as [string, Figures]] : []),
      ["restart (existing folder)", restart],
      ["after the load", afterLoad],
      ["first start (empty folder)", first],
    ];
    console.log(`  ${"".padEnd(30)}${"answer".padStart(9)}${"CPU".padStart(9)}${"peak RSS".padStart(11)}${"steady RSS".padStart(12)}`);
    for (const [label, f] of rows)
      console.log(
        `  ${label.padEnd(30)}${(Number.isNaN(f.ms) ? "—" : sec(f.ms)).padStart(9)}${sec(f.cpuMs).padStart(9)}${mb(f.peak).padStart(11)}${mb(f.steady).padStart(12)}`,
      );
    const check = (label: string, value: string, ok: boolean) => console.log(`  ${ok ? "met   " : "MISSED"} ${label}: ${value}`);
    console.log(`  restart in a ${limitMb} MB memory limit: ${limited}`);
    console.log("targets (issue 57):");
    check(
      "restart ≤ PGlite alone + 1 s",
      `${sec(restart.ms)} vs ${sec(floor.ms)} + 1 s (+${sec(restart.ms - floor.ms)})`,
      restart.ms <= floor.ms + 1000,
    );
    check(
      "first start ≤ 2× restart",
      `${sec(first.ms)} vs 2 × ${sec(restart.ms)} (${ratio(first.ms, restart.ms)})`,
      first.ms <= 2 * restart.ms,
    );
    check(
      "steady ≤ PGlite alone + 100 MB",
      `${mb(restart.steady)} vs ${mb(floor.steady)} + 100 MB (+${mb(restart.steady - floor.steady)})`,
      restart.steady <= floor.steady + 100 * MB,
    );
    check(
      "after load ≤ PGlite alone + 150 MB",
      `${mb(afterLoad.steady)} vs ${mb(floor.steady)} + 150 MB (+${mb(afterLoad.steady - floor.steady)})`,
      afterLoad.steady <= floor.steady + 150 * MB,
    );
    check(
      "restart's peak ≤ 1.5× steady",
      `${mb(restart.peak)} vs 1.5 × ${mb(restart.steady)} (${ratio(restart.peak, restart.steady)})`,
      restart.peak <= 1.5 * restart.steady,
    );
    check(
      "first start's peak ≤ 1.5× its steady",
      `${mb(first.peak)} vs 1.5 × ${mb(first.steady)} (${ratio(first.peak, first.steady)})`,
      first.peak <= 1.5 * first.steady,
    );
  } finally {
    await server?.stop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const MB = 1024 * 1024;

/**
 * A restart of the server inside a memory cgroup of `limitMb`: whether it answered (an
 * authenticated GET) or was killed, and the most memory the group used; says
 * "skipped" where no memory cgroup can be made (not root, no cgroup file system, a container).
 */
async function inMemoryLimit(env: NodeJS.ProcessEnv, command: [string, string[]], seeded: Seeded, limitMb: number): Promise<string> {
  const v1 = "/sys/fs/cgroup/memory";
  const v2 = "/sys/fs/cgroup";
  const name = `docs-api-footprint-${process.pid}`;
  let group: string;
  let used: () => number;
  try {
    if (fs.existsSync(path.join(v1, "memory.limit_in_bytes"))) {
      group = path.join(v1, name);
      fs.mkdirSync(group);
      fs.writeFileSync(path.join(group, "memory.limit_in_bytes"), String(limitMb * MB));
      used = () => Number(fs.readFileSync(path.join(group, "memory.max_usage_in_bytes"), "utf8"));
    } else {
      group = path.join(v2, name);
      fs.mkdirSync(group);
      fs.writeFileSync(path.join(group, "memory.max"), String(limitMb * MB));
      used = () => Number(fs.readFileSync(path.join(group, "memory.peak"), "utf8"));
    }
  } catch (err) {
    return `skipped (no memory cgroup could be made here: ${(err as Error).message})`;
  }
  let server: Server | undefined;
  try {
    // The shell moves itself into the group, then becomes the server (exec keeps the process).
    const procs = path.join(group, "cgroup.procs");
    server = await Server.start(env, ["sh", ["-c", `echo $$ > '${procs}' && exec "$0" "$@"`, command[0], ...command[1]]]);
    try {
      const t = await server.ready(seeded);
      return `answered in ${sec(t.answer)}, the group's peak ${mb(used())} ✓`;
    } catch (err) {
      return `did not answer ✗ (${(err as Error).message.split("\n")[0]}); the group's peak ${mb(used())}`;
    }
  } finally {
    await server?.stop();
    for (let i = 0; i < 50; i++) {
      try {
        fs.rmdirSync(group);
        break;
      } catch {
        await sleep(100); // its last process is still leaving
      }
    }
  }
}

/** What is used of autocannon here (it has no types of its own). */
type Cannon = (opts: Record<string, unknown>) => Promise<{ "2xx": number; non2xx: number; errors: number }>;
type Req = Record<string, unknown>;

interface Figures {
  /** From spawn to the first answer, ms (NaN: not a start). */
  ms: number;
  /** CPU of the process by then (all threads), ms. */
  cpuMs: number;
  /** Highest resident set so far (VmHWM), bytes. */
  peak: number;
  /** Resident set after the settle time, bytes. */
  steady: number;
}

/** The node flags of package.json's start script (`exec node <flags> scripts/run.mjs …`). */
function startFlags(): string[] {
  const start: string = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).scripts.start;
  const match = /\bnode\s+(.*?)\s*scripts\/run\.mjs/.exec(start);
  if (!match) throw new Error(`package.json's start script does not run scripts/run.mjs with node: ${start}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}

/**
 * The server's JavaScript heap (used / committed) and its external memory, which holds the
 * embedded database's WebAssembly memory, from its Prometheus metrics.
 */
async function heapOf(base: string): Promise<string> {
  try {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN);
    return (
      `JS heap ${mb(value("nodejs_heap_size_used_bytes"))} used of ${mb(value("nodejs_heap_size_total_bytes"))}, ` +
      `external ${mb(value("nodejs_external_memory_bytes"))}`
    );
  } catch (err) {
    return `unknown (${(err as Error).message})`;
  }
}

/** VmHWM and VmRSS of `pid`, bytes. */
function memoryOf(pid: number): { peak: number; rss: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
  return { peak: kb("VmHWM"), rss: kb("VmRSS") };
}

/** The figures of `pid` once it stayed idle `settleMs` (the peak read at the end covers the whole life so far). */
async function settle(pid: number, ms: number, cpuMs: number, settleMs: number): Promise<Figures> {
  await sleep(settleMs);
  const { peak, rss } = memoryOf(pid);
  return { ms, cpuMs, peak, steady: rss };
}

/** PGlite alone in a bare node process: spawn → `select 1` answered, its CPU, then its memory once settled. */
async function pgliteAlone(dir: string, settleMs: number, flags: string[]): Promise<Figures> {
  const script = `
    import { PGlite } from "@electric-sql/pglite";
    const db = await PGlite.create(${JSON.stringify(dir)});
    await db.query("select 1");
    console.log("answered");
    process.once("SIGTERM", () => db.close().then(() => process.exit(0)));
    setInterval(() => {}, 1 << 30);
  `;
  const started = performance.now();
  const child = spawn(process.execPath, [...flags, "--input-type=module", "-e", script], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const ms = await new Promise<number>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => d.toString().includes("answered") && resolve(performance.now() - started));
      child.once("exit", (code) => reject(new Error(`PGlite alone exited with code ${code} before answering`)));
    });
    return await settle(child.pid!, ms, cpuOf(child.pid), settleMs);
  } finally {
    await ended(child, "SIGTERM");
  }
}

/**
 * `seconds` of REST reads (the seeded spaces in turn), REST page edits, GraphQL reads, and
 * WebSocket clients that connect, subscribe to a space and are cut off, all at once.
 */
async function mixedLoad(base: string, seeded: Seeded, seconds: number): Promise<{ summary: string; requests: number }> {
  const auth = { authorization: `Bearer ${seeded.token}` };
  const json = { ...auth, "content-type": "application/json" };
  let turn = 0;
  const next = () => seeded.pages[turn++ % seeded.pages.length]!;
  const autocannon: Cannon = (await import("autocannon" as string)).default;
  const cannon = (opts: Record<string, unknown>) => autocannon({ connections: 4, duration: seconds, ...opts });
  const reads = cannon({
    url: base,
    headers: auth,
    requests: [{ setupRequest: (r: Req) => ({ ...r, path: `/v1/spaces/${next().space}` }) }],
  });
  const writes = cannon({
    url: base,
    connections: 2,
    method: "PATCH",
    headers: json,
    requests: [
      {
        setupRequest: (r: Req) => {
          const { space, page } = next();
          return { ...r, path: `/v1/spaces/${space}/content/page/${page}`, body: JSON.stringify({ title: `Load ${turn}` }) };
        },
      },
    ],
  });
  const graphql = cannon({
    url: `${base}/graphql`,
    method: "POST",
    headers: json,
    requests: [
      {
        setupRequest: (r: Req) => ({
          ...r,
          body: JSON.stringify({
            query: "query($id: String!) { space(spaceId: $id) { id title organization { id title } } }",
            variables: { id: next().space },
          }),
        }),
      },
    ],
  });
  const until = performance.now() + seconds * 1000;
  const cycles = Promise.all(
    Array.from({ length: 4 }, async () => {
      let n = 0;
      while (performance.now() < until) n += await subscribeAndCut(base, seeded.token, next().space);
      return n;
    }),
  );
  const [r, w, g, c] = await Promise.all([reads, writes, graphql, cycles]);
  const bad = [r, w, g].reduce((sum, x) => sum + x.non2xx + x.errors, 0);
  const sockets = c.reduce((a: number, b: number) => a + b, 0);
  return {
    summary: `${r["2xx"]} REST reads, ${w["2xx"]} writes, ${g["2xx"]} GraphQL, ${sockets} WS cycles${bad ? `, ${bad} failed` : ""}`,
    requests: r["2xx"] + w["2xx"] + g["2xx"] + sockets,
  };
}

/** One graphql-ws client: connect, subscribe to `spaceId`'s updates, terminate once subscribed. 1 when it got that far. */
function subscribeAndCut(base: string, token: string, spaceId: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${base.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
    const timer = setTimeout(() => (ws.terminate(), resolve(0)), 5000);
    const done = (n: number) => (clearTimeout(timer), ws.terminate(), resolve(n));
    ws.on("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${token}` } })));
    ws.on("message", (raw) => {
      const msg = JSON.parse(String(raw));
      if (msg.type === "connection_ack")
        ws.send(
          JSON.stringify({
            id: "1",
            type: "subscribe",
            payload: { query: "subscription($id: String!) { spaceUpdated(spaceId: $id) { id title } }", variables: { id: spaceId } },
          }),
          // The server sends nothing until the space changes: a moment later the subscription is in place.
          () => setTimeout(() => done(1), 50),
        );
      else if (msg.type === "ping") ws.send('{"type":"pong"}');
      else if (msg.type === "error") done(0);
    });
    ws.on("error", () => done(0));
  });
}

function sec(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

function mb(bytes: number): string {
  return `${Math.round(bytes / MB)} MB`;
}

function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

runWhenMain(import.meta.url, footprint);
