import DataLoader from "dataloader";
import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { Context } from "../context.js";

/**
 * Declares a per-request DataLoader next to the domain code that uses it:
 * `const spaceById = defineLoader(async (ids, ctx) => …)` then `spaceById(ctx).load(id)`.
 * Each request gets its own instance (created on first use), so caches never cross callers.
 */
export function defineLoader<K, V>(
  batch: (keys: readonly K[], ctx: Context) => Promise<V[]>,
  options: { cacheKey?: (key: K) => unknown } = {},
) {
  const slot = Symbol("loader");
  return (ctx: Context): DataLoader<K, V> => {
    let loader = ctx.loaders.get(slot) as DataLoader<K, V> | undefined;
    if (!loader) {
      loader = new DataLoader<K, V>((keys) => batch(keys, ctx), { cacheKeyFn: options.cacheKey as any });
      ctx.loaders.set(slot, loader);
    }
    return loader;
  };
}

/**
 * A per-request loader of what the database holds by key, the same whoever asks: rows by id, or
 * facts of a row (never anything that depends on the caller, which `batch` does not receive).
 * Each request keeps its own loader and cache, as with `defineLoader`; outside a transaction,
 * its batches are read together with those of the other requests under way (`readTogether`):
 * requests that arrive together share one statement instead of sending one each. A mutation reads
 * alone, at once (`useWritesReadAlone`).
 */
export function defineSharedLoader<K, V>(
  batch: (keys: readonly K[], prisma: PrismaClient) => Promise<V[]>,
  options: { cacheKey?: (key: K) => unknown } = {},
) {
  const together = readTogether(batch, options);
  return defineLoader<K, V>(
    (keys, ctx) => (ctx.writing ? batch(keys, ctx.prisma) : (together(ctx.prisma).loadMany(keys) as Promise<V[]>)),
    options,
  );
}

/**
 * Marks the context of a mutation (`Context.writing`): its rows by key are read alone, at once.
 * Writers that read a row together would all read the same version of it and all but one would
 * then lose the compare-and-set they write with (content/revisions.ts): ten concurrent edits of
 * one page went from 207–288 to 147–171 a second when their reads were shared.
 */
export function useWritesReadAlone(): Plugin {
  return {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation === "mutation")
        (args.contextValue as unknown as Context).writing = true;
    },
  };
}

/**
 * Process-wide counts of `readTogether` and `readOnce` (for /metrics and tests): statements sent by
 * `readTogether`, its batches of callers (a request's loader) read in a statement with another
 * caller's, and reads answered by another caller's identical read (`readOnce`).
 */
export const sharedReads = { statements: 0, joined: 0, identical: 0 };

/** Largest batch of keys read together in one statement. */
const MAX_SHARED_BATCH = 1_000;

/**
 * A process-wide loader per Prisma client that reads the keys its callers ask for in one turn of
 * the event loop together (dispatched once the I/O callbacks of the turn have run: the requests
 * that arrived with it have asked too), without caching anything: each read is as fresh as the
 * statement, sent after every caller asked. A key asked by several callers is read once; each
 * caller after the first receives its own copy of the row (callers treat rows as read-only, a copy
 * keeps one from seeing another's mistake). A transaction's client reads alone, at once: it must
 * see its own writes and hold its locks no longer than needed.
 */
export function readTogether<K, V>(
  batch: (keys: readonly K[], prisma: PrismaClient) => Promise<V[]>,
  options: { cacheKey?: (key: K) => unknown } = {},
): (prisma: PrismaClient) => DataLoader<K, V> {
  const keyOf = options.cacheKey ?? ((key: K) => key);
  const loaders = new WeakMap<PrismaClient, DataLoader<K, V>>();
  return (prisma) => {
    let loader = loaders.get(prisma);
    if (loader) return loader;
    const shared = typeof (prisma as { $transaction?: unknown }).$transaction === "function";
    let callers = 0;
    loader = new DataLoader<K, V>(
      async (keys) => {
        const joined = callers;
        callers = 0;
        const at = new Map<unknown, number>();
        const distinct: K[] = [];
        for (const key of keys) {
          const id = keyOf(key);
          if (!at.has(id)) at.set(id, distinct.push(key) - 1);
        }
        const values = await batch(distinct, prisma);
        sharedReads.statements++;
        if (joined > 1) sharedReads.joined += joined;
        const given = new Set<number>();
        return keys.map((key) => {
          const i = at.get(keyOf(key))!;
          const value = values[i]!;
          if (!given.has(i)) return (given.add(i), value);
          return copyOf(value);
        });
      },
      {
        cache: false,
        maxBatchSize: MAX_SHARED_BATCH,
        ...(shared ? { batchScheduleFn: (dispatch: () => void) => void setImmediate(dispatch) } : {}),
      },
    );
    const load = loader.loadMany.bind(loader);
    loader.loadMany = (keys) => (callers++, load(keys));
    loaders.set(prisma, loader);
    return loader;
  };
}

/**
 * A reader's own copy of what another read too: its arrays and plain objects (rows, JSON values,
 * included relations) copied all the way down; dates and bytes, which nothing changes, shared.
 */
export function copyOf<V>(value: V): V {
  if (Array.isArray(value)) return value.map(copyOf) as V;
  if (!value || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copyOf((value as Record<string, unknown>)[key]);
    // A JSON value's own "__proto__" stays an own key (an assignment would set the copy's prototype).
    if (key === "__proto__") Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as V;
}

/** What `readOnce` reads from: a Prisma model (`ctx.prisma.space`), whose reads are told apart by their arguments. */
export interface ModelReads<T> {
  findMany(args: object): Promise<T[]>;
  count(args: object): Promise<number>;
  /** The model's fields by name, each with its `typeName` (a Prisma model delegate's `fields`). */
  readonly fields?: object;
}

/** A date in a read's key is told from a string that reads alike (a JSON.stringify replacer). */
export function typedValue(this: Record<string, unknown>, key: string, value: unknown): unknown {
  return this[key] instanceof Date ? { date: value } : value;
}

/** Identical reads waiting to be sent, per model of each client, by action and arguments. */
const waiting = new WeakMap<object, Map<string, Promise<unknown>>>();
/** Longest arguments (as JSON) of a read that others may join; a longer one is sent alone. */
const MAX_READ_KEY = 4_096;

/**
 * An identical read (the same action on the same model of the same client, with equal arguments)
 * asked by several requests in one turn of the event loop is sent once, after the I/O callbacks of
 * the turn have run, and each of them receives the answer (a copy each after the first). Nothing
 * is kept: once the statement is sent, the next identical read sends its own — each is as fresh as
 * a statement sent after it was asked. Lists and counts that many callers ask at once (after a
 * write made their cached answers stale) cost one statement.
 */
export function readOnce<T>(from: ModelReads<T>, action: "findMany", args: object): Promise<T[]>;
export function readOnce<T>(from: ModelReads<T>, action: "count", args: object): Promise<number>;
export function readOnce(from: ModelReads<unknown>, action: "findMany" | "count", args: object): Promise<unknown> {
  const send = (): Promise<unknown> => from[action](args);
  let key: string;
  try {
    key = `${action}\u0000${JSON.stringify(args, typedValue)}`;
  } catch {
    return send();
  }
  if (key.length > MAX_READ_KEY) return send();
  let reads = waiting.get(from);
  if (!reads) waiting.set(from, (reads = new Map()));
  const sent = reads.get(key);
  if (sent) {
    sharedReads.identical++;
    return sent.then(copyOf);
  }
  const read = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    reads.delete(key);
    return send();
  });
  reads.set(key, read);
  return read;
}

/** Orders rows found for a batch of keys back into key order (null where absent). */
export function byKeys<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): (V | null)[] {
  const map = new Map<K, V>();
  for (const row of rows) map.set(keyOf(row), row);
  return keys.map((k) => map.get(k) ?? null);
}

/** Turns `groupBy` count rows into counts in key order (0 where absent). */
export function countsByKeys<K>(keys: readonly K[], rows: { key: K; count: number }[]): number[] {
  const map = new Map<K, number>();
  for (const row of rows) map.set(row.key, row.count);
  return keys.map((k) => map.get(k) ?? 0);
}

/**
 * `run`, shared by the callers that arrive while it is under way: they all get that run's
 * result (or error), and the next caller after it settled starts a new one. For work anybody may
 * ask for at any rate and whose result is the same for all of them (health checks, the metrics
 * text): a flood of callers costs one run at a time, not one each.
 */
export function sharedWhileRunning<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => (running ??= run().finally(() => (running = undefined)));
}
