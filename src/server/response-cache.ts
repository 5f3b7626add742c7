import crypto from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ExecutionResult } from "graphql";
import { commandClient } from "../core/messaging/redis-clients.js";
import type { Plugin } from "graphql-yoga";
import { createInMemoryCache, useResponseCache, type Cache } from "@graphql-yoga/plugin-response-cache";
import type { Config } from "../config.js";
import { writtenTables, type Database } from "../core/db/db.js";
import type { AccessCache } from "../core/access/access-cache.js";
import { changesAccess } from "../core/access/access-cache.js";
import { currentReads, noteStatement, trackRequest, writeTags, type RequestReads } from "../core/cache/request-reads.js";
import { log } from "../core/logger.js";
import { credentialsOf } from "../core/access/auth.js";
import { WriteClock } from "../core/cache/write-clock.js";
import { READS, type KeptAnswer } from "../rest/handler.js";

/**
 * The response cache: answers of GraphQL queries (`/graphql`, through
 * `@graphql-yoga/plugin-response-cache`) and of REST GETs (`/v1`), kept per caller and dropped
 * by every write that may change them, in this process or, with REDIS_URL, in every gateway
 * (the entries live in Redis: see `redisBackend`).
 *
 * - Per caller: an entry's key holds the caller's credentials (a hash of the Authorization
 *   header, and of the visitor token published content reads), so an answer is served only to
 *   the token it was made for; the token decides the user and their SSO state.
 * - What an answer depends on: the rows the statements of its request read (core/cache/request-reads.ts
 *   `readTags`, core/cache/row-keys.ts). A statement that looked rows up by a key column (`id`, or a
 *   parent's id such as a comment's `spaceId`), with string values, tags the entry with those
 *   rows (`Space.id=spc_…`, `Comment.spaceId=spc_…`); one that read a table by any other predicate
 *   (a search, a list by a non-key column, raw SQL) tags it with "any row" of the table
 *   (`Comment.*`). Every entry is also tagged with each table it read, and with `*`.
 * - Invalidation: the database layer reports every committed write with the rows it wrote
 *   (core/db/db.ts `onCommittedWrite`: from the statement's RETURNING, its VALUES or its WHERE on a
 *   key, with the counters the triggers changed on the parents those rows name); before the write
 *   answers, every entry tagged with one of those rows, or with "any row" of a table it wrote,
 *   is dropped (`writeTags`): a new comment in a space drops that space's answers and its
 *   comment lists and counts, and leaves another space's in place. Where the rows are not known
 *   for certain — raw SQL, a write by another predicate, a key column changed from a value not
 *   read, a trigger's parent not named, a foreign-key cascade — every entry that read the table
 *   (or that filtered it on that column) is dropped.
 *   A write that changes access (a role, a revoked token, SSO: core/access/access-cache.ts
 *   `changesAccess`), or one another process announces for the access cache, drops every entry:
 *   answers made with the access cache's answers did not read those tables.
 * - Races: a request notes the write counter when it starts (per process), or the write sequence
 *   number when it first looks its entry up, before it reads anything (Redis); an answer that a
 *   write since then may have changed (its tables in process, its tags in Redis) is not kept, so an
 *   answer read from the old rows cannot outlive a write, be the write a request's or background
 *   work's (an OpenAPI spec's processing). In Redis a write's invalidation and a store are each one
 *   atomic script: an entry stored while a write drops its tags keeps its own tags.
 * - Never kept: mutations, subscriptions, answers with errors, REST answers other than 200,
 *   answers of requests that wrote or fetched from outside the database (core/support/outbound.ts),
 *   introspection; entries expire after RESPONSE_CACHE_TTL_MS in any case (a safety net).
 * - RESPONSE_CACHE=off turns it off (benchmarks, debugging). Unset, it is on, except with
 *   DATABASE_URL and no REDIS_URL: other gateways on the same database could not tell this one
 *   what they wrote.
 * - Redis unreachable: lookups miss and nothing is kept. A write whose invalidation could not
 *   reach Redis stops this process from serving entries for a TTL (one of them may be stale).
 */

/** Entries kept in process when there is no Redis; past it the least recently used go. */
const MAX_MEMORY_ENTRIES = 10_000;
/**
 * Tags given to entries in process before the store is renewed (emptied): the in-memory store
 * keeps an index entry per tag ever used (row tags: one per row read), so it is started afresh
 * once that many were given — a cache emptied, never a stale answer.
 */
const MAX_MEMORY_TAGS = 500_000;
/**
 * Bytes of answers kept in process before the store is renewed, and the largest answer kept at
 * all (in process or in Redis): the entry count alone would let 10,000 answers of a megabyte each
 * (a page's markdown, a revision's reusable contents) fill the heap. A larger answer is computed
 * afresh each time, as with the cache off.
 */
const MAX_MEMORY_BYTES = 128 * 1024 * 1024;
const MAX_ENTRY_BYTES = 512 * 1024;

/** The size of an answer as kept (UTF-16 code units of its JSON: about its bytes in the heap, half of them). */
function keptSize(value: unknown): number {
  if (isKeptRest(value)) return value.body.length + 512;
  return JSON.stringify(value)?.length ?? 0;
}

const isKeptRest = (value: unknown): value is KeptRest => (value as Partial<KeptRest> | null)?.rest === true;

/** A REST answer as kept: status 200, its headers (the ETag included) and its body. */
interface KeptRest extends KeptAnswer {
  rest: true;
}

/** Where entries live: this process's memory or Redis. */
interface Backend {
  /** Called as a request starts (notes the write counters, in process). */
  begin(reads: RequestReads): void;
  /** The entry under `key`, or null; on a miss the request notes the write counters (Redis). */
  get(key: string): Promise<unknown>;
  /** Keeps `value` under `key`, tagged with what the request read, unless one of its tables was written since it started. */
  set(key: string, value: unknown, reads: RequestReads, ttl: number): Promise<void>;
  /** Tables were written: their counters up, the entries with one of `tags` dropped. */
  written(tables: readonly string[], tags: readonly string[]): Promise<void>;
  /** Resolves once the store can be used (Redis connected). */
  ready?: Promise<void>;
  close(): void;
}

export interface ResponseCache {
  enabled: boolean;
  /** The yoga plugin (GraphQL answers). */
  plugins: Plugin[];
  /** REST GET (and HEAD) answers, by URL and caller: the kept answer, or null. */
  lookupRest(request: Request, url: URL): Promise<KeptAnswer | null>;
  /** Keeps a REST GET answer (status 200) when its request allows it. */
  keepRest(request: Request, url: URL, answer: KeptAnswer): Promise<void>;
  /** Wraps the node handler: every request's reads are tracked. */
  track<A extends unknown[]>(
    handler: (req: IncomingMessage, res: ServerResponse, ...rest: A) => unknown,
  ): (req: IncomingMessage, res: ServerResponse, ...rest: A) => void;
  /** Drops every entry (every process's, with Redis). */
  forget(): Promise<void>;
  stats: { hits: number; misses: number };
  /** Resolves once the store is connected (Redis), or after `waitMs`. */
  ready(waitMs: number): Promise<void>;
  close(): void;
}

/** Whether the cache is on for a configuration (see the module's comment). */
export function responseCacheOn(config: Pick<Config, "responseCache" | "responseCacheTtlMs" | "databaseUrl" | "redisUrl">): boolean {
  if (config.responseCache === "off" || config.responseCacheTtlMs === 0) return false;
  if (config.responseCache === "on") return true;
  return !config.databaseUrl || !!config.redisUrl;
}

const sha256 = (text: string) => crypto.createHash("sha256").update(text).digest("base64url");

/**
 * What besides the operation an answer may depend on, as a hash: the caller's credentials (the API
 * token, the visitor token of published content) and the URL's query (visitor parameters).
 */
function sessionOf(request: Request): string {
  const query = request.url.indexOf("?");
  return sha256(`${credentialsOf(request)}\u0000${query < 0 ? "" : request.url.slice(query)}`);
}

export function createResponseCache(opts: { config: Config; db: Database; accessCache: AccessCache; scope: string }): ResponseCache {
  const { config } = opts;
  const enabled = responseCacheOn(config);
  const stats = { hits: 0, misses: 0 };
  const ttl = config.responseCacheTtlMs;
  // Gateways on other databases may share the Redis: their keys differ.
  const prefix = `rc:${sha256(opts.scope).slice(0, 12)}:`;
  const backend: Backend | undefined = enabled
    ? config.redisUrl
      ? redisBackend(config.redisUrl, prefix, ttl)
      : memoryBackend(prefix)
    : undefined;

  if (backend) {
    // Reads tag the requests under way; a write makes its own request's answer one not to keep.
    opts.db.observeStatements((_seconds, _ok, sql, args) => noteStatement(sql, writtenTables(sql).length > 0, args));
    opts.db.onCommittedWrite(async (writes, rows) => {
      const tables = [...new Set([...writes.keys(), ...rows.keys()])];
      const tags = writeTags(rows);
      await backend.written(changesAccess(writes) ? [...tables, "*"] : tables, changesAccess(writes) ? [...tags, "*"] : tags);
    });
    // Another process (a gateway, `npm run admin`) changed access, or Redis was away: drop everything.
    opts.accessCache.onClear(() => void backend.written(["*"], ["*"]).catch(() => undefined));
  }

  const lookup = async (key: string): Promise<unknown> => {
    const reads = currentReads();
    if (!backend || !reads) return null;
    const value = await backend.get(key);
    // GraphQL looks an entry up twice on a miss (before the context, and as it executes): counted once.
    if (reads.lookedUp !== key) {
      if (value) stats.hits++;
      else stats.misses++;
    }
    reads.lookedUp = key;
    return value;
  };

  const cache: Cache = {
    get: (key) => (key.startsWith(`${prefix}g:`) ? (lookup(key) as Promise<ExecutionResult | null>) : null),
    set: (key, value, _entities, ttl_) => {
      const reads = currentReads();
      if (!backend || !reads || reads.uncacheable || !key.startsWith(`${prefix}g:`)) return;
      return backend.set(key, value, reads, ttl_);
    },
    // Answers are dropped by the writes the database reports, never by what a mutation answered.
    invalidate: () => undefined,
  };

  const plugins: Plugin[] = backend
    ? [
        useResponseCache({
          cache,
          ttl,
          session: (request) => sessionOf(request),
          enabled: (_request, context) => !!currentReads() && !(context as { rest?: boolean } | undefined)?.rest,
          invalidateViaMutation: false,
          includeExtensionMetadata: false,
          // Without its text (a document that did not resolve) a request gets a key of its own: never shared.
          buildResponseCacheKey: ({ documentString, operationName, variableValues, sessionId }) =>
            documentString
              ? `${prefix}g:${sha256(`${documentString}\u0000${operationName ?? ""}\u0000${JSON.stringify(variableValues ?? {})}\u0000${sessionId ?? ""}`)}`
              : `${prefix}n:${crypto.randomUUID()}`,
        }),
      ]
    : [];

  const restKey = (request: Request, url: URL) => `${prefix}r:${sha256(`${url.pathname}${url.search}\u0000${sessionOf(request)}`)}`;

  return {
    enabled,
    plugins,
    stats,
    async lookupRest(request, url) {
      if (!backend || !READS.has(request.method)) return null;
      const kept = await lookup(restKey(request, url));
      return isKeptRest(kept) ? kept : null;
    },
    async keepRest(request, url, answer) {
      const reads = currentReads();
      if (!backend || !reads || reads.uncacheable || !READS.has(request.method)) return;
      const kept: KeptRest = { rest: true, headers: answer.headers, body: answer.body };
      await backend.set(restKey(request, url), kept, reads, ttl).catch(() => undefined);
    },
    track(handler) {
      if (!backend) return handler;
      return (req, res, ...rest) => {
        // Event streams (subscriptions over SSE) last long and are never kept: not tracked.
        if (String(req.headers.accept ?? "").includes("text/event-stream")) return void handler(req, res, ...rest);
        const { done } = trackRequest((reads) => {
          backend?.begin(reads);
          return handler(req, res, ...rest);
        });
        res.once("close", done);
      };
    },
    forget: async () => backend?.written(["*"], ["*"]),
    ready: (waitMs) =>
      Promise.race([backend?.ready ?? Promise.resolve(), new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref())]),
    close: () => backend?.close(),
  };
}

/**
 * The tags of an entry (core/cache/request-reads.ts `readTags`), and `*` (every entry), as the stores'
 * entity names: `<prefix>table:<tag>`, a set of entries each (no id, so that no set holds every
 * entry; the name holds a `:`, so that the Redis store drops it without scanning for its ids).
 */
const tagNames = (tag: string, tags: Iterable<string>) => [...tags].map((t) => `${tag}:${t}`);
const entities = (tag: string, tags: Iterable<string>) => tagNames(tag, tags).map((typename) => ({ typename }));
function tagsOf(tag: string, reads: RequestReads) {
  return entities(tag, [...reads.tags, "*"]);
}

/** Entries in this process (@envelop/response-cache's LRU). */
function memoryBackend(prefix: string): Backend {
  let store = createInMemoryCache({ max: MAX_MEMORY_ENTRIES });
  let tagged = 0;
  let bytes = 0;
  const tag = `${prefix}table`;
  const clock = new WriteClock();
  return {
    begin(reads) {
      reads.versions = clock.mark();
    },
    async get(key) {
      return (await store.get(key)) ?? null;
    },
    async set(key, value, reads, ttl) {
      if (clock.writtenSince([...reads.tables, "*"], reads.versions as number)) return;
      // A REST answer's body is kept encoded: each answer from it is written as it is.
      if (isKeptRest(value) && typeof value.body === "string") value = { ...value, body: Buffer.from(value.body) };
      const size = keptSize(value);
      if (size > MAX_ENTRY_BYTES) return;
      tagged += reads.tags.size + 1;
      bytes += size;
      if (tagged > MAX_MEMORY_TAGS || bytes > MAX_MEMORY_BYTES) {
        store = createInMemoryCache({ max: MAX_MEMORY_ENTRIES });
        tagged = reads.tags.size + 1;
        bytes = size;
      }
      await store.set(key, value as ExecutionResult, tagsOf(tag, reads), ttl);
    },
    async written(tables, tags) {
      clock.written(tables);
      await store.invalidate(entities(tag, tags));
    },
    close() {},
  };
}

/**
 * Keeps an entry unless one of its tags was written since its request looked it up, atomically:
 * KEYS = the entry, then each tag's write mark, then each tag's set of entries; ARGV = the write
 * sequence number seen at the lookup, the entry, its TTL (ms), the number of tags.
 */
const KEEP_SCRIPT = `
local n = tonumber(ARGV[4])
local started = tonumber(ARGV[1])
for i = 2, n + 1 do
  local written = redis.call('GET', KEYS[i])
  if written and tonumber(written) > started then return 0 end
end
local ttl = tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
for i = n + 2, 2 * n + 1 do
  redis.call('SADD', KEYS[i], KEYS[1])
  if redis.call('PTTL', KEYS[i]) < ttl + 1000 then redis.call('PEXPIRE', KEYS[i], ttl + 1000) end
end
return 1`;

/**
 * A write: the next sequence number, recorded as the write mark of each of its tags, and every
 * entry of those tags dropped, atomically: KEYS = the sequence, each tag's write mark, each tag's
 * set of entries; ARGV = the number of tags, how long a mark is kept (ms).
 */
const WRITE_SCRIPT = `
local n = tonumber(ARGV[1])
local seq = redis.call('INCR', KEYS[1])
for i = 2, n + 1 do redis.call('SET', KEYS[i], seq, 'PX', tonumber(ARGV[2])) end
for i = n + 2, 2 * n + 1 do
  local entries = redis.call('SMEMBERS', KEYS[i])
  for j = 1, #entries, 1000 do redis.call('DEL', unpack(entries, j, math.min(j + 999, #entries))) end
  redis.call('DEL', KEYS[i])
end
return seq`;

/** The write sequence number a request saw at its first lookup, and when (Redis backend). */
interface Seen {
  seq: number;
  at: number;
}

/**
 * Entries in Redis, shared by every gateway on the database: each entry under its key, each tag a
 * set of the entries that carry it. A write and a store are each one Lua script, so neither sees
 * the other half done: a write drops the entries of its tags and marks each tag with the write's
 * sequence number; a store is refused when one of its tags was marked after the sequence number
 * its request saw when it looked the entry up (before it read anything), so an answer read before
 * a write cannot be kept after it, and an entry kept during a write's invalidation either is
 * dropped by it or was read after it. (@envelop/response-cache-redis's store reads a tag's set and
 * deletes it in two steps: an entry kept between them lost its tags and outlived later writes.)
 */
function redisBackend(url: string, prefix: string, ttl: number): Backend {
  const redis = commandClient(url);
  const seqKey = `${prefix}seq`;
  const mark = (t: string) => `${prefix}written:${t}`;
  const members = (t: string) => `${prefix}table:${t}`;
  // A mark outlives every request that may still keep an answer: those that took longer keep none.
  const markTtl = ttl + 10_000;
  // While Redis is unreachable nothing is looked up or kept. After an invalidation that failed,
  // entries are not used until those kept before it expired (one of them may be stale).
  let unusableUntil = 0;
  let down = false;
  redis.on("error", (err) => {
    if (!down) log.warn(`Response cache: Redis unreachable (${err.message}); answers are not cached until it is back.`);
    down = true;
  });
  redis.on("ready", () => (down = false));
  const usable = () => !down && redis.status === "ready" && Date.now() >= unusableUntil;
  const nextReady = () => new Promise<void>((resolve) => redis.once("ready", () => resolve()));
  const ready = nextReady();

  return {
    ready,
    begin() {},
    async get(key) {
      if (!usable()) return null;
      try {
        const [[e1, value], [e2, seq]] = (await redis.pipeline().get(key).get(seqKey).exec()) as [
          [Error | null, string | null],
          [Error | null, string | null],
        ];
        if (e1 || e2) throw e1 ?? e2;
        const reads = currentReads();
        if (reads && reads.versions === undefined) reads.versions = { seq: Number(seq ?? 0), at: Date.now() } satisfies Seen;
        return value ? JSON.parse(value) : null;
      } catch {
        return null;
      }
    },
    async set(key, value, reads, ttl_) {
      const seen = reads.versions as Seen | undefined;
      if (!seen || !usable() || Date.now() - seen.at > ttl) return;
      const tags = [...reads.tags, "*"];
      const kept = JSON.stringify(value);
      if (kept.length > MAX_ENTRY_BYTES) return;
      try {
        await redis.eval(KEEP_SCRIPT, 1 + 2 * tags.length, key, ...tags.map(mark), ...tags.map(members), seen.seq, kept, ttl_, tags.length);
      } catch {
        await redis.del(key).catch(() => undefined);
      }
    },
    async written(_tables, tags) {
      try {
        // A write while the client connects (at start) waits for it a moment rather than fail.
        if (redis.status !== "ready" && !down)
          await Promise.race([nextReady(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
        await redis.eval(WRITE_SCRIPT, 1 + 2 * tags.length, seqKey, ...tags.map(mark), ...tags.map(members), tags.length, markTtl);
      } catch (err) {
        unusableUntil = Date.now() + ttl;
        log.warn(
          `Response cache: a write's invalidation did not reach Redis (${(err as Error).message}); cached answers are not served for ${ttl} ms.`,
        );
      }
    },
    close: () => redis.disconnect(),
  };
}
