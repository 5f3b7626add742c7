// Child process of the live-stream benchmark (bench/streams.ts): the floor to compare the gateway
// with. A minimal node:http + ws server that keeps spaces in memory, speaks just enough of
// graphql-transport-ws (ack, subscribe, complete) and, on a PATCH of a space's title or of a
// page, serializes its `next` frame (of a page edit, two: the integration event pending, then
// delivered) and sends it to every socket subscribed to it. Nothing else:
// no database, no authorization, no GraphQL execution. Reports its port over IPC.
import http from "node:http";
import { WebSocketServer } from "ws";

/** spaceId → { title, updatedAt } */
const spaces = new Map();
/** "spaceUpdated:<spaceId>" or "integrationEvents:<integration>" → Map<socket, subscription id> */
const topics = new Map();
let eventCounter = 0;

/**
 * Sends `messages` (the data of each `next` message, built once) to every socket subscribed to
 * `topic`, all of them in one network write per socket (the cheapest way to send several).
 */
function publish(topic, ...messages) {
  const subscribers = topics.get(topic);
  if (!subscribers) return;
  // The data serialized once; the frames once per subscription id (each client numbers its own,
  // as graphql-ws's client does; sockets that share an id share the frames).
  const data = messages.map((build) => JSON.stringify(build()));
  const frames = new Map();
  for (const [socket, id] of subscribers) {
    let own = frames.get(id);
    if (!own) frames.set(id, (own = data.map((d) => Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":{"data":${d}}}`))));
    if (own.length === 1) {
      socket.send(own[0], { binary: false });
      continue;
    }
    // ws has no call that sends several messages in one write: its socket, corked around them.
    const tcp = socket._socket;
    tcp?.cork();
    for (const frame of own) socket.send(frame, { binary: false });
    tcp?.uncork();
  }
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString() || "{}"));
      } catch {
        resolve({});
      }
    });
  });
}

const server = http.createServer(async (req, res) => {
  const body = req.method === "PATCH" ? await readBody(req) : {};
  const page = /^\/v1\/spaces\/([^/]+)\/content\/page\/([^/]+)$/.exec(req.url);
  const space = /^\/v1\/spaces\/([^/]+)$/.exec(req.url);
  if (req.method === "PATCH" && space) {
    const spaceId = space[1];
    const value = { id: spaceId, title: String(body.title ?? ""), updatedAt: new Date().toISOString() };
    spaces.set(spaceId, value);
    publish(`spaceUpdated:${spaceId}`, () => ({ spaceUpdated: value }));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "space", ...value }));
  } else if (req.method === "PATCH" && page) {
    const [, spaceId, pageId] = page;
    const id = `evt_${++eventCounter}`;
    const event = {
      id,
      status: "pending",
      createdAt: new Date().toISOString(),
      payload: { eventId: id, type: "space_content_updated", spaceId, revisionId: `rev_${eventCounter}` },
    };
    // The event's two results, as the gateway's subscribers receive them (they follow every
    // status): recorded, then delivered (here at once).
    publish(
      "integrationEvents:bench",
      () => ({ integrationEvents: event }),
      () => ({ integrationEvents: { ...event, status: "success" } }),
    );
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: pageId, title: String(body.title ?? "") }));
  } else {
    res.writeHead(404).end();
  }
});

const wss = new WebSocketServer({ server, path: "/graphql", perMessageDeflate: false });
wss.on("connection", (socket) => {
  const mine = new Map(); // subscription id → topic
  socket.on("message", (data) => {
    let msg;
    try {
      msg = JSON.parse(String(data));
    } catch {
      return socket.close(4400, "Invalid message");
    }
    if (msg.type === "connection_init") socket.send('{"type":"connection_ack"}');
    else if (msg.type === "ping") socket.send('{"type":"pong"}');
    else if (msg.type === "subscribe") {
      const query = String(msg.payload?.query ?? "");
      const topic = query.includes("spaceUpdated")
        ? `spaceUpdated:${msg.payload?.variables?.spaceId}`
        : `integrationEvents:${msg.payload?.variables?.integrationName}`;
      if (!topics.has(topic)) topics.set(topic, new Map());
      topics.get(topic).set(socket, msg.id);
      mine.set(msg.id, topic);
    } else if (msg.type === "complete") {
      const topic = mine.get(msg.id);
      if (topic) topics.get(topic)?.delete(socket);
      mine.delete(msg.id);
    }
  });
  socket.on("close", () => {
    for (const topic of mine.values()) topics.get(topic)?.delete(socket);
  });
});

server.listen(0, "127.0.0.1", () => process.send({ kind: "listening", port: server.address().port }));
process.on("message", (cmd) => {
  if (cmd?.cmd !== "cpu") return;
  // CPU seconds (user and system) this process has used so far.
  const { user, system } = process.cpuUsage();
  process.send({ kind: "cpu", seconds: (user + system) / 1e6 });
});
process.on("disconnect", () => process.exit(0));
