import type { WebSocket, WebSocketServer } from "ws";

/**
 * WebSocket heartbeat: every open socket of `server` is sent a ping (a control frame, which
 * browsers and WebSocket libraries answer by themselves) once every `intervalMs`; a socket that
 * sent nothing since its last ping (no pong, no message) by its next turn is cut off (terminated:
 * the peer is gone, there is no close handshake to wait for; it closes with 1006 and its
 * subscriptions end). Without it, a dashboard whose network vanished (a laptop closed, a NAT
 * or proxy that forgot the connection) would hold its socket, its subscriptions, its memory and its
 * place under LIVE_SUBSCRIPTIONS_PER_TOKEN for as long as the process runs: a socket nothing is
 * sent to never learns its peer is gone.
 *
 * The pings are spread over the interval, in ticks of TICK_MS, a few sockets each (10,000
 * sockets every 30 s: 34 a tick), never all at once: the process's requests and deliveries wait
 * for nothing longer than a tick's few writes. A socket opened during a round is first pinged in
 * the next, so a peer gone silent is cut off within two intervals.
 */
export interface Heartbeat {
  /** Sockets cut off for not answering (websocket_heartbeat_timeouts_total). */
  readonly stats: { timeouts: number };
  stop(): void;
}

/** How often a slice of the sockets is pinged, in ms. */
const TICK_MS = 100;

/** Sockets pinged and silent since. */
const silent = new WeakSet<WebSocket>();
/** Sockets that answer (a pong or any message) are alive: one listener for them all, no closure per socket. */
function answered(this: WebSocket): void {
  silent.delete(this);
}

export function startHeartbeat(server: WebSocketServer, intervalMs: number): Heartbeat {
  const stats = { timeouts: 0 };
  if (intervalMs <= 0) return { stats, stop() {} };
  server.on("connection", (socket) => {
    socket.on("pong", answered);
    socket.on("message", answered);
  });
  /** This round's sockets not yet pinged, last first; a round starts once an interval after the last one started. */
  let round: WebSocket[] = [];
  let roundStart = -Infinity;
  /** Sockets pinged each tick: the round's sockets over the ticks of one interval. */
  let perTick = 0;
  const tick = Math.min(TICK_MS, intervalMs);
  const timer = setInterval(() => {
    const now = performance.now();
    if (round.length === 0 && now - roundStart >= intervalMs) {
      roundStart = now;
      round = [...server.clients].reverse();
      perTick = Math.ceil((round.length * tick) / intervalMs);
    }
    for (let i = 0; i < perTick && round.length > 0; i++) {
      const socket = round.pop()!;
      if (socket.readyState !== socket.OPEN) continue;
      if (silent.has(socket)) {
        stats.timeouts++;
        socket.terminate();
        continue;
      }
      silent.add(socket);
      socket.ping();
    }
  }, tick);
  timer.unref();
  return { stats, stop: () => clearInterval(timer) };
}
