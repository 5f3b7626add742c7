import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../src/core/db/db.js";
import { eventTrace } from "../src/events/record.js";

/** Runs the Prisma CLI until it prints `until` (it does not exit by itself on an embedded database). */
function prismaUntil(args: string[], env: NodeJS.ProcessEnv, until: RegExp): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(path.join(root, "node_modules/.bin/prisma"), args, { cwd: root, env });
    let out = "";
    const done = () => {
      child.kill("SIGKILL");
      resolve(out);
    };
    const onData = (d: Buffer) => {
      out += d;
      if (until.test(out)) done();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", () => resolve(out));
    setTimeout(done, 90_000);
  });
}
const root = path.resolve(import.meta.dirname, "..");

describe("prisma/migrations", () => {
  it("build exactly the database prisma/schema.prisma describes", { timeout: 120_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-drift-"));
    try {
      const db = await openDatabase({ dataDir: dir });
      await db.close();
      // The migration ledger is the server's own table, not part of the Prisma model.
      const pglite = await PGlite.create(path.join(dir, "pglite"));
      await pglite.exec('DROP TABLE "_migrations"');
      await pglite.close();
      const output = await prismaUntil(
        ["db", "push", "--skip-generate"],
        { ...process.env, PRISMA_PGLITE_DIR: path.join(dir, "pglite"), PRISMA_SCHEMA_DISABLE_ADVISORY_LOCK: "1" },
        /already in sync|Error|error|data loss|changes/,
      );
      expect(output).toContain("already in sync");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("20261127103850_derived_event_trace", () => {
  it("moves the recorded and not-dispatched trace entries of stored events to their rows, and the trace reads the same", {
    timeout: 120_000,
  }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-trace-"));
    try {
      await (await openDatabase({ dataDir: dir })).close();
      // The database as the migration finds it: the column not there yet, and the entries stored as log rows.
      const pglite = await PGlite.create(path.join(dir, "pglite"));
      await pglite.exec(
        `ALTER TABLE "IntegrationEvent" DROP COLUMN "skipReason"; DELETE FROM "_migrations" WHERE name = '20261127103850_derived_event_trace'; SET session_replication_role = replica;`,
      );
      const at = (ms: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, 0, ms)).toISOString();
      const event = (id: string, type: string, status: string) =>
        pglite.query(
          `INSERT INTO "IntegrationEvent" (id, "integrationId", type, status, payload, attempts, "createdAt") VALUES ($1, 'int_x', $2, $3, '{}', 0, $4)`,
          [id, type, status, at(0)],
        );
      const log = (id: string, eventId: string, message: string, ms: number) =>
        pglite.query(`INSERT INTO "IntegrationEventLog" (id, "eventId", level, message, timestamp) VALUES ($1, $2, 'info', $3, $4)`, [
          id,
          eventId,
          message,
          at(ms),
        ]);
      await event("evt_skipped", "space_content_updated", "skipped");
      await log("log_1", "evt_skipped", "Recorded space_content_updated event.", 0);
      await log("log_2", "evt_skipped", "Not dispatched: development mode is off (no tunnel URL).", 1);
      await event("evt_sent", "space_content_updated", "success");
      await log("log_3", "evt_sent", "Recorded space_content_updated event.", 0);
      await log("log_4", "evt_sent", "Delivered: HTTP 200.", 5);
      await event("evt_fetch", "block_fetch", "failed");
      await log("log_5", "evt_fetch", "Recorded block_fetch event.", 0);
      await log("log_6", "evt_fetch", "Fetched https://example.test: HTTP 500.", 0);
      // Not an entry the row implies: a message like one at another time stays.
      await log("log_7", "evt_fetch", "Recorded block_fetch event.", 9);
      await pglite.close();

      const db = await openDatabase({ dataDir: dir });
      try {
        const events = await db.prisma.integrationEvent.findMany({
          include: { logs: { orderBy: [{ timestamp: "asc" }, { id: "asc" }] } },
          orderBy: { id: "asc" },
        });
        const traces = Object.fromEntries(
          events.map(({ logs, ...e }) => [
            e.id,
            { skipReason: e.skipReason, stored: logs.map((l) => l.id), trace: eventTrace(e, logs).map((l) => l.message) },
          ]),
        );
        expect(traces).toEqual({
          evt_skipped: {
            skipReason: "Not dispatched: development mode is off (no tunnel URL).",
            stored: [],
            trace: ["Recorded space_content_updated event.", "Not dispatched: development mode is off (no tunnel URL)."],
          },
          evt_sent: { skipReason: null, stored: ["log_4"], trace: ["Recorded space_content_updated event.", "Delivered: HTTP 200."] },
          evt_fetch: {
            skipReason: null,
            stored: ["log_6", "log_7"],
            trace: ["Recorded block_fetch event.", "Fetched https://example.test: HTTP 500.", "Recorded block_fetch event."],
          },
        });
      } finally {
        await db.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
