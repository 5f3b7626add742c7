import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { firstConnection } from "../../src/core/db/pg-pool.js";
import { openDatabase } from "../../src/core/db/db.js";
import { freshPostgres } from "../helpers/postgres.js";
import { freePort } from "../helpers/ports.js";

/**
 * The start-up's first connection to PostgreSQL is tried again while the database cannot be
 * reached (it starts with the gateway, or the connection's timer ran out while the gateway was
 * busy loading), and fails at once when PostgreSQL refuses the gateway for good.
 */

const client = { release() {} } as any;
const timedOut = () =>
  new Error("Connection terminated due to connection timeout", { cause: new Error("Connection terminated unexpectedly") });
const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });

function pool(failures: (() => Error)[]) {
  let attempts = 0;
  return {
    get attempts() {
      return attempts;
    },
    connect: async () => {
      const failure = failures[attempts++];
      if (failure) throw failure();
      return client;
    },
  };
}

/** A fresh PostgreSQL database, a free port a test's relay will listen on, its URL through that port, and a data folder. */
async function behindRelay(label: string) {
  const database = await freshPostgres(process.env.DATABASE_URL!, label);
  const target = new URL(database.url);
  const port = await freePort();
  const through = new URL(database.url);
  through.hostname = "127.0.0.1";
  through.port = String(port);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `docs-api-${label}-`));
  return { database, target, port, through, dataDir };
}

describe("the first connection to PostgreSQL", () => {
  it("is tried again after a connection timeout or a refusal, each failure reported, waiting longer each time", async () => {
    const p = pool([timedOut, refused, refused]);
    const waits: number[] = [];
    const progress: string[] = [];
    const got = await firstConnection(p as any, {
      label: "db:5432",
      progress: (m) => progress.push(m),
      sleep: async (ms) => void waits.push(ms),
    });
    expect(got).toBe(client);
    expect(p.attempts).toBe(4);
    expect(waits).toEqual([250, 500, 1000]);
    expect(progress[0]).toMatch(
      /PostgreSQL at db:5432 not reachable yet \(Connection terminated due to connection timeout\); trying again in 250 ms/,
    );
    expect(progress[1]).toMatch(/ECONNREFUSED/);
  });

  it("fails at once when PostgreSQL refuses the gateway for good (authentication, unknown database)", async () => {
    for (const code of ["28P01", "3D000"]) {
      const p = pool([() => Object.assign(new Error(`refused (${code})`), { code })]);
      await expect(firstConnection(p as any, { label: "db", sleep: async () => undefined })).rejects.toThrow(code);
      expect(p.attempts).toBe(1);
    }
  });

  it("gives up with the last failure once the window is over", async () => {
    const p = pool(Array.from({ length: 100 }, () => refused));
    const started = Date.now();
    await expect(firstConnection(p as any, { label: "db", windowMs: 600 })).rejects.toThrow(/ECONNREFUSED/);
    // 250 ms after the first failure the second; the next wait (500 ms) would end past the window.
    expect(p.attempts).toBe(2);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    "opens the database once PostgreSQL starts accepting connections, after the gateway started",
    async () => {
      const { database, target, port, through, dataDir } = await behindRelay("first");
      // Nothing listens on `port` for the first 700 ms; then a relay to PostgreSQL does.
      const sockets = new Set<net.Socket>();
      const relay = net.createServer((socket) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        sockets.add(socket).add(upstream);
        socket.pipe(upstream).pipe(socket);
        const end = () => (socket.destroy(), upstream.destroy());
        socket.on("error", end).on("close", end);
        upstream.on("error", end).on("close", end);
      });
      const listening = new Promise<void>((resolve) => setTimeout(() => relay.listen(port, "127.0.0.1", resolve), 700));
      const progress: string[] = [];
      try {
        const db = await openDatabase({ dataDir, databaseUrl: through.toString(), progress: (m) => progress.push(m) });
        try {
          expect(await db.prisma.organization.count()).toBe(0);
        } finally {
          await db.close();
        }
        expect(progress.some((m) => /not reachable yet .*ECONNREFUSED/.test(m))).toBe(true);
        expect(progress.some((m) => /connected/.test(m))).toBe(true);
      } finally {
        await listening;
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => relay.close(resolve));
        fs.rmSync(dataDir, { recursive: true, force: true });
        await database.drop();
      }
    },
  );

  it.skipIf(!process.env.DATABASE_URL)(
    "starts when PostgreSQL answers late and drops the start-up's connections, each retry logged",
    async () => {
      const { database, target, port, through, dataDir } = await behindRelay("late");
      // The first connection is accepted and dropped after 300 ms, unanswered; the second is relayed
      // until the gateway's third message (in the middle of the start-up's statements), then cut;
      // later ones are relayed.
      let connections = 0;
      const sockets = new Set<net.Socket>();
      const relay = net.createServer((socket) => {
        const n = ++connections;
        sockets.add(socket);
        if (n === 1) {
          setTimeout(() => socket.destroy(), 300);
          return;
        }
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        sockets.add(upstream);
        let messages = 0;
        socket.on("data", (chunk) => {
          if (n === 2 && ++messages === 3) return void (socket.destroy(), upstream.destroy());
          upstream.write(chunk);
        });
        upstream.pipe(socket);
        const end = () => (socket.destroy(), upstream.destroy());
        socket.on("error", end).on("close", end);
        upstream.on("error", end).on("close", end);
      });
      await new Promise<void>((resolve) => relay.listen(port, "127.0.0.1", resolve));
      const progress: string[] = [];
      try {
        const db = await openDatabase({ dataDir, databaseUrl: through.toString(), progress: (m) => progress.push(m) });
        try {
          expect(await db.prisma.organization.count()).toBe(0);
        } finally {
          await db.close();
        }
        expect(progress.filter((m) => /not reachable yet \(.+\); trying again in \d+ ms/.test(m)).length).toBeGreaterThanOrEqual(2);
        expect(connections).toBeGreaterThanOrEqual(3);
      } finally {
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => relay.close(resolve));
        fs.rmSync(dataDir, { recursive: true, force: true });
        await database.drop();
      }
    },
  );
});
