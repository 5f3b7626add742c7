import http from "node:http";
import crypto from "node:crypto";
import { createYoga, type Plugin } from "graphql-yoga";
import { useNotAcceptableExplained } from "./graphql/media-types.js";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import { GraphQLError, type ExecutionResult } from "graphql";
import type { Config } from "./config.js";
import { completeSchema, schema } from "./schema.js";
import { rawRouteTable, routeTable } from "./rest/table.js";
import { allowHeader, createRestHandler, errorResponse, noOperation } from "./rest/handler.js";
import { planStats } from "./core/db/query-plan-cache.js";
import { sharedReads, useWritesReadAlone } from "./core/graph/loaders.js";
import { databaseOptions, openDatabase, type Database } from "./core/db/db.js";
import { awaitedPublisher, createPubSubFor, pubsubFailures } from "./core/messaging/pubsub.js";
import { makeUrls } from "./core/urls.js";
import { authenticateRequest, authenticationFailure, bearerToken, useSiteTokensReadOnly, viewerFromToken } from "./core/access/auth.js";
import { makeContext, type Context, type Services } from "./core/context.js";
import { UNEXPECTED, maskGraphQLError, useBoundedEchoes, yogaLogger } from "./core/error-report.js";
import { AccessCache, accessScope } from "./core/access/access-cache.js";
import { useGraphLimits } from "./graphql/limits.js";
import { useInputChecks } from "./graphql/input.js";
import { asErrors, guardClientFaults, forSocket, graphqlWsOperations } from "./graphql/ws.js";
import { startHeartbeat } from "./graphql/heartbeat.js";
import { LiveStreams } from "./graphql/streams/live-streams.js";
import { graphiql } from "./graphql/graphiql.js";
import { useDeferStream } from "@graphql-yoga/plugin-defer-stream";
import { useCompiledExecution } from "./graphql/jit.js";
import { loadTrustedDocuments, useTrustedDocuments } from "./graphql/trusted-documents.js";
import { docsRoutes } from "./rest/docs-page.js";
import { homeRoutes, noRoute, useJsonNotFound } from "./rest/home.js";
import { GRAPHQL_PATH, isGraphQLPath } from "./core/graphql-path.js";
import { isRestPath } from "./rest/prefix.js";
import { createRawRouter, rawRoute, type RawRoute } from "./rest/raw-routes.js";
import { isSitesHost, publishedHostRoutes } from "./published/routes.js";
import { bodyLimits, withBodyLimit } from "./rest/body-limit.js";
import { runAdminCommand } from "./cli/commands.js";
import { startMaintenance } from "./maintenance.js";
import { SubscriptionQuota, useLiveToken } from "./core/access/live-token.js";
import { createDispatcher } from "./events/delivery.js";
import type { DataDirLock } from "./core/db/lock.js";
import { commandClient } from "./core/messaging/redis-clients.js";
import { log, type Logger } from "./core/logger.js";
import { createHttpFront } from "./server/http.js";
import { withCompression } from "./server/compression.js";
import { createMetrics, metricsAnswer } from "./server/metrics.js";
import { healthRoutes } from "./server/health.js";
import { createRouteNamer, useRequestNotes } from "./server/requests.js";
import { notesOfNodeRequest } from "./core/support/request-notes.js";
import { createRateLimit, limitExceeded } from "./server/rate-limit.js";
import { createResponseCache, type ResponseCache } from "./server/response-cache.js";
import { ListCache } from "./core/cache/list-cache.js";
import { corsPolicy } from "./server/cors.js";

/** How long a start waits for Redis before serving without it. */
const REDIS_START_WAIT_MS = 5_000;

export interface Gateway {
  config: Config;
  db: Database;
  services: Services;
  /** The response cache (tests drop its entries to compare cached answers with uncached ones). */
  responseCache: ResponseCache;
  /** List pages and counts kept between writes (LIST_CACHE; null on PostgreSQL or when off): tests drop them to compare with fresh reads. */
  listCache: ListCache | null;
  /** REST GETs coalesced (REQUEST_COALESCING): answers made for several identical GETs, and GETs answered by another's. */
  coalesced: { flights: number; joined: number };
  /** Runs the periodic upkeep now (src/maintenance.ts): purges, and on the embedded database VACUUM (ANALYZE) of each table. */
  maintain(): Promise<unknown>;
  /** Node HTTP server with graphql-ws mounted on /graphql; not listening until `listen`. */
  httpServer: http.Server;
  listen(port?: number): Promise<number>;
  close(): Promise<void>;
}

/** Builds the gateway on an open database: GraphQL, REST, subscriptions, admin channel. */
export interface GatewayOptions {
  lockHeld?: DataDirLock;
  adminSecret?: string;
  /** Where the request log goes (the process's logger by default). */
  logger?: Logger;
  /** Told what start-up is doing (npm start prints it). */
  progress?: (message: string) => void;
  /** The database, already being opened (npm start opens it while the modules load); else opened here. */
  database?: Promise<Database>;
}

export async function createGateway(config: Config, opts: GatewayOptions = {}): Promise<Gateway> {
  // Read before the database opens: a bad file stops the start with nothing to clean up.
  const trusted = config.graphqlTrustedDocuments ? loadTrustedDocuments(config.graphqlTrustedDocuments) : undefined;
  const metrics = createMetrics();
  const db = await (opts.database ?? openDatabase({ ...databaseOptions(config), lockHeld: opts.lockHeld, progress: opts.progress }));
  db.observeStatements((seconds, ok) => metrics.dbStatements.labels(ok ? "ok" : "error").observe(seconds));
  // Redis for the shared rate-limit counters and the readiness check; commands fail at once
  // while it is unreachable (the limiter then counts in memory) instead of queueing.
  const redis = config.redisUrl ? commandClient(config.redisUrl) : undefined;
  let redisDown = false;
  redis?.on("error", (err) => {
    if (!redisDown) log.warn(`Redis (rate limits, readiness): ${err.message}`);
    redisDown = true;
  });
  redis?.on("ready", () => (redisDown = false));
  // Shared counters from the first request: the gateway listens once this client is connected
  // (or, with Redis unreachable at start, after a bounded wait; the limiter then counts in memory).
  const redisConnected = redis
    ? new Promise<void>((resolve) => {
        redis.once("ready", () => resolve());
        setTimeout(resolve, REDIS_START_WAIT_MS).unref();
      })
    : Promise.resolve();
  let stopping = false;
  const pubsub = createPubSubFor(config.redisUrl);
  const accessCache = new AccessCache(config.accessCacheTtlMs);
  const accessPublisher = config.redisUrl ? awaitedPublisher(config.redisUrl) : undefined;
  accessCache.connect(pubsub, accessScope(config), accessPublisher?.publish);
  accessCache.watch(db);
  metrics.counterFrom(
    "access_cache_hits_total",
    "Tokens and memberships answered from the in-process access cache.",
    () => accessCache.stats.hits,
  );
  metrics.counterFrom(
    "access_cache_misses_total",
    "Tokens and memberships read from the database (not cached, expired, or the cache is off).",
    () => accessCache.stats.misses,
  );
  metrics.counterFrom(
    "query_plan_cache_hits_total",
    "Prisma queries whose plan came from the plans kept by shape (process-wide).",
    () => planStats.hits,
  );
  metrics.counterFrom(
    "query_plan_cache_misses_total",
    "Prisma queries compiled (no plan kept for their shape and values, or the cache is off: then 0).",
    () => planStats.misses,
  );
  metrics.counterFrom(
    "shared_reads_statements_total",
    "Statements reading rows by key for the requests under way together (process-wide).",
    () => sharedReads.statements,
  );
  metrics.counterFrom(
    "shared_reads_joined_total",
    "Requests' reads by key that shared their statement with another request's.",
    () => sharedReads.joined,
  );
  metrics.counterFrom(
    "shared_reads_identical_total",
    "List pages and counts answered by an identical read another request asked for in the same turn.",
    () => sharedReads.identical,
  );
  const listCache = config.listCache ? ListCache.attach(db) : null;
  metrics.counterFrom(
    "page_cache_hits_total",
    "List pages answered from the pages kept between writes (LIST_CACHE, embedded database).",
    () => listCache?.stats.page.hits ?? 0,
  );
  metrics.counterFrom(
    "page_cache_misses_total",
    "List pages read from the database while the list cache is on.",
    () => listCache?.stats.page.misses ?? 0,
  );
  metrics.counterFrom(
    "count_cache_hits_total",
    "List counts answered from the counts kept between writes (LIST_CACHE, embedded database).",
    () => listCache?.stats.count.hits ?? 0,
  );
  metrics.counterFrom(
    "count_cache_misses_total",
    "List counts read from the database while the list cache is on.",
    () => listCache?.stats.count.misses ?? 0,
  );
  const responseCache = createResponseCache({ config, db, accessCache, scope: accessScope(config) });
  metrics.counterFrom(
    "response_cache_hits_total",
    "GraphQL and REST answers served from the response cache.",
    () => responseCache.stats.hits,
  );
  metrics.counterFrom(
    "response_cache_misses_total",
    "Response cache look-ups that found no entry (the answer was made).",
    () => responseCache.stats.misses,
  );
  const services: Services = { prisma: db.prisma, config, urls: makeUrls(config), pubsub, accessCache };

  async function authenticate(header: unknown, request?: Request): Promise<Context> {
    const viewer = await viewerFromToken(services, bearerToken(header));
    if (!viewer) {
      throw new GraphQLError(authenticationFailure(header).message, {
        extensions: { code: 401, http: { status: 401, headers: { "www-authenticate": "Bearer" } } },
      });
    }
    return makeContext(services, viewer, undefined, request);
  }

  const rest = createRestHandler({
    schema: completeSchema,
    table: routeTable,
    publicUrl: config.publicUrl,
    bodyLimit: bodyLimits(config, routeTable),
    maxJsonDepth: config.maxJsonDepth,
    // Through yoga's envelop: its plugins (the response cache's among them) see /v1 operations too.
    execute: (args) => yoga.getEnveloped(args.contextValue as any).execute(args) as any,
    cache: responseCache,
    coalesce: config.requestCoalescing,
    context: (request, explicitNulls, allowAnonymous) =>
      authenticateRequest(services, request, allowAnonymous ? "optional" : "required", explicitNulls),
  });

  metrics.counterFrom(
    "coalesced_requests_total",
    "REST GETs answered by the answer of an identical GET that arrived with them (REQUEST_COALESCING).",
    () => rest.coalesced?.joined ?? 0,
  );

  // The admin channel of `npm run admin` (src/cli/admin.ts): hidden, it answers 404 to every
  // method but POST with the secret of this process, so it takes every method itself.
  const adminRoute: RawRoute = rawRoute({
    methods: "*",
    path: "/_admin/command",
    auth: "none",
    handler: (_services, _params, request) => adminChannel(request),
  });

  // The routes that do not answer JSON through the /v1 generator: one table (src/rest/raw-routes.ts).
  const rawRouteList: RawRoute[] = [
    ...healthRoutes({ prisma: db.prisma, redis, stopping: () => stopping }),
    rawRoute({
      methods: ["GET"],
      path: "/metrics",
      auth: "none",
      handler: (_services, _params, request) => metricsAnswer(metrics, config.metricsToken, request),
    }),
    ...rawRouteTable,
    ...docsRoutes(rest.openAPIAnswer),
    ...homeRoutes(config),
    adminRoute,
  ];
  const rawRoutes = createRawRouter(services, rawRouteList);
  // A SITES_DOMAIN subdomain is the reader of its organization's sites at every path (published/routes.ts).
  const sitesHostRoutes = createRawRouter(services, publishedHostRoutes);
  const routing: Plugin = {
    async onRequest({ request, url, endResponse }) {
      if (isSitesHost(config, url)) {
        const site = await sitesHostRoutes(request, url);
        if (site) return endResponse(site);
      }
      if (graphiql.wanted(request, url)) return endResponse(await graphiql.answer(request));
      const raw = await rawRoutes(request, url);
      if (raw) return endResponse(raw);
      if (isRestPath(url.pathname)) return endResponse(await rest.handle(request, url));
      // yoga would run GraphQL at any URL that ends with its endpoint (`/x/graphql`, `/?a=/graphql`),
      // outside the rate limit and the route names: it runs at the endpoint alone.
      if (!isGraphQLPath(url.pathname)) return endResponse(noRoute(request.method, url.pathname));
    },
    // OPTIONS is answered for every path by yoga's CORS (a preflight or not) before routing; where
    // routes are, its answer names their methods (RFC 9110 9.3.7) and a preflight allows only
    // those; where none is, it is the 404 any other method gets there.
    onResponse({ request, response, setResponse }) {
      if (request.method !== "OPTIONS") return;
      const { pathname } = new URL(request.url);
      const v1 = isRestPath(pathname);
      // GraphQL over HTTP: GET and POST, as yoga's own 405 says.
      const methods = isGraphQLPath(pathname) ? null : v1 ? rest.methodsOf(pathname) : [...(rawRoutes.methodsOf(pathname) ?? [])];
      if (methods?.length === 0) return setResponse(v1 ? noOperation(request.method, pathname) : noRoute(request.method, pathname));
      const allow = methods ? allowHeader(methods) : "GET, POST, OPTIONS";
      response.headers.set("allow", allow);
      if (response.headers.has("access-control-allow-methods")) response.headers.set("access-control-allow-methods", allow);
    },
  };

  async function adminChannel(request: Request): Promise<Response> {
    if (request.method !== "POST" || !opts.adminSecret || !sameSecret(request.headers.get("x-admin-secret"), opts.adminSecret)) {
      return errorResponse({ error: { code: 404, message: "Not found." } });
    }
    try {
      const result = await runAdminCommand(db.prisma, await request.json());
      return Response.json(result);
    } catch (err) {
      return errorResponse({ error: { code: 400, message: (err as Error).message } });
    }
  }

  // Live subscriptions per API token (graphql-ws and SSE), LIVE_SUBSCRIPTIONS_PER_TOKEN; as many graphql-ws connections.
  const subscriptionQuota = new SubscriptionQuota(config.liveSubscriptionsPerToken);
  const socketQuota = new SubscriptionQuota(config.liveSubscriptionsPerToken);
  // RATE_LIMIT_PER_MINUTE per token, and per client address for requests without one and for tokens that fail.
  const rateLimit = createRateLimit({
    perMinute: config.rateLimitPerMinute,
    redis,
    scope: accessScope(config),
    onLimited: () => metrics.rateLimited.inc(),
    knownLive: (tokenHash) => accessCache.holdsToken(tokenHash),
    routes: new Set(rawRouteList.filter((route) => route.rateLimited).map((route) => route.path)),
  });
  const yoga = createYoga<{ connectionParams?: Record<string, unknown> }, Context>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    cors: corsPolicy(config.corsOrigins),
    landingPage: false,
    // GraphiQL is answered by `routing` (graphql/graphiql.ts), rendered and encoded once.
    graphiql: false,
    // Health is /healthz and /readyz (src/server/health.ts). Yoga's own check answers every URL
    // that ends with its endpoint; no URL it sees ends with a space.
    healthCheckEndpoint: " ",
    maskedErrors: { isDev: false, errorMessage: UNEXPECTED, maskError: maskGraphQLError },
    logging: yogaLogger(),
    context: async ({ request, connectionParams }) => {
      const header = connectionParams?.authorization ?? connectionParams?.Authorization;
      return authenticate(header ?? request.headers.get("authorization"), request);
    },
    // Bodies are bounded and read whole before they get here (rest/body-limit.ts `withBodyLimit`,
    // which every HTTP request goes through): yoga's own bound would pipe each body once more through
    // a stream (an AbortController and its DOMException per request: a tenth of a cached POST).
    maxRequestBodySize: false,
    plugins: [
      useRequestNotes(createRouteNamer(rawRouteList, routeTable)),
      rateLimit.plugin,
      ...metrics.plugins(),
      routing,
      useLiveToken(subscriptionQuota),
      useWritesReadAlone(),
      useSiteTokensReadOnly(),
      useJsonNotFound(),
      useNotAcceptableExplained(),
      useInputChecks(config.maxJsonDepth),
      useBoundedEchoes(),
      useGraphLimits(),
      useDeferStream(),
      ...(trusted ? [useTrustedDocuments(trusted)] : []),
      // /v1 operations (built once per route by the server) run compiled; client documents are not compiled.
      useCompiledExecution((args) => config.restJit && !!(args.contextValue as Context).rest),
      // Last: a kept answer is looked up once the document is the one that will run.
      ...responseCache.plugins,
    ],
  });

  // Every body is read within its bound before the request goes on (rest/body-limit.ts).
  const app = withBodyLimit(yoga, {
    limitFor: bodyLimits(config, routeTable),
    lingerBytes: config.maxBodyBytes,
    lingerMs: 2_000,
    maxBufferedBytes: config.maxBufferedBodyBytes,
  });
  const front = createHttpFront({
    app: withCompression(responseCache.track(app)),
    logger: opts.logger ?? log,
    metrics,
    trustProxy: config.trustProxy,
  });
  const httpServer = http.createServer((req, res) => front.handle(req, res));
  // Clients (and proxies) reuse connections for longer than Node's 5 s default.
  httpServer.keepAliveTimeout = 65_000;
  httpServer.headersTimeout = 66_000;
  // No compression: live streams send each event's frames, encoded once, to every socket as they are (graphql/streams/frames.ts).
  // A message is bounded as a request body is (MAX_BODY_BYTES; ws's own bound is 100 MiB): past it, the socket is closed with 1009.
  const wsServer = new WebSocketServer({
    server: httpServer,
    path: GRAPHQL_PATH,
    perMessageDeflate: false,
    maxPayload: config.maxBodyBytes,
  });
  wsServer.on("connection", (socket, req) => {
    guardClientFaults(socket);
    front.webSocket(socket, req);
  });
  // A socket whose peer vanished without closing is cut off once it leaves a ping unanswered.
  const heartbeat = startHeartbeat(wsServer, config.wsPingIntervalMs);
  // Subscriptions share one execution per event among the sockets that would get the same result.
  const streams = new LiveStreams({
    accessCache,
    maxBufferedBytes: config.wsMaxBufferedBytes,
    quota: subscriptionQuota,
    serialize: (result: ExecutionResult) =>
      JSON.stringify(
        result.errors ? { ...result, errors: result.errors.map((e) => (e instanceof GraphQLError ? forSocket(e).toJSON() : e)) } : result,
      ),
    fault: (err) => ({ errors: asErrors(err) }),
    // Requests under way are answered before the next slice of a delivery.
    whenIdle: (maxMs) => front.whenIdle(maxMs),
    passed: (ms) => metrics.streamPasses.observe(ms / 1000),
    pacing: config.liveStreamPacing,
  });
  const ws = useServer(
    {
      ...graphqlWsOperations(yoga, trusted, streams),
      onConnect: async (ctx) => {
        const header = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const token = bearerToken(header);
        // An address whose tokens failed too often has its next ones refused unread, as over HTTP (4429).
        const address = notesOfNodeRequest(ctx.extra.request)?.clientAddress ?? "local";
        // Nothing reads the upgrade request after this: the connection does not keep it (its headers, its parser state).
        (ctx.extra as { request?: unknown }).request = undefined;
        const wait = token ? await rateLimit.tokenWait(address, token) : 0;
        if (wait > 0) {
          ctx.extra.socket.close(4429, limitExceeded(wait));
          return false;
        }
        const viewer = await viewerFromToken(services, token);
        // Refused with 4403 and the same message as HTTP (the first close wins over graphql-ws's own).
        if (!viewer) {
          if (token) rateLimit.tokenRefused(address);
          ctx.extra.socket.close(4403, authenticationFailure(header).message);
          return false;
        }
        // Each connection holds a file descriptor and memory: a token holds as many as it may hold subscriptions.
        const release = socketQuota.acquire(viewer.tokenId);
        if (!release) {
          ctx.extra.socket.close(
            4429,
            `This API token holds ${socketQuota.max} graphql-ws connections already (LIVE_SUBSCRIPTIONS_PER_TOKEN)`,
          );
          return false;
        }
        ctx.extra.socket.once("close", release);
        return true;
      },
    },
    wsServer,
  );

  const maintenance = startMaintenance(services, db);
  const dispatcher = createDispatcher({
    prisma: db.prisma,
    pubsub,
    config,
    exclusive: db.kind === "pglite",
    onOutcome: (outcome) => metrics.deliveries.labels(outcome).inc(),
  });
  metrics.gauge("websocket_connections", "graphql-ws connections open.", () => wsServer.clients.size);
  metrics.counterFrom(
    "websocket_heartbeat_timeouts_total",
    "graphql-ws sockets cut off for leaving a ping unanswered (WS_PING_INTERVAL_MS).",
    () => heartbeat.stats.timeouts,
  );
  metrics.gauge(
    "live_stream_groups",
    "Shared graphql-ws subscription streams open (one execution per event each).",
    () => streams.size().groups,
  );
  metrics.gauge("live_stream_subscriptions", "graphql-ws subscriptions in shared streams.", () => streams.size().subscriptions);
  metrics.counterFrom(
    "live_stream_executions_total",
    "Subscription events executed (once per shared stream, whatever its number of sockets).",
    () => streams.stats.executions,
  );
  metrics.counterFrom("live_stream_deliveries_total", "Subscription results sent to graphql-ws sockets.", () => streams.stats.deliveries);
  metrics.counterFrom(
    "live_stream_writes_total",
    "Network writes to graphql-ws sockets: each carries every subscription result its socket was behind.",
    () => streams.stats.writes,
  );
  metrics.counterFrom(
    "live_stream_states_skipped_total",
    "Results of state streams (spaceUpdated) not sent to a socket that was behind, because a newer one was sent in their place.",
    () => streams.stats.skipped,
  );
  metrics.counterFrom(
    "live_stream_access_grades_total",
    "Access grades computed for new graphql-ws subscriptions (one for the subscriptions of a viewer that arrive together).",
    () => streams.stats.accessGrades,
  );
  metrics.counterFrom(
    "live_stream_pause_seconds_total",
    "Time delivery passes over large streams paused, leaving the cores to other processes (LIVE_STREAM_PACING; src/graphql/streams/pacing.ts).",
    () => streams.stats.pausedMs / 1000,
  );
  metrics.counterFrom(
    "live_stream_slow_consumers_total",
    "graphql-ws sockets closed for falling behind (close code 4008).",
    () => streams.stats.slowConsumers,
  );
  metrics.counterFrom(
    "pubsub_publish_failures_total",
    "Redis pub/sub publishes that did not reach Redis (the live notification was dropped; the write itself committed).",
    () => pubsubFailures.publish,
  );
  metrics.counterFrom("pubsub_outages_total", "Times the Redis pub/sub became unreachable.", () => pubsubFailures.outages);
  metrics.gauge("integration_events_pending", "Integration events waiting for delivery (the backlog).", () =>
    db.prisma.integrationEvent.count({ where: { status: "pending" } }),
  );
  await dispatcher.start();
  await redisConnected;
  await responseCache.ready(REDIS_START_WAIT_MS);

  let closed = false;
  return {
    config,
    db,
    services,
    responseCache,
    listCache,
    coalesced: rest.coalesced ?? { flights: 0, joined: 0 },
    maintain: () => maintenance.run(),
    httpServer,
    listen(port = config.port) {
      return new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(port, config.host, () => resolve((httpServer.address() as any).port));
      });
    },
    /**
     * Shuts down in order: stop accepting connections (and /readyz answers 503), let requests
     * under way finish (at most SHUTDOWN_TIMEOUT_MS), close WebSockets with 1001 (going away),
     * stop background work, close what is left (SSE streams), then pub/sub and the database.
     */
    async close() {
      if (closed) return;
      closed = true;
      stopping = true;
      const serverClosed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      httpServer.closeIdleConnections();
      const unfinished = await front.drain(config.shutdownTimeoutMs);
      if (unfinished)
        log.warn(`Shutdown: ${unfinished} requests still running after ${config.shutdownTimeoutMs} ms; closing their connections`);
      heartbeat.stop();
      const wsClosed = Promise.resolve(ws.dispose()).catch(() => undefined);
      streams.close();
      // A peer that does not answer the close handshake is cut off after a moment.
      await Promise.race([wsClosed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
      for (const socket of wsServer.clients) socket.terminate();
      maintenance.stop();
      await dispatcher.stop();
      httpServer.closeAllConnections();
      await serverClosed;
      accessCache.close();
      responseCache.close();
      accessPublisher?.close();
      await pubsub.close();
      redis?.disconnect();
      await db.close();
    },
  };
}

/** Compares a presented secret with the expected one in constant time. */
function sameSecret(given: string | null, expected: string): boolean {
  const digest = (value: string) => crypto.createHash("sha256").update(value).digest();
  return given !== null && crypto.timingSafeEqual(digest(given), digest(expected));
}
