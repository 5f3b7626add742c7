import type { Services } from "./core/context.js";
import { purgeDeletedSpaces } from "./domains/spaces/spaces.service.js";
import { resumeOpenApiProcessing } from "./domains/openapi/openapi.processing.js";
import { purgeSeenAssertions } from "./domains/sso/sso.service.js";
import { purgeSettledEvents } from "./events/record.js";
import { log } from "./core/logger.js";

/**
 * Upkeep. At start: OpenAPI specs left pending or in progress are processed again. Periodically:
 * removes spaces deleted longer ago than the retention period, expired SAML assertion ids, and
 * settled integration events older than INTEGRATION_EVENT_RETENTION_DAYS.
 */
export function startMaintenance(services: Services, everyMs = 60 * 60 * 1000) {
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
    ]);
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
