import { createPubSub } from "graphql-yoga";
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { setMaxListeners } from "node:events";
import { Redis } from "ioredis";
import type { SpaceActivity } from "../events/activity.js";
import type { IntegrationEventMessage } from "../events/messages.js";

/** Topics published inside the gateway, with their payloads. */
export type Topics = {
  "space:updated": [spaceId: string, payload: { spaceId: string }];
  "space:activity": [payload: SpaceActivity & { actorId: string; at: string }];
  /** An integration event recorded or changing status; published under its integration id and under its installing organization's id. */
  "integration:event": [routingKey: string, payload: IntegrationEventMessage];
};

export type PubSub = ReturnType<typeof createPubSub<Topics>> & { close(): Promise<void> };

/** In-process pub/sub by default; Redis when a URL is given, so several gateways share events. */
export function createPubSubFor(redisUrl?: string): PubSub {
  if (!redisUrl) {
    // Any number of subscribers may follow one topic (a dashboard per viewer): no listener cap.
    const eventTarget = new EventTarget();
    setMaxListeners(0, eventTarget);
    const pubsub = createPubSub<Topics>({ eventTarget: eventTarget as any });
    return Object.assign(pubsub, { close: async () => undefined });
  }
  const publishClient = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const subscribeClient = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const pubsub = createPubSub<Topics>({ eventTarget: createRedisEventTarget({ publishClient, subscribeClient }) });
  return Object.assign(pubsub, {
    close: async () => {
      publishClient.disconnect();
      subscribeClient.disconnect();
    },
  });
}
