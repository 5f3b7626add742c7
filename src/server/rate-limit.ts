import type { IncomingMessage } from "node:http";
import type { Plugin } from "graphql-yoga";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { log } from "../core/logger.js";
import { notesOf } from "../core/support/request-notes.js";
import { bearerToken, hashToken } from "../core/access/auth.js";
import { isSiteTokenShaped } from "../core/access/site-token.js";
import { errorBodyFor } from "../core/error-report.js";
import { isGraphQLPath } from "../core/graphql-path.js";
import { isRestPath } from "../rest/prefix.js";

/**
 * The API rate limit, as GitBook's API documents it. Every answer of /v1 and /graphql (and of
 * the routes beside them that do work for any caller: raw routes marked `rateLimited`) carries
 *
 *   X-RateLimit-Limit      requests allowed per window (RATE_LIMIT_PER_MINUTE, one minute)
 *   X-RateLimit-Remaining  requests left in the current window
 *   X-RateLimit-Reset      when the window ends, in UTC epoch seconds
 *
 * and past the limit the answer is 429 with `Retry-After` (seconds) and
 * `{"error":{"code":429,"message":"API rate limit exceeded. Please try again in N seconds"}}`.
 *
 * A request is counted against its API token (the SHA-256 of the bearer token, whether or not it
 * is valid), or against the client address when it has none; a site token (a JWT) against the
 * token and the address together. Every request costs one, REST or
 * GraphQL alike: a GraphQL document's size is bounded apart (depth, aliases, tokens, cost).
 *
 * Tokens that do not authenticate are also counted against the client address that sent them (a
 * 401 to a request with a token, a graphql-ws connection refused for its token). Past the same
 * limit in a minute, that address's tokens are no longer looked up: a request whose token the
 * access cache does not hold as live is answered 429 at once (a graphql-ws connection is closed
 * with 4429), so made-up tokens — each with an allowance of its own — can neither make the
 * database read one token after another nor be sent without limit. Live tokens the gateway
 * already knows go on as before.
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
  /** Whether the token with this hash (core/access/auth.ts `hashToken`) is one the gateway knows as live (the access cache holds it). */
  knownLive?: (tokenHash: string) => boolean;
  /** The route patterns outside /v1 and /graphql that are counted too (raw routes marked `rateLimited`). */
  routes?: ReadonlySet<string>;
}

export interface RateLimit {
  /** Counts the /v1 and /graphql requests and refuses them past the limit (the headers, the 429). */
  plugin: Plugin;
  /** Seconds before `token`, sent from `address`, may be looked up (0: at once): known live, or the address's tokens have not failed too often. */
  tokenWait(address: string, token: string): Promise<number>;
  /** A token sent from `address` did not authenticate. */
  tokenRefused(address: string): void;
}

const WINDOW_SECONDS = 60;

export function createRateLimit(opts: RateLimitOptions): RateLimit {
  const points = opts.perMinute;
  const limiter = counters(opts, "rate-limit");
  // Tokens that did not authenticate, by client address.
  const refusals = counters(opts, "refused-tokens");
  const headersOf = new WeakMap<Request, Record<string, string>>();
  // The client address of each request that sent a token: a 401 to it is counted there.
  const tokenSentFrom = new WeakMap<Request, string>();

  const headers = (res: RateLimiterRes): Record<string, string> => ({
    "x-ratelimit-limit": String(points),
    "x-ratelimit-remaining": String(Math.max(0, points - res.consumedPoints)),
    "x-ratelimit-reset": String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)),
  });
  const secondsOf = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  const refusal = (path: string, res: RateLimiterRes): Response => {
    opts.onLimited?.();
    const seconds = secondsOf(res);
    return new Response(JSON.stringify(errorBodyFor(path, 429, limitExceeded(seconds))), {
      status: 429,
      headers: { "content-type": "application/json; charset=utf-8", "retry-after": String(seconds), ...headers(res) },
    });
  };
  /** The counter of `address`'s refused tokens when it is past the limit and the token (by its hash) is not known live. */
  const spent = async (address: string, tokenHash: string): Promise<RateLimiterRes | null> => {
    if (points <= 0 || opts.knownLive?.(tokenHash)) return null;
    try {
      const res = await refusals.get(`address:${address}`);
      return res && res.consumedPoints >= points ? res : null;
    } catch {
      return null; // the store failed: the token is looked up, as without the counter
    }
  };
  const tokenRefused = (address: string) => {
    if (points > 0) refusals.consume(`address:${address}`, 1).catch(() => undefined);
  };

  const plugin: Plugin = {
    async onRequest({ request, url, endResponse, serverContext }) {
      if (points <= 0 || request.method === "OPTIONS") return;
      const path = url.pathname;
      if (!(isGraphQLPath(path) || isRestPath(path) || opts.routes?.has(notesOf(request)?.route ?? ""))) return;
      const address = addressOf(request, serverContext as { req?: IncomingMessage } | undefined);
      const token = bearerToken(request.headers.get("authorization"));
      const hash = token ? hashToken(token) : "";
      if (token) {
        tokenSentFrom.set(request, address);
        const over = await spent(address, hash);
        if (over) return endResponse(refusal(path, over));
      }
      // A site token is shared by every visitor of a site space all day: counted per token and address.
      const key = !token
        ? `address:${address}`
        : isSiteTokenShaped(token)
          ? `site:${hash.slice(0, 32)}:${address}`
          : `token:${hash.slice(0, 32)}`;
      try {
        const res = await limiter.consume(key, 1);
        headersOf.set(request, headers(res));
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) {
          // The store failed and had no fallback: let the request through rather than refuse it.
          log.warn({ err }, "rate limit: counter unavailable, request not counted");
          return;
        }
        endResponse(refusal(path, err));
      }
    },
    onResponse({ request, response }) {
      const from = tokenSentFrom.get(request);
      if (from !== undefined && response.status === 401) tokenRefused(from);
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

  return {
    plugin,
    tokenWait: async (address, token) => {
      const over = await spent(address, hashToken(token));
      return over ? secondsOf(over) : 0;
    },
    tokenRefused,
  };
}

/** The message of a 429 (a graphql-ws connection's close reason too), as GitBook's API words it. */
export function limitExceeded(seconds: number): string {
  return `API rate limit exceeded. Please try again in ${seconds} seconds`;
}

function addressOf(request: Request, serverContext: { req?: IncomingMessage } | undefined): string {
  return notesOf(request)?.clientAddress ?? serverContext?.req?.socket?.remoteAddress ?? "local";
}

/** Counters of `perMinute` a minute by key: in Redis with REDIS_URL (in memory while it is unreachable), else in memory. */
function counters(opts: RateLimitOptions, name: string): RateLimiterAbstract {
  const points = opts.perMinute;
  const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: name });
  return opts.redis
    ? new RateLimiterRedis({
        storeClient: opts.redis,
        // Counters of one limit are shared by the processes of one deployment (changing the limit starts afresh).
        keyPrefix: `docs-api:${name}:${opts.scope ?? "default"}:${points}`,
        points,
        duration: WINDOW_SECONDS,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      })
    : memory;
}
