import crypto from "node:crypto";
import fs from "node:fs";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { usePrometheus } from "@graphql-yoga/plugin-prometheus";
import type { Plugin } from "graphql-yoga";
import { errorResponse } from "../rest/handler.js";
import { sharedWhileRunning } from "../core/graph/loaders.js";

/**
 * The gateway's Prometheus metrics, one registry per gateway (tests run several in one process),
 * served as text at `GET /metrics` (behind METRICS_TOKEN when it is set):
 *
 *   http_request_duration_seconds{method,route,status}   every HTTP answer, by route pattern
 *   graphql_envelop_request_duration{operationType,operationName}, graphql_envelop_phase_execute,
 *   graphql_envelop_request, graphql_envelop_error_result   GraphQL operations (@graphql-yoga/plugin-prometheus)
 *   db_statement_duration_seconds{outcome}               every SQL statement Prisma sends (its _count is the number)
 *   websocket_connections, graphql_subscriptions          open graphql-ws sockets; live subscriptions (graphql-ws and SSE)
 *   websocket_heartbeat_timeouts_total                    sockets cut off for leaving a ping unanswered (src/graphql/heartbeat.ts)
 *   live_stream_groups, live_stream_subscriptions, live_stream_executions_total, live_stream_deliveries_total,
 *   live_stream_writes_total, live_stream_states_skipped_total, live_stream_slow_consumers_total,
 *   live_stream_access_grades_total                      shared graphql-ws streams (src/graphql/streams/)
 *   live_stream_pass_duration_seconds, live_stream_pause_seconds_total   how long each delivery pass over a
 *                                                         stream's sockets took; how long passes paused (pacing)
 *   integration_events_pending                            the delivery backlog (read at scrape time)
 *   integration_event_deliveries_total{outcome}           delivered, retry, failed, skipped
 *   rate_limited_requests_total                           answers 429
 *   pubsub_publish_failures_total, pubsub_outages_total   Redis pub/sub publishes lost, outages (src/core/messaging/pubsub.ts)
 *   access_cache_hits_total, access_cache_misses_total    tokens and memberships from the access cache, or read
 *   query_plan_cache_hits_total, query_plan_cache_misses_total   Prisma plans kept by shape, or compiled (src/core/db/query-plan-cache.ts)
 *   shared_reads_statements_total, shared_reads_joined_total, shared_reads_identical_total   reads of the requests
 *                                                         under way sent together (src/core/graph/loaders.ts)
 *   process_*, nodejs_*                                   prom-client's process metrics (see processMetrics)
 */
export interface Metrics {
  registry: Registry;
  /**
   * The registry as Prometheus text. Scrapes that arrive while it renders (a few ms: every series
   * of every histogram) share that rendering.
   */
  text(): Promise<string>;
  httpDuration: Histogram<"method" | "route" | "status">;
  dbStatements: Histogram<"outcome">;
  subscriptions: Gauge;
  deliveries: Counter<"outcome">;
  /** Delivery passes of live streams: from a pass's start to its last write (src/graphql/streams/live-streams.ts). */
  streamPasses: Histogram;
  rateLimited: Counter;
  /** Adds a gauge read at scrape time (open sockets, backlog). */
  gauge(name: string, help: string, read: () => number | Promise<number>): void;
  /** Adds a counter read at scrape time from a running total kept elsewhere. */
  counterFrom(name: string, help: string, read: () => number): void;
  /** The envelop plugins: GraphQL operation durations and live subscriptions. */
  plugins(): Plugin[];
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  processMetrics(registry);
  const httpDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time from a request's arrival to the end of its answer, by method, route pattern and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const dbStatements = new Histogram({
    name: "db_statement_duration_seconds",
    help: "SQL statements sent by Prisma to the database and their durations (outcome ok or error).",
    labelNames: ["outcome"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const subscriptions = new Gauge({
    name: "graphql_subscriptions",
    help: "GraphQL subscriptions running (graphql-ws and SSE).",
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "integration_event_deliveries_total",
    help: "Integration event delivery attempts settled, by outcome: delivered, retry (will be tried again), failed (gave up), skipped (not delivered: no development tunnel).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const streamPasses = new Histogram({
    name: "live_stream_pass_duration_seconds",
    help: "Delivery passes over a live stream's graphql-ws sockets (each written to once with every result it was behind): time from the pass's start to its last write.",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: "rate_limited_requests_total",
    help: "Requests answered 429 by the rate limit.",
    registers: [registry],
  });

  const subscriptionsPlugin: Plugin = {
    onSubscribe() {
      return {
        onSubscribeResult({ result }) {
          if (!result || !(Symbol.asyncIterator in (result as object))) return;
          subscriptions.inc();
          let ended = false;
          return {
            onEnd() {
              if (ended) return;
              ended = true;
              subscriptions.dec();
            },
          };
        },
      };
    },
  };

  return {
    registry,
    text: sharedWhileRunning(() => registry.metrics()),
    httpDuration,
    dbStatements,
    subscriptions,
    deliveries,
    streamPasses,
    rateLimited,
    gauge(name, help, read) {
      new Gauge({
        name,
        help,
        registers: [registry],
        async collect() {
          this.set(await read());
        },
      });
    },
    counterFrom(name, help, read) {
      let reported = 0;
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          const total = read();
          if (total > reported) this.inc(total - reported);
          reported = total;
        },
      });
    },
    plugins: () => [
      usePrometheus({
        registry,
        endpoint: false,
        metrics: {
          graphql_envelop_deprecated_field: false,
          graphql_envelop_request: true,
          graphql_envelop_request_duration: true,
          graphql_envelop_request_time_summary: false,
          graphql_envelop_phase_parse: false,
          graphql_envelop_phase_validate: false,
          graphql_envelop_phase_context: false,
          graphql_envelop_error_result: true,
          graphql_envelop_phase_execute: true,
          graphql_envelop_phase_subscribe: false,
          graphql_envelop_schema_change: false,
          graphql_yoga_http_duration: false,
        },
      }),
      subscriptionsPlugin,
    ],
  };
}

/**
 * prom-client's default metrics that list every open file or handle of the process at each
 * scrape on the event loop: with thousands of WebSockets open, a scrape held every request and
 * live-stream delivery for the time of reading /proc/self/fd and listing the handles.
 */
const LISTING_METRICS = new Set(["process_open_fds", "nodejs_active_handles", "nodejs_active_handles_total"]);

/**
 * prom-client's process metrics (CPU, memory, heap spaces, event-loop lag, GC, active resources by
 * type…), but those of LISTING_METRICS: `process_open_fds` is read off the event loop (an
 * asynchronous directory read), and the active handles are counted by `nodejs_active_resources`
 * (handles and requests, by type; one array of type names).
 */
function processMetrics(registry: Registry): void {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  for (const { name } of defaults.getMetricsAsArray())
    if (!LISTING_METRICS.has(name)) registry.registerMetric(defaults.getSingleMetric(name)!);
  if (process.platform !== "linux") return;
  new Gauge({
    name: "process_open_fds",
    help: "Number of open file descriptors.",
    registers: [registry],
    async collect() {
      // One of them is the directory being read.
      const open = await fs.promises.readdir("/proc/self/fd").then(
        (names) => names.length - 1,
        () => undefined,
      );
      if (open !== undefined) this.set(open);
    },
  });
}

/** `GET /metrics`: the registry as Prometheus text; with METRICS_TOKEN set, only for `Authorization: Bearer <that token>`. */
export async function metricsAnswer(metrics: Metrics, token: string | undefined, request: Request): Promise<Response> {
  if (token && !sameSecret(/^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? null, token)) {
    return errorResponse(
      { error: { code: 401, message: "The metrics require 'Authorization: Bearer <METRICS_TOKEN>'." } },
      { "www-authenticate": "Bearer" },
    );
  }
  return new Response(await metrics.text(), { headers: { "content-type": metrics.registry.contentType, "cache-control": "no-store" } });
}

function sameSecret(given: string | null, expected: string): boolean {
  const digest = (value: string) => crypto.createHash("sha256").update(value).digest();
  return given !== null && crypto.timingSafeEqual(digest(given), digest(expected));
}
