import type { Plugin } from "graphql-yoga";
import type { ExecutionResult } from "graphql";
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { Context } from "../context.js";
import { readTogether } from "../graph/loaders.js";
import { AppError, unauthorized } from "../errors.js";

/**
 * Live subscriptions hold the context of the request that opened them, so the token behind it is
 * checked again before every delivery: once it is revoked (by any process), the subscription
 * answers one 401 error and completes. The check is answered by the access cache
 * (core/access/access-cache.ts, exactly invalidated across processes), so a delivery sends no statement.
 * When access changed since the subscription was checked (the access cache dropped its answers),
 * the field's subscribe-time check runs again before the next delivery; a refusal (role removed,
 * SSO required) is answered instead, and the subscription completes.
 * This plugin does it for subscriptions served over HTTP (SSE); graphql-ws streams are shared by
 * their subscribers (graphql/streams/live-streams.ts), which check each subscriber the same way.
 */
export function useLiveToken(quota?: SubscriptionQuota): Plugin<Context> {
  return {
    onSubscribe({ subscribeFn, args: subscribeArgs }) {
      const ctx = subscribeArgs.contextValue as Context;
      if (!ctx.viewer?.tokenId || ctx.sharedStream) return;
      let checked = ctx.accessCache.version();
      /** Null while the subscription may go on, else what it answers before it ends. */
      const refusal = async (): Promise<ExecutionResult | null> => {
        if (!(await tokenIsLive(ctx, ctx.viewer.tokenId))) return { errors: [revokedTokenError()] };
        const version = ctx.accessCache.version();
        if (version === checked) return null;
        const again = await subscribeFn({ ...subscribeArgs, contextValue: { ...ctx, loaders: new Map() } });
        if (!isAsyncIterable(again)) return again as ExecutionResult;
        await again[Symbol.asyncIterator]().return?.();
        checked = version;
        return null;
      };
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable<ExecutionResult>(result)) return;
          const release = quota ? quota.acquire(ctx.viewer.tokenId) : () => undefined;
          if (!release) {
            void result[Symbol.asyncIterator]().return?.();
            setResult({ errors: [tooManySubscriptions(quota!.max)] });
            return;
          }
          setResult(untilRefused(result, refusal, release));
        },
      };
    },
  };
}

/** The error a subscription past the cap of its token (LIVE_SUBSCRIPTIONS_PER_TOKEN) answers. */
export function tooManySubscriptions(max: number) {
  return new AppError(
    429,
    `This API token already holds ${max} live subscriptions on this server (LIVE_SUBSCRIPTIONS_PER_TOKEN): complete one before subscribing again.`,
  );
}

/**
 * Live subscriptions per API token in one gateway process (graphql-ws streams and SSE):
 * `acquire` answers the function that gives the place back, or null when the token holds `max`
 * already (0: no cap).
 */
export class SubscriptionQuota {
  private readonly held = new Map<string, number>();
  constructor(readonly max: number) {}

  acquire(tokenId: string): (() => void) | null {
    const count = this.held.get(tokenId) ?? 0;
    if (this.max > 0 && count >= this.max) return null;
    this.held.set(tokenId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(tokenId) ?? 1) - 1;
      if (left > 0) this.held.set(tokenId, left);
      else this.held.delete(tokenId);
    };
  }
}

/** The 401 a live subscription answers once its token is revoked. */
export function revokedTokenError() {
  return unauthorized("The API token of this subscription was revoked: subscribe again with a valid token.");
}

/** Whether a token exists and is not revoked: from the access cache, else read (concurrent reads share one query). */
export function tokenIsLive(ctx: Pick<Context, "prisma" | "accessCache">, tokenId: string): Promise<boolean> {
  return ctx.accessCache.liveToken(tokenId, () => readTokenIsLive(ctx.prisma, tokenId));
}

/** Which tokens are live, read together for every check under way (core/graph/loaders.ts `readTogether`). */
const liveTokens = readTogether<string, boolean>(async (ids, prisma) => {
  const live = await prisma.apiToken.findMany({ where: { id: { in: [...ids] }, revokedAt: null }, select: { id: true } });
  const set = new Set(live.map((t) => t.id));
  return ids.map((id) => set.has(id));
});

function readTokenIsLive(prisma: PrismaClient, tokenId: string): Promise<boolean> {
  return liveTokens(prisma).load(tokenId);
}

function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return typeof (value as any)?.[Symbol.asyncIterator] === "function";
}

/**
 * Passes the results of `source` on while `refusal()` answers null; then answers its refusal and
 * ends. `return` goes straight to the source, so a client that unsubscribes between events frees
 * it at once (an async generator would wait for the next event).
 */
function untilRefused(
  source: AsyncIterable<ExecutionResult>,
  refusal: () => Promise<ExecutionResult | null>,
  onEnd: () => void,
): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  const done = (): IteratorResult<ExecutionResult> => ({ done: true, value: undefined });
  /** Ends the subscription (once): its place under the token's cap is given back. */
  const end = () => {
    ended = true;
    onEnd();
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (ended) return done();
      let next: IteratorResult<ExecutionResult>;
      try {
        next = await iterator.next();
      } catch (err) {
        end();
        throw err;
      }
      if (next.done) end();
      if (next.done || ended) return done();
      const refused = await refusal();
      if (!refused) return next;
      end();
      await iterator.return?.();
      return { done: false, value: refused };
    },
    async return() {
      end();
      await iterator.return?.();
      return done();
    },
    async throw(error) {
      end();
      await iterator.return?.();
      throw error;
    },
  };
}
