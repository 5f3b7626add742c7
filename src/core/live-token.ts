import DataLoader from "dataloader";
import type { Plugin } from "graphql-yoga";
import type { ExecutionResult } from "graphql";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { Context } from "./context.js";
import { unauthorized } from "./errors.js";

/**
 * Live subscriptions (graphql-ws and SSE) hold the context of the request that opened them, so
 * the token behind it is checked again before every delivery: once it is revoked (by any
 * process: the check reads the database), the subscription answers one 401 error and completes.
 * Checks of the subscribers that receive the same event are batched into one query per process.
 */
export function useLiveToken(): Plugin<Context> {
  return {
    onSubscribe() {
      return {
        onSubscribeResult({ args, result, setResult }) {
          if (!isAsyncIterable(result)) return;
          const ctx = args.contextValue as Context;
          if (!ctx.viewer?.tokenId) return;
          setResult(untilRevoked(result, () => tokenIsLive(ctx.prisma, ctx.viewer.tokenId)));
        },
      };
    },
  };
}

const checkers = new WeakMap<PrismaClient, DataLoader<string, boolean>>();

/** Whether a token exists and is not revoked, read afresh (concurrent checks share one query). */
export function tokenIsLive(prisma: PrismaClient, tokenId: string): Promise<boolean> {
  let loader = checkers.get(prisma);
  if (!loader) {
    loader = new DataLoader<string, boolean>(
      async (ids) => {
        const live = await prisma.apiToken.findMany({ where: { id: { in: [...ids] }, revokedAt: null }, select: { id: true } });
        const set = new Set(live.map((t) => t.id));
        return ids.map((id) => set.has(id));
      },
      { cache: false },
    );
    checkers.set(prisma, loader);
  }
  return loader.load(tokenId);
}

function isAsyncIterable<T>(value: unknown): value is AsyncIterable<T> {
  return typeof (value as any)?.[Symbol.asyncIterator] === "function";
}

/**
 * Passes the results of `source` on while `live()` holds; then answers one 401 error and ends.
 * `return` goes straight to the source, so a client that unsubscribes between events frees it at
 * once (an async generator would wait for the next event).
 */
function untilRevoked(source: AsyncIterable<ExecutionResult>, live: () => Promise<boolean>): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  const done = (): IteratorResult<ExecutionResult> => ({ done: true, value: undefined });
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (ended) return done();
      const next = await iterator.next();
      if (next.done || ended) return next.done ? next : done();
      if (await live()) return next;
      ended = true;
      await iterator.return?.();
      const error = unauthorized("The API token of this subscription was revoked: subscribe again with a valid token.");
      return { done: false, value: { errors: [error] } };
    },
    async return() {
      ended = true;
      await iterator.return?.();
      return done();
    },
    async throw(error) {
      ended = true;
      await iterator.return?.();
      throw error;
    },
  };
}
