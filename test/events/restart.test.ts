import { afterAll, describe, expect, it } from "vitest";
import { startReceiver } from "./receiver.js";
import { eventually } from "../helpers/eventually.js";
import { client, processStorage, startServerProcess, type ServerProcess } from "./processes.js";

/**
 * A recorded event is delivered at least once even when the server dies in the middle of its
 * delivery: the outbox row stays pending, and the restarted server (or, on PostgreSQL, any
 * server once the claim's lease ran out) delivers it.
 */
const running: ServerProcess[] = [];
let storage: Awaited<ReturnType<typeof processStorage>> | undefined;
afterAll(async () => {
  for (const p of running) await p.stop().catch(() => undefined);
  await storage?.cleanup();
});

describe("the event dispatcher across a crash", () => {
  it("delivers an event whose delivery was cut by SIGKILL once the server is back", { timeout: 180_000 }, async () => {
    let hang = true;
    const receiver = await startReceiver(() => (hang ? "hang" : { status: 200 }));
    storage = await processStorage();
    const env = {
      ...storage.env,
      INTEGRATION_DELIVERY_TIMEOUT_MS: "30000",
      INTEGRATION_CLAIM_LEASE_MS: "1500",
      INTEGRATION_RETRY_BASE_MS: "100",
      INTEGRATION_DISPATCH_POLL_MS: "100",
    };
    try {
      const first = await startServerProcess(env);
      running.push(first);
      const boot = await storage.admin({ command: "bootstrap", email: "ada@acme.test", org: "Acme" });
      const api = client(first.url, boot.token);
      expect((await api.post("/v1/integrations/crashy", { title: "Crashy", organization: boot.organization })).status).toBe(201);
      expect((await api.put("/v1/integrations/crashy/dev", { tunnelUrl: receiver.url })).status).toBe(204);
      expect((await api.post("/v1/integrations/crashy/installations", { organization: boot.organization })).status).toBe(201);
      await receiver.waitFor(1, 30_000);
      const eventId = receiver.received[0]!.json.eventId;
      await first.kill();
      hang = false;

      const second = await startServerProcess(env);
      running.push(second);
      await receiver.waitFor(2, 30_000);
      expect(receiver.received[1]!.json.eventId).toBe(eventId);
      expect(receiver.received[1]!.headers["x-integration-event-attempt"]).toBe("2");
      const api2 = client(second.url, boot.token);
      const done = await eventually(async () => {
        const res = await api2.get(`/v1/integrations/crashy/events/${eventId}`);
        return res.body?.event?.status === "success" ? res.body : null;
      }, 30_000);
      expect(done.trace.logs.map((l: any) => l.message).join("\n")).toMatch(/Attempt 2 of \d+: delivered/);
      expect(receiver.received).toHaveLength(2);
      await second.stop();
    } finally {
      await receiver.close();
    }
  });
});
