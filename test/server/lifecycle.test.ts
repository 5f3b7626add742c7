import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { afterAll, describe, expect, it, vi } from "vitest";
import { startGateway } from "../helpers/gateway.js";
import { createHttpFront } from "../../src/server/http.js";
import { createMetrics } from "../../src/server/metrics.js";
import { createLogger } from "../../src/core/logger.js";
import { freePort } from "../helpers/ports.js";
import { startServerProcess } from "../helpers/server-process.js";

// Starting servers (an embedded database, npm itself) is slow on a shared machine.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });

const root = path.resolve(import.meta.dirname, "../..");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-lifecycle-"));
const lockFile = path.join(dataDir, "server.lock");
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** An HTTP front (src/server/http.ts) over `app`, listening on a free port. */
async function listenFront(app: (req: http.IncomingMessage, res: http.ServerResponse) => unknown) {
  const front = createHttpFront({
    app,
    logger: createLogger({ level: "silent", format: "json" }),
    metrics: createMetrics(),
    trustProxy: 0,
  });
  const server = http.createServer((req, res) => front.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { front, server, port: (server.address() as net.AddressInfo).port };
}

/** Runs a command in the project folder with DATA_DIR and PORT set; resolves once it prints its listening line. */
const run = (command: string, args: string[], env: Record<string, string>) => startServerProcess(command, args, env, { dataDir, children });

const jsonLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));

describe("npm start", () => {
  let port: number;

  it("says what it does while it starts, stops on a SIGTERM sent to npm, and starts again on the same data", async () => {
    port = await freePort();
    const first = run("npm", ["start", "--silent"], { PORT: String(port), LOG_FORMAT: "json" });
    const url = await first.listening;
    expect(url).toBe(`http://127.0.0.1:${port}`);
    const messages = jsonLines(first.output()).map((l) => l.msg as string);
    expect(messages[0]).toMatch(/^Starting the documentation API \(Node v24\.\d+\.\d+, pid \d+\)$/);
    expect(messages).toContainEqual(expect.stringMatching(/^Database: embedded \(PGlite\) in .+ opened in \d+ ms$/));
    expect(messages).toContainEqual(expect.stringMatching(/^Migrations: applied \d+ \(/));
    const listening = jsonLines(first.output()).find((l) => /listening on/.test(l.msg));
    expect(listening.urls).toEqual({
      home: `${url}/`,
      docs: `${url}/docs`,
      graphql: `${url}/graphql`,
      dashboard: `${url}/dashboard`,
      health: `${url}/readyz`,
    });
    await expect
      .poll(() => messages.concat(jsonLines(first.output()).map((l) => l.msg)).some((m) => m.startsWith("No user yet")))
      .toBe(true);
    expect(first.output()).toContain(`DATA_DIR=${dataDir} npm run admin -- bootstrap --email`);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    // A process manager signals npm, not node: the server must get it, drain, and let go of the folder.
    expect(JSON.parse(fs.readFileSync(lockFile, "utf8")).port).toBe(port);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(first.output()).toMatch(/SIGTERM: shutting down/);
    expect(first.output()).toMatch(/"msg":"Stopped"/);
    expect(fs.existsSync(lockFile)).toBe(false);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();

    const again = run("npm", ["start", "--silent"], { PORT: String(port), LOG_FORMAT: "pretty" });
    await again.listening;
    const out = again.output();
    expect(out).toMatch(/INFO: Migrations: the schema is up to date/);
    const figure = /listening on \S+ in ([\d.]+) s, ([\d.]+) s of CPU/.exec(out);
    console.log(
      `[lifecycle] restart on an existing data folder: listening after ${figure?.[1]} s (${figure?.[2]} s of CPU) — machine load ${os.loadavg()[0]!.toFixed(1)}`,
    );
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    again.child.kill("SIGINT");
    expect(await again.exited).toBe(0);
    expect(fs.existsSync(lockFile)).toBe(false);
  });

  it("a port already in use: one line naming it, a non-zero exit, and the data folder left free", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve));
    try {
      const started = run(process.execPath, ["scripts/run.mjs", "src/main.ts"], { PORT: String(port), LOG_FORMAT: "json" });
      expect(await started.exited).toBe(1);
      const out = started.output();
      const naming = out.split("\n").filter((l) => l.includes(String(port)));
      expect(naming).toHaveLength(1);
      expect(JSON.parse(naming[0]!)).toMatchObject({
        level: 60,
        msg: `Port ${port} is already in use: stop the program listening on it, or set PORT to a free port.`,
      });
      expect(out).not.toMatch(/^\s+at /m);
      expect(fs.existsSync(lockFile)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe("shutdown", () => {
  it("closes WebSockets with 1001 (going away)", async () => {
    const t = await startGateway();
    const admin = await t.bootstrap("ws@acme.test", "WS Org");
    const socket = new WebSocket(t.url.replace("http", "ws") + "/graphql", "graphql-transport-ws");
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () =>
        socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}` } })),
      );
      socket.on("message", (data) => JSON.parse(String(data)).type === "connection_ack" && resolve());
      socket.once("error", reject);
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })),
    );
    await t.close();
    expect(await closed).toEqual({ code: 1001, reason: "Going away" });
  });

  it("lets requests under way finish, closes their connections after, and stops waiting at the bound", async () => {
    const hold: (() => void)[] = [];
    const { front, port, server } = await listenFront((_req, res) => hold.push(() => res.end("done")));
    try {
      const answer = fetch(`http://127.0.0.1:${port}/slow`);
      await vi.waitFor(() => expect(hold).toHaveLength(1));
      let drained = false;
      const draining = front.drain(60_000).then((left) => ((drained = true), left));
      await new Promise((r) => setTimeout(r, 50));
      expect(drained).toBe(false);
      hold[0]!();
      expect(await draining).toBe(0);
      const res = await answer;
      expect(await res.text()).toBe("done");

      const stuck = fetch(`http://127.0.0.1:${port}/stuck`).catch(() => undefined);
      await vi.waitFor(() => expect(hold).toHaveLength(2));
      expect(await front.drain(100)).toBe(1);
      hold[1]!();
      const late = await stuck;
      expect(late?.headers.get("connection")).toBe("close");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("tells background work when no request is under way (quiet): at once, when the last one ends (true), or at the bound (false); streams do not count", async () => {
    const hold: (() => void)[] = [];
    const { front, port, server } = await listenFront((req, res) => {
      if (req.url === "/events") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": open\n\n");
        return;
      }
      hold.push(() => res.end("done"));
    });
    const stream = new AbortController();
    try {
      expect(front.whenIdle(60_000)).toBeNull();
      // An event stream lasts: it is not a request background work waits for.
      const events = await fetch(`http://127.0.0.1:${port}/events`, { signal: stream.signal });
      expect(events.status).toBe(200);
      expect(front.whenIdle(60_000)).toBeNull();

      const answers = [fetch(`http://127.0.0.1:${port}/a`), fetch(`http://127.0.0.1:${port}/b`)];
      await vi.waitFor(() => expect(hold).toHaveLength(2));
      let quiet: boolean | undefined;
      const waiting = front.whenIdle(60_000)!.then((answer) => (quiet = answer));
      hold[0]!();
      expect(await (await answers[0]!).text()).toBe("done");
      await new Promise((r) => setTimeout(r, 50));
      expect(quiet).toBeUndefined(); // one request is still under way
      hold[1]!();
      await waiting;
      expect(quiet).toBe(true);
      expect(await (await answers[1]!).text()).toBe("done");

      const slow = fetch(`http://127.0.0.1:${port}/c`);
      await vi.waitFor(() => expect(hold).toHaveLength(3));
      const started = performance.now();
      expect(await front.whenIdle(30)).toBe(false);
      expect(performance.now() - started).toBeLessThan(10_000); // the bound, not the request
      hold[2]!();
      await slow;
    } finally {
      stream.abort();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
