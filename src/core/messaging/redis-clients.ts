import { createRequire } from "node:module";
import type { Redis, RedisOptions } from "ioredis";

/**
 * ioredis, loaded by the first client made: a gateway without REDIS_URL never loads it (a start
 * without Redis is spared its modules). It is CommonJS, so `require` loads it synchronously.
 */
let redisClass: typeof Redis | undefined;
const RedisClient = (): typeof Redis => (redisClass ??= (createRequire(import.meta.url)("ioredis") as typeof import("ioredis")).Redis);

/**
 * Longest the gateway waits for Redis to answer a command, in ms. Redis carries no data of the
 * gateway's (rate-limit counters, cached answers, pub/sub): whatever uses it serves without it
 * when it does not answer — counting in memory, reading the database, counting a lost publish.
 */
export const REDIS_REPLY_MS = 1_000;

/**
 * A Redis client for commands (rate-limit counters, the response cache, publishing):
 * - while it is not connected, a command fails at once (no offline queue) instead of waiting for
 *   the connection to come back;
 * - a connection that stops answering without closing (a paused server, a network path that
 *   drops packets) fails the commands sent on it after REDIS_REPLY_MS (`commandTimeout`) and is
 *   closed and made again (`socketTimeout`: nothing received for that long while a reply is
 *   awaited), so that the commands after it fail at once too until Redis answers again. (Before,
 *   the rate-limit counters' client waited without end: one stalled connection held every
 *   request of /v1 and /graphql.)
 */
export function commandClient(url: string, options: RedisOptions = {}): Redis {
  return new (RedisClient())(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_REPLY_MS,
    socketTimeout: REDIS_REPLY_MS,
    ...options,
  });
}

/** How often a subscriber connection is asked whether it still answers, in ms. */
export const SUBSCRIBER_PING_MS = 5_000;

/**
 * A Redis client for SUBSCRIBE: it queues its SUBSCRIBE commands while away and sends them again
 * without end. A subscriber only listens, so a connection dropped without a word (a firewall or
 * load balancer that forgets idle connections, a Redis host gone) would leave it waiting for
 * messages that never come: it sends PING every SUBSCRIBER_PING_MS, and a connection that does
 * not answer in REDIS_REPLY_MS is made again and subscribes again.
 */
export function subscriberClient(url: string): Redis {
  const client = new (RedisClient())(url, { maxRetriesPerRequest: null, autoResubscribe: true, socketTimeout: REDIS_REPLY_MS });
  const ping = setInterval(() => {
    if (client.status === "ready") client.ping().catch(() => undefined);
  }, SUBSCRIBER_PING_MS);
  ping.unref();
  client.once("end", () => clearInterval(ping));
  return client;
}
