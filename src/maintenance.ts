import type { Services } from "./core/context.js";
import { purgeDeletedSpaces } from "./domains/spaces/spaces.service.js";

/** Periodic upkeep: removes spaces deleted longer ago than the retention period. */
export function startMaintenance(services: Services, everyMs = 60 * 60 * 1000) {
  const run = () =>
    purgeDeletedSpaces(services.prisma, services.config.spaceRetentionDays).catch((err) =>
      console.error("maintenance: purging deleted spaces failed:", err),
    );
  void run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer), run };
}
