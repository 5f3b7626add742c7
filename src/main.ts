import net from "node:net";
import { loadConfig, type Config } from "./config.js";
import { acquireLock, DataDirLockedError, newAdminSecret, type DataDirLock } from "./core/db/lock.js";
import { configureLogging, log } from "./core/logger.js";
import { databaseOptions, openDatabase } from "./core/db/db.js";
import type { Gateway } from "./server.js";

/**
 * `npm start`: serve the API until SIGTERM or SIGINT, then shut down cleanly (src/server.ts
 * `close`: drain requests, close WebSockets with 1001, then the database). Start-up says what it
 * does: the database opened, migrations, the URLs served, and the first step when there is no user.
 */
async function main() {
  const started = performance.now();
  const config = loadConfig();
  configureLogging(config);
  log.info(`Starting the documentation API (Node ${process.version}, pid ${process.pid})`);

  // A taken port is found before the database is opened, in milliseconds.
  if (config.port !== 0 && (await portTaken(config.port, config.host))) portInUse(config.port);

  let lock: DataDirLock | undefined;
  if (!config.databaseUrl) {
    try {
      lock = await acquireLock(config.dataDir);
    } catch (err) {
      if (err instanceof DataDirLockedError) {
        log.fatal(err.message);
        process.exit(1);
      }
      throw err;
    }
  }
  const release = () => lock?.release();
  process.once("exit", release);

  const adminSecret = newAdminSecret();
  // The database opens while the server's modules load.
  const database = openDatabase({
    ...databaseOptions(config),
    lockHeld: lock,
    progress: (m) => log.info(m),
    // The embedded database cannot go on once its disk filled up under its log (core/db/storage-guard.ts):
    // exit, so that whatever supervises the server starts it again, which replays the log.
    onStorageWedged: (err) => {
      log.fatal({ err }, err.message);
      process.exit(70);
    },
  });
  database.catch(() => undefined); // reported below, once awaited
  const { createGateway } = await import("./server.js");
  let gateway: Gateway;
  try {
    gateway = await createGateway(config, { lockHeld: lock, adminSecret, database });
  } catch (err) {
    await database.then((db) => db.close()).catch(() => undefined);
    throw err;
  }

  let port: number;
  try {
    port = await gateway.listen();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
      await gateway.close().catch(() => undefined);
      portInUse(config.port);
    }
    throw err;
  }
  // From here on a signal shuts down cleanly, even while the start-up lines are still being printed.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return; // npm forwards the terminal's signal too: the same one may come twice
    stopping = true;
    log.info(`${signal}: shutting down (requests under way get up to ${config.shutdownTimeoutMs / 1000} s)`);
    let code = 0;
    try {
      await gateway.close();
      log.info("Stopped");
    } catch (err) {
      log.error({ err }, "shutdown failed");
      code = 1;
    } finally {
      release();
      process.exit(code);
    }
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  lock?.update({ port, adminSecret });
  announce(config, port, performance.now() - started);
  await nextStep(gateway, config);
}

function portTaken(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "EADDRINUSE"));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

function portInUse(port: number): never {
  log.fatal(`Port ${port} is already in use: stop the program listening on it, or set PORT to a free port.`);
  process.exit(1);
}

function announce(config: Config, port: number, ms: number) {
  const local = `http://${config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host}:${port}`;
  const base = process.env.PUBLIC_URL ? config.publicUrl : local;
  const database = config.databaseUrl ? "PostgreSQL" : `embedded database in ${config.dataDir}`;
  log.info(
    {
      urls: {
        home: `${base}/`,
        docs: `${base}/docs`,
        graphql: `${base}/graphql`,
        dashboard: `${base}/dashboard`,
        health: `${base}/readyz`,
      },
    },
    `Documentation API listening on ${local} in ${(ms / 1000).toFixed(1)} s, ${cpuSeconds()} s of CPU (${database}${config.redisUrl ? ", Redis" : ""}): ` +
      `start page ${base}/ · API reference ${base}/docs · GraphQL ${base}/graphql · dashboard ${base}/dashboard`,
  );
}

/** CPU time this process has used (user and system), in seconds: start-up cost apart from waiting for a busy machine. */
function cpuSeconds(): string {
  const { user, system } = process.cpuUsage();
  return ((user + system) / 1e6).toFixed(1);
}

/** When the database has no user yet, the command that creates the first one and its token. */
async function nextStep(gateway: Gateway, config: Config) {
  const anyUser = await gateway.db.prisma.user.findFirst({ select: { id: true } }).catch(() => ({ id: "?" }));
  if (anyUser) return;
  const env = config.databaseUrl ? "DATABASE_URL=<the same> " : process.env.DATA_DIR ? `DATA_DIR=${process.env.DATA_DIR} ` : "";
  log.info(
    `No user yet. Next step, in another terminal in this folder: ${env}npm run admin -- bootstrap --email you@example.com --org "Acme Docs" ` +
      `(prints an API token: send it as "Authorization: Bearer <token>")`,
  );
}

main().catch((err) => {
  log.fatal({ err }, `Start-up failed: ${(err as Error).message}`);
  process.exit(1);
});
