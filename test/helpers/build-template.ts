/**
 * Creates an embedded database in `<argv[2]>/pglite` and applies every migration, then closes
 * it cleanly. Run by the global setup (global-setup.ts) in a process of its own, with tsx.
 */
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { applyMigrations } from "../../src/core/db/migrate.js";

const dir = process.argv[2];
if (!dir) throw new Error("usage: build-template.ts <folder>");
const pglite = await PGlite.create(path.join(dir, "pglite"));
try {
  await applyMigrations(
    (sql) => pglite.exec(sql),
    async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows,
  );
} finally {
  // A clean shutdown leaves a consistent folder to copy.
  await pglite.close();
}
