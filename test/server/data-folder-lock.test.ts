import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { acquireLock, DataDirLockedError, readLock } from "../../src/core/db/lock.js";
import { freePort } from "../helpers/ports.js";
import { startServerProcess } from "../helpers/server-process.js";

/**
 * The embedded data folder's lock is held by the kernel (a listening Unix socket), so a restart
 * after kill -9 always comes up: whether the killed server is still a zombie, its pid was taken by
 * another process, or the new server has the old one's pid (pid 1 in a container). Two live
 * servers on one folder are still refused.
 */

vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });

const folders: string[] = [];
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-lock-"));
  folders.push(dir);
  return dir;
}

/** `command` through bash with the embedded database in `dataDir`; resolves the server's URL once it listens. */
function start(dataDir: string, port: number, command = "exec $NODE scripts/run.mjs src/main.ts") {
  const env = { NODE: process.execPath, PORT: String(port), LOG_FORMAT: "json" };
  return startServerProcess("bash", ["-c", command], env, { dataDir, children });
}

const state = (pid: number) => fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[0];

describe("the data-folder lock", () => {
  it("a server killed with -9 and still a zombie (not reaped) does not keep the folder", async () => {
    const dataDir = folder();
    const port = await freePort();
    // bash starts the server, prints its pid, then becomes `sleep`, which never reaps it.
    const parent = start(dataDir, port, `$NODE scripts/run.mjs src/main.ts & echo "server pid $!"; exec sleep 600`);
    await parent.listening;
    const pid = Number(/server pid (\d+)/.exec(parent.output())![1]);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, "server.lock"), "utf8")).pid).toBe(pid);
    process.kill(pid, "SIGKILL");
    await vi.waitFor(() => expect(state(pid)).toBe("Z"), { timeout: 10_000 });
    // The kernel lets go of its sockets once its last thread has exited, never asked about its pid.
    await vi.waitFor(async () => expect(await readLock(dataDir)).toBeNull(), { timeout: 10_000 });
    const again = start(dataDir, await freePort());
    const url = await again.listening;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(state(pid)).toBe("Z"); // still there: the lock never asked about it
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
    parent.child.kill("SIGKILL");
  });

  it("a lock file naming a live process of another program (a reused pid) does not keep the folder", async () => {
    const dataDir = folder();
    fs.writeFileSync(path.join(dataDir, "server.lock"), JSON.stringify({ pid: process.pid, port: 1, adminSecret: "x" }));
    expect(await readLock(dataDir)).toBeNull();
    const server = start(dataDir, await freePort());
    const url = await server.listening;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, "server.lock"), "utf8")).pid).not.toBe(process.pid);
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });

  it("a lock file naming the starting process's own pid (pid 1 in a container) does not keep the folder", async () => {
    const dataDir = folder();
    fs.writeFileSync(path.join(dataDir, "server.lock"), JSON.stringify({ pid: process.pid }));
    fs.writeFileSync(path.join(dataDir, "server.sock"), ""); // a socket file left behind, as after kill -9
    const lock = await acquireLock(dataDir);
    try {
      expect(lock.info.pid).toBe(process.pid);
      expect(await readLock(dataDir)).toEqual({ pid: process.pid });
    } finally {
      lock.release();
    }
    expect(await readLock(dataDir)).toBeNull();
    expect(fs.existsSync(path.join(dataDir, "server.lock"))).toBe(false);
  });

  it("two live servers on one folder: the second is refused with one line naming the first, and exits 1", async () => {
    const dataDir = folder();
    const first = start(dataDir, await freePort());
    await first.listening;
    const firstPid = JSON.parse(fs.readFileSync(path.join(dataDir, "server.lock"), "utf8")).pid as number;
    expect(await readLock(dataDir)).toMatchObject({ pid: firstPid });
    await expect(acquireLock(dataDir, 0)).rejects.toBeInstanceOf(DataDirLockedError);

    const second = start(dataDir, await freePort());
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(`The data folder ${dataDir} is in use by another process (pid ${firstPid}).`);
    // The first one is untouched and still serves.
    expect(await readLock(dataDir)).toMatchObject({ pid: firstPid });
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await readLock(dataDir)).toBeNull();
  });

  it("two processes taking one folder at the same moment: exactly one wins", async () => {
    const dataDir = folder();
    const tries = await Promise.allSettled(Array.from({ length: 8 }, () => acquireLock(dataDir, 0)));
    const won = tries.filter((t) => t.status === "fulfilled");
    expect(won).toHaveLength(1);
    expect(
      tries.filter((t) => t.status === "rejected").every((t) => (t as PromiseRejectedResult).reason instanceof DataDirLockedError),
    ).toBe(true);
    (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireLock>>>).value.release();
  });
});
