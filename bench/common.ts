import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Helpers the benchmarks that run the server as its own process share (streams.ts, restart.ts). */

/** The project's folder: `npm start` and `npm run admin` run from it. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Runs an admin command (`npm run admin -- …`) against the database `env` names; resolves with its last line, parsed. */
export function admin(env: NodeJS.ProcessEnv, args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["scripts/run.mjs", "src/cli/admin.ts", ...args], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`admin ${args[0]} failed (${code}): ${err}`));
      resolve(JSON.parse(out.trim().split("\n").at(-1)!));
    });
  });
}

/** `call(method, path, body?)` on the server at `base` with `token`: the parsed answer, or an error naming the status. */
export function client(base: string, token: string) {
  return async (method: string, p: string, body?: unknown): Promise<any> => {
    const res = await fetch(base + p, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/** Resolves once `child` exited, after `signal` (null: it is exiting by itself); SIGKILL after 15 s. */
export function ended(child: ChildProcess, signal: NodeJS.Signals | null = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", () => (clearTimeout(timer), resolve()));
    if (signal) child.kill(signal);
  });
}

export function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}

/** A non-negative integer from the environment variable `name`, else `fallback`. */
export function int(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${v}"`);
  return n;
}

/** The `q`th percentile of `sorted` (ascending), NaN when empty. */
export function percentile(sorted: number[], q: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1)]!;
}

/**
 * Runs `run` when the module at `moduleUrl` is the program itself (`npx tsx bench/streams.ts`), not
 * imported by bench/run.ts: exits 0 after it, or prints its error and exits 1.
 */
export function runWhenMain(moduleUrl: string, run: () => Promise<unknown>): void {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? "").href) return;
  run().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
