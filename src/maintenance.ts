import type { Services } from "./core/context.js";
import type { Database } from "./core/db/db.js";
import { purgeDeletedSpaces } from "./domains/spaces/spaces.service.js";
import { resumeOpenApiProcessing } from "./domains/openapi/openapi.processing.js";
import { purgeSeenAssertions } from "./domains/sso/sso.service.js";
import { purgeSettledEvents } from "./events/record.js";
import { log } from "./core/logger.js";
import { storageFullMessage } from "./core/db/db-faults.js";

/**
 * Upkeep. At start: OpenAPI specs left pending or in progress are processed again. `firstAfterMs`
 * after the start, then every `everyMs`: removes spaces deleted longer ago than the retention
 * period, expired SAML assertion ids, and settled integration events older than
 * INTEGRATION_EVENT_RETENTION_DAYS; and on the embedded database, vacuums each table and refreshes
 * its planner statistics (see vacuumEmbedded). The first round waits so that it does not compete
 * with the start and its first requests for the embedded database's one thread (and its memory).
 */
export function startMaintenance(
  services: Services,
  db: Pick<Database, "kind" | "driverQuery">,
  everyMs = 60 * 60 * 1000,
  firstAfterMs = 60 * 1000,
) {
  const openapi = resumeOpenApiProcessing(services);
  const run = () =>
    Promise.all([
      purgeDeletedSpaces(services.prisma, services.config.spaceRetentionDays).catch(failed("purging deleted spaces")),
      purgeSeenAssertions(services.prisma).catch(failed("purging SAML assertion ids")),
      purgeSettledEvents(services.prisma, services.config.integrationEventRetentionDays).catch(failed("purging integration events")),
    ]).then(() => vacuumEmbedded(db).catch(failed("vacuuming the embedded database")));
  const first = setTimeout(run, firstAfterMs);
  first.unref();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return {
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
      openapi.stop();
    },
    run,
  };
}

/**
 * Logs an upkeep task's failure: a fault at error level; a write refused for want of storage
 * (core/db/storage-guard.ts, which logs that condition itself) at info level, the task waiting for
 * the next round.
 */
function failed(task: string) {
  return (err: unknown) => {
    const full = storageFullMessage(err);
    if (full) log.info(`maintenance: ${task} waits for storage: ${full}`);
    else log.error({ err }, `maintenance: ${task} failed`);
  };
}

/**
 * The embedded database has no autovacuum (PGlite runs PostgreSQL as a single process), so what
 * autovacuum does on a server is done here, table by table:
 * - VACUUM: the space of rows deleted or updated becomes free for new ones. Without it a table
 *   never reuses it: integration events recorded, delivered and purged day after day grew the
 *   table by the size of each day's events for good, and the data folder with it.
 * - ANALYZE: the planner's statistics. Without them a table that grew still counts as the few
 *   rows it held, and a page of a list of 20,000 spaces was read by sorting all of them although
 *   an index gives their order. ANALYZE samples at most 30,000 rows of each table.
 * PGlite serves one statement at a time, in this thread: each table is its own statement and the
 * process serves what waits between two (a table that changed little is quick: pages all
 * visible are skipped).
 */
export async function vacuumEmbedded(db: Pick<Database, "kind" | "driverQuery">): Promise<void> {
  if (db.kind !== "pglite") return;
  const tables = await db.driverQuery(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind = 'r' AND n.nspname = current_schema() ORDER BY c.relname`,
  );
  for (const { name } of tables) {
    await db.driverQuery(`VACUUM (ANALYZE) ${name as string}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
