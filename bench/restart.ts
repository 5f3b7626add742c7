import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../test/helpers/ports.js";
import { freshPostgres } from "../test/helpers/postgres.js";
import { admin, client, ended, int, percentile, root, runWhenMain, sleep } from "./common.js";

/**
 * Restarts as an operator makes them: `npm start` on a data folder (or a PostgreSQL database) that
 * already holds an organization, spaces and content, timed from the moment `npm start` is run
 * (npm's own start-up included) to:
 * - the server's "listening" line on its standard output;
 * - the first 200 of `/readyz` (the database answers);
 * - the first 200 of an authenticated `GET /v1/spaces/{id}` (a real answer, token and row read).
 * With the CPU time the server's process used by then (Linux: /proc/<pid>/stat, all its threads).
 * BENCH_RESTARTS restarts after a clean stop (SIGTERM, 5), then BENCH_CRASH_RESTARTS (2) after the
 * server was killed (SIGKILL) while a client was writing: the embedded database replays its log.
 * The data: BENCH_RESTART_SPACES spaces (200), each with a page edited once. Target (issue: speed):
 * a restart on an existing data folder answers in under 2 s. Embedded database by default,
 * PostgreSQL with DATABASE_URL (a fresh database next to it; no Redis).
 *
 *   npm run bench -- restart
 */
/** The environment of a server the benches start: loopback, a free port, JSON logs at info, no rate limit, no Redis. */
export async function serverEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: String(await freePort()),
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    RATE_LIMIT_PER_MINUTE: "0",
    REDIS_URL: "",
    ...extra,
  };
}

export async function restarts() {
  const cleanRuns = int("BENCH_RESTARTS", 5);
  const crashRuns = int("BENCH_CRASH_RESTARTS", 2);
  const spaces = int("BENCH_RESTART_SPACES", 200);
  const env = await serverEnv();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    if (process.env.DATABASE_URL) {
      const db = await freshPostgres(process.env.DATABASE_URL, "bench");
      cleanups.push(db.drop);
      env.DATABASE_URL = db.url;
    } else {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-restart-"));
      cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
      env.DATA_DIR = dataDir;
      env.DATABASE_URL = "";
    }
    const where = env.DATABASE_URL ? "PostgreSQL (a fresh database)" : "embedded (PGlite), a new data folder";
    console.log(`database: ${where}; ${spaces} spaces with a page each; timed from \`npm start\` (npm's own start included)`);

    // The first start creates the database (or its schema) and applies the migrations.
    let server = await Server.start(env);
    cleanups.push(() => server.stop());
    const first = await server.ready();
    const seeded = await seed(env, server, spaces);
    console.log(`  first start (a new database): ${line(first)}`);
    await server.stop();
    if (env.DATA_DIR) console.log(`  data folder: ${(folderBytes(env.DATA_DIR) / 1e6).toFixed(0)} MB`);

    const all: Timing[] = [];
    for (let i = 0; i < cleanRuns; i++) {
      server = await Server.start(env);
      const t = await server.ready(seeded);
      all.push(t);
      console.log(`  restart after a clean stop: ${line(t)}`);
      await server.stop();
    }
    let keptAfterKill = 0;
    for (let i = 0; i < crashRuns; i++) {
      server = await Server.start(env);
      await server.ready(seeded);
      // Writes under way when the process is killed: the next start replays what was acknowledged.
      const writing = writeUntilKilled(server.url, seeded);
      await sleep(500);
      await server.kill();
      const { acknowledged, last } = await writing;
      server = await Server.start(env);
      const t = await server.ready(seeded);
      all.push(t);
      // The last acknowledged edit survived the kill (the durability tests assert it; here it is shown).
      const kept = last
        ? (await client(server.url, seeded.token)("GET", `/v1/spaces/${last.space}/content/page/${last.page}`)).title === last.title
        : true;
      if (kept) keptAfterKill++;
      console.log(
        `  restart after SIGKILL during writes (${acknowledged} acknowledged, the last one ${kept ? "kept ✓" : "LOST ✗"}): ${line(t)}`,
      );
      await server.stop();
    }

    if (all.length) {
      const worst = (key: keyof Timing) => Math.max(...all.map((t) => t[key]));
      const median = (key: keyof Timing) =>
        percentile(
          all.map((t) => t[key]).sort((a, b) => a - b),
          50,
        );
      console.log(
        `restarts (${all.length}): listening median ${ms(median("listening"))}, slowest ${ms(worst("listening"))}; ` +
          `first answer median ${ms(median("answer"))}, slowest ${ms(worst("answer"))}; CPU median ${(median("cpuMs") / 1000).toFixed(1)} s`,
      );
      console.log(
        `target: a restart answers in under 2 s — slowest first answer ${ms(worst("answer"))} ${worst("answer") < 2000 ? "✓" : "✗"}`,
      );
      if (crashRuns)
        console.log(
          `the last acknowledged edit before each SIGKILL was there after the restart: ${keptAfterKill} of ${crashRuns} ${keptAfterKill === crashRuns ? "✓" : "✗"}`,
        );
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error(err));
  }
}

interface Timing {
  /** From `npm start` to the "listening" line, ms. */
  listening: number;
  /** …to the first 200 of /readyz. */
  ready: number;
  /** …to the first 200 of an authenticated GET /v1/spaces/{id} (when there is a token yet; else /readyz). */
  answer: number;
  /** CPU time of the server's process by its first answer (all threads), ms. */
  cpuMs: number;
}

export interface Seeded {
  token: string;
  spaceId: string;
  pages: { space: string; page: string }[];
}

/**
 * A server started as an operator does: `npm start` in the project's folder, or `command` (e.g.
 * node with the start script's flags, so that the child is the server's own process).
 */
export class Server {
  private lines: string[] = [];
  private listeningAt: number | undefined;
  private pid: number | undefined;

  private constructor(
    private child: ChildProcess,
    private started: number,
    readonly url: string,
  ) {}

  static async start(env: NodeJS.ProcessEnv, command: [string, string[]] = ["npm", ["start", "--silent"]]): Promise<Server> {
    const started = performance.now();
    const child = spawn(command[0], command[1], { cwd: root, env, stdio: ["ignore", "pipe", "inherit"] });
    const server = new Server(child, started, `http://127.0.0.1:${env.PORT}`);
    let partial = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      const text = partial + chunk.toString();
      const lines = text.split("\n");
      partial = lines.pop()!;
      for (const l of lines) server.note(l);
    });
    return server;
  }

  /** The server's own process id (from its first log line; the child's when it is the server itself). */
  get processId(): number | undefined {
    return this.pid ?? this.child.pid;
  }

  private note(raw: string) {
    this.lines.push(raw);
    if (this.lines.length > 50) this.lines.shift();
    let entry: { msg?: string; pid?: number };
    try {
      entry = JSON.parse(raw);
    } catch {
      return;
    }
    this.pid ??= entry.pid;
    if (this.listeningAt === undefined && entry.msg?.includes(" listening on ")) this.listeningAt = performance.now();
  }

  /** Waits for the listening line, /readyz and (with `seeded`) the first authenticated answer. */
  async ready(seeded?: Seeded): Promise<Timing> {
    const deadline = Date.now() + 120_000;
    const until = async (ok: () => Promise<boolean>) => {
      while (!(await ok())) {
        if (this.child.exitCode !== null || this.child.signalCode !== null)
          throw new Error(`The server exited (${this.child.exitCode ?? this.child.signalCode}) while starting:\n${this.lines.join("\n")}`);
        if (Date.now() > deadline) throw new Error("The server did not answer within 120 s.");
        await sleep(5);
      }
      return performance.now() - this.started;
    };
    const ready = await until(() =>
      fetch(`${this.url}/readyz`).then(
        (r) => (r.body?.cancel(), r.ok),
        () => false,
      ),
    );
    const answer = seeded
      ? await until(() =>
          fetch(`${this.url}/v1/spaces/${seeded.spaceId}`, { headers: { authorization: `Bearer ${seeded.token}` } }).then(
            (r) => (r.body?.cancel(), r.ok),
            () => false,
          ),
        )
      : ready;
    const cpuMs = cpuOf(this.pid);
    await until(async () => this.listeningAt !== undefined);
    return { listening: this.listeningAt! - this.started, ready, answer, cpuMs };
  }

  stop(): Promise<void> {
    return ended(this.child, "SIGTERM");
  }

  /** SIGKILL to the server's own process (npm's child runs it: `exec node …`); npm then exits by itself. */
  async kill(): Promise<void> {
    if (!this.pid) throw new Error("The server's process id is not known (no log line yet).");
    process.kill(this.pid, "SIGKILL");
    // npm reaps its child and exits: signalling npm too soon could leave the child unreaped, its
    // process id still taken, and the next start would find the data folder held.
    await ended(this.child, null);
  }
}

/** CPU time (user + system, all threads) of process `pid` so far, ms; NaN where /proc is not there. */
export function cpuOf(pid: number | undefined): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat (utime, stime), in clock ticks (100 a second on Linux).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** The first user, organization and token (`npm run admin -- bootstrap`), then the spaces and a page edit each. */
export async function seed(env: NodeJS.ProcessEnv, server: Server, spaces: number): Promise<Seeded> {
  const boot = await admin(env, ["bootstrap", "--email", "restart@example.com", "--org", "Restart"]);
  const call = client(server.url, boot.token);
  const pages: Seeded["pages"] = [];
  let spaceId = "";
  for (let i = 0; i < spaces; i++) {
    const space = await call("POST", `/v1/orgs/${boot.organization}/spaces`, { title: `Space ${i}` });
    spaceId ||= space.id;
    const page = await call("POST", `/v1/spaces/${space.id}/content/pages`, {
      title: `Page ${i}`,
      markdown: `# Page ${i}\n\nText of page ${i}.`,
    });
    pages.push({ space: space.id, page: page.id });
    await call("PATCH", `/v1/spaces/${space.id}/content/page/${page.id}`, { markdown: `# Page ${i}\n\nEdited text of page ${i}.` });
  }
  return { token: boot.token, spaceId, pages };
}

/**
 * Page edits (a new title each) one after another until the server stops answering: how many were
 * acknowledged, and the last one (its page is edited again only pages.length edits later).
 */
async function writeUntilKilled(
  url: string,
  seeded: Seeded,
): Promise<{ acknowledged: number; last?: { space: string; page: string; title: string } }> {
  const call = client(url, seeded.token);
  let acknowledged = 0;
  let last: { space: string; page: string; title: string } | undefined;
  for (let i = 0; ; i++) {
    const { space, page } = seeded.pages[i % seeded.pages.length]!;
    const title = `Edit ${i}`;
    try {
      await call("PATCH", `/v1/spaces/${space}/content/page/${page}`, { title });
      acknowledged++;
      last = { space, page, title };
    } catch {
      return { acknowledged, last };
    }
  }
}

export function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

function line(t: Timing): string {
  return `listening ${ms(t.listening)}, /readyz ${ms(t.ready)}, first answer ${ms(t.answer)}, ${(t.cpuMs / 1000).toFixed(1)} s of CPU`;
}

function ms(v: number): string {
  return `${Math.round(v)} ms`;
}

runWhenMain(import.meta.url, restarts);
