// Child process of the live-stream benchmark (bench/streams.ts): holds `count` graphql-ws sockets
// (protocol graphql-transport-ws, spoken directly over `ws` to keep 2,500 sockets per process
// light) to one server, subscribes them on command, and notes when each socket first saw each key
// (the space title, or the space id of an integration event). Commands and reports go over IPC.
import { randomUUID } from "node:crypto";
import WebSocket from "ws";

const now = () => performance.timeOrigin + performance.now();

/** @type {WebSocket[]} */
let sockets = [];
/**
 * The subscription under way: its operation id on each socket, how a message maps to a key, first
 * arrival per key and socket. Each socket numbers its operation as graphql-ws's client does (a
 * random UUID), unless BENCH_SHARED_OPERATION_ID=1: then every socket uses the command's id.
 */
let sub = null;
let errors = 0;
let firstError = "";
let closedEarly = 0;

/** The key of a `next` payload: the space's title, or an integration event's space id or id. */
function keyOf(keyBy, payload) {
  const data = payload && payload.data;
  if (!data) return undefined;
  if (keyBy === "title") return data.spaceUpdated ? data.spaceUpdated.title : undefined;
  const event = data.integrationEvents;
  if (!event) return undefined;
  return keyBy === "eventId" ? event.id : event.payload && event.payload.spaceId;
}

/**
 * The key of a `next` message for this socket's operation read without parsing it, when the
 * message is laid out as both servers write it (`{"id":…,"type":"next","payload":{"data":{…`),
 * names the key's field once, as a plain string, and carries no `errors`; else undefined, and the
 * message is parsed whole. 10,000 sockets receive up to 200,000 messages a second here, on the
 * cores the servers measured run on: parsing each whole took a good part of what these processes use.
 */
function quickKey(index, raw) {
  const field = sub.quickField;
  if (!field || !raw.startsWith(sub.heads[index]) || raw.includes('"errors":')) return undefined;
  const at = raw.indexOf(field, sub.heads[index].length);
  if (at < 0 || raw.indexOf(field, at + field.length) >= 0) return undefined;
  const start = at + field.length;
  const end = raw.indexOf('"', start);
  if (end < 0) return undefined;
  const value = raw.slice(start, end);
  return value.includes("\\") ? undefined : value;
}

function onMessage(index, raw) {
  const at = now();
  if (sub) {
    const key = quickKey(index, raw);
    if (key !== undefined) return noteArrival(index, key, at);
  }
  let msg;
  try {
    msg = JSON.parse(raw);
  } catch {
    return;
  }
  if (msg.type === "ping") return sockets[index].send('{"type":"pong"}');
  if (!sub || msg.id !== sub.ids[index]) return;
  if (msg.type === "next") {
    if (msg.payload && msg.payload.errors) return noteError(JSON.stringify(msg.payload.errors));
    const key = keyOf(sub.keyBy, msg.payload);
    if (key === undefined) return;
    noteArrival(index, key, at);
  } else if (msg.type === "error") {
    noteError(JSON.stringify(msg.payload));
  }
}

/** Socket `index` received the message of `key` at `at`. */
function noteArrival(index, key, at) {
  sub.messages++;
  sub.lastAt = at;
  if (!sub.any[index]) {
    sub.any[index] = 1;
    sub.live++;
  }
  let seen = sub.seen.get(key);
  if (!seen) sub.seen.set(key, (seen = new Float64Array(sockets.length).fill(NaN)));
  if (Number.isNaN(seen[index])) seen[index] = at;
}

function noteError(text) {
  errors++;
  if (!firstError) firstError = text.slice(0, 300);
}

function open(url, token, index) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, "graphql-transport-ws", { perMessageDeflate: false });
    sockets[index] = ws;
    let acked = false;
    ws.on("open", () => ws.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${token}` } })));
    ws.on("message", (data) => {
      if (!acked) {
        const msg = JSON.parse(String(data));
        if (msg.type === "connection_ack") {
          acked = true;
          resolve(true);
        }
        return;
      }
      onMessage(index, String(data));
    });
    ws.on("error", (err) => {
      noteError(`socket: ${err.message}`);
      if (!acked) resolve(false);
    });
    ws.on("close", (code, reason) => {
      if (!acked) return resolve(false);
      if (!stopping) {
        closedEarly++;
        noteError(`closed by the server: ${code} ${reason}`);
      }
    });
  });
}

let stopping = false;

/**
 * First arrival per socket for each of `keys` (in write order). With `coalesce`, a newer state
 * delivers the older ones: a socket's arrival for key j is its earliest arrival of any key ≥ j.
 */
function arrivals(keys, coalesce) {
  const n = sockets.length;
  const out = new Float64Array(n * keys.length).fill(NaN);
  const empty = new Float64Array(n).fill(NaN);
  const later = coalesce ? new Float64Array(n).fill(NaN) : null;
  for (let j = keys.length - 1; j >= 0; j--) {
    const seen = (sub && sub.seen.get(keys[j])) || empty;
    for (let s = 0; s < n; s++) {
      let at = seen[s];
      if (later) {
        if (Number.isNaN(at) || later[s] < at) at = later[s];
        later[s] = at;
      }
      out[s * keys.length + j] = at;
    }
  }
  return out;
}

function received(keys, coalesce) {
  const a = arrivals(keys, coalesce);
  let count = 0;
  for (let i = 0; i < a.length; i++) if (!Number.isNaN(a[i])) count++;
  return count;
}

process.on("message", async (cmd) => {
  switch (cmd.cmd) {
    case "connect": {
      const { url, token, count, parallel = 50 } = cmd;
      sockets = new Array(count);
      let next = 0;
      let ok = 0;
      const started = now();
      await Promise.all(
        Array.from({ length: Math.min(parallel, count) }, async () => {
          while (next < count) {
            const i = next++;
            if (await open(url, token, i)) ok++;
          }
        }),
      );
      process.send({ kind: "connected", ok, failed: count - ok, ms: now() - started, errors, firstError });
      break;
    }
    case "subscribe": {
      // Errors are counted per subscription.
      errors = 0;
      firstError = "";
      const shared = process.env.BENCH_SHARED_OPERATION_ID === "1";
      const ids = sockets.map(() => (shared ? cmd.id : randomUUID()));
      // What a message of this operation starts with on each socket, and the field quickKey reads (eventId: parsed whole).
      const heads = ids.map((id) => `{"id":${JSON.stringify(id)},"type":"next","payload":{"data":{`);
      const quickField = { title: '"title":"', spaceId: '"spaceId":"' }[cmd.keyBy];
      sub = {
        ids,
        heads,
        quickField,
        keyBy: cmd.keyBy,
        seen: new Map(),
        any: new Uint8Array(sockets.length),
        live: 0,
        messages: 0,
        lastAt: 0,
      };
      const payload = { query: cmd.query, variables: cmd.variables };
      sockets.forEach((ws, i) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id: ids[i], type: "subscribe", payload }));
      });
      process.send({ kind: "subscribed" });
      break;
    }
    case "cpu": {
      // CPU seconds (user and system) this process has used so far.
      const { user, system } = process.cpuUsage();
      process.send({ kind: "cpu", seconds: (user + system) / 1e6 });
      break;
    }
    case "status": {
      // How many sockets saw `key` (or anything, without one) and when the last message came.
      const seen = cmd.key && sub ? sub.seen.get(cmd.key) : undefined;
      let sawKey = 0;
      if (seen) for (let i = 0; i < seen.length; i++) if (!Number.isNaN(seen[i])) sawKey++;
      process.send({
        kind: "status",
        live: sub ? sub.live : 0,
        sawKey,
        keys: sub ? sub.seen.size : 0,
        messages: sub ? sub.messages : 0,
        lastAt: sub ? sub.lastAt : 0,
        received: cmd.keys ? received(cmd.keys, cmd.coalesce) : 0,
        errors,
        firstError,
        closedEarly,
      });
      break;
    }
    case "report": {
      // Latency of every (socket, write): arrival − the write's start; NaN when it never arrived.
      const a = arrivals(cmd.keys, cmd.coalesce);
      const k = cmd.keys.length;
      for (let i = 0; i < a.length; i++) a[i] -= cmd.starts[i % k];
      process.send({ kind: "report", latencies: a });
      break;
    }
    case "unsubscribe": {
      if (sub) {
        const { ids } = sub;
        sockets.forEach((ws, i) => {
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id: ids[i], type: "complete" }));
        });
      }
      sub = null;
      process.send({ kind: "unsubscribed" });
      break;
    }
    case "close": {
      stopping = true;
      await Promise.all(
        sockets.map(
          (ws) =>
            new Promise((resolve) => {
              if (!ws || ws.readyState === WebSocket.CLOSED) return resolve();
              ws.once("close", resolve);
              ws.close(1000);
              setTimeout(() => (ws.terminate(), resolve()), 3000).unref();
            }),
        ),
      );
      process.send({ kind: "closed" }, () => process.exit(0));
      break;
    }
  }
});
process.on("disconnect", () => process.exit(0));
process.send({ kind: "ready" });
