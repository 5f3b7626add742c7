import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runAdminCommand, type AdminCommand } from "../../src/cli/commands.js";
import { openDatabase } from "../../src/core/db/db.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** SIGKILL: no cleanup at all. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

/** Runs `src/main.ts` (what `npm start` runs) with `env` on a free port; resolves once it listens. */
export async function startServerProcess(env: Record<string, string | undefined>, timeoutMs = 90_000): Promise<ServerProcess> {
  // node itself with tsx as its loader (not the tsx wrapper, which would outlive a SIGKILL of the server).
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...env } as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = () => {
      const m = /listening on http:\/\/(?:localhost|127\.0\.0\.1):(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => out,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A data folder, or a fresh PostgreSQL database when DATABASE_URL is set, for server processes. */
export async function processStorage() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-proc-"));
  let pg: { url: string; drop: () => Promise<void> } | null = null;
  if (process.env.DATABASE_URL) {
    const { freshPostgres } = await import("../helpers/gateway.js");
    pg = await freshPostgres(process.env.DATABASE_URL);
  }
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: pg?.url ?? "", REDIS_URL: "" } as Record<string, string>,
    /** Runs an admin command: over the admin channel of the server holding the embedded database, or directly on PostgreSQL. */
    async admin(cmd: AdminCommand): Promise<any> {
      if (pg) {
        const db = await openDatabase({ dataDir, databaseUrl: pg.url });
        try {
          return await runAdminCommand(db.prisma, cmd);
        } finally {
          await db.close();
        }
      }
      const lock = JSON.parse(fs.readFileSync(path.join(dataDir, "server.lock"), "utf8"));
      const res = await fetch(`http://127.0.0.1:${lock.port}/_admin/command`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-admin-secret": lock.adminSecret },
        body: JSON.stringify(cmd),
      });
      if (!res.ok) throw new Error(`admin command failed: ${res.status} ${await res.text()}`);
      return res.json();
    },
    async cleanup() {
      await pg?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A minimal REST client for a server process. */
export function client(url: string, token: string) {
  const send = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  return {
    get: (p: string) => send("GET", p),
    post: (p: string, body: unknown = {}) => send("POST", p, body),
    put: (p: string, body: unknown = {}) => send("PUT", p, body),
    patch: (p: string, body: unknown = {}) => send("PATCH", p, body),
  };
}
