import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

export const root = path.resolve(import.meta.dirname, "../..");

export interface ServerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** The URL of its "listening on …" line; rejects if it exits first. */
  listening: Promise<string>;
}

/**
 * Runs a command in the project folder on the embedded database in `dataDir` (whatever database
 * the suite runs on), collecting what it prints; `children` gets it so the caller can kill what is
 * left at the end.
 */
export function startServerProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  opts: { dataDir: string; children: Set<ChildProcess> },
): ServerProcess {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, DATABASE_URL: "", REDIS_URL: "", DATA_DIR: opts.dataDir, HOST: "127.0.0.1", ...env },
  });
  opts.children.add(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`exited (${code}) before listening:\n${out}`)));
  });
  listening.catch(() => undefined);
  return { child, output: () => out, exited, listening };
}
