import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { eventually } from "../helpers/eventually.js";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, type Admin } from "../helpers/fixtures.js";

/**
 * A graphql-ws socket whose peer vanished without closing (a laptop closed, a NAT that forgot the
 * connection) is cut off once it leaves a ping unanswered, and its subscriptions end; a peer that
 * answers stays, however quiet its stream.
 */
let t: TestGateway;
let admin: Admin;
let spaceId: string;
const INTERVAL_MS = 200;

beforeAll(async () => {
  t = await startGateway({ wsPingIntervalMs: INTERVAL_MS });
  ({ admin } = await acmeDocs(t));
  spaceId = (await createSpace(admin, admin.organization, { title: "Heartbeat" })).id;
});
afterAll(() => t?.close());

/** A socket subscribed to the space; `autoPong: false` plays a peer that is gone (it never answers a ping). */
async function subscribed(autoPong: boolean) {
  const socket = new WebSocket(`${t.url.replace("http", "ws")}/graphql`, "graphql-transport-ws", { autoPong });
  const pings: number[] = [];
  socket.on("ping", () => pings.push(Date.now()));
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  await new Promise((resolve) => socket.once("open", resolve));
  socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}` } }));
  await new Promise<void>((resolve) => socket.once("message", () => resolve()));
  socket.send(
    JSON.stringify({
      id: "1",
      type: "subscribe",
      payload: { query: "subscription($s: String!) { spaceUpdated(spaceId: $s) { title } }", variables: { s: spaceId } },
    }),
  );
  return { socket, pings, closed };
}

describe("WebSocket heartbeat (WS_PING_INTERVAL_MS)", () => {
  it("cuts off a socket that leaves a ping unanswered and ends its subscription; one that answers stays and keeps receiving", async () => {
    const timeoutsBefore = await t.metric("websocket_heartbeat_timeouts_total");
    const alive = await subscribed(true);
    const gone = await subscribed(false);
    await eventually(async () => (await t.metric("live_stream_subscriptions")) >= 2);
    let closedCode: number | undefined;
    void gone.closed.then((code) => (closedCode = code));
    // The silent one is cut off (1006: no close handshake) after being pinged and not answering.
    await eventually(() => closedCode !== undefined);
    expect(closedCode).toBe(1006);
    expect(gone.pings.length).toBeGreaterThanOrEqual(1);
    expect(await t.metric("websocket_heartbeat_timeouts_total")).toBe(timeoutsBefore + 1);
    await eventually(async () => (await t.metric("live_stream_subscriptions")) === 1);
    // The other one was pinged too, answered each time, and still receives its stream.
    await eventually(() => alive.pings.length >= 3);
    expect(alive.socket.readyState).toBe(WebSocket.OPEN);
    const next = new Promise<any>((resolve) => alive.socket.on("message", (data) => resolve(JSON.parse(String(data)))));
    expect((await admin.patch(`/v1/spaces/${spaceId}`, { title: "Still here" })).status).toBe(200);
    expect((await next).payload.data.spaceUpdated.title).toBe("Still here");
    expect(await t.metric("websocket_heartbeat_timeouts_total")).toBe(timeoutsBefore + 1);
    alive.socket.close();
  });

  it("pings each socket once an interval, not at every tick", async () => {
    const quiet = await subscribed(true);
    await eventually(() => quiet.pings.length >= 4, 20_000);
    // A round starts once an interval after the last one started, and pings each socket once; its
    // place in the round moves by a tick (100 ms) at most. A busy machine only spreads them further.
    const gaps = quiet.pings.slice(1).map((at, i) => at - quiet.pings[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(INTERVAL_MS / 2);
    expect(quiet.socket.readyState).toBe(WebSocket.OPEN);
    quiet.socket.close();
  });

  it("reads WS_PING_INTERVAL_MS: 30 s unless set, 0 turns it off, anything but a whole number of ms is refused by name", () => {
    expect(loadConfig({}).wsPingIntervalMs).toBe(30_000);
    expect(loadConfig({ WS_PING_INTERVAL_MS: "0" }).wsPingIntervalMs).toBe(0);
    expect(loadConfig({ WS_PING_INTERVAL_MS: "5000" }).wsPingIntervalMs).toBe(5000);
    for (const bad of ["-1", "1.5", "soon", "30s"])
      expect(() => loadConfig({ WS_PING_INTERVAL_MS: bad }), bad).toThrow(/WS_PING_INTERVAL_MS must be a non-negative integer/);
  });
});
