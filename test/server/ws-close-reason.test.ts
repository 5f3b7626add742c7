import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, type Admin } from "../helpers/fixtures.js";
import { shortReason } from "../../src/graphql/ws.js";

/**
 * A close reason graphql-ws makes from client data (an operation id) fits a close frame: the
 * socket is closed with the protocol's code for the client's fault, not 4500 (internal error).
 */
let t: TestGateway;
let admin: Admin;
let spaceId: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  spaceId = (await createSpace(admin, admin.organization, { title: "Closed" })).id;
});
afterAll(() => t?.close());

describe("close reasons", () => {
  it("a subscription id sent twice, however long, closes the socket with 4409 and a reason cut to fit", async () => {
    for (const id of ["x".repeat(300), "é".repeat(200), "📚".repeat(100), "short"]) {
      const socket = new WebSocket(`${t.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
      const closed = new Promise<{ code: number; reason: string }>((resolve) =>
        socket.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
      );
      await new Promise((resolve) => socket.once("open", resolve));
      socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}` } }));
      await new Promise<void>((resolve) => socket.once("message", () => resolve()));
      const subscribe = JSON.stringify({
        id,
        type: "subscribe",
        payload: { query: "subscription($s: String!) { spaceUpdated(spaceId: $s) { id } }", variables: { s: spaceId } },
      });
      socket.send(subscribe);
      socket.send(subscribe);
      const { code, reason } = await closed;
      expect(code, id.slice(0, 10)).toBe(4409);
      expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
      expect(reason.startsWith("Subscriber for ")).toBe(true);
      if (id === "short") expect(reason).toBe("Subscriber for short already exists");
      else expect(reason.endsWith("…")).toBe(true);
    }
  });

  it("a message larger than MAX_BODY_BYTES closes its socket with 1009 before it is read whole; the others go on", async () => {
    const limit = t.config.maxBodyBytes;
    const open = async () => {
      // The client itself would send frames of any size.
      const socket = new WebSocket(`${t.url.replace("http", "ws")}/graphql`, "graphql-transport-ws", { maxPayload: 0 });
      const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
      socket.on("error", () => undefined);
      await new Promise((resolve) => socket.once("open", resolve));
      return { socket, closed };
    };
    const init = (padding: number) =>
      JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}`, padding: "x".repeat(padding) } });
    // Not the server's fault: nothing says "Internal error" on standard error (graphql-ws did, for each).
    const errors = vi.spyOn(console, "error");
    const big = await open();
    big.socket.send(init(limit));
    expect(await big.closed).toBe(1009);
    // A frame whose length field says more than the bound is refused as it starts.
    const lying = await open();
    const head = Buffer.alloc(14);
    head[0] = 0x81;
    head[1] = 0x80 | 127;
    head.writeUInt32BE(0, 2);
    head.writeUInt32BE(limit + 1, 6);
    (lying.socket as unknown as { _socket: import("node:net").Socket })._socket.write(head);
    expect(await lying.closed).toBe(1009);
    expect(errors.mock.calls.map((c) => String(c[0])).filter((m) => /Internal error/.test(m))).toEqual([]);
    errors.mockRestore();
    // Up to the bound, a message is read as ever.
    const fits = await open();
    fits.socket.send(init(limit - 200));
    const acked = await new Promise<string>((resolve) => fits.socket.once("message", (data) => resolve(JSON.parse(String(data)).type)));
    expect(acked).toBe("connection_ack");
    fits.socket.close();
    expect((await admin.get("/v1/orgs")).status).toBe(200);
  });

  it("cuts at a character boundary", () => {
    expect(shortReason("ok")).toBe("ok");
    for (const unit of ["a", "é", "€", "📚"]) {
      const cut = shortReason(unit.repeat(200));
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(123);
      expect(cut).toBe(unit.repeat([...cut].length - 1) + "…");
      expect(cut).not.toContain("\ufffd");
    }
  });
});
