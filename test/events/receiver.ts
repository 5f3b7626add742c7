import http from "node:http";

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

export type Reply = { status: number; body?: unknown; delayMs?: number } | "hang";

/**
 * A local HTTP receiver (127.0.0.1) standing in for an integration's development tunnel: it records
 * every request and answers each with the next reply of `script` (the last one repeats).
 */
export async function startReceiver(script: Reply[] | ((req: Received, n: number) => Reply) = [{ status: 200 }]) {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      let json: any = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* not JSON */
      }
      const entry = { headers: req.headers, body, json, at: Date.now() };
      received.push(entry);
      const n = received.length - 1;
      for (const w of [...waiters])
        if (received.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      const reply = typeof script === "function" ? script(entry, n) : script[Math.min(n, script.length - 1)]!;
      if (reply === "hang") {
        hanging.add(res);
        return;
      }
      const send = () => {
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(reply.body === undefined ? "{}" : JSON.stringify(reply.body));
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as any).port}/hook`;
  return {
    url,
    received,
    /** Resolves once `count` requests arrived (rejects after `timeoutMs`). */
    waitFor(count: number, timeoutMs = 15_000): Promise<void> {
      if (received.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
