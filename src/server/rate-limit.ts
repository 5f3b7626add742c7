import crypto from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Plugin } from "graphql-yoga";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { log } from "../core/logger.js";
import { notesOf } from "../core/request-notes.js";
import { bearerToken } from "../core/auth.js";
import { errorBodyFor } from "../core/error-report.js";
import { isGraphQLPath } from "../graphql/endpoint.js";
import { isRestPath } from "../rest/prefix.js";

/**
 * The API rate limit, as GitBook's API documents it. Every answer of /v1 and /graphql carries
 *
 *   X-RateLimit-Limit      requests allowed per window (RATE_LIMIT_PER_MINUTE, one minute)
 *   X-RateLimit-Remaining  requests left in the current window
 *   X-RateLimit-Reset      when the window ends, in UTC epoch seconds
 *
 * and past the limit the answer is 429 with `Retry-After` (seconds) and
 * `{"error":{"code":429,"message":"API rate limit exceeded. Please try again in N seconds"}}`.
 *
 * A request is counted against its API token (the SHA-256 of the bearer token, whether or not it
 * is valid), or against the client address when it has none. Every request costs one, REST or
 * GraphQL alike: a GraphQL document's size is bounded apart (depth, aliases, tokens, cost).
 * Counters live in Redis when REDIS_URL is set, so every gateway process shares them (while Redis
 * is unreachable each process counts in memory instead), else in this process's memory.
 */
export interface RateLimitOptions {
  perMinute: number;
  redis?: Redis;
  /**
   * The deployment whose processes share counters in Redis (its database: see accessScope), so
   * that other deployments using the same Redis keep their own.
   */
  scope?: string;
  /** Called for each request refused. */
  onLimited?: () => void;
}

const WINDOW_SECONDS = 60;

export function useRateLimit(opts: RateLimitOptions): Plugin {
  const points = opts.perMinute;
  const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: "rl" });
  const limiter: RateLimiterAbstract = opts.redis
    ? new RateLimiterRedis({
        storeClient: opts.redis,
        // Counters of one limit are shared by the processes of one deployment (changing the limit starts afresh).
        keyPrefix: `docs-api:rate-limit:${opts.scope ?? "default"}:${points}`,
        points,
        duration: WINDOW_SECONDS,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      })
    : memory;
  const headersOf = new WeakMap<Request, Record<string, string>>();

  const headers = (res: RateLimiterRes): Record<string, string> => ({
    "x-ratelimit-limit": String(points),
    "x-ratelimit-remaining": String(Math.max(0, points - res.consumedPoints)),
    "x-ratelimit-reset": String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)),
  });

  return {
    async onRequest({ request, url, endResponse, serverContext }) {
      if (points <= 0 || request.method === "OPTIONS") return;
      const path = url.pathname;
      if (!(isGraphQLPath(path) || isRestPath(path))) return;
      const key = keyOf(request, serverContext as { req?: IncomingMessage } | undefined);
      try {
        const res = await limiter.consume(key, 1);
        headersOf.set(request, headers(res));
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) {
          // The store failed and had no fallback: let the request through rather than refuse it.
          log.warn({ err }, "rate limit: counter unavailable, request not counted");
          return;
        }
        opts.onLimited?.();
        const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
        const message = `API rate limit exceeded. Please try again in ${seconds} seconds`;
        endResponse(
          new Response(JSON.stringify(errorBodyFor(path, 429, message)), {
            status: 429,
            headers: { "content-type": "application/json; charset=utf-8", "retry-after": String(seconds), ...headers(err) },
          }),
        );
      }
    },
    onResponse({ request, response }) {
      const extra = headersOf.get(request);
      if (!extra) return;
      for (const [name, value] of Object.entries(extra)) {
        try {
          response.headers.set(name, value);
        } catch {
          return; // immutable headers (a redirect): nothing to add
        }
      }
    },
  };
}

function keyOf(request: Request, serverContext: { req?: IncomingMessage } | undefined): string {
  const token = bearerToken(request.headers.get("authorization"));
  if (token) return `token:${crypto.createHash("sha256").update(token).digest("hex").slice(0, 32)}`;
  const address = notesOf(request)?.clientAddress ?? serverContext?.req?.socket?.remoteAddress ?? "local";
  return `address:${address}`;
}
