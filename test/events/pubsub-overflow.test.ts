import { afterAll, describe, expect, it } from "vitest";
import { createPubSubFor, MAX_PENDING_EVENTS, type PubSub } from "../../src/core/messaging/pubsub.js";

/**
 * A subscriber that stops reading (an SSE client that no longer reads its socket, a stream slower
 * than its events) holds at most MAX_PENDING_EVENTS events: past that its subscription ends with a
 * clear error after the events it holds, the publisher and the other subscribers go on, and the
 * process survives (an exception inside the publisher's listener would end it).
 */
describe("pub/sub: a reader that falls behind", () => {
  const pubsubs: PubSub[] = [];
  afterAll(async () => {
    for (const p of pubsubs) await p.close();
  });

  it(`is ended after ${MAX_PENDING_EVENTS} unread events; a reader that keeps up gets every event`, async () => {
    const pubsub = createPubSubFor(process.env.REDIS_URL);
    pubsubs.push(pubsub);
    const key = `overflow-${Math.random().toString(36).slice(2)}`;
    const stalled = pubsub.subscribe("integration:event", key)[Symbol.asyncIterator]();
    const reader = pubsub.subscribe("integration:event", key)[Symbol.asyncIterator]();
    // Both iterators subscribe on their first pull (Redis: once the channel is subscribed).
    const firstStalled = stalled.next();
    const firstRead = reader.next();
    if (process.env.REDIS_URL) await new Promise((resolve) => setTimeout(resolve, 300));

    const total = MAX_PENDING_EVENTS * 2 + 10;
    const received: number[] = [];
    const reading = (async () => {
      let next = await firstRead;
      while (!next.done) {
        received.push((next.value as any).n);
        if (received.length === total) break;
        next = await reader.next();
      }
    })();
    // Published as writes do, a few per turn of the event loop, so a reader that keeps up can.
    for (let n = 0; n < total; n++) {
      pubsub.publish("integration:event", key, { n } as any);
      if (n % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
    }
    await reading;
    expect(received).toEqual(Array.from({ length: total }, (_, n) => n));

    // The stalled reader gets the events it holds, in order, then the error.
    const held: number[] = [((await firstStalled).value as any).n];
    let failure: unknown;
    try {
      for (;;) {
        const next = await stalled.next();
        if (next.done) break;
        held.push((next.value as any).n);
      }
    } catch (err) {
      failure = err;
    }
    expect(held.length).toBeGreaterThanOrEqual(MAX_PENDING_EVENTS);
    expect(held.length).toBeLessThanOrEqual(MAX_PENDING_EVENTS + 1);
    expect(held).toEqual(Array.from({ length: held.length }, (_, n) => n));
    expect((failure as Error)?.message).toMatch(/fell more than \d+ events behind/);
    expect((failure as any).extensions?.code).toBe(503);
  });
});
