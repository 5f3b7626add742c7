import { createPubSub, FixedBuffer, Repeater } from "graphql-yoga";
import { setMaxListeners } from "node:events";
import { commandClient, subscriberClient } from "./redis-clients.js";
import { log } from "../logger.js";
import { AppError } from "../errors.js";
import type { IntegrationEventMessage, SpaceActivity } from "./topics.js";

/** Topics published inside the gateway, with their payloads. */
export type Topics = {
  "space:updated": [spaceId: string, payload: { spaceId: string }];
  "space:activity": [payload: SpaceActivity & { actorId: string; at: string }];
  /** An integration event recorded or changing status; published under its integration id and under its installing organization's id. */
  "integration:event": [routingKey: string, payload: IntegrationEventMessage];
  /** A committed write changed who may do what (core/access/access-cache.ts); `origin` is the process that made it. */
  "access:changed": [payload: { origin: string; database: string; kind?: "installations" | "sites" }];
};

/**
 * Topics whose events are published once under several routing keys (PubSub.publishTo): on Redis,
 * one message per event on the topic's own channel, which every gateway following any key of the
 * topic receives and hands to the listeners of each of its keys. An integration event is for its
 * integration's streams, its organization's and the dispatchers: one message, not three.
 */
const ROUTED = ["integration:event"] as const satisfies readonly (keyof Topics)[];
type RoutedTopic = (typeof ROUTED)[number];
const ROUTED_TOPICS: ReadonlySet<string> = new Set(ROUTED);

export type PubSub = ReturnType<typeof createPubSub<Topics>> & {
  /** Publishes one event to the listeners of `topic:key` for each of `keys` (each listener once): on Redis, one message. */
  publishTo<T extends RoutedTopic>(topic: T, keys: string[], payload: Topics[T][1]): void;
  close(): Promise<void>;
};

/** The routed topic a listener's topic (`integration:event:<key>`) belongs to, with its key; null for any other. */
function routedOf(topic: string): { channel: string; key: string } | null {
  for (const channel of ROUTED_TOPICS) if (topic.startsWith(`${channel}:`)) return { channel, key: topic.slice(channel.length + 1) };
  return null;
}

/**
 * Failures of the Redis pub/sub, for the metrics: publishes that did not reach Redis (the message
 * is dropped: Redis carries only live notifications, the writes themselves are committed), and
 * outages (Redis became unreachable while it had been reachable, or at start).
 */
export const pubsubFailures = { publish: 0, outages: 0 };

/**
 * A publisher of single-argument topics on Redis, in the format the gateways' Redis event target
 * reads, whose `publish` resolves once Redis has passed the message on to its subscribers (or
 * fails within a second): for messages a write must not answer before (core/access/access-cache.ts), and
 * for processes that run no gateway (`npm run admin` on PostgreSQL).
 */
export function awaitedPublisher(redisUrl: string) {
  const client = commandClient(redisUrl);
  client.on("error", () => undefined); // an outage is reported by the pub/sub's own clients
  const ready = new Promise<void>((resolve) => client.once("ready", () => resolve()));
  return {
    async publish<T extends "access:changed">(topic: T, payload: Topics[T][0], waitForConnection = false): Promise<void> {
      if (waitForConnection) await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      await client.publish(topic, JSON.stringify(payload));
    },
    close: () => client.disconnect(),
  };
}

/** Events a subscription may hold unread before it is ended (see boundedSubscriptions). */
export const MAX_PENDING_EVENTS = 4_096;

/** The error a subscription ends with when it fell more than MAX_PENDING_EVENTS events behind. */
export const fellBehind = () =>
  new AppError(503, `This live stream fell more than ${MAX_PENDING_EVENTS} events behind its reader and was ended; subscribe again.`);

/** In-process pub/sub by default; Redis when a URL is given, so several gateways share events. */
export function createPubSubFor(redisUrl?: string): PubSub {
  if (!redisUrl) {
    // Any number of subscribers may follow one topic (a dashboard per viewer): no listener cap.
    const eventTarget = new EventTarget();
    setMaxListeners(0, eventTarget);
    const target: Target = Object.assign(eventTarget as unknown as Target, {
      dispatchTo(topic: string, keys: string[], detail: unknown) {
        for (const key of new Set(keys)) eventTarget.dispatchEvent(new CustomEvent(`${topic}:${key}`, { detail }));
      },
    });
    return Object.assign(boundedSubscriptions(target), { close: async () => undefined });
  }
  const redis = redisEventTarget(redisUrl);
  return Object.assign(boundedSubscriptions(redis.eventTarget), { close: redis.close });
}

interface Target {
  addEventListener(topic: string, listener: Listener): void;
  removeEventListener(topic: string, listener: Listener): void;
  dispatchEvent(event: CustomEvent): boolean;
  /** One event for the listeners of `topic:key`, each of `keys` (see ROUTED_TOPICS). */
  dispatchTo(topic: string, keys: string[], detail: unknown): void;
}

/**
 * graphql-yoga's pub/sub whose subscriptions hold at most MAX_PENDING_EVENTS unread events. A
 * reader that falls further behind (an SSE client that stops reading, a stream slower than its
 * events) is ended with `fellBehind`, after the events it holds, instead of growing without end;
 * yoga's own subscriptions would throw inside the publisher's event listener at 1,024 pending
 * events, and that exception would end the process.
 */
function boundedSubscriptions(target: Target): Omit<PubSub, "close"> {
  const pubsub = createPubSub<Topics>({ eventTarget: target as any });
  const subscribe = (routingKey: string, id?: string) => {
    const topic = id === undefined ? routingKey : `${routingKey}:${id}`;
    const buffer = new FixedBuffer(MAX_PENDING_EVENTS);
    return new Repeater<unknown>((push, stop) => {
      const listener: Listener = (event) => {
        if (buffer.full) {
          stop(fellBehind());
          return;
        }
        push(event.detail).catch(() => undefined);
      };
      target.addEventListener(topic, listener);
      void stop.then(() => target.removeEventListener(topic, listener));
    }, buffer);
  };
  const publishTo: PubSub["publishTo"] = (topic, keys, payload) => target.dispatchTo(topic, keys, payload);
  return Object.assign(pubsub, { subscribe, publishTo }) as Omit<PubSub, "close">;
}

type Listener = (event: CustomEvent) => void;

/**
 * An EventTarget over Redis pub/sub (the shape of @graphql-yoga/redis-event-target) that an
 * outage cannot bring down: Redis is an accelerator, not a dependency of correctness.
 *
 * - Publishing never waits and never throws: while Redis is away a publish fails at once (no
 *   offline queue), is counted in `pubsubFailures.publish`, and the first failure of an outage is
 *   logged once; the write that published has committed all the same.
 * - Subscribing keeps its channels: the subscriber reconnects on its own and subscribes again to
 *   every channel it follows (ioredis `autoResubscribe`); a subscription made during the outage is
 *   queued until Redis is back. Live streams resume then (what was published meanwhile is lost).
 * - Both clients have error listeners, and every command's promise is handled: no Redis error
 *   reaches the process as an unhandled one.
 * - A channel per topic followed (`space:updated:<id>`), one message per publish; a routed topic
 *   (ROUTED_TOPICS) has one channel, followed while any of its keys has a listener here, whose
 *   messages (`{"keys":[…],"detail":…}`) go to the listeners of each key.
 */
function redisEventTarget(redisUrl: string) {
  let down = false;
  // Once closed, the clients' own disconnection (and streams unsubscribing after it) is no outage.
  let closed = false;
  const outage = (what: string, err: unknown) => {
    if (down || closed) return;
    down = true;
    pubsubFailures.outages++;
    log.warn(`Redis pub/sub unreachable (${what}: ${(err as Error)?.message ?? err}); writes go on, live updates pause until it is back.`);
  };
  const back = () => {
    if (!down) return;
    down = false;
    log.info("Redis pub/sub reachable again; live updates resume.");
  };
  const publishClient = commandClient(redisUrl, { lazyConnect: false });
  const subscribeClient = subscriberClient(redisUrl);
  for (const client of [publishClient, subscribeClient]) {
    client.on("error", (err) => outage("connection", err));
    client.on("ready", back);
  }

  const listeners = new Map<string, Set<Listener>>();
  /** Listener topics following each Redis channel: a routed topic's channel is followed while any of its keys is. */
  const following = new Map<string, number>();
  const channelOf = (topic: string) => routedOf(topic)?.channel ?? topic;
  const hand = (topic: string, detail: unknown) => {
    const set = listeners.get(topic);
    if (!set) return;
    const event = new CustomEvent(topic, { detail });
    for (const listener of set) listener(event);
  };
  subscribeClient.on("message", (channel: string, message: string) => {
    let detail: unknown;
    try {
      detail = message === "" ? null : JSON.parse(message);
    } catch {
      return; // not one of ours
    }
    if (!ROUTED_TOPICS.has(channel)) return hand(channel, detail);
    const routed = detail as { keys?: unknown; detail?: unknown } | null;
    if (!routed || !Array.isArray(routed.keys)) return; // not one of ours
    for (const key of new Set(routed.keys)) if (typeof key === "string") hand(`${channel}:${key}`, routed.detail);
  });
  const ignore = (what: string) => (err: unknown) => outage(what, err);
  const callbackOf = (l: Listener | { handleEvent: Listener }) => ("handleEvent" in l ? l.handleEvent : l);
  const publish = (channel: string, message: string) => {
    publishClient.publish(channel, message).catch((err: unknown) => {
      pubsubFailures.publish++;
      outage("publish", err);
    });
  };
  const publishRouted = (topic: string, keys: string[], detail: unknown) => publish(topic, JSON.stringify({ keys, detail }));

  const eventTarget: Target = {
    addEventListener(topic: string, listener: Listener | { handleEvent: Listener } | null) {
      if (!listener) return;
      let set = listeners.get(topic);
      if (!set) {
        listeners.set(topic, (set = new Set()));
        const channel = channelOf(topic);
        const count = (following.get(channel) ?? 0) + 1;
        following.set(channel, count);
        if (count === 1) subscribeClient.subscribe(channel).catch(ignore("subscribe"));
      }
      set.add(callbackOf(listener));
    },
    removeEventListener(topic: string, listener: Listener | { handleEvent: Listener } | null) {
      const set = listeners.get(topic);
      if (!set || !listener) return;
      set.delete(callbackOf(listener));
      if (set.size) return;
      listeners.delete(topic);
      const channel = channelOf(topic);
      const count = (following.get(channel) ?? 1) - 1;
      if (count > 0) return void following.set(channel, count);
      following.delete(channel);
      subscribeClient.unsubscribe(channel).catch(ignore("unsubscribe"));
    },
    dispatchEvent(event: CustomEvent): boolean {
      const routed = routedOf(event.type);
      if (routed) publishRouted(routed.channel, [routed.key], event.detail);
      else publish(event.type, event.detail === undefined ? "" : JSON.stringify(event.detail));
      return true;
    },
    dispatchTo: publishRouted,
  };
  return {
    eventTarget,
    close: async () => {
      closed = true;
      publishClient.disconnect();
      subscribeClient.disconnect();
    },
  };
}

/**
 * The newest of `source`'s values: a consumer slower than the source skips the values it had no
 * time for and receives the last one. For state streams (an event says "this changed, read it
 * again"), where only the newest state matters; `source` is read as fast as it publishes.
 */
export function latest<T>(source: AsyncIterable<T>): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let pending: { value: T } | null = null;
  let ended = false;
  const waiter: { wake?: () => void } = {};
  const pump = (async () => {
    try {
      for (let next = await iterator.next(); !next.done && !ended; next = await iterator.next()) {
        pending = { value: next.value };
        waiter.wake?.();
      }
    } finally {
      ended = true;
      waiter.wake?.();
    }
  })();
  pump.catch(() => undefined);
  const done = (): IteratorResult<T> => ({ done: true, value: undefined });
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      while (!pending && !ended) await new Promise<void>((resolve) => (waiter.wake = resolve));
      waiter.wake = undefined;
      if (!pending) return done();
      const { value } = pending;
      pending = null;
      return { done: false, value };
    },
    async return() {
      ended = true;
      pending = null;
      waiter.wake?.();
      await iterator.return?.();
      return done();
    },
  };
}
