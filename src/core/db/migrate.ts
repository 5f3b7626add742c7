import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Runs a script of several SQL commands (PGlite `exec`, pg simple query). */
export type ExecScript = (sql: string) => Promise<unknown>;
/** Runs one parameterless query and returns its rows. */
export type QueryRows = (sql: string) => Promise<Record<string, unknown>[]>;

export const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../prisma/migrations");

/**
 * Applies every pending `prisma/migrations/<name>/migration.sql`, each once, in name order,
 * each in its own transaction together with the row that records it.
 */
export async function applyMigrations(exec: ExecScript, query: QueryRows, dir = migrationsDir): Promise<string[]> {
  await exec(`CREATE TABLE IF NOT EXISTS "_migrations" (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
  const applied = new Set((await query(`SELECT name FROM "_migrations"`)).map((r) => String(r.name)));
  const names = migrationsOnDisk(dir);
  const done: string[] = [];
  for (const name of names) {
    if (applied.has(name)) continue;
    const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
    const quoted = name.replace(/'/g, "''");
    await exec(`BEGIN;\n${sql}\n;INSERT INTO "_migrations" (name) VALUES ('${quoted}');\nCOMMIT;`).catch(async (err) => {
      await exec("ROLLBACK").catch(() => undefined);
      throw new Error(`migration ${name} failed: ${(err as Error).message}`);
    });
    done.push(name);
  }
  return done;
}

/** The migrations a folder holds (each a folder with a migration.sql), in name order. */
export function migrationsOnDisk(dir = migrationsDir): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort();
}
