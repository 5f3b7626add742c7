import { loadConfig } from "./config.js";
import { acquireLock, DataDirLockedError, newAdminSecret, type DataDirLock } from "./core/lock.js";
import { createGateway } from "./server.js";

/** `npm start`: serve the API until SIGTERM or SIGINT, then close the database cleanly. */
async function main() {
  const config = loadConfig();
  let lock: DataDirLock | undefined;
  if (!config.databaseUrl) {
    try {
      lock = acquireLock(config.dataDir);
    } catch (err) {
      if (err instanceof DataDirLockedError) {
        console.error(err.message);
        process.exit(1);
      }
      throw err;
    }
  }
  const adminSecret = newAdminSecret();
  const gateway = await createGateway(config, { lockHeld: lock, adminSecret });
  const port = await gateway.listen();
  lock?.update({ port, adminSecret });
  console.log(
    `Documentation API listening on http://localhost:${port} (REST /v1, GraphQL /graphql, reference /docs) — ` +
      (config.databaseUrl ? "PostgreSQL" : `embedded database in ${config.dataDir}`) +
      (config.redisUrl ? ", Redis pub/sub" : ""),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: closing`);
    try {
      await gateway.close();
    } finally {
      lock?.release();
      process.exit(0);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
