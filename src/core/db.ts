import path from "node:path";
import fs from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client.js";
import { applyMigrations } from "./migrate.js";
import { acquireLock, type DataDirLock } from "./lock.js";

export type Prisma = PrismaClient;

export interface Database {
  kind: "pglite" | "postgres";
  prisma: PrismaClient;
  /** Counts SQL statements sent by Prisma (for tests and benchmarks). */
  stats: { statements: number };
  /** The lock on the embedded data folder (absent on PostgreSQL). */
  lock?: DataDirLock;
  close(): Promise<void>;
}

export interface OpenOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Skip the data-folder lock (the caller already holds it). */
  lockHeld?: DataDirLock;
}

function countingPrisma(adapter: ConstructorParameters<typeof PrismaClient>[0] extends infer O ? O extends { adapter?: infer A } ? A : never : never, stats: { statements: number }) {
  const prisma = new PrismaClient({ adapter, log: [{ emit: "event", level: "query" }] } as any);
  (prisma as any).$on("query", () => {
    stats.statements++;
  });
  return prisma;
}

/**
 * Opens the database: PostgreSQL when a URL is given, else the embedded PGlite in
 * `<dataDir>/pglite`, guarded by a lock file. Pending migrations are applied first.
 */
export async function openDatabase(opts: OpenOptions): Promise<Database> {
  const stats = { statements: 0 };
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    // An idle connection the server closes (a restart, an administrator, a dropped network) is
    // replaced on the next query; without a listener its error would end the process.
    pool.on("error", (err) => console.error(`PostgreSQL connection lost: ${err.message}`));
    const client = await pool.connect();
    try {
      // Serialize migrations between gateway instances sharing one database.
      await client.query("SELECT pg_advisory_lock(7340051)");
      await applyMigrations(
        (sql) => client.query(sql),
        async (sql) => (await client.query(sql)).rows,
      );
      await client.query("SELECT pg_advisory_unlock(7340051)");
    } finally {
      client.release();
    }
    const prisma = countingPrisma(new PrismaPg(pool) as any, stats);
    return {
      kind: "postgres",
      prisma,
      stats,
      async close() {
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }

  const lock = opts.lockHeld ?? acquireLock(opts.dataDir);
  let pglite: PGlite;
  try {
    const dir = path.join(opts.dataDir, "pglite");
    fs.mkdirSync(dir, { recursive: true });
    pglite = await PGlite.create(dir);
    await applyMigrations(
      (sql) => pglite.exec(sql),
      async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows,
    );
  } catch (err) {
    if (!opts.lockHeld) lock.release();
    throw err;
  }
  const prisma = countingPrisma(new PrismaPGlite(pglite) as any, stats);
  let closed = false;
  return {
    kind: "pglite",
    prisma,
    stats,
    lock,
    async close() {
      if (closed) return;
      closed = true;
      await prisma.$disconnect();
      await pglite.close();
      if (!opts.lockHeld) lock.release();
    },
  };
}
