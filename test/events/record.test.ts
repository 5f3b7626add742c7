import { afterAll, beforeAll, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created } from "../helpers/fixtures.js";
import { prepareEvents, writeEvents } from "../../src/events/record.js";
let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
}, 120_000);
afterAll(() => t?.close());
/**
 * Events are stored by SQL of their own (events/record.ts writeEvents): what is read back is
 * exactly what was prepared — ids, JSON payloads, statuses, attempts and every timestamp.
 */
it("stored events and trace entries read back exactly as prepared", async () => {
  const { admin } = await acmeDocs(t);
  created(await admin.post("/v1/integrations/rt", { title: "RT", organization: admin.organization, scopes: ["space:content:read"] }));
  const integ = await t.gateway.db.prisma.integration.findUniqueOrThrow({ where: { name: "rt" } });
  const now = new Date("2026-03-04T05:06:07.891Z");
  const prepared = prepareEvents(
    [
      {
        integration: { id: integ.id, ownerId: integ.ownerId, devTunnelUrl: "http://x", devAll: true },
        installation: null,
        type: "space_content_updated",
        fields: { a: "é\"'\\", n: [1, { b: null }] },
      },
      {
        integration: { id: integ.id, ownerId: integ.ownerId, devTunnelUrl: null, devAll: false },
        installation: null,
        type: "space_content_updated",
      },
      {
        integration: { id: integ.id, ownerId: integ.ownerId, devTunnelUrl: null, devAll: false },
        installation: null,
        type: "space_content_updated",
        outcome: { status: "success", logs: [{ level: "info", message: "ok", timestamp: new Date(now.getTime() + 5) }] },
      },
    ],
    now,
  );
  await t.gateway.db.prisma.$transaction((tx) => writeEvents(tx, prepared));
  const rows = await t.gateway.db.prisma.integrationEvent.findMany({
    where: { id: { in: prepared.rows.map((r) => r.id) } },
    orderBy: { id: "asc" },
  });
  const want = [...prepared.rows].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(rows).toEqual(want.map((r) => ({ ...r, installationId: null })));
  const logs = await t.gateway.db.prisma.integrationEventLog.findMany({ where: { eventId: { in: prepared.rows.map((r) => r.id) } } });
  expect(logs.sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual([...prepared.logs].sort((a, b) => (a.id! < b.id! ? -1 : 1)));
});
