// Worker thread of the subscription fan-out benchmark: holds the graphql-ws subscribers on its own
// event loop, so the gateway's loop only serves them. Reports arrival times by event id.
import { parentPort, workerData } from "node:worker_threads";
import WebSocket from "ws";
import { createClient } from "graphql-ws";

const { url, token, subscribers, query } = workerData;
const clients = [];
const arrivals = [];
const warmed = new Set();

for (let i = 0; i < subscribers; i++) {
  const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 3 });
  clients.push(client);
  const connected = new Promise((resolve) => client.on("connected", resolve));
  client.subscribe(
    { query },
    {
      next: (result) => {
        const now = Date.now();
        const event = result.data && result.data.integrationEvents;
        if (!event) return;
        if (event.payload.revisionId === "warmup") {
          if (!warmed.has(i)) {
            warmed.add(i);
            if (warmed.size === subscribers) parentPort.postMessage({ kind: "warm" });
          }
          return;
        }
        arrivals.push(event.id, now);
        if (arrivals.length % 2000 === 0) parentPort.postMessage({ kind: "progress", count: arrivals.length / 2 });
      },
      error: (err) => parentPort.postMessage({ kind: "error", message: String(err && (err.message || err.reason || err)) }),
      complete: () => undefined,
    },
  );
  if (i % 20 === 19 || i === subscribers - 1) await connected;
}
parentPort.postMessage({ kind: "connected" });

parentPort.on("message", async (msg) => {
  if (msg === "report") parentPort.postMessage({ kind: "report", arrivals });
  if (msg === "stop") {
    await Promise.all(clients.map((c) => c.dispose()));
    parentPort.postMessage({ kind: "stopped" });
  }
});
