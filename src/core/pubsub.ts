import { createPubSub } from "graphql-yoga";
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { Redis } from "ioredis";
import type { SpaceActivity } from "../events/activity.js";

/** Topics published inside the gateway, with their payloads. */
export type Topics = {
  "space:updated": [spaceId: string, payload: { spaceId: string }];
  "space:activity": [payload: SpaceActivity & { actorId: string; at: string }];
};

export type PubSub = ReturnType<typeof createPubSub<Topics>> & { close(): Promise<void> };

/** In-process pub/sub by default; Redis when a URL is given, so several gateways share events. */
export function createPubSubFor(redisUrl?: string): PubSub {
  if (!redisUrl) {
    const pubsub = createPubSub<Topics>();
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
