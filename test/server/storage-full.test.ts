import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, acmeGateway, createSpace } from "../helpers/fixtures.js";
import { testTmpDir } from "../helpers/tmp.js";
import { StorageGuard } from "../../src/core/db/storage-guard.js";
import { STORAGE_FULL, storageFullMessage } from "../../src/core/db/db-faults.js";
import { openDatabase } from "../../src/core/db/db.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { startServerProcess } from "../events/processes.js";
import { errorsLogged } from "../helpers/hostile.js";

/**
 * The embedded database's disk kept from filling up (core/db/storage-guard.ts): below the reserve,
 * writes answer 507 naming the storage and nothing is written, reads go on, and writes are
 * accepted again once there is space. Should the disk fill anyway under the database's log, it
 * cannot go on: nothing more is sent to it (a statement would hold the process's thread for
 * good) and the server is told (npm start exits, to be started again).
 */

const embedded = !process.env.DATABASE_URL;

describe("the storage guard", () => {
  const wal = Object.assign(new Error('could not write to file "pg_wal/xlogtemp.42": No space left on device'), { code: "53100" });
  const table = Object.assign(new Error('could not extend file "base/5/16385": No space left on device'), { code: "53100" });

  it("refuses statements that may write below the reserve, never plain reads; reads the disk at most every 250 ms", () => {
    let free = 10 * 1024 * 1024;
    let reads = 0;
    const guard = new StorageGuard(
      "/data",
      64 * 1024 * 1024,
      () => undefined,
      () => (reads++, free),
    );
    for (const sql of [
      "SELECT 1",
      '  select * from "Space"',
      "BEGIN",
      "COMMIT",
      "SHOW server_version",
      "EXPLAIN SELECT 1",
      "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
      "RESET enable_sort",
    ])
      expect(() => guard.before(sql), sql).not.toThrow();
    for (const sql of [
      'INSERT INTO "Space" VALUES (1)',
      'UPDATE "Space" SET title = $1',
      "DELETE FROM x",
      'WITH locked AS (SELECT 1) UPDATE "Space" SET x = 1',
      'SELECT 1 FROM "Space" FOR UPDATE',
      'SELECT 1 FROM "Space" FOR NO KEY UPDATE',
      "SELECT nextval('s')",
      "VACUUM",
      "CREATE TABLE t (x int)",
    ]) {
      let error: unknown;
      try {
        guard.before(sql);
      } catch (err) {
        error = err;
      }
      expect((error as { code?: string })?.code, sql).toBe("53100");
      expect(storageFullMessage(error), sql).toMatch(
        /^The server's storage is almost full \(10\.0 MiB free .* at least 64\.0 MiB kept free\)/,
      );
    }
    expect(reads).toBe(1);
    free = 100 * 1024 * 1024;
    // Still the reading of a moment ago; a reserve of 0 refuses nothing.
    expect(() => guard.before("DELETE FROM x")).toThrow();
    guard.reserveBytes = 0;
    expect(() => guard.before("DELETE FROM x")).not.toThrow();
  });

  it("a disk_full under the write-ahead log stops every statement and tells the server once; one on a table file does not", () => {
    const wedged: Error[] = [];
    const guard = new StorageGuard(
      "/data",
      0,
      (err) => wedged.push(err),
      () => 1e12,
    );
    guard.after(table);
    guard.after(new Error("something else"));
    expect(() => guard.before("INSERT INTO x VALUES (1)")).not.toThrow();
    expect(wedged).toEqual([]);
    guard.after(wal);
    guard.after(wal);
    expect(wedged).toHaveLength(1);
    for (const sql of ["SELECT 1", "INSERT INTO x VALUES (1)"])
      expect(() => guard.before(sql)).toThrow(/disk filled up while it wrote its log/);
    // PostgreSQL's own disk_full (a server's) is shown without its file names.
    expect(storageFullMessage(table)).toBe(STORAGE_FULL);
  });
});

describe.skipIf(!embedded)("an embedded database short of space", () => {
  const current = acmeGateway();

  it("answers writes 507 naming the storage, stores nothing, keeps answering reads, and takes writes again once there is space", async () => {
    const { t, admin } = current();
    const space = await createSpace(admin, admin.organization, { title: "Kept" });
    const storage = t.gateway.db.storage!;
    const reserve = storage.reserveBytes;
    storage.reserveBytes = Number.MAX_SAFE_INTEGER;
    try {
      for (const res of [
        await admin.patch(`/v1/spaces/${space.id}`, { title: "Lost" }),
        await admin.post(`/v1/spaces/${space.id}/content/pages`, { title: "Page" }),
        await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "New" }),
      ]) {
        expect(res.status, JSON.stringify(res.body)).toBe(507);
        expect(res.body.error.message).toMatch(
          /^The server's storage is almost full .*: nothing is written until space is freed; reads go on\.$/,
        );
      }
      const graph = await admin.graphql(`mutation($id: String!) { spaceUpdate(spaceId: $id, title: "By GraphQL") { title } }`, {
        id: space.id,
      });
      expect(graph.errors?.[0]?.extensions?.code).toBe(507);
      // Reads go on, and nothing was written.
      expect((await admin.get(`/v1/spaces/${space.id}`)).body.title).toBe("Kept");
      expect((await admin.get(`/v1/spaces/${space.id}/content`)).status).toBe(200);
      expect((await admin.graphql(`query($id: String!) { space(spaceId: $id) { title } }`, { id: space.id })).data.space.title).toBe(
        "Kept",
      );
      // The upkeep's writes (purges, VACUUM) wait for the next round: nothing logged as a fault.
      const errors = errorsLogged();
      try {
        await t.gateway.maintain();
      } finally {
        errors.stop();
      }
      expect(errors.lines).toEqual([]);
    } finally {
      storage.reserveBytes = reserve;
    }
    await new Promise((r) => setTimeout(r, 300)); // past the last reading of the disk
    expect((await admin.patch(`/v1/spaces/${space.id}`, { title: "Written" })).status).toBe(200);
    expect((await admin.get(`/v1/spaces/${space.id}`)).body.title).toBe("Written");
  });
});

/** A 48 MiB tmpfs of the test's own (needs the right to mount: root, as on these machines), or null. */
function smallDisk(): { dir: string; unmount: () => void; grow: () => void } | null {
  const dir = fs.mkdtempSync(path.join(testTmpDir(), "small-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return null;
  }
  return {
    dir,
    unmount: () => execFileSync("umount", ["-l", dir], { stdio: "ignore" }),
    grow: () => execFileSync("mount", ["-o", "remount,size=256m", dir], { stdio: "ignore" }),
  };
}

describe.skipIf(!embedded)("an embedded database on a disk that fills up (a 48 MiB tmpfs)", () => {
  const disk = embedded ? smallDisk() : null;
  let t: TestGateway | undefined;
  afterAll(async () => {
    await t?.close();
    disk?.unmount();
  });

  it.skipIf(!disk)("refuses writes once another file leaves less than the reserve free, and takes them again once it is gone", async () => {
    t = await startGateway({ dataDir: path.join(disk!.dir, "data"), storageReserveBytes: 8 * 1024 * 1024 });
    const { admin } = await acmeDocs(t);
    const space = await createSpace(admin, admin.organization, { title: "Small disk" });
    const filler = fill(disk!.dir, 4);
    await new Promise((r) => setTimeout(r, 300));
    const refused = await admin.patch(`/v1/spaces/${space.id}`, { title: "Refused" });
    expect(refused.status, JSON.stringify(refused.body)).toBe(507);
    expect((await admin.get(`/v1/spaces/${space.id}`)).body.title).toBe("Small disk");
    fs.unlinkSync(filler);
    await new Promise((r) => setTimeout(r, 300));
    expect((await admin.patch(`/v1/spaces/${space.id}`, { title: "Accepted" })).status).toBe(200);
    expect((await admin.get(`/v1/spaces/${space.id}`)).body.title).toBe("Accepted");
  });
});

/** Writes a file into `dir` until less than `leftMiB` MiB is free there; returns its path. */
function fill(dir: string, leftMiB: number): string {
  const filler = path.join(dir, "filler");
  const fd = fs.openSync(filler, "w");
  const chunk = Buffer.alloc(1024 * 1024);
  for (;;) {
    const s = fs.statfsSync(dir);
    if (s.bavail * s.bsize <= leftMiB * 1024 * 1024) break;
    fs.writeSync(fd, chunk);
  }
  fs.closeSync(fd);
  return filler;
}

describe.skipIf(!embedded)("npm start when the disk fills up under the database's log (a 48 MiB tmpfs, no reserve)", () => {
  const disk = embedded ? smallDisk() : null;
  afterAll(() => disk?.unmount());

  it.skipIf(!disk)(
    "exits (70) naming it instead of hanging, will not start while space is short (naming it), and keeps every acknowledged write once there is room",
    { timeout: 300_000 },
    async () => {
      const dataDir = path.join(disk!.dir, "data");
      const db = await openDatabase({ dataDir });
      const { token, organization } = (await runAdminCommand(db.prisma, { command: "bootstrap", email: "ada@acme.test", org: "Acme" })) as {
        token: string;
        organization: string;
      };
      await db.close();
      const env = { DATA_DIR: dataDir, DATABASE_URL: "", REDIS_URL: "", STORAGE_RESERVE_BYTES: "0", RATE_LIMIT_PER_MINUTE: "0" };
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      let server = await startServerProcess(env);
      const exited = new Promise<number | null>((resolve) => server.child.once("exit", (code) => resolve(code)));
      const space = await (
        await fetch(`${server.url}/v1/orgs/${organization}/spaces`, { method: "POST", headers, body: JSON.stringify({ title: "Filling" }) })
      ).json();
      // Room for table pages, not for the log's next 16 MiB segment.
      const filler = fill(disk!.dir, 12);
      const acknowledged: string[] = [];
      for (let i = 0; i < 500 && server.child.exitCode === null; i++) {
        const title = `Page ${i}`;
        const res = await fetch(`${server.url}/v1/spaces/${space.id}/content/pages`, {
          method: "POST",
          headers,
          body: JSON.stringify({ title, markdown: `word ${i} `.repeat(30_000) }),
          signal: AbortSignal.timeout(30_000),
        }).catch(() => null);
        if (!res) break;
        if (res.status === 201) acknowledged.push(title);
        else expect(res.status, await res.text()).toBe(507);
      }
      expect(await exited).toBe(70);
      expect(server.output()).toContain("filled up while it wrote its log");
      expect(acknowledged.length).toBeGreaterThan(0);

      // Still short of space: the start names it.
      await expect(startServerProcess(env)).rejects.toThrow(/MiB free: it needs room to replay its log/);

      // Room again: every acknowledged page is there, and writes are taken.
      fs.unlinkSync(filler);
      disk!.grow();
      server = await startServerProcess(env);
      try {
        const content = await (await fetch(`${server.url}/v1/spaces/${space.id}/content`, { headers })).json();
        const titles = new Set(content.pages.map((p: { title: string }) => p.title));
        for (const title of acknowledged) expect(titles.has(title), title).toBe(true);
        const again = await fetch(`${server.url}/v1/spaces/${space.id}/content/pages`, {
          method: "POST",
          headers,
          body: JSON.stringify({ title: "After" }),
        });
        expect(again.status).toBe(201);
      } finally {
        await server.stop();
      }
    },
  );
});
