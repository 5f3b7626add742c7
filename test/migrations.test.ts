import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../src/core/db.js";


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
