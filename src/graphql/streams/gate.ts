import { defaultFieldResolver, type ExecutionResult, type GraphQLSchema } from "graphql";
import type { Context } from "../../core/context.js";

export const isAsyncIterable = (value: unknown): value is AsyncIterable<ExecutionResult> =>
  typeof (value as any)?.[Symbol.asyncIterator] === "function";
export const DONE: IteratorResult<never> = { done: true, value: undefined };

/** The `subscribe` functions gateSubscriptions made (a schema is gated once). */
const GATED = new WeakSet<object>();

/** Makes each subscription field await the context's `streamGate` (LiveStreams) before an event is executed; without one, nothing changes. */
export function gateSubscriptions(schema: GraphQLSchema): GraphQLSchema {
  for (const field of Object.values(schema.getSubscriptionType()?.getFields() ?? {})) {
    const subscribe = field.subscribe ?? defaultFieldResolver;
    if (GATED.has(subscribe)) continue;
    const gatedSubscribe: typeof subscribe = async (root, args, ctx, info) => {
      const source = await subscribe(root, args, ctx, info);
      const gate = (ctx as Context | undefined)?.streamGate;
      return gate && isAsyncIterable(source) ? gated(source, gate) : source;
    };
    GATED.add(gatedSubscribe);
    field.subscribe = gatedSubscribe;
  }
  return schema;
}

/** `source`'s events, each once `gate()` answered true; done (and `source` closed) once it answers false. */
function gated<T>(source: AsyncIterable<T>, gate: () => Promise<boolean>): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const close = async (): Promise<IteratorResult<T>> => {
    await iterator.return?.();
    return DONE;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      const next = await iterator.next();
      if (next.done || (await gate())) return next;
      return close();
    },
    return: close,
    async throw(error) {
      await iterator.return?.();
      throw error;
    },
  };
}
