import crypto from "node:crypto";
import net from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { requestScope, type Logger } from "../core/logger.js";
import { attachNotes, notesOfNodeRequest, type RequestNotes } from "../core/support/request-notes.js";
import type { Metrics } from "./metrics.js";

/**
 * What every HTTP request goes through before the gateway's handler (yoga):
 *
 * - a request id: `X-Request-Id` as sent when it is a plain id (letters, digits, `-_.:`, at most
 *   128), else a new UUID; echoed as `X-Request-Id` in the answer, and on every log line written
 *   while the request is handled;
 * - one log line when the answer ends: reqId, method, route pattern, path (without
 *   the query string, which may hold share keys), status, durationMs, viewer (the user id, never
 *   the token), operation (the GraphQL operation name, or the graph field of a /v1 route).
 *   5xx are logged at error level, health probes and metrics scrapes at debug, the rest at info;
 * - the `http_request_duration_seconds` histogram, by method, route pattern and status;
 * - the count of requests under way, which shutdown waits for (`drain`) and background work
 *   (live-stream deliveries) gives way to (`whenIdle`).
 */
export interface HttpFront {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /**
   * From now on every answer closes its connection; resolves when the requests under way have
   * finished, or after `timeoutMs`, with how many were still running. Streams (SSE) are not waited for.
   */
  drain(timeoutMs: number): Promise<number>;
  /**
   * Null when no request is under way (streams (SSE) do not count); else a promise that resolves
   * true once none is, or false after `maxMs` with some still under way. Background work of this
   * process waits for it between its slices, so that requests are answered first without starving
   * that work under constant load.
   */
  whenIdle(maxMs: number): Promise<boolean> | null;
  /** Logs a WebSocket (graphql-ws) when it closes: one line, like a request's, with its close code. */
  webSocket(socket: { once(event: "close", listener: (code: number) => void): unknown }, req: IncomingMessage): void;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;
const QUIET_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);

/** Characters of a request's path a log line keeps (a path may be as long as the header bound: 16 KB). */
const LOGGED_PATH_CHARS = 512;

/** The path of a request target, without its query, cut to LOGGED_PATH_CHARS with the length it had. */
function loggedPath(target: string): string {
  const query = target.indexOf("?");
  const path = query < 0 ? target : target.slice(0, query);
  return path.length <= LOGGED_PATH_CHARS ? path : `${path.slice(0, LOGGED_PATH_CHARS)}… (${path.length} characters)`;
}

/**
 * Who is calling, for rate limits and logs: the connection's address, or behind `hops` trusted
 * reverse proxies the X-Forwarded-For entry the outermost of them wrote — `hops` from the right,
 * each proxy appending the address it was called from. Entries further left are whatever the
 * client sent, and never used (one made up per request would have its own allowance). An entry
 * that is not an address (a proxy that writes something else) leaves the connection's address.
 */
export function clientAddressOf(socketAddress: string | undefined, forwardedFor: string | string[] | undefined, hops: number): string {
  if (hops > 0 && forwardedFor !== undefined) {
    const entries = String(forwardedFor)
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean);
    const written = entries.length ? addressOf(entries[Math.max(0, entries.length - hops)]!) : null;
    if (written) return written;
  }
  return socketAddress || "unknown";
}

/** The IP address of an X-Forwarded-For entry (a port or IPv6 brackets around it dropped), or null. */
function addressOf(entry: string): string | null {
  const address = /^\[([^\]]+)\](?::\d+)?$/.exec(entry)?.[1] ?? /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry)?.[1] ?? entry;
  return net.isIP(address) ? address : null;
}

export function createHttpFront(opts: {
  app: (req: IncomingMessage, res: ServerResponse) => unknown;
  logger: Logger;
  metrics: Metrics;
  /** Trusted reverse proxies in front of the gateway (config `trustProxy`). */
  trustProxy: number;
}): HttpFront {
  const { metrics } = opts;
  const running = new Set<ServerResponse>();
  let draining = false;
  let drained: (() => void) | undefined;
  let idle: ((idleNow: boolean) => void)[] = [];

  const line = (req: IncomingMessage, res: ServerResponse) => {
    const notes = notesOfNodeRequest(req)!;
    return {
      method: req.method,
      route: notes.route,
      path: loggedPath(req.url ?? ""),
      status: res.statusCode,
      durationMs: Math.round((performance.now() - notes.start) * 10) / 10,
      ...(notes.viewer ? { viewer: notes.viewer } : {}),
      ...(notes.operation ? { operation: notes.operation } : {}),
      remoteAddress: notes.clientAddress,
      ...(res.writableFinished ? {} : { aborted: true }),
    };
  };
  /** The request's line, at error level for a 5xx, debug for probes and scrapes, else info; not built when that level is off. */
  const logLine = (req: IncomingMessage, res: ServerResponse, notes: RequestNotes) => {
    const level = res.statusCode >= 500 ? "error" : QUIET_ROUTES.has(notes.route) ? "debug" : "info";
    if (!opts.logger.isLevelEnabled(level)) return;
    opts.logger[level]({ reqId: notes.id, ...line(req, res) }, `${req.method} ${notes.route} ${res.statusCode}`);
  };

  function finished(req: IncomingMessage, res: ServerResponse) {
    running.delete(res);
    const notes = notesOfNodeRequest(req)!;
    logLine(req, res, notes);
    metrics.httpDuration.labels(req.method ?? "", notes.route, String(res.statusCode)).observe((performance.now() - notes.start) / 1000);
    if ((draining || idle.length) && waiting() === 0) {
      if (draining) drained?.();
      const resolve = idle;
      idle = [];
      for (const r of resolve) r(true);
    }
  }

  const waiting = () => {
    let count = 0;
    for (const res of running) if (!String(res.getHeader("content-type") ?? "").startsWith("text/event-stream")) count++;
    return count;
  };

  const notesFor = (req: IncomingMessage): RequestNotes => {
    const sent = req.headers["x-request-id"];
    const id = typeof sent === "string" && REQUEST_ID.test(sent) ? sent : crypto.randomUUID();
    return {
      id,
      route: "*",
      clientAddress: clientAddressOf(req.socket.remoteAddress, req.headers["x-forwarded-for"], opts.trustProxy),
      start: performance.now(),
    };
  };

  return {
    handle(req, res) {
      const notes = notesFor(req);
      const id = notes.id;
      attachNotes(req, notes);
      res.setHeader("x-request-id", id);
      if (draining) res.setHeader("connection", "close");
      running.add(res);
      res.once("close", () => finished(req, res));
      requestScope.run({ reqId: id }, () => opts.app(req, res));
    },
    webSocket(socket, req) {
      const notes = notesFor(req);
      // A generated id is a chain of the pieces it was joined from (crypto.randomUUID's, about 500
      // bytes of heap): each socket keeps its notes for as long as it lasts, so they keep a flat copy.
      notes.id = Buffer.from(notes.id, "latin1").toString("latin1");
      attachNotes(req, notes);
      // What the closing line says, read now: the upgrade request is not kept for as long as the socket lasts.
      const path = (req.url ?? "").split("?")[0];
      const method = req.method;
      socket.once("close", (code) => {
        const durationMs = Math.round(performance.now() - notes.start);
        opts.logger.info(
          { reqId: notes.id, method, route: path, path, status: 101, durationMs, closeCode: code, remoteAddress: notes.clientAddress },
          `WebSocket ${path} closed (${code})`,
        );
      });
    },
    whenIdle(maxMs) {
      if (waiting() === 0) return null;
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(done, maxMs, false);
        function done(idleNow: boolean) {
          clearTimeout(timer);
          idle = idle.filter((r) => r !== done);
          resolve(idleNow);
        }
        idle.push(done);
      });
    },
    drain(timeoutMs) {
      draining = true;
      if (waiting() === 0) return Promise.resolve(0);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(waiting()), timeoutMs);
        drained = () => {
          clearTimeout(timer);
          resolve(0);
        };
      });
    },
  };
}
