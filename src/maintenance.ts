import type { Services } from "./core/context.js";
import type { Database } from "./core/db.js";
import { purgeDeletedSpaces } from "./domains/spaces/spaces.service.js";
import { resumeOpenApiProcessing } from "./domains/openapi/openapi.processing.js";
import { purgeSeenAssertions } from "./domains/sso/sso.service.js";
import { purgeSettledEvents } from "./events/record.js";
import { log } from "./core/logger.js";

/**
 * Upkeep. At start: OpenAPI specs left pending or in progress are processed again. At start and
 * periodically: removes spaces deleted longer ago than the retention period, expired SAML
 * assertion ids, and settled integration events older than INTEGRATION_EVENT_RETENTION_DAYS; and
 * on the embedded database, refreshes the planner's statistics (see plannerStatistics).
 */
export function startMaintenance(services: Services, db: Pick<Database, "kind" | "driverQuery">, everyMs = 60 * 60 * 1000) {
  const openapi = resumeOpenApiProcessing(services);
  const run = () =>
    Promise.all([
      purgeDeletedSpaces(services.prisma, services.config.spaceRetentionDays).catch((err) =>
        log.error({ err }, "maintenance: purging deleted spaces failed"),
      ),
      purgeSeenAssertions(services.prisma).catch((err) => log.error({ err }, "maintenance: purging SAML assertion ids failed")),
      purgeSettledEvents(services.prisma, services.config.integrationEventRetentionDays).catch((err) =>
        log.error({ err }, "maintenance: purging integration events failed"),
      ),
    ]).then(() => plannerStatistics(db).catch((err) => log.error({ err }, "maintenance: refreshing the planner's statistics failed")));
  void run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      openapi.stop();
    },
    run,
  };
}

/**
 * The embedded database has no autovacuum (PGlite runs PostgreSQL as a single process), so
 * nothing ever gathers the statistics its planner chooses plans by: a table that grew since
 * still counts as the few rows it held, and a page of a list of 20,000 spaces was read by
 * sorting all of them although an index gives their order. ANALYZE samples each table (at most
 * 30,000 rows of each), a bounded cost; PostgreSQL's own autovacuum does it on a server.
 */
export async function plannerStatistics(db: Pick<Database, "kind" | "driverQuery">): Promise<void> {
  if (db.kind === "pglite") await db.driverQuery("ANALYZE");
}
