import http from "node:http";
import crypto from "node:crypto";
import { createYoga, type Plugin } from "graphql-yoga";
import { WebSocketServer } from "ws";
import { useServer } from "graphql-ws/use/ws";
import { GraphQLError } from "graphql";
import type { Config } from "./config.js";
import { schema } from "./schema.js";
import { routeTable } from "./rest/table.js";
import { createRestHandler, errorResponse } from "./rest/handler.js";
import { openDatabase, type Database } from "./core/db.js";
import { createPubSubFor } from "./core/pubsub.js";
import { makeUrls } from "./core/urls.js";
import { authenticateRequest, authenticationFailure, bearerToken, viewerFromToken } from "./core/auth.js";
import { makeContext, type Context, type Services } from "./core/context.js";
import { UNEXPECTED } from "./core/error-report.js";
import { useGraphLimits } from "./graphql/limits.js";
import { graphqlWsOperations } from "./graphql/ws.js";
import { docsRoutes } from "./rest/docs-page.js";
import { homeRoutes, useJsonNotFound } from "./rest/home.js";
import { createRawRouter, rawRoute, type RawRoute } from "./rest/raw-routes.js";
import { runAdminCommand } from "./cli/commands.js";
import { startMaintenance } from "./maintenance.js";
import { samlRoutes } from "./domains/sso/sso.http.js";
import { createDispatcher } from "./events/delivery.js";
import { integrationRoutes } from "./domains/integrations/integrations.http.js";
import { dashboardRoutes } from "./dashboard/dashboard.js";
import { contentBinaryRoutes } from "./domains/content/binary.js";
import type { DataDirLock } from "./core/lock.js";

export interface Gateway {
  config: Config;
  db: Database;
  services: Services;
  /** Fetch-API entry point (tests call it without a port). */
  fetch: (request: Request) => Promise<Response>;
  /** Node HTTP server with graphql-ws mounted on /graphql; not listening until `listen`. */
  httpServer: http.Server;
  listen(port?: number): Promise<number>;
  close(): Promise<void>;
}

/** Builds the gateway on an open database: GraphQL, REST, subscriptions, admin channel. */
export async function createGateway(config: Config, opts: { lockHeld?: DataDirLock; adminSecret?: string } = {}): Promise<Gateway> {
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, lockHeld: opts.lockHeld });
  const pubsub = createPubSubFor(config.redisUrl);
  const services: Services = { prisma: db.prisma, config, urls: makeUrls(config), pubsub };

  async function authenticate(header: string | null | undefined, request?: Request): Promise<Context> {
    const viewer = await viewerFromToken(db.prisma, bearerToken(header));
    if (!viewer) {
      throw new GraphQLError(authenticationFailure(header).message, { extensions: { code: 401, http: { status: 401, headers: { "www-authenticate": "Bearer" } } } });
    }
    return makeContext(services, viewer, undefined, request);
  }

  const rest = createRestHandler({
    schema,
    table: routeTable,
    publicUrl: config.publicUrl,
    context: (request, explicitNulls, allowAnonymous) => authenticateRequest(services, request, allowAnonymous ? "optional" : "required", explicitNulls),
  });

  // The admin channel of `npm run admin` (src/cli/admin.ts): hidden, it answers 404 to every
  // method but POST with the secret of this process, so it takes every method itself.
  const adminRoute: RawRoute = rawRoute({ methods: "*", path: "/_admin/command", auth: "none", handler: (_services, _params, request) => adminChannel(request) });

  // The routes that do not answer JSON through the /v1 generator: one table (src/rest/raw-routes.ts).
  const rawRoutes = createRawRouter(services, [
    ...contentBinaryRoutes,
    ...samlRoutes,
    ...dashboardRoutes,
    ...integrationRoutes,
    ...docsRoutes(() => rest.openAPIDocument()),
    ...homeRoutes(config),
    adminRoute,
  ]);
  const routing: Plugin = {
    async onRequest({ request, url, endResponse }) {
      const raw = await rawRoutes(request, url);
      if (raw) return endResponse(raw);
      if (url.pathname === "/v1" || url.pathname.startsWith("/v1/")) return endResponse(await rest.handle(request));
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

  const yoga = createYoga<{ connectionParams?: Record<string, unknown> }, Context>({
    schema,
    graphqlEndpoint: "/graphql",
    landingPage: false,
    maskedErrors: { isDev: false, errorMessage: UNEXPECTED },
    logging: "warn",
    context: async ({ request, connectionParams }) => {
      const header = (connectionParams?.authorization ?? connectionParams?.Authorization) as string | undefined;
      return authenticate(header ?? request.headers.get("authorization"), request);
    },
    plugins: [
      routing,
      useJsonNotFound(),
      useGraphLimits(),
    ],
  });

  const httpServer = http.createServer(yoga);
  // Clients (and proxies) reuse connections for longer than Node's 5 s default.
  httpServer.keepAliveTimeout = 65_000;
  httpServer.headersTimeout = 66_000;
  const wsServer = new WebSocketServer({ server: httpServer, path: "/graphql" });
  const ws = useServer(
    {
      ...graphqlWsOperations(yoga),
      onConnect: async (ctx) => {
        const header = (ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization) as string | undefined;
        const viewer = await viewerFromToken(db.prisma, bearerToken(header));
        // Refused with 4403 and the same message as HTTP (the first close wins over graphql-ws's own).
        if (!viewer) ctx.extra.socket.close(4403, authenticationFailure(header).message);
        return viewer !== null;
      },
    },
    wsServer,
  );

  const maintenance = startMaintenance(services);
  const dispatcher = createDispatcher({ prisma: db.prisma, pubsub, config, exclusive: db.kind === "pglite" });
  await dispatcher.start();

  let closed = false;
  return {
    config,
    db,
    services,
    fetch: (request) => Promise.resolve(yoga.fetch(request)),
    httpServer,
    listen(port = config.port) {
      return new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(port, config.host, () => resolve((httpServer.address() as any).port));
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      maintenance.stop();
      await dispatcher.stop();
      await ws.dispose();
      wsServer.close();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections?.();
      });
      await pubsub.close();
      await db.close();
    },
  };
}

/** Compares a presented secret with the expected one in constant time. */
function sameSecret(given: string | null, expected: string): boolean {
  const digest = (value: string) => crypto.createHash("sha256").update(value).digest();
  return given !== null && crypto.timingSafeEqual(digest(given), digest(expected));
}
