import { afterAll, describe, expect, it } from "vitest";
import { createPubSubFor, type PubSub } from "../../src/core/messaging/pubsub.js";
import { announceEvents, DISPATCH_KEY, publishEventMessage, type EventServices } from "../../src/events/record.js";
import type { IntegrationEventMessage } from "../../src/events/messages.js";

/**
 * An event published under several routing keys (PubSub.publishTo) reaches the listeners of each
 * key once, and nobody else; in process, and through Redis when REDIS_URL is set (one message on
 * the topic's channel, routed by the receiving process).
 */
describe(`pub/sub: one event under several routing keys (${process.env.REDIS_URL ? "Redis" : "in process"})`, () => {
  const pubsubs: PubSub[] = [];
  afterAll(async () => {
    for (const p of pubsubs) await p.close();
  });

  /** Follows `key` of the routed topic: what arrives is pushed to `seen`. */
  function take(pubsub: PubSub, key: string) {
    const iterator = pubsub.subscribe("integration:event", key)[Symbol.asyncIterator]();
    const seen: number[] = [];
    const pulling = (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        seen.push((next.value as any).n);
      }
    })();
    void pulling;
    return { seen, stop: () => iterator.return?.() };
  }

  it("reaches each key's listeners once, in order, and no other key's; keys of another topic stay apart", async () => {
    const publisher = createPubSubFor(process.env.REDIS_URL);
    // With Redis, a second process's pub/sub: it receives what the first publishes.
    const receiver = process.env.REDIS_URL ? createPubSubFor(process.env.REDIS_URL) : publisher;
    pubsubs.push(publisher, receiver);
    const tag = Math.random().toString(36).slice(2);
    const [a, b, c] = [`a-${tag}`, `b-${tag}`, `c-${tag}`].map((k) => take(receiver, k));
    const space = receiver.subscribe("space:updated", `a-${tag}`)[Symbol.asyncIterator]();
    let spaceEvents = 0;
    void space.next().then((r) => !r.done && spaceEvents++);
    if (process.env.REDIS_URL) await new Promise((resolve) => setTimeout(resolve, 300));

    publisher.publishTo("integration:event", [`a-${tag}`, `b-${tag}`, `a-${tag}`], { n: 1 } as any);
    publisher.publishTo("integration:event", [`b-${tag}`], { n: 2 } as any);
    // The single-key form yoga's pub/sub offers goes the same way.
    publisher.publish("integration:event", `a-${tag}`, { n: 3 } as any);
    await expect
      .poll(() => [a.seen, b.seen], { timeout: 5_000 })
      .toEqual([
        [1, 3],
        [1, 2],
      ]);
    // A moment for anything else to arrive.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([a.seen, b.seen, c.seen]).toEqual([[1, 3], [1, 2], []]);
    expect(spaceEvents).toBe(0);
    for (const x of [a, b, c]) await x.stop();
    await space.return?.();
  });
});

describe("integration events: the keys of their one message", () => {
  const message = (id: string, status: IntegrationEventMessage["status"], organizationId: string | null): IntegrationEventMessage => ({
    id,
    integrationId: "int-1",
    installationId: organizationId ? "inst-1" : null,
    organizationId,
    type: "space_content_updated",
    status,
    createdAt: new Date(0).toISOString(),
    payload: {},
  });

  it("a stored batch: each event under its integration and organization, the first pending one also wakes the dispatchers; a status change likewise, never the dispatchers", () => {
    const published: [string, string[], string][] = [];
    const pubsub = {
      publishTo: (topic: string, keys: string[], m: IntegrationEventMessage) => published.push([topic, keys, m.id]),
    } as unknown as PubSub;
    const messages = [
      message("e1", "skipped", "org-1"),
      message("e2", "pending", "org-1"),
      message("e3", "pending", null),
      message("e4", "pending", "org-2"),
    ];
    announceEvents({ pubsub } as EventServices, { rows: [], logs: [], messages });
    publishEventMessage(pubsub, message("e2", "success", "org-1"));
    expect(published).toEqual([
      ["integration:event", ["int-1", "org-1"], "e1"],
      ["integration:event", ["int-1", "org-1", DISPATCH_KEY], "e2"],
      ["integration:event", ["int-1"], "e3"],
      ["integration:event", ["int-1", "org-2"], "e4"],
      ["integration:event", ["int-1", "org-1"], "e2"],
    ]);
  });
});
