import path from "node:path";
import { parseAllowedNetworks } from "./core/support/outbound.js";
import { parseCorsOrigins } from "./server/cors.js";

/** Free space the embedded database's disk keeps by default (STORAGE_RESERVE_BYTES): a new write-ahead log segment is 16 MiB. */
export const DEFAULT_STORAGE_RESERVE_BYTES = 64 * 1024 * 1024;

/** Every environment variable the server reads, parsed once, with its default. */
export interface Config {
  port: number;
  host: string;
  /** Base of every absolute link in `urls` objects (no trailing slash). */
  publicUrl: string;
  /** Base of the links to the web app (`urls.app`). */
  appUrl: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** GRAPHQL_TRUSTED_DOCUMENTS: file of the only documents /graphql and graphql-ws run (src/graphql/trusted-documents.ts). */
  graphqlTrustedDocuments?: string;
  /** Largest `limit` a list accepts. */
  maxPageSize: number;
  defaultPageSize: number;
  /** Days a deleted space can be restored before it is removed for good. */
  spaceRetentionDays: number;
  /**
   * Domain under which sites are published as https://<organization hostname>.<sitesDomain>/<basename>
   * (SITES_DOMAIN). Unset: sites are published under PUBLIC_URL, at /sites/<hostname or id>/<basename or id>.
   */
  sitesDomain?: string;
  /** Longest wait for an OpenAPI source document, headers and body together (ms). */
  openApiFetchTimeoutMs: number;
  /** Largest OpenAPI source document accepted (bytes). */
  openApiMaxBytes: number;
  /** Clock skew tolerated on SAML assertion NotBefore / NotOnOrAfter (ms). */
  samlClockSkewMs: number;
  /** Integration event delivery and render requests: longest wait for the integration's answer (ms). */
  integrationDeliveryTimeoutMs: number;
  /** First retry delay of a failed event delivery (ms); each further retry doubles it, up to integrationRetryMaxMs. */
  integrationRetryBaseMs: number;
  integrationRetryMaxMs: number;
  /** Delivery attempts of an event before it is marked failed. */
  integrationMaxAttempts: number;
  /** On a shared database, how often the event dispatcher also looks for due deliveries (those a dead process left behind) besides being woken (ms). */
  integrationDispatchPollMs: number;
  /** How long a claimed delivery stays reserved for the process that claimed it (ms); after that another process (or a restart) retries it. */
  integrationClaimLeaseMs: number;
  /**
   * Networks (CIDRs, addresses) the server may connect to besides public unicast addresses, for
   * requests to user-chosen URLs: imports, OpenAPI sources, integration endpoints (OUTBOUND_ALLOWED_NETWORKS).
   */
  outboundAllowedNetworks: string[];
  /** Origins whose browser pages may call the API with credentials (CORS_ORIGINS); `*` lets any origin read without them. */
  corsOrigins: string[];
  /** Days integration events and their traces are kept once settled (delivered, failed or skipped); pending ones are always kept. 0 keeps them forever. */
  integrationEventRetentionDays: number;
  /** Least severe log level written (LOG_LEVEL): trace, debug, info, warn, error, fatal or silent. */
  logLevel: LogLevel;
  /** LOG_FORMAT: one JSON object per line, or `pretty` lines for people (the default on a terminal). */
  logFormat: "json" | "pretty";
  /** LOG_SQL=1: log every SQL statement Prisma sends (debug level); off by default, it costs time on every query. */
  logSql: boolean;
  /**
   * On PostgreSQL, the longest a statement of the gateway's waits for rows another session holds
   * locked (DB_LOCK_TIMEOUT_MS) and the longest it runs at all (DB_STATEMENT_TIMEOUT_MS), in ms;
   * past either the request is answered 503 with Retry-After and its connection is free again.
   * 0 sets no bound. Migrations at start are not bounded. (A transaction also ends after Prisma's
   * 5 s unless it sets its own: a 503 as well.) The gateway's own writes hold a row for
   * milliseconds: waits this long mean another session holds it, or a queue that should shed.
   */
  dbLockTimeoutMs: number;
  dbStatementTimeoutMs: number;
  /**
   * Embedded database: free bytes below which its disk takes no more writes (STORAGE_RESERVE_BYTES,
   * 64 MiB; 0: no bound): they answer 507 until space is freed, reads go on (core/db/storage-guard.ts).
   */
  storageReserveBytes: number;
  /** Bearer token `GET /metrics` requires (METRICS_TOKEN); unset, the metrics are open. */
  metricsToken?: string;
  /** Requests per minute per API token, or per client address without a token, on /v1 and /graphql (RATE_LIMIT_PER_MINUTE); 0 turns the limit off. */
  rateLimitPerMinute: number;
  /**
   * Reverse proxies in front of the gateway (TRUST_PROXY: a number of hops, `1`/`true` for one; 0,
   * off): the client address is the X-Forwarded-For entry the outermost of them wrote (see
   * server/http.ts `clientAddressOf`); with none, the connection's address.
   */
  trustProxy: number;
  /** On SIGTERM, how long requests under way may take to finish before their connections are closed (ms). */
  shutdownTimeoutMs: number;
  /** Largest request body accepted on any route but file uploads (bytes, MAX_BODY_BYTES): past it, 413 before parsing or authentication. */
  maxBodyBytes: number;
  /**
   * Most bytes of request bodies the process holds at once, all requests together (bytes,
   * MAX_BUFFERED_BODY_BYTES): a body that would pass it is answered 503 with Retry-After.
   */
  maxBufferedBodyBytes: number;
  /** Largest uploaded file (bytes, MAX_FILE_BYTES); the upload route's body may be `uploadBodyBytes(config)` long. */
  maxFileBytes: number;
  /** Deepest nesting of free-form JSON values in request bodies (objects and arrays, MAX_JSON_DEPTH). */
  maxJsonDepth: number;
  /**
   * ACCESS_CACHE_TTL_MS: how long a token or membership read stays in the in-process access cache
   * at most (core/access/access-cache.ts; writes drop their entries at once, this is a safety net); 0 turns it off.
   */
  accessCacheTtlMs: number;
  /**
   * WS_MAX_BUFFERED_BYTES: how much a graphql-ws socket may have waiting to be sent before the
   * gateway closes it as too slow (close code 4008, graphql/streams/live-streams.ts).
   */
  wsMaxBufferedBytes: number;
  /**
   * WS_PING_INTERVAL_MS: how often each graphql-ws socket is pinged; one that answered nothing
   * (no pong, no message) by its next ping is cut off (graphql/heartbeat.ts). 0 turns it off.
   */
  wsPingIntervalMs: number;
  /**
   * LIVE_SUBSCRIPTIONS_PER_TOKEN: live subscriptions (graphql-ws and SSE) one API token may hold
   * in one gateway process; the one past it is refused with a 429 error for that operation
   * (graphql/streams/live-streams.ts). 0: no cap.
   */
  liveSubscriptionsPerToken: number;
  /**
   * LIVE_STREAM_PACING: how a delivery to thousands of graphql-ws sockets shares the cores
   * (graphql/streams/pacing.ts, PACE_FROM_WRITES): `always` gives them away after every slice (for the
   * other processes that serve the same writes on the same machine: PostgreSQL, other gateways);
   * `contended` only while its thread had to wait for a core; unset (`auto`): `always` with
   * DATABASE_URL, `contended` on the embedded database (one process does all the work).
   */
  liveStreamPacing: "always" | "contended";
  /**
   * RESPONSE_CACHE: `off` turns the response cache off (benchmarks, debugging), `on` turns it on
   * in every setup; unset (`auto`) it is on, except on PostgreSQL without REDIS_URL, where other
   * gateways' writes could not drop this one's entries (src/server/response-cache.ts). With
   * REDIS_URL the entries live in Redis, shared by every gateway.
   */
  responseCache: "on" | "off" | "auto";
  /** RESPONSE_CACHE_TTL_MS: how long a cached answer is kept at most (writes drop theirs at once; a safety net); 0 turns the cache off. */
  responseCacheTtlMs: number;
  /**
   * REST_JIT: `on` (default) runs the /v1 operations compiled by graphql-jit, `off` through
   * graphql's own execution; both answer the same (test/server/rest-jit.property.test.ts compares them).
   * Read at each request.
   */
  restJit: boolean;
  /**
   * REQUEST_COALESCING: `on` (default) has identical REST GETs (same URL, same credentials) that
   * arrive together share one answer, made after all of them arrived (rest/request-coalescing.ts); `off`
   * answers each on its own. Both answer the same (test/server/coalescing.test.ts).
   */
  requestCoalescing: boolean;
  /**
   * LIST_CACHE: `on` (default) keeps the pages and counts of lists between the writes that change
   * them, on the embedded database (core/cache/list-cache.ts); `off` reads them for every page. Both
   * answer the same (test/server/list-cache.property.test.ts). Nothing is kept on PostgreSQL.
   * COUNT_CACHE, its former name (when it kept counts only), is read when LIST_CACHE is unset.
   */
  listCache: boolean;
  /**
   * QUERY_PLAN_CACHE: `on` (default) keeps Prisma's query plans by the shape of their queries
   * (core/db/query-plan-cache.ts); `off` has every query compiled anew.
   */
  queryPlanCache: boolean;
}

/** Largest body of the file upload route: the file's bytes base64-encoded, plus MAX_BODY_BYTES for the other fields. */
export function uploadBodyBytes(config: Pick<Config, "maxBodyBytes" | "maxFileBytes">): number {
  return Math.ceil(config.maxFileBytes / 3) * 4 + config.maxBodyBytes;
}

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function intFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFrom(env.PORT, 4000, "PORT");
  const host = env.HOST || "0.0.0.0";
  const publicUrl = trimSlash(env.PUBLIC_URL || `http://localhost:${port}`);
  return {
    port,
    host,
    publicUrl,
    appUrl: trimSlash(env.APP_URL || `${publicUrl}/app`),
    dataDir: path.resolve(env.DATA_DIR || "data"),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    graphqlTrustedDocuments: env.GRAPHQL_TRUSTED_DOCUMENTS || undefined,
    maxPageSize: 1000,
    defaultPageSize: intFrom(env.DEFAULT_PAGE_SIZE, 100, "DEFAULT_PAGE_SIZE"),
    spaceRetentionDays: 7,
    sitesDomain:
      env.SITES_DOMAIN?.trim()
        .replace(/^\.+|\.+$/g, "")
        .toLowerCase() || undefined,
    openApiFetchTimeoutMs: intFrom(env.OPENAPI_FETCH_TIMEOUT_MS, 10_000, "OPENAPI_FETCH_TIMEOUT_MS"),
    openApiMaxBytes: intFrom(env.OPENAPI_MAX_BYTES, 5 * 1024 * 1024, "OPENAPI_MAX_BYTES"),
    samlClockSkewMs: intFrom(env.SAML_CLOCK_SKEW_MS, 60_000, "SAML_CLOCK_SKEW_MS"),
    outboundAllowedNetworks: parseAllowedNetworks(env.OUTBOUND_ALLOWED_NETWORKS),
    corsOrigins: parseCorsOrigins(env.CORS_ORIGINS),
    maxBodyBytes: Math.max(1024, intFrom(env.MAX_BODY_BYTES, 1024 * 1024, "MAX_BODY_BYTES")),
    maxFileBytes: Math.max(1, intFrom(env.MAX_FILE_BYTES, 10 * 1024 * 1024, "MAX_FILE_BYTES")),
    maxBufferedBodyBytes: Math.max(1024, intFrom(env.MAX_BUFFERED_BODY_BYTES, 256 * 1024 * 1024, "MAX_BUFFERED_BODY_BYTES")),
    maxJsonDepth: Math.max(2, intFrom(env.MAX_JSON_DEPTH, 32, "MAX_JSON_DEPTH")),
    ...integrationDelivery(env),
    ...operations(env),
  };
}

/** Logs, metrics, rate limits and shutdown. */
export function operations(env: NodeJS.ProcessEnv) {
  const level = (env.LOG_LEVEL || "info").trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${env.LOG_LEVEL}"`);
  const format = (env.LOG_FORMAT || (process.stdout.isTTY ? "pretty" : "json")).trim().toLowerCase();
  if (format !== "json" && format !== "pretty") throw new Error(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`);
  const pacing = autoOr(env.LIVE_STREAM_PACING, "LIVE_STREAM_PACING", ["always", "contended"] as const);
  return {
    logLevel: level as LogLevel,
    logFormat: format as "json" | "pretty",
    logSql: flag(env.LOG_SQL),
    metricsToken: env.METRICS_TOKEN || undefined,
    rateLimitPerMinute: intFrom(env.RATE_LIMIT_PER_MINUTE, 1000, "RATE_LIMIT_PER_MINUTE"),
    trustProxy: proxyHops(env.TRUST_PROXY),
    shutdownTimeoutMs: intFrom(env.SHUTDOWN_TIMEOUT_MS, 10_000, "SHUTDOWN_TIMEOUT_MS"),
    accessCacheTtlMs: intFrom(env.ACCESS_CACHE_TTL_MS, 30_000, "ACCESS_CACHE_TTL_MS"),
    dbLockTimeoutMs: intFrom(env.DB_LOCK_TIMEOUT_MS, 5_000, "DB_LOCK_TIMEOUT_MS"),
    dbStatementTimeoutMs: intFrom(env.DB_STATEMENT_TIMEOUT_MS, 30_000, "DB_STATEMENT_TIMEOUT_MS"),
    storageReserveBytes: intFrom(env.STORAGE_RESERVE_BYTES, DEFAULT_STORAGE_RESERVE_BYTES, "STORAGE_RESERVE_BYTES"),
    wsMaxBufferedBytes: Math.max(1024, intFrom(env.WS_MAX_BUFFERED_BYTES, 1024 * 1024, "WS_MAX_BUFFERED_BYTES")),
    wsPingIntervalMs: intFrom(env.WS_PING_INTERVAL_MS, 30_000, "WS_PING_INTERVAL_MS"),
    liveSubscriptionsPerToken: intFrom(env.LIVE_SUBSCRIPTIONS_PER_TOKEN, 1000, "LIVE_SUBSCRIPTIONS_PER_TOKEN"),
    liveStreamPacing: pacing === "auto" ? (env.DATABASE_URL ? "always" : "contended") : pacing,
    responseCache: autoOr(env.RESPONSE_CACHE, "RESPONSE_CACHE", ["on", "off"] as const),
    responseCacheTtlMs: intFrom(env.RESPONSE_CACHE_TTL_MS, 60_000, "RESPONSE_CACHE_TTL_MS"),
    restJit: onOff(env.REST_JIT, true, "REST_JIT"),
    requestCoalescing: onOff(env.REQUEST_COALESCING, true, "REQUEST_COALESCING"),
    listCache:
      env.LIST_CACHE === undefined && env.COUNT_CACHE !== undefined
        ? onOff(env.COUNT_CACHE, true, "COUNT_CACHE")
        : onOff(env.LIST_CACHE, true, "LIST_CACHE"),
    queryPlanCache: onOff(env.QUERY_PLAN_CACHE, true, "QUERY_PLAN_CACHE"),
  };
}

/** The words a switch is turned on or off with (any case). */
const ON = /^(1|true|yes|on)$/i;
const OFF = /^(0|false|no|off)$/i;

function onOff(value: string | undefined, fallback: boolean, name: string): boolean {
  const v = (value ?? "").trim();
  if (v === "") return fallback;
  if (ON.test(v)) return true;
  if (OFF.test(v)) return false;
  throw new Error(`${name} must be on or off, got "${value}"`);
}

/**
 * A setting that is unset or `auto` (the caller decides what that means here), or one of
 * `choices` (any case; `on` and `off` also as onOff reads them); anything else is refused by name.
 */
function autoOr<T extends string>(value: string | undefined, name: string, choices: readonly T[]): T | "auto" {
  const v = (value ?? "").trim().toLowerCase();
  if (v === "" || v === "auto") return "auto";
  const word = ON.test(v) ? "on" : OFF.test(v) ? "off" : v;
  if ((choices as readonly string[]).includes(word)) return word as T;
  throw new Error(`${name} must be ${choices.join(", ")} or auto, got "${value}"`);
}

/** TRUST_PROXY: a number of proxy hops; true/yes/on is one, false/no/off or unset none. */
function proxyHops(value: string | undefined): number {
  const text = value?.trim() ?? "";
  if (/^(true|yes|on)$/i.test(text)) return 1;
  if (text === "" || /^(false|no|off)$/i.test(text)) return 0;
  return intFrom(text, 0, "TRUST_PROXY");
}

function flag(value: string | undefined): boolean {
  return value !== undefined && ON.test(value.trim());
}

function integrationDelivery(env: NodeJS.ProcessEnv) {
  const timeout = intFrom(env.INTEGRATION_DELIVERY_TIMEOUT_MS, 10_000, "INTEGRATION_DELIVERY_TIMEOUT_MS");
  return {
    integrationDeliveryTimeoutMs: timeout,
    integrationRetryBaseMs: intFrom(env.INTEGRATION_RETRY_BASE_MS, 1_000, "INTEGRATION_RETRY_BASE_MS"),
    integrationRetryMaxMs: intFrom(env.INTEGRATION_RETRY_MAX_MS, 5 * 60_000, "INTEGRATION_RETRY_MAX_MS"),
    integrationMaxAttempts: Math.max(1, intFrom(env.INTEGRATION_MAX_ATTEMPTS, 5, "INTEGRATION_MAX_ATTEMPTS")),
    integrationDispatchPollMs: Math.max(10, intFrom(env.INTEGRATION_DISPATCH_POLL_MS, 30_000, "INTEGRATION_DISPATCH_POLL_MS")),
    integrationClaimLeaseMs: intFrom(env.INTEGRATION_CLAIM_LEASE_MS, timeout + 5_000, "INTEGRATION_CLAIM_LEASE_MS"),
    integrationEventRetentionDays: intFrom(env.INTEGRATION_EVENT_RETENTION_DAYS, 30, "INTEGRATION_EVENT_RETENTION_DAYS"),
  };
}
