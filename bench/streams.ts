import { execFileSync, fork, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { freePort } from "../test/helpers/ports.js";
import { freshPostgres } from "../test/helpers/postgres.js";
import { admin, client, ended, int, percentile, root, runWhenMain, sleep } from "./common.js";

/**
 * Live streams as a dashboard sees them. The gateway runs as its own process (two, on PostgreSQL
 * + Redis, when DATABASE_URL and REDIS_URL are set: subscribers split between them, writes to the
 * first); BENCH_SUBSCRIBERS graphql-ws sockets (1,000 by default) are held by child processes
 * (at most BENCH_SOCKETS_PER_PROCESS = 2,500 each: a process may open 20,000 files here), each
 * numbering its operation as graphql-ws's client does, with a random UUID of its own
 * (BENCH_SHARED_OPERATION_ID=1: one id for all, as simpler clients number theirs "1"); this
 * process is the client that writes through /v1, BENCH_WRITES writes (50) at BENCH_RATE per
 * second (10), started on schedule whether or not the previous ones were answered.
 *
 * - spaceUpdated(spaceId): the writes PATCH /v1/spaces/{id} with a new title each. A subscriber
 *   that sees title k (or a newer one: coalescing counts) got write k.
 * - integrationEvents(integrationName): an integration with the space:content:read scope is
 *   installed for every space of the organization, its events delivered to a local receiver
 *   (development mode; BENCH_RECEIVER=0 leaves it off: events are recorded as skipped). The
 *   writes are page edits, PATCH /v1/spaces/{id}/content/page/{pageId}, write k in space k, so
 *   the event's spaceId names the write. Subscribers follow every status, as the dashboard does
 *   (two messages an event: pending, then success once the receiver answered; the minimal server
 *   sends the same two, at once); the first message of an event is its arrival.
 *
 * For each: write → arrival p50/p99 (from the start of the PATCH to the arrival at each
 * subscriber, one machine clock), deliveries received/expected, PATCH p99 with the subscribers and
 * with none; the same for a minimal node:http + ws server doing only the sends
 * (bench/streams-minimal.mjs), in the same run; then bursts of page edits (BENCH_BURST_CONCURRENCY
 * at a time, 16, over as many spaces; no new one after BENCH_BURST_SECONDS, 60) recorded as
 * integration events, followed by one live subscriber: edits/s, events/s recorded and seen — with
 * the one integration (BENCH_BURST edits, 1,000), and with BENCH_BURST_INSTALLATIONS integrations
 * installed (20), BENCH_BURST events in all (see burstEvents).
 *
 *   npm run bench                    (every benchmark)
 *   npm run bench -- streams         (this one; BENCH_SUBSCRIBERS=10000 for 10,000)
 *
 * BENCH_STREAM_ROUNDS=N (1) runs the whole comparison N times, each round with servers of its own,
 * and ends with each round's ratios and how many rounds met every target: one round's p99 of 50
 * writes is a few of them, and a few writes can be held by anything else on the machine.
 */
export async function liveStreams() {
  const options = {
    subscribers: int("BENCH_SUBSCRIBERS", 1000),
    perProcess: int("BENCH_SOCKETS_PER_PROCESS", 2500),
    writes: int("BENCH_WRITES", 50),
    rate: int("BENCH_RATE", 10),
    burst: int("BENCH_BURST", 1000),
    burstConcurrency: int("BENCH_BURST_CONCURRENCY", 16),
    /** The burst stops starting writes after this many seconds (a slow server would take minutes). */
    burstSeconds: int("BENCH_BURST_SECONDS", 60),
    /** Longest wait for deliveries after the last write started (s); it ends sooner when all arrived or nothing arrives for 15 s. */
    wait: int("BENCH_STREAM_WAIT", 120),
    receiver: process.env.BENCH_RECEIVER !== "0",
    /**
     * The subscriber processes stand in for dashboards on other machines, but here they share the
     * servers' 2 cores: at 10,000 sockets they use about one of them. They run with
     * BENCH_SUBSCRIBER_PRIORITY, for both servers alike:
     * - "idle" (the default): Linux's SCHED_IDLE (`chrt --idle`, every thread), they run only on a
     *   core nothing else wants. A waking server thread is placed on a core that runs only them
     *   and takes it at once, as on a machine of its own.
     * - a nice level, 0 to 19: at 19 they take little of a core that a server also wants, but a
     *   core running them still counts as busy, so a waking server thread queues behind the other
     *   server process instead (two gateways: the slowest PATCH ran 49 ms and waited 39 ms for a
     *   core). At 0 they share the cores evenly with the servers (the slowest PATCH: 19 ms on its
     *   main thread, 149 ms waiting for a core).
     */
    priority: subscriberPriority(process.env.BENCH_SUBSCRIBER_PRIORITY ?? "idle"),
    rounds: Math.max(1, int("BENCH_STREAM_ROUNDS", 1)),
  };
  const writerNice = writingPriority();
  const shared = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
  const cleanups: (() => Promise<unknown>)[] = [];
  const receiver = await startReceiver();
  cleanups.push(receiver.close);
  try {
    const processes = Math.max(shared ? 2 : 1, Math.ceil(options.subscribers / options.perProcess), options.subscribers >= 2 ? 2 : 1);
    console.log(
      `${options.subscribers} subscribers in ${processes} child processes (${options.priority === "idle" ? "SCHED_IDLE" : `nice ${options.priority}`}); ${options.writes} writes at ${options.rate}/s from this process (nice ${writerNice} while it times them); ` +
        `gateway: ${shared ? "2 processes, PostgreSQL + Redis (subscribers split between them, writes to the first)" : "1 process, embedded database (PGlite)"}`,
    );

    const rounds: Ratios[] = [];
    let last: { floor: TargetResult; measured: TargetResult; burst: BurstResult[] | undefined } | undefined;
    for (let round = 1; round <= options.rounds; round++) {
      if (options.rounds > 1) console.log(`-- round ${round} of ${options.rounds}`);
      const minimal = await startMinimal();
      cleanups.push(minimal.stop);
      const floor = await measureTarget(minimal, options, processes);
      await minimal.stop();

      const gateway = await startGateways(shared, receiver.url, 2 * options.writes + 1, cleanups);
      const measured = await measureTarget(gateway, options, processes);
      const burst = options.burst > 0 ? await burstEvents(gateway, options) : undefined;
      await gateway.stop();

      printResults(options, floor, measured, burst, receiver.count());
      rounds.push(ratios(floor, measured));
      last = { floor, measured, burst };
    }
    if (options.rounds > 1) printRounds(rounds);
    return last!;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error(err));
  }
}

// ─── Targets: the gateway (one or two processes) and the minimal server ──────────────────────

interface Target {
  name: string;
  /** Base URLs (http://) subscribers connect to, one per server process. */
  urls: string[];
  token: string;
  /** The space whose title the spaceUpdated writes change. */
  titleSpace: string;
  /** Where warm-up page edits go. */
  warmPage: SpacePage;
  /** Space and page of page edit k with subscribers. */
  pages: SpacePage[];
  /** Space and page of page edit k with none: pages made and warmed as `pages` are, so that both stretches time the same edit. */
  nonePages: SpacePage[];
  /** CPU seconds (user and system) the server's processes have used so far. */
  cpuSeconds(): Promise<number>;
  /** The written server process's main thread so far (Linux; else undefined): see mainThreadOf. */
  mainThread?: () => ThreadTimes | undefined;
  /** The server's processes (their resident memory is read, see residentBytes). */
  pids: (number | undefined)[];
  stop(): Promise<unknown>;
}

interface SpacePage {
  space: string;
  page: string;
}

async function startMinimal(): Promise<Target> {
  // The node options of the gateway (npm start's), so that both servers run on the same runtime settings.
  const child = fork(path.join(root, "bench/streams-minimal.mjs"), { execArgv: startFlags(), stdio: "inherit" });
  const { port } = await nextMessage<{ port: number }>(child, "listening");
  const pages = Array.from({ length: int("BENCH_WRITES", 50) }, (_, k) => ({ space: `spc_${k}`, page: `pg_${k}` }));
  const nonePages = Array.from({ length: pages.length }, (_, k) => ({ space: `spc_none_${k}`, page: `pg_none_${k}` }));
  return {
    name: "minimal",
    urls: [`http://127.0.0.1:${port}`],
    token: "none",
    titleSpace: "spc_title",
    warmPage: { space: "spc_warm", page: "pg_warm" },
    pages,
    nonePages,
    cpuSeconds: async () => (await request(child, { cmd: "cpu" }, "cpu")).seconds,
    mainThread: mainThreadOf(child.pid),
    pids: [child.pid],
    stop: () => ended(child),
  };
}

/** Gateway processes on a fresh database, with a user, spaces, pages and an installed integration. */
async function startGateways(shared: boolean, receiverUrl: string, spaces: number, cleanups: (() => Promise<unknown>)[]): Promise<Target> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: "127.0.0.1",
    LOG_LEVEL: process.env.LOG_LEVEL || "warn",
    LOG_FORMAT: "json",
    RATE_LIMIT_PER_MINUTE: "0",
    OUTBOUND_ALLOWED_NETWORKS: "127.0.0.0/8",
    // Every subscriber of the benchmark uses the one token: no cap on its subscriptions.
    LIVE_SUBSCRIPTIONS_PER_TOKEN: "0",
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-streams-"));
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  env.DATA_DIR = dataDir;
  if (shared) {
    const db = await freshPostgres(process.env.DATABASE_URL!, "bench");
    cleanups.push(db.drop);
    env.DATABASE_URL = db.url;
  } else {
    env.DATABASE_URL = "";
    env.REDIS_URL = "";
  }
  // One after the other: the first applies the migrations.
  const servers = [await startGatewayProcess(env)];
  cleanups.push(servers[0]!.stop);
  if (shared) {
    servers.push(await startGatewayProcess(env));
    cleanups.push(servers[1]!.stop);
  }
  const url = servers[0]!.url;
  const boot = await admin(env, ["bootstrap", "--email", "bench@acme.test", "--org", "Bench"]);
  const api = client(url, boot.token);
  const titleSpace = (await api("POST", `/v1/orgs/${boot.organization}/spaces`, { title: "Dashboard" })).id;
  const made = await parallel(spaces, 4, async (k) => {
    const space = (await api("POST", `/v1/orgs/${boot.organization}/spaces`, { title: `Space ${k}` })).id;
    const page = (await api("POST", `/v1/spaces/${space}/content/pages`, { title: "Page" })).id;
    return { space, page };
  });
  await api("POST", "/v1/integrations/bench", { title: "Bench", organization: boot.organization, scopes: ["space:content:read"] });
  const installation = await api("POST", "/v1/integrations/bench/installations", { organization: boot.organization });
  await api("PATCH", `/v1/integrations/bench/installations/${installation.id}`, { space_selection: "all" });
  if (int("BENCH_RECEIVER", 1)) await api("PUT", "/v1/integrations/bench/dev", { tunnelUrl: receiverUrl });
  return {
    name: "gateway",
    urls: servers.map((s) => s.url),
    token: boot.token,
    titleSpace,
    warmPage: made[0]!,
    pages: made.slice(1, (made.length + 1) / 2),
    nonePages: made.slice((made.length + 1) / 2),
    // prom-client's process_cpu_seconds_total of each gateway (its /metrics).
    cpuSeconds: async () =>
      (
        await metricTotals(
          servers.map((s) => s.url),
          ["process_cpu_seconds_total"],
        )
      ).process_cpu_seconds_total!,
    mainThread: mainThreadOf(servers[0]!.pid),
    pids: servers.map((s) => s.pid),
    stop: () => Promise.all(servers.map((s) => s.stop())),
  };
}

type SubscriberPriority = "idle" | number;

function subscriberPriority(value: string): SubscriberPriority {
  if (value === "idle") return value;
  const nice = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(nice <= 19)) throw new Error(`BENCH_SUBSCRIBER_PRIORITY must be "idle" or a nice level 0 to 19, got ${JSON.stringify(value)}`);
  return nice;
}

/**
 * The nice level of this process's main thread while it writes and times the writes (see paced):
 * BENCH_WRITER_PRIORITY, -10 to 19, default -10. The writing client stands in for a client on
 * another machine, as the subscriber processes stand in for dashboards, so that a write's time is
 * the server's and not this process's wait for a core on a machine the servers and subscribers
 * keep busy (at nice 0, the slowest title write with subscribers on PostgreSQL + Redis took 39 ms,
 * 31 of them this process waiting for a core; the slowest with none, 19 ms). Only while timing:
 * processes started from this one (servers, subscribers) inherit the level it has then.
 */
const WRITER_NICE = (() => {
  const value = process.env.BENCH_WRITER_PRIORITY ?? "-10";
  const nice = /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!(nice >= -10 && nice <= 19)) throw new Error(`BENCH_WRITER_PRIORITY must be a nice level -10 to 19, got ${JSON.stringify(value)}`);
  return nice;
})();

/** The nice level the writes are timed at: WRITER_NICE when this process may take it (else its own, said once). */
function writingPriority(): number {
  const before = os.getPriority();
  try {
    os.setPriority(WRITER_NICE);
    os.setPriority(before);
    return WRITER_NICE;
  } catch (err) {
    console.log(
      `  could not set the writing process's nice level to ${WRITER_NICE} (${(err as Error).message}): writes are timed at ${before}`,
    );
    return before;
  }
}

/** Runs `timed` with this process's main thread at the writing priority (WRITER_NICE), then back at its own. */
async function atWritingPriority<T>(timed: () => Promise<T>): Promise<T> {
  const before = os.getPriority();
  let raised = false;
  try {
    os.setPriority(WRITER_NICE);
    raised = true;
  } catch {
    // Not allowed (said once by writingPriority): timed as it is.
  }
  try {
    return await timed();
  } finally {
    if (raised) os.setPriority(before);
  }
}

/**
 * Gives every thread of process `pid` the priority (Options.priority): Node starts threads of its
 * own before this runs, so each is set, not the main one alone. When SCHED_IDLE cannot be set (no
 * `chrt`), nice 19, said once.
 */
function lowerPriority(pid: number | undefined, priority: SubscriberPriority): void {
  if (pid === undefined || priority === 0) return;
  if (priority === "idle") {
    try {
      execFileSync("chrt", ["--all-tasks", "--idle", "--pid", "0", String(pid)], { stdio: "ignore" });
      return;
    } catch (err) {
      if (!idleRefused)
        console.log(`  could not run the subscriber processes with SCHED_IDLE (${(err as Error).message}); nice 19 instead`);
      idleRefused = true;
    }
  }
  const nice = priority === "idle" ? 19 : priority;
  let threads: string[] = [String(pid)];
  try {
    threads = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    // Not Linux: the process alone.
  }
  for (const tid of threads) {
    try {
      os.setPriority(Number(tid), nice);
    } catch (err) {
      console.log(`  could not lower a subscriber process's priority: ${(err as Error).message}`);
      return;
    }
  }
}
let idleRefused = false;

/** The node options `npm start` gives the server (package.json's start script): the gateway runs here as it does in production. */
function startFlags(): string[] {
  const start = String(JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).scripts.start);
  return start.split(/\s+/).filter((word) => word.startsWith("--"));
}

/** Node options for the subscriber processes (BENCH_CLIENT_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). */
function clientArgs(): string[] {
  return (process.env.BENCH_CLIENT_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
}

async function startGatewayProcess(
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; pid: number | undefined; stop: () => Promise<unknown> }> {
  const port = await freePort();
  // BENCH_GATEWAY_NODE_ARGS: node options for the gateway processes alone, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof";
  // BENCH_GATEWAY_LOG=<path>: each gateway's standard output (its log lines, --trace-gc) goes to <path>.<port>.
  const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
  const log = process.env.BENCH_GATEWAY_LOG ? fs.openSync(`${process.env.BENCH_GATEWAY_LOG}.${port}`, "w") : "ignore";
  const child = spawn(process.execPath, [...startFlags(), ...nodeArgs, "scripts/run.mjs", "src/main.ts"], {
    cwd: root,
    env: { ...env, PORT: String(port) },
    stdio: ["ignore", log, "inherit"],
  });
  if (typeof log === "number") fs.closeSync(log);
  const url = `http://127.0.0.1:${port}`;
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping)
      console.log(
        `  !! the gateway process on port ${port} exited (${signal ?? code}) while the benchmark ran: figures after this are of the survivors`,
      );
  });
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`The gateway exited with code ${child.exitCode} while starting.`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error("The gateway was not ready within 180 s.");
    await sleep(200);
  }
  return { url, pid: child.pid, stop: () => ((stopping = true), ended(child)) };
}

/** Milliseconds a thread has run on a core, and waited for one while it was runnable (the kernel's run queue). */
interface ThreadTimes {
  runMs: number;
  waitMs: number;
}

/** Resident memory of processes `pids` together (Linux's /proc/<pid>/status VmRSS), in bytes; undefined elsewhere. */
function residentBytes(pids: (number | undefined)[]): number | undefined {
  let total = 0;
  for (const pid of pids) {
    if (!pid) return undefined;
    try {
      const kb = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      if (kb === undefined) return undefined;
      total += Number(kb) * 1024;
    } catch {
      return undefined;
    }
  }
  return total;
}

/**
 * The main thread of process `pid` so far, from Linux's /proc/<pid>/task/<pid>/schedstat (time on
 * a core, time runnable in the run queue, in ns): around a write, whether its server ran for it or
 * waited for a core that other processes (or its own other threads) held. Undefined elsewhere.
 */
function mainThreadOf(pid: number | undefined): (() => ThreadTimes | undefined) | undefined {
  const file = `/proc/${pid}/task/${pid}/schedstat`;
  if (!pid || !fs.existsSync(file)) return undefined;
  return () => {
    try {
      const [run, wait] = fs.readFileSync(file, "utf8").split(" ").map(Number);
      return { runMs: run! / 1e6, waitMs: wait! / 1e6 };
    } catch {
      return undefined; // the process ended
    }
  };
}

/** The integration's development tunnel: answers every delivery 200, counts them. */
async function startReceiver() {
  let count = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count++;
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/events`,
    count: () => count,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))),
  };
}

// ─── Measuring one target ────────────────────────────────────────────────────────────────────

interface Options {
  subscribers: number;
  perProcess: number;
  writes: number;
  rate: number;
  burst: number;
  burstConcurrency: number;
  burstSeconds: number;
  wait: number;
  receiver: boolean;
  priority: SubscriberPriority;
}

interface StreamResult {
  /** Of the deliveries received. */
  p50: number;
  p99: number;
  /** Of every expected delivery, a missing one counting as never arriving (Infinity). */
  p99Expected: number;
  received: number;
  expected: number;
  /** Sockets that received their warm-up message before the measured writes. */
  live: number;
  /** PATCH p99 with no subscriber and with them: of 50 writes, the slowest (what the target reads). */
  patchNone: number;
  patchWith: number;
  /** PATCH p50 and p90, with none and with them: whether the p99 is the writes' usual time or one outlier. */
  patchNoneTypical: [number, number];
  patchWithTypical: [number, number];
  /** The slowest PATCH with subscribers and with none, and what its server's main thread did meanwhile. */
  slowestWith?: SlowestWrite;
  slowestNone?: SlowestWrite;
  failedWrites: number;
  errors: number;
  firstError: string;
  /** The gateways' results sent (one per socket and event), network writes carrying them, and delivery passes, during the phase. */
  sent?: Sent;
  /** The written gateway's event loop and collections during the writes, with the subscribers and with none. */
  processWith?: ProcessFigures;
  processNone?: ProcessFigures;
  /** Cores used during the writes with the subscribers: see CpuShares. */
  cpu?: CpuShares;
}

/**
 * Cores in use during a stretch of writes (CPU seconds over its wall time): the whole machine's
 * (of `cores`), the server's processes', the subscriber processes'. The rest is the database,
 * Redis, this process (the writer, the integration's receiver) and anything else running.
 */
interface CpuShares {
  cores: number;
  machine: number;
  servers: number;
  subscribers: number;
}

/**
 * The machine's busy CPU seconds so far, all cores: on Linux from /proc/stat, with the time spent
 * in soft interrupts (the network's receive and send work, much of a fan-out's), which os.cpus()
 * leaves out; elsewhere from os.cpus().
 */
function machineBusySeconds(): number {
  try {
    const [user, nice, system, , , irq, softirq] = fs
      .readFileSync("/proc/stat", "utf8")
      .split("\n")[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user! + nice! + system! + irq! + softirq!) / 100; // USER_HZ
  } catch {
    return os.cpus().reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0) / 1000;
  }
}

/** CPU seconds so far: the machine's busy time (all cores), the target's processes, the subscriber processes. */
async function cpuTotals(group: SubscriberGroup, target: Target) {
  const busy = machineBusySeconds();
  const [servers, subscribers] = await Promise.all([
    target.cpuSeconds(),
    group.all({ cmd: "cpu" }, "cpu").then((all) => sum(all, "seconds")),
  ]);
  return { at: now(), busy, servers, subscribers };
}

function cpuShares(before: Awaited<ReturnType<typeof cpuTotals>>, after: Awaited<ReturnType<typeof cpuTotals>>): CpuShares {
  const seconds = (after.at - before.at) / 1000;
  return {
    cores: os.cpus().length,
    machine: (after.busy - before.busy) / seconds,
    servers: (after.servers - before.servers) / seconds,
    subscribers: (after.subscribers - before.subscribers) / seconds,
  };
}

interface TargetResult {
  name: string;
  connectMs: number;
  connected: number;
  spaceUpdated: StreamResult;
  integrationEvents: StreamResult;
  /** Resident memory of the server's processes before the subscribers connected, and with them subscribed (bytes; Linux). */
  resident?: { before: number; with: number };
}

const SPACE_QUERY = "subscription Space($spaceId: String!) { spaceUpdated(spaceId: $spaceId) { id title updatedAt } }";
const EVENTS_QUERY =
  "subscription Events($integrationName: String!, $statuses: [IntegrationEventStatus!]) { integrationEvents(integrationName: $integrationName, statuses: $statuses) { id status createdAt payload { eventId type spaceId revisionId } } }";

/** Writes at the measured rate, not timed, once every socket of a phase saw the first (see streamPhase). */
const PHASE_WARM_WRITES = 20;

/** Writes of each kind before the writes with no subscriber are measured. */
const WARM_WRITES = 150;

async function measureTarget(target: Target, options: Options, processes: number): Promise<TargetResult> {
  const write = writer(target);
  // PATCH latency with nobody subscribed, after writes that open connections, warm caches and let
  // the runtime compile the write path: a gateway just started takes one of its first hundred edits
  // 3–4 times as long as usual about eight times (its code still being optimized and deoptimized),
  // later about twice a hundred — measured after 5 writes, the "none" p99 was that start-up.
  for (let i = 0; i < WARM_WRITES; i++) await write.title(`first ${i}`), await write.page(target.warmPage, `first ${i}`);
  // The page edits timed with subscribers and with none go to pages of their own, one a space (a
  // subscriber tells page edits apart by their space), each edited once before: with none timed
  // on the warm page alone, edited 150 times, a stretch timed each page's first edit and the
  // other one page's 151st.
  for (let k = 0; k < options.writes; k++)
    await write.page(target.pages[k]!, `first ${k}`), await write.page(target.nonePages[k]!, `first ${k}`);
  await write.calibrate();
  const noneSpace = await paced(options, (k) => write.title(`none ${k}`), target);
  const noneEvents = await paced(options, (k) => write.page(target.nonePages[k]!, `none ${k}`), target);

  // The gateways' own counts of results sent and of network writes carrying them (none for the minimal server).
  const sent = async (): Promise<Sent> => {
    const names = [
      "live_stream_deliveries_total",
      "live_stream_writes_total",
      "live_stream_pass_duration_seconds_count",
      "live_stream_pass_duration_seconds_sum",
      PASS_WITHIN,
      "live_stream_pause_seconds_total",
    ];
    const totals = await metricTotals(target.urls, names);
    const passes = totals.live_stream_pass_duration_seconds_count || 0;
    return {
      frames: totals.live_stream_deliveries_total || 0,
      writes: totals.live_stream_writes_total || 0,
      passes,
      passSeconds: totals.live_stream_pass_duration_seconds_sum || 0,
      longPasses: passes - (totals[PASS_WITHIN] || 0),
      pauseSeconds: totals.live_stream_pause_seconds_total || 0,
    };
  };
  const residentBefore = residentBytes(target.pids);
  const group = await SubscriberGroup.start(target, options.subscribers, processes, options.priority);
  console.log(`  ${target.name}: ${group.connected}/${options.subscribers} sockets connected in ${(group.connectMs / 1000).toFixed(1)} s`);
  try {
    const titles = Array.from({ length: options.writes }, (_, k) => `write ${k}`);
    let before = await sent();
    const spaceUpdated = await streamPhase(group, options, {
      target,
      subscribe: { id: "space", keyBy: "title", query: SPACE_QUERY, variables: { spaceId: target.titleSpace } },
      warm: (i) => write.title(`warm ${i}`),
      write: (k) => write.title(titles[k]!),
      keys: titles,
      coalesce: true,
      none: noneSpace,
      idle: write.idle,
    });
    spaceUpdated.sent = difference(await sent(), before);
    // Every socket connected and subscribed, 50 events delivered.
    const residentWith = residentBytes(target.pids);
    const resident =
      residentBefore !== undefined && residentWith !== undefined ? { before: residentBefore, with: residentWith } : undefined;
    console.log(`  ${target.name}: spaceUpdated ${line(spaceUpdated)}`);
    before = await sent();
    const integrationEvents = await streamPhase(group, options, {
      target,
      subscribe: { id: "events", keyBy: "spaceId", query: EVENTS_QUERY, variables: { integrationName: "bench" } },
      warm: (i) => write.page(target.warmPage, `warm ${i}`),
      write: (k) => write.page(target.pages[k]!, `write ${k}`),
      keys: target.pages.slice(0, options.writes).map((p) => p.space),
      coalesce: false,
      none: noneEvents,
      idle: write.idle,
    });
    integrationEvents.sent = difference(await sent(), before);
    console.log(`  ${target.name}: integrationEvents ${line(integrationEvents)}`);
    return { name: target.name, connectMs: group.connectMs, connected: group.connected, spaceUpdated, integrationEvents, resident };
  } finally {
    await group.close();
  }
}

/** The gateways' delivery passes within 100 ms (a bucket of live_stream_pass_duration_seconds). */
const PASS_WITHIN = 'live_stream_pass_duration_seconds_bucket{le="0.1"}';

/** What the gateways sent: results (one per socket and event), network writes, delivery passes (all, their seconds, those over 100 ms, and the seconds they paused). */
interface Sent {
  frames: number;
  writes: number;
  passes: number;
  passSeconds: number;
  longPasses: number;
  pauseSeconds: number;
}

/** Each count of `after` less the same of `before`. */
function difference(after: Sent, before: Sent): Sent {
  return Object.fromEntries(Object.entries(after).map(([name, value]) => [name, value - before[name as keyof Sent]])) as unknown as Sent;
}

function line(r: StreamResult): string {
  return (
    `write → arrival p50 ${ms(r.p50)}, p99 ${ms(r.p99)}; ${r.received}/${r.expected} deliveries; ` +
    `PATCH p50/p90/p99 ${spread([...r.patchWithTypical, r.patchWith])} (none: ${spread([...r.patchNoneTypical, r.patchNone])})` +
    (r.sent?.frames
      ? `; ${r.sent.frames} results sent in ${r.sent.writes} network writes by ${r.sent.passes} passes ` +
        `(mean ${ms((r.sent.passSeconds / r.sent.passes) * 1000)} of which ${ms((r.sent.pauseSeconds / r.sent.passes) * 1000)} paused, ${r.sent.longPasses} over 100 ms; warm-up included)`
      : "") +
    (r.processWith && r.processNone
      ? `\n      during the writes, with subscribers (none): ${processLine(r.processWith, r.processNone)}`
      : "") +
    (r.cpu ? `\n      ${cpuLine(r.cpu)}` : "") +
    (r.slowestWith && r.slowestNone
      ? `\n      the slowest PATCH with subscribers ${slowestLine(r.slowestWith)} (none: ${slowestLine(r.slowestNone)}) — its server's main thread meanwhile, and the writing client's wait, ms`
      : "") +
    (r.failedWrites ? `; ${r.failedWrites} writes failed` : "") +
    (r.errors ? `; ${r.errors} subscriber errors` : "") +
    (r.firstError ? `; first error: ${r.firstError}` : "")
  );
}

/** The cores in use during the writes with the subscribers. */
function cpuLine(c: CpuShares): string {
  const cores = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "—");
  return (
    `cores in use during the writes: ${cores(c.machine)} of ${c.cores} — the server's processes ${cores(c.servers)}, ` +
    `the subscriber processes ${cores(c.subscribers)}, the rest (database, Redis, this process) ${cores(c.machine - c.servers - c.subscribers)}`
  );
}

/**
 * The event-loop delay and the collections of the written gateway during the writes, with
 * subscribers and (with none). The delays are prom-client's: 10 ms (its sampling interval) is none.
 */
function processLine(w: ProcessFigures, none: ProcessFigures): string {
  const gc = (p: ProcessFigures, kind: string) => `${p.gc[kind]?.count ?? 0} ${Math.round(p.gc[kind]?.ms ?? 0)} ms`;
  return (
    `event-loop delay p99/max ${spread([w.loopDelayP99Ms, w.loopDelayMaxMs])} (${spread([none.loopDelayP99Ms, none.loopDelayMaxMs])}); ` +
    ["minor", "incremental", "major"].map((kind) => `${kind} GC ${gc(w, kind)} (${gc(none, kind)})`).join(", ")
  );
}

function writer(target: Target) {
  const base = target.urls[0]!;
  const send = async (p: string, body: unknown) => {
    const res = await fetch(base + p, {
      method: "PATCH",
      headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`PATCH ${p}: ${res.status} ${text.slice(0, 200)}`);
  };
  const read = async () => {
    const start = now();
    await fetch(`${base}/v1/spaces/${target.titleSpace}`, { headers: { authorization: `Bearer ${target.token}` } }).then((r) =>
      r.arrayBuffer(),
    );
    return now() - start;
  };
  let idleRead: number | undefined;
  return {
    /** Notes how long a read takes while the server is idle (the fastest of five). */
    async calibrate() {
      const times = [];
      for (let i = 0; i < 5; i++) times.push(await read());
      idleRead = Math.min(...times);
    },
    /** Waits (up to 180 s) until three reads in a row take at most 3× the idle time, or 50 ms. */
    async idle() {
      const limit = Math.max(50, 3 * (idleRead ?? 0));
      const deadline = now() + 180_000;
      for (let fast = 0; fast < 3 && now() < deadline; ) {
        fast = (await read()) <= limit ? fast + 1 : 0;
        await sleep(100);
      }
    },
    title: (title: string) => send(`/v1/spaces/${target.titleSpace}`, { title }),
    page: (at: SpacePage, title: string) => send(`/v1/spaces/${at.space}/content/page/${at.page}`, { title }),
  };
}

interface Paced {
  starts: number[];
  durations: number[];
  /** The written server's main thread during each write (its PATCH, and anything else it did meanwhile), where known. */
  threads: (ThreadTimes | undefined)[];
  /** This process's main thread (the writing client's) during each write, where known. */
  writerThreads: (ThreadTimes | undefined)[];
  failed: number;
  firstError?: string;
  /** The written server's process during the writes (a gateway's /metrics; none for the minimal server). */
  process?: ProcessFigures;
}

/** What held a gateway's event loop during a stretch of writes: its longest delay, and its collections by kind. */
interface ProcessFigures {
  loopDelayMaxMs: number;
  loopDelayP99Ms: number;
  /** Collections (count, ms) by kind: minor, major, incremental, weakcb. */
  gc: Record<string, { count: number; ms: number }>;
}

/** A server process's /metrics text ("" when it has none or does not answer). */
function metricsText(url: string): Promise<string> {
  return fetch(`${url}/metrics`).then(
    (r) => (r.ok ? r.text() : ""),
    () => "",
  );
}

/**
 * Each of `names` summed over every sample (all labels, unless the name gives them) of every server process at `urls`, one
 * scrape a process; NaN for a metric none of them reports (the minimal server reports none).
 */
async function metricTotals(urls: string[], names: string[]): Promise<Record<string, number>> {
  const totals: Record<string, number> = Object.fromEntries(names.map((name) => [name, NaN]));
  for (const url of urls) {
    const text = await metricsText(url);
    for (const name of names) {
      // A name with its labels (`…_bucket{le="0.1"}`) is that sample alone.
      const sample = name.includes("{") ? name.replace(/[{}.+"]/g, "\\$&") : `${name}(?:\\{[^}]*\\})?`;
      for (const [, value] of text.matchAll(new RegExp(`^${sample} ([\\d.e+-]+)$`, "gm"))) {
        totals[name] = (Number.isNaN(totals[name]!) ? 0 : totals[name]!) + Number(value);
      }
    }
  }
  return totals;
}

/**
 * The written server's event-loop delay since the last scrape (prom-client resets its histogram at
 * each) and its GC totals so far, from /metrics; undefined for a server without them.
 */
async function processFigures(target: Target): Promise<ProcessFigures | undefined> {
  const text = await metricsText(target.urls[0]!);
  const value = (name: string) => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, "m").exec(text)?.[1] ?? NaN);
  if (Number.isNaN(value("nodejs_eventloop_lag_max_seconds"))) return undefined;
  const gc: ProcessFigures["gc"] = {};
  for (const [, kind, sum] of text.matchAll(/^nodejs_gc_duration_seconds_sum\{kind="(\w+)"\} ([\d.e+-]+)$/gm)) {
    const count = Number(new RegExp(`^nodejs_gc_duration_seconds_count\\{kind="${kind}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
    gc[kind!] = { count, ms: Number(sum) * 1000 };
  }
  return {
    loopDelayMaxMs: value("nodejs_eventloop_lag_max_seconds") * 1000,
    loopDelayP99Ms: value("nodejs_eventloop_lag_p99_seconds") * 1000,
    gc,
  };
}

/**
 * Waits (up to 30 s) until the server's processes have no integration event waiting for delivery
 * and sent no SQL statement for 500 ms but the scrapes' own (`integration_events_pending` and
 * `db_statement_duration_seconds` on /metrics: each scrape counts its processes' backlog with one
 * statement; a server without them is settled): timed writes start on an idle server, not while
 * it still delivers the integration events of earlier writes.
 */
async function settled(target: Target): Promise<void> {
  const names = ["db_statement_duration_seconds_count", "integration_events_pending"];
  const read = () => metricTotals(target.urls, names);
  const deadline = now() + 30_000;
  let last = await read();
  while (!Number.isNaN(last.db_statement_duration_seconds_count) && now() < deadline) {
    await sleep(500);
    const next = await read();
    if (
      next.integration_events_pending === 0 &&
      next.db_statement_duration_seconds_count! - last.db_statement_duration_seconds_count! <= target.urls.length
    )
      return;
    last = next;
  }
}

/** A thread's times between two readings, when both were read. */
function since(before: ThreadTimes | undefined, after: ThreadTimes | undefined): ThreadTimes | undefined {
  return before && after ? { runMs: after.runMs - before.runMs, waitMs: after.waitMs - before.waitMs } : undefined;
}

/** This process's main thread so far (Linux): it writes and times the writes. */
const writerThread = mainThreadOf(process.pid);

/** `options.writes` writes at `options.rate` per second, each started on schedule (open loop); with `target`, its process figures during them. */
async function paced(options: Pick<Options, "writes" | "rate">, write: (k: number) => Promise<void>, target?: Target): Promise<Paced> {
  const result: Paced = { starts: [], durations: [], threads: [], writerThreads: [], failed: 0 };
  if (target) await settled(target);
  const before = target && (await processFigures(target));
  const t0 = now();
  await atWritingPriority(() =>
    Promise.all(
      Array.from({ length: options.writes }, async (_, k) => {
        await sleep(t0 + (k * 1000) / options.rate - now());
        const start = now();
        result.starts[k] = start;
        const thread = target?.mainThread?.();
        const writer = writerThread?.();
        try {
          await write(k);
        } catch (err) {
          result.failed++;
          result.firstError ??= String(err);
        }
        result.durations[k] = now() - start;
        result.threads[k] = since(thread, target?.mainThread?.());
        result.writerThreads[k] = since(writer, writerThread?.());
      }),
    ),
  );
  const after = before && (await processFigures(target!));
  if (before && after) {
    const gc: ProcessFigures["gc"] = {};
    for (const [kind, total] of Object.entries(after.gc)) {
      gc[kind] = { count: total.count - (before.gc[kind]?.count ?? 0), ms: total.ms - (before.gc[kind]?.ms ?? 0) };
    }
    result.process = { loopDelayMaxMs: after.loopDelayMaxMs, loopDelayP99Ms: after.loopDelayP99Ms, gc };
  }
  return result;
}

interface Phase {
  /** The server written to: its process figures during the writes are noted (paced). */
  target: Target;
  subscribe: { id: string; keyBy: "title" | "spaceId" | "eventId"; query: string; variables: Record<string, unknown> };
  warm: (i: number) => Promise<void>;
  write: (k: number) => Promise<void>;
  keys: string[];
  coalesce: boolean;
  none: Paced;
  /** Resolves once the server answers a read as fast as when it was idle. */
  idle: () => Promise<void>;
}

async function streamPhase(group: SubscriberGroup, options: Options, phase: Phase): Promise<StreamResult> {
  await group.all({ cmd: "subscribe", ...phase.subscribe }, "subscribed");
  // Live once every socket got a warm-up message; a new warm-up write only when the last one
  // brought nothing new for 3 s (a slow server is still sending it).
  const warmDeadline = now() + 120_000 + options.subscribers * 10;
  let live = 0;
  for (let i = 0; live < group.connected && now() < warmDeadline; i++) {
    await phase.warm(i).catch(() => undefined);
    let last = -1;
    let stillAt = now();
    while (now() < warmDeadline) {
      await sleep(250);
      live = sum(await group.all({ cmd: "status" }, "status"), "live");
      if (live >= group.connected) break;
      if (live !== last) (last = live), (stillAt = now());
      else if (now() - stillAt > 3000) break;
    }
  }
  // Then a stretch of writes at the measured rate, not timed: the first five or so writes after the
  // sockets subscribed arrived 2–4 times later than the rest with either server (the subscriber
  // processes' message handling still being compiled, one message a socket warming them little).
  await paced({ writes: PHASE_WARM_WRITES, rate: options.rate }, (k) => phase.warm(1_000 + k).catch(() => undefined));
  await group.quiet(1000, 60_000);

  const cpuBefore = await cpuTotals(group, phase.target);
  const writes = await paced(options, phase.write, phase.target);
  const cpu = cpuShares(cpuBefore, await cpuTotals(group, phase.target));
  const expected = group.connected * phase.keys.length;
  const lastStart = Math.max(...writes.starts);
  let received = 0;
  let progressAt = now();
  let reportedAt = now();
  while (now() - lastStart < options.wait * 1000) {
    const statuses = await group.all({ cmd: "status", keys: phase.keys, coalesce: phase.coalesce }, "status");
    const count = sum(statuses, "received");
    if (count !== received) (received = count), (progressAt = now());
    if (received >= expected || now() - progressAt > 15_000) break;
    if (now() - reportedAt > 15_000) {
      reportedAt = now();
      console.log(`    ${received}/${expected} deliveries ${((now() - lastStart) / 1000).toFixed(0)} s after the last write`);
    }
    await sleep(500);
  }
  const reports = await group.all({ cmd: "report", keys: phase.keys, coalesce: phase.coalesce, starts: writes.starts }, "report");
  const statuses = await group.all({ cmd: "status" }, "status");
  const latencies: number[] = [];
  for (const r of reports) for (const l of r.latencies as Float64Array) if (!Number.isNaN(l)) latencies.push(l);
  latencies.sort((a, b) => a - b);
  if (process.env.BENCH_STREAM_DETAIL) {
    console.log(
      perWrite(
        reports.map((r) => r.latencies as Float64Array),
        phase.keys.length,
        writes.durations,
      ),
    );
    console.log(`    PATCH ms with none: ${phase.none.durations.map((d) => Math.round(d)).join(" ")}`);
  }
  await group.all({ cmd: "unsubscribe" }, "unsubscribed");
  await group.quiet(1000, 30_000);
  // A server still sending what was not delivered in time would slow the next phase down.
  await phase.idle();
  const missing = expected - latencies.length;
  const noneSorted = [...phase.none.durations].sort((a, b) => a - b);
  const withSorted = [...writes.durations].sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    p99Expected: percentile([...latencies, ...new Array<number>(Math.max(0, missing)).fill(Infinity)], 99),
    received: latencies.length,
    expected,
    live,
    patchNone: percentile(noneSorted, 99),
    patchWith: percentile(withSorted, 99),
    patchNoneTypical: [percentile(noneSorted, 50), percentile(noneSorted, 90)],
    patchWithTypical: [percentile(withSorted, 50), percentile(withSorted, 90)],
    slowestWith: slowest(writes),
    slowestNone: slowest(phase.none),
    processWith: writes.process,
    processNone: phase.none.process,
    cpu,
    failedWrites: writes.failed + phase.none.failed,
    errors: sum(statuses, "errors"),
    firstError: statuses.map((s) => s.firstError).find(Boolean) || writes.firstError || phase.none.firstError || "",
  };
}

interface SlowestWrite {
  ms: number;
  thread: ThreadTimes;
  /** This process's main thread meanwhile: a write's time also counts the writing client's wait for a core. */
  writer?: ThreadTimes;
}

/** The slowest write of a stretch (its PATCH p99: of 50, the slowest) with its server's main-thread times, when known. */
function slowest(paced: Paced): SlowestWrite | undefined {
  const k = paced.durations.indexOf(Math.max(...paced.durations));
  const thread = paced.threads[k];
  return thread ? { ms: paced.durations[k]!, thread, writer: paced.writerThreads[k] } : undefined;
}

/** "31 ms: ran 12, waited for a core 14" — a slowest write and its server's main thread meanwhile. */
function slowestLine(w: SlowestWrite): string {
  const writer = w.writer ? `; the writing client waited for a core ${Math.round(w.writer.waitMs)}` : "";
  return `${Math.round(w.ms)} ms: ran ${Math.round(w.thread.runMs)}, waited for a core ${Math.round(w.thread.waitMs)}${writer}`;
}

/**
 * BENCH_STREAM_DETAIL: each write's arrival p50 and slowest arrival, and the PATCH's own time, in
 * ms (whether a phase's p99 is every write's or a few writes').
 */
function perWrite(latencies: Float64Array[], writes: number, durations: number[]): string {
  const cells = Array.from({ length: writes }, (_, j) => {
    const at: number[] = [];
    for (const l of latencies) for (let i = j; i < l.length; i += writes) if (!Number.isNaN(l[i]!)) at.push(l[i]!);
    at.sort((a, b) => a - b);
    return `${j}: ${Math.round(percentile(at, 50))}/${Math.round(at.at(-1) ?? NaN)} (${Math.round(durations[j] ?? NaN)})`;
  });
  const rows = [];
  for (let i = 0; i < cells.length; i += 8) rows.push(`      ${cells.slice(i, i + 8).join("  ")}`);
  return `    write: arrival p50/max (PATCH ms)\n${rows.join("\n")}`;
}

/** Child processes holding the subscribers' sockets, spread over the target's server processes. */
class SubscriberGroup {
  private constructor(
    private children: ChildProcess[],
    readonly connected: number,
    readonly connectMs: number,
  ) {}

  /** `priority`: the processes' (Options.priority). */
  static async start(target: Target, sockets: number, processes: number, priority: SubscriberPriority): Promise<SubscriberGroup> {
    const children = Array.from({ length: processes }, () =>
      fork(path.join(root, "bench/streams-subscribers.mjs"), { execArgv: clientArgs(), stdio: "inherit", serialization: "advanced" }),
    );
    for (const child of children) lowerPriority(child.pid, priority);
    await Promise.all(children.map((c) => nextMessage(c, "ready")));
    const started = now();
    const answers = await Promise.all(
      children.map((c, i) => {
        const count = Math.floor(sockets / processes) + (i < sockets % processes ? 1 : 0);
        const url = target.urls[i % target.urls.length]!.replace(/^http/, "ws") + "/graphql";
        return request<{ ok: number; failed: number; firstError: string }>(
          c,
          { cmd: "connect", url, token: target.token, count },
          "connected",
        );
      }),
    );
    const group = new SubscriberGroup(children, sum(answers, "ok"), now() - started);
    const failed = sum(answers, "failed");
    if (failed) console.log(`  ${failed} sockets could not connect; first error: ${answers.map((a) => a.firstError).find(Boolean)}`);
    return group;
  }

  all(cmd: Record<string, unknown>, kind: string): Promise<any[]> {
    return Promise.all(this.children.map((c) => request(c, cmd, kind)));
  }

  /** Waits until no message arrived for `ms` (at most `max`). */
  async quiet(ms: number, max: number) {
    const deadline = now() + max;
    while (now() < deadline) {
      const last = Math.max(...(await this.all({ cmd: "status" }, "status")).map((s) => s.lastAt));
      if (now() - last >= ms) return;
      await sleep(250);
    }
  }

  async close() {
    await Promise.all(this.children.map((c) => request(c, { cmd: "close" }, "closed").catch(() => undefined)));
    await Promise.all(this.children.map((c) => ended(c)));
  }
}

// ─── Burst ───────────────────────────────────────────────────────────────────────────────────

interface BurstResult {
  /** What was sent, for the printout. */
  label: string;
  /** Installations that record an event for each edit. */
  installations: number;
  /** Edits sent at a time, each lane in its own space. */
  lanes: number;
  /** Page edits acknowledged, and those that failed. */
  edits: number;
  failed: number;
  /** From the first edit sent to the last one answered. */
  recordedMs: number;
  /** Integration events recorded, counted through the API (each integration's event list) before and after. */
  events: number;
  /** Events seen by the live subscriber, and when the last one arrived (from the start). */
  seen: number;
  seenMs: number;
}

/**
 * Two bursts of page edits (PATCH /v1/spaces/{id}/content/page/{pageId}), BENCH_BURST_CONCURRENCY
 * at a time, each lane in its own space (no two edits of one space race); an edit records its
 * integration events in its own transaction, one per installation that covers the space:
 *
 * 1. BENCH_BURST edits with the one installed integration: one event per edit, so events/s is the
 *    page-edit rate; one subscriber follows the integration's new events (integrationEvents).
 * 2. The same organization with BENCH_BURST_INSTALLATIONS integrations installed for all its
 *    spaces (20; the first one and more added here): BENCH_BURST / installations edits make
 *    BENCH_BURST events; one subscriber follows the organization's content events
 *    (organizationIntegrationEvents). This is the burst the ≥ 1,000 events/s target is read
 *    against: a large organization's integrations recording what its editors do.
 *
 * Events are counted through the API, not inferred from the edits.
 */
async function burstEvents(target: Target, options: Options): Promise<BurstResult[]> {
  const api = client(target.urls[0]!, target.token);
  const results = [
    await runBurst(target, options, {
      label: `${options.burst.toLocaleString("en-US")} page edits, 1 integration installed`,
      edits: options.burst,
      integrations: ["bench"],
      subscription: { query: EVENTS_QUERY, variables: { integrationName: "bench", statuses: ["pending"] } },
    }),
  ];
  const installations = Math.max(1, int("BENCH_BURST_INSTALLATIONS", 20));
  if (installations > 1) {
    const organization = (await api("GET", `/v1/spaces/${target.warmPage.space}`)).organization as string;
    const names = ["bench"];
    for (let i = 1; i < installations; i++) {
      const name = `bench-burst-${i}`;
      names.push(name);
      await api("POST", `/v1/integrations/${name}`, { title: `Burst ${i}`, organization, scopes: ["space:content:read"] });
      const installation = await api("POST", `/v1/integrations/${name}/installations`, { organization });
      await api("PATCH", `/v1/integrations/${name}/installations/${installation.id}`, { space_selection: "all" });
    }
    const edits = Math.ceil(options.burst / installations);
    results.push(
      await runBurst(target, options, {
        label: `${edits} page edits, ${installations} integrations installed`,
        edits,
        integrations: names,
        subscription: {
          query: `subscription Org($organizationId: String!) { integrationEvents: organizationIntegrationEvents(organizationId: $organizationId, types: ["space_content_updated"]) { id status payload { eventId spaceId } } }`,
          variables: { organizationId: organization },
        },
      }),
    );
  }
  return results;
}

async function runBurst(
  target: Target,
  options: Options,
  burst: { label: string; edits: number; integrations: string[]; subscription: { query: string; variables: Record<string, unknown> } },
): Promise<BurstResult> {
  const write = writer(target);
  const api = client(target.urls[0]!, target.token);
  const recorded = async () => {
    let total = 0;
    for (const name of burst.integrations) total += (await api("GET", `/v1/integrations/${name}/events?limit=1`)).count as number;
    return total;
  };
  const group = await SubscriberGroup.start({ ...target, urls: [target.urls[0]!] }, 1, 1, options.priority);
  try {
    await group.all({ cmd: "subscribe", id: "burst", keyBy: "eventId", ...burst.subscription }, "subscribed");
    // Live once the warm-up event arrived.
    for (let i = 0; i < 60; i++) {
      await write.page(target.warmPage, `burst warm ${i}`);
      await sleep(500);
      if (sum(await group.all({ cmd: "status" }, "status"), "keys") > 0) break;
    }
    await group.quiet(500, 10_000);
    const before = sum(await group.all({ cmd: "status" }, "status"), "keys");
    const eventsBefore = await recorded();
    const lanes = Math.min(options.burstConcurrency, target.pages.length);
    const started = now();
    let next = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        while (next < burst.edits && now() - started < options.burstSeconds * 1000) {
          const k = next++;
          await write.page(target.pages[lane]!, `burst ${k}`).catch(() => failed++);
        }
      }),
    );
    const recordedMs = now() - started;
    const edits = next - failed;
    const events = (await recorded()) - eventsBefore;
    let seen = 0;
    let seenAt = now();
    for (let progressAt = now(); seen < events && now() - progressAt < 10_000; await sleep(100)) {
      const count = sum(await group.all({ cmd: "status" }, "status"), "keys") - before;
      if (count !== seen) (seen = count), (progressAt = seenAt = now());
    }
    return {
      label: burst.label,
      installations: burst.integrations.length,
      lanes,
      edits,
      failed,
      recordedMs,
      events,
      seen,
      seenMs: seenAt - started,
    };
  } finally {
    await group.close();
  }
}

// ─── Output ──────────────────────────────────────────────────────────────────────────────────

function printResults(options: Options, floor: TargetResult, gw: TargetResult, burst: BurstResult[] | undefined, receiverCount: number) {
  const rows: string[][] = [
    ["stream", "server", "arrival p50*", "arrival p99*", "deliveries", "PATCH p99 none", `PATCH p99 ${options.subscribers} subs`],
  ];
  for (const stream of ["spaceUpdated", "integrationEvents"] as const) {
    for (const t of [floor, gw]) {
      const r = t[stream];
      rows.push([stream, t.name, ms(r.p50), ms(r.p99), `${r.received}/${r.expected}`, ms(r.patchNone), ms(r.patchWith)]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log("");
  for (const r of rows) console.log("  " + r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "));
  console.log("  (* of the deliveries received; the target below counts a missing one as never arriving)");
  const memory = (t: TargetResult) =>
    t.resident &&
    `${t.name} ${mb(t.resident.before)} → ${mb(t.resident.with)} MB (${((t.resident.with - t.resident.before) / Math.max(1, t.connected) / 1024).toFixed(1)} kB a subscriber)`;
  if (floor.resident && gw.resident) {
    console.log(
      `  resident memory of the server's processes, before the subscribers and with ${options.subscribers} subscribed to spaceUpdated: ${memory(floor)}, ${memory(gw)}`,
    );
  }
  console.log(
    options.subscribers === 10_000
      ? "targets (same run):"
      : `targets (same run; set for 10,000 subscribers, BENCH_SUBSCRIBERS=10000: with ${options.subscribers} a fan-out takes a few ms, and the gateway's own part of each write, the PATCH and the subscription's execution, weighs more):`,
  );
  const r = ratios(floor, gw);
  for (const stream of ["spaceUpdated", "integrationEvents"] as const) {
    const g = gw[stream];
    console.log(
      `  ${stream.padEnd(17)} arrival p99 gateway / minimal ${times(r[stream].arrival)} (target ≤ 1.25×)   ` +
        `PATCH p99 ${options.subscribers} subs / none ${times(r[stream].patch)} (target ≤ 2×)   ` +
        `deliveries ${(r[stream].deliveries * 100).toFixed(1)}% (target 100%)` +
        (g.live < gw.connected ? `   (${gw.connected - g.live} sockets not live after warm-up)` : ""),
    );
  }
  for (const [i, b] of (burst ?? []).entries()) {
    const target =
      i === (burst ?? []).length - 1 && b.installations > 1 ? " — the burst the target (≥ 1,000 events/s) is read against" : "";
    console.log(
      `  burst: ${b.label} (PATCH /v1 page, ${b.lanes} at a time over as many spaces)${target}\n` +
        `    page edits        ${b.edits} in ${ms(b.recordedMs)} = ${rate(b.edits, b.recordedMs)} edits/s\n` +
        `    events recorded   ${b.events} (counted through the API; ${b.installations} per edit) = ${rate(b.events, b.recordedMs)} events/s` +
        (b.installations === 1 ? " (one event per edit: the page-edit rate)" : "") +
        `\n    live subscriber   ${b.seen}/${b.events} seen, the last after ${ms(b.seenMs)} = ${rate(b.seen, b.seenMs)} events/s` +
        (b.failed ? `; ${b.failed} edits failed` : "") +
        (b.recordedMs >= options.burstSeconds * 1000 ? ` (stopped after ${options.burstSeconds} s, BENCH_BURST_SECONDS)` : ""),
    );
  }
  if (options.receiver) console.log(`  (integration deliveries answered by the local receiver: ${receiverCount})`);
  console.log(
    `  (load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(", ")} on ${os.availableParallelism()} cores: other processes' work slows both servers)`,
  );
}

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────

function now() {
  return performance.timeOrigin + performance.now();
}

function sum(list: any[], field: string): number {
  return list.reduce((s, x) => s + (x[field] as number), 0);
}

/** Milliseconds of several percentiles, as `p50/p90/p99 ms`. */
function spread(values: number[]): string {
  return `${values.map((v) => (Number.isNaN(v) ? "—" : String(Math.round(v)))).join("/")} ms`;
}

/** Bytes as whole megabytes. */
function mb(bytes: number): string {
  return String(Math.round(bytes / 1024 / 1024));
}

function ms(v: number): string {
  if (Number.isNaN(v)) return "—";
  return v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`;
}

/** Per stream: arrival p99 gateway / minimal, PATCH p99 with subscribers / none, deliveries received / expected. */
type Ratios = Record<"spaceUpdated" | "integrationEvents", { arrival: number; patch: number; deliveries: number }>;

function ratios(floor: TargetResult, gw: TargetResult): Ratios {
  const of = (stream: keyof Ratios) => ({
    arrival: quotient(gw[stream].p99Expected, floor[stream].p99Expected),
    patch: quotient(gw[stream].patchWith, gw[stream].patchNone),
    deliveries: gw[stream].received / Math.max(1, gw[stream].expected),
  });
  return { spaceUpdated: of("spaceUpdated"), integrationEvents: of("integrationEvents") };
}

/** Whether a round met every target of the ratios (arrival ≤ 1.25×, PATCH ≤ 2×, every delivery). */
const metTargets = (r: Ratios) => Object.values(r).every((s) => s.arrival <= 1.25 && s.patch <= 2 && s.deliveries >= 1);

function printRounds(rounds: Ratios[]) {
  const x = (v: number) => (v === Infinity ? "∞" : times(v));
  console.log("rounds (arrival p99 gateway / minimal, PATCH p99 with subscribers / none; spaceUpdated, then integrationEvents):");
  rounds.forEach((r, i) => {
    const cells = (["spaceUpdated", "integrationEvents"] as const).map(
      (s) => `${x(r[s].arrival)} ${x(r[s].patch)}${r[s].deliveries < 1 ? ` (${(r[s].deliveries * 100).toFixed(1)}% delivered)` : ""}`,
    );
    console.log(`  ${String(i + 1).padStart(2)}: ${cells.join("   ")}   ${metTargets(r) ? "every target met" : "missed"}`);
  });
  console.log(`  ${rounds.filter(metTargets).length} of ${rounds.length} rounds met every target`);
}

/** a / b: Infinity when a is (over 1% of the deliveries missing), NaN when b cannot be divided by. */
function quotient(a: number, b: number): number {
  if (a === Infinity) return Infinity;
  return Number.isNaN(a) || Number.isNaN(b) || b === 0 || b === Infinity ? NaN : a / b;
}

function times(v: number): string {
  return v === Infinity ? "∞ (over 1% of the deliveries missing)" : Number.isNaN(v) ? "n/a" : `${v.toFixed(2)}×`;
}

function rate(count: number, ms: number): string {
  return ms > 0 ? Math.round((count / ms) * 1000).toLocaleString("en-US") : "n/a";
}

async function parallel<T>(count: number, lanes: number, run: (k: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) {
        const k = next++;
        out[k] = await run(k);
      }
    }),
  );
  return out;
}

function nextMessage<T = any>(child: ChildProcess, kind: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: any) => {
      if (m?.kind !== kind) return;
      child.off("message", onMessage);
      child.off("exit", onExit);
      resolve(m);
    };
    const onExit = (code: number | null) => {
      child.off("message", onMessage);
      reject(new Error(`A benchmark child process exited (${code}) before answering ${kind}.`));
    };
    child.on("message", onMessage);
    child.once("exit", onExit);
  });
}

function request<T = any>(child: ChildProcess, cmd: Record<string, unknown>, kind: string): Promise<T> {
  const answer = nextMessage<T>(child, kind);
  child.send(cmd);
  return answer;
}

runWhenMain(import.meta.url, liveStreams);
