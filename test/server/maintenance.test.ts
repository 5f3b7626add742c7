import { describe, expect, it } from "vitest";
import { acmeGateway, created } from "../helpers/fixtures.js";

/**
 * The embedded database has no autovacuum: the upkeep (src/maintenance.ts) does its work. Here,
 * integration events recorded and purged day after day, as the retention period does: the space
 * of the purged ones is used again by the next day's, so the table stays the size of what it
 * holds. (Without VACUUM, PostgreSQL never reuses the space of deleted rows: the table grows by
 * the size of each day's events for good.) PostgreSQL's own autovacuum does this on a server.
 */
const current = acmeGateway();

describe.skipIf(!!process.env.DATABASE_URL)("upkeep of the embedded database", () => {
  it("makes the space of purged integration events free for the next ones: the table does not grow day after day", async () => {
    const { t, admin } = current();
    const prisma = t.gateway.db.prisma;
    const integration = created(await admin.post("/v1/integrations/churn", { title: "Churn", organization: admin.organization }));
    const { id: integrationId } = await prisma.integration.findUniqueOrThrow({ where: { name: integration.name } });
    // Older than the retention period (30 days) and settled: the upkeep purges them.
    const createdAt = new Date(Date.now() - 40 * 24 * 60 * 60 * 1000);
    const record = (day: number) =>
      prisma.integrationEvent.createMany({
        data: Array.from({ length: 2_000 }, (_, k) => ({
          id: `iev_day${day}_${k}`,
          integrationId,
          type: "space_content_updated",
          status: "success",
          payload: { spaceId: `spc_${k}`, text: "x".repeat(300) },
          createdAt,
        })),
      });
    const tableBytes = async () => {
      const [row] = await t.gateway.db.driverQuery(`SELECT pg_table_size('"IntegrationEvent"') AS bytes`);
      return Number(row!.bytes);
    };

    await record(0);
    const oneDay = await tableBytes();
    await t.gateway.maintain();
    expect(await prisma.integrationEvent.count({ where: { integrationId } })).toBe(0);
    for (let day = 1; day <= 4; day++) {
      await record(day);
      await t.gateway.maintain();
    }
    expect(await prisma.integrationEvent.count({ where: { integrationId } })).toBe(0);
    // Four more days of events took the space the first day's had (with some slack for pages in use).
    expect(await tableBytes()).toBeLessThan(oneDay * 1.5);
  }, 120_000);
});
