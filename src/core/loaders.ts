import DataLoader from "dataloader";
import type { Context } from "./context.js";

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
