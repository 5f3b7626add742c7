import type { PrismaClient } from "../generated/prisma/client.js";
import type { Config } from "../config.js";
import type { Viewer } from "./auth.js";
import type { Urls } from "./urls.js";
import type { PubSub } from "./pubsub.js";

/** What every resolver receives. Built once per request (or per graphql-ws operation). */
export interface Context {
  prisma: PrismaClient;
  config: Config;
  urls: Urls;
  pubsub: PubSub;
  /** The authenticated caller; every operation requires one. */
  viewer: Viewer;
  /** Per-request DataLoaders, created on first use (see core/loaders.ts). */
  loaders: Map<symbol, unknown>;
  /**
   * Arguments a REST body sent as explicit `null` (sofa-api drops nulls from variables);
   * `argsWithNulls` merges them back so "null clears the value" works on /v1 as on /graphql.
   */
  explicitNulls: Set<string>;
}

export interface Services {
  prisma: PrismaClient;
  config: Config;
  urls: Urls;
  pubsub: PubSub;
}

export function makeContext(services: Services, viewer: Viewer, explicitNulls: Set<string> = new Set()): Context {
  return { ...services, viewer, loaders: new Map(), explicitNulls };
}

/**
 * The arguments a resolver received, with explicit REST nulls restored:
 * a key present with null means "clear it", an absent key means "leave it unchanged".
 */
export function argsWithNulls<T extends Record<string, unknown>>(ctx: Context, args: T): T {
  if (ctx.explicitNulls.size === 0) return args;
  const out: Record<string, unknown> = { ...args };
  for (const key of ctx.explicitNulls) if (out[key] === undefined) out[key] = null;
  return out as T;
}
