import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

/** What the process holding an embedded data folder writes about itself (`server.lock`). */
export interface LockInfo {
  pid: number;
  /** Port of the running server, when the holder is a server; admin commands go through it. */
  port?: number;
  /** Secret that authorizes local admin commands sent to the running server. */
  adminSecret?: string;
}

export class DataDirLockedError extends Error {
  constructor(
    public readonly holder: LockInfo,
    dataDir: string,
  ) {
    super(
      `The data folder ${dataDir} is in use by another process${holder.pid ? ` (pid ${holder.pid})` : ""}. ` +
        `Two processes on one embedded database would corrupt it: stop the other process or set DATA_DIR to another folder.`,
    );
  }
}

/**
 * The lock is a listening Unix socket, never a pid test: the kernel closes a process's sockets the
 * moment it dies (a zombie holds none), so a lock cannot outlive its holder, whatever pid the next
 * process gets. On Linux the socket is in the abstract namespace, named after the folder's device
 * and inode: binding it is atomic, so two processes starting together cannot both win. A socket
 * file in the folder (`server.sock`) also catches a holder in another network namespace (another
 * container sharing the volume). `server.lock` only carries the holder's pid, port and admin secret.
 */
const ABSTRACT = process.platform === "linux";
/** Longest path a Unix socket can be bound to (sun_path, less its terminating NUL). */
const MAX_SOCKET_PATH = 107;

export function lockPath(dataDir: string): string {
  return path.join(dataDir, "server.lock");
}

function socketPath(dataDir: string): string {
  return path.join(dataDir, "server.sock");
}

function abstractName(dataDir: string): string {
  const st = fs.statSync(dataDir);
  const id = crypto.hash("sha256", `${st.dev}:${st.ino}`, "hex").slice(0, 32);
  return `\0docs-api-data-folder/${id}`;
}

/** Listens on `address`; false when another live process listens there. */
function listen(address: string): Promise<net.Server | false> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once("error", (err: NodeJS.ErrnoException) => (err.code === "EADDRINUSE" ? resolve(false) : reject(err)));
    server.listen({ path: address, exclusive: true }, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** Whether a live process listens on the socket file `file` (a file left by a dead one refuses). */
function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: file });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Binds the socket file of the folder, taking over one left by a dead process; false when held. */
async function listenOnFile(file: string): Promise<net.Server | false | null> {
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) return null; // too long to bind: the abstract socket alone guards
  for (let attempt = 0; attempt < 3; attempt++) {
    const server = await listen(file);
    if (server) return server;
    if (await answers(file)) return false;
    fs.rmSync(file, { force: true }); // left by a process that is gone
  }
  return false;
}

function readInfo(dataDir: string): LockInfo {
  try {
    const info = JSON.parse(fs.readFileSync(lockPath(dataDir), "utf8")) as LockInfo;
    if (typeof info.pid === "number") return info;
  } catch {
    /* absent or torn: the holder has not written it yet */
  }
  return { pid: 0 };
}

/** The holder of a data folder, or null when no live process holds it. */
export async function readLock(dataDir: string): Promise<LockInfo | null> {
  if (!fs.existsSync(dataDir)) return null;
  if (ABSTRACT) {
    const server = await listen(abstractName(dataDir));
    if (!server) return readInfo(dataDir);
    server.close();
  }
  return (await answers(socketPath(dataDir))) ? readInfo(dataDir) : null;
}

export interface DataDirLock {
  info: LockInfo;
  update(extra: Partial<LockInfo>): void;
  release(): void;
}

/**
 * How long a start waits for a holder to let go before refusing: the kernel closes a killed
 * process's sockets once all its threads have exited, which can take a moment after SIGKILL (a
 * thread finishing a disk write), and a supervisor restarts at once.
 */
export const LOCK_WAIT_MS = 5_000;

/** Takes the data folder for this process, or throws DataDirLockedError naming the holder. */
export async function acquireLock(dataDir: string, waitMs = LOCK_WAIT_MS): Promise<DataDirLock> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await tryLock(dataDir);
    } catch (err) {
      if (!(err instanceof DataDirLockedError) || Date.now() >= until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function tryLock(dataDir: string): Promise<DataDirLock> {
  fs.mkdirSync(dataDir, { recursive: true });
  const held: net.Server[] = [];
  const refuse = () => {
    for (const server of held) server.close();
    return new DataDirLockedError(readInfo(dataDir), dataDir);
  };
  if (ABSTRACT) {
    const server = await listen(abstractName(dataDir));
    if (!server) throw refuse();
    held.push(server);
  }
  const fileServer = await listenOnFile(socketPath(dataDir));
  if (fileServer === false) throw refuse();
  if (fileServer) held.push(fileServer);
  if (!held.length) throw new Error(`cannot lock the data folder ${dataDir}: its path is too long for a Unix socket`);

  const file = lockPath(dataDir);
  const info: LockInfo = { pid: process.pid };
  const write = () => fs.writeFileSync(file, JSON.stringify(info), { mode: 0o600 });
  write();
  let released = false;
  return {
    info,
    update(extra) {
      Object.assign(info, extra);
      write();
    },
    release() {
      if (released) return;
      released = true;
      fs.rmSync(file, { force: true });
      // Called from an "exit" handler too, where nothing asynchronous runs: the file goes now,
      // the sockets with the process.
      if (fileServer) fs.rmSync(socketPath(dataDir), { force: true });
      for (const server of held) server.close();
    },
  };
}

export function newAdminSecret(): string {
  return crypto.randomBytes(32).toString("base64url");
}
