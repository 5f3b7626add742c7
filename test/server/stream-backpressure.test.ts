import { Writable } from "node:stream";
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, parse, type ExecutionResult } from "graphql";
import { LiveStreams, SLOW_CONSUMER, type StreamOperation, type StreamOptions } from "../../src/graphql/streams/live-streams.js";
import { runQueueDelay } from "../../src/graphql/streams/pacing.js";
import { SubscriptionQuota } from "../../src/core/access/live-token.js";
import { loadConfig } from "../../src/config.js";
import { eventually } from "../helpers/eventually.js";

/**
 * Delivery of a shared stream to sockets that cannot take more: a socket still sending what it
 * was given keeps its place in the group's log instead of a queue of writes in the process, and
 * receives what it missed in one write once it has sent the rest; one that stays blocked while
 * the log fills is closed as a slow consumer, and the others go on. A state stream's blocked socket
 * is never closed: it skips to the newest result.
 */

/** Two subscription fields: `events` (every result delivered) and `state` (a state stream: the newest result is enough). */
const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: "Query", fields: { n: { type: GraphQLInt } } }),
  subscription: new GraphQLObjectType({
    name: "Subscription",
    fields: { events: { type: GraphQLInt }, state: { type: GraphQLInt, extensions: { streamLatest: true } } },
  }),
});

/** A source of results that the test pushes. */
function source() {
  const queue: ExecutionResult[] = [];
  let waiting: ((r: IteratorResult<ExecutionResult>) => void) | null = null;
  const iterator: AsyncIterableIterator<ExecutionResult> = {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => (queue.length ? Promise.resolve({ done: false, value: queue.shift()! }) : new Promise((resolve) => (waiting = resolve))),
    return: async () => ({ done: true, value: undefined }),
  };
  return {
    iterator,
    push(value: ExecutionResult) {
      if (waiting) {
        const w = waiting;
        waiting = null;
        w({ done: false, value });
      } else queue.push(value);
    },
  };
}

/**
 * A graphql-ws socket as ws holds it, over a network stream that takes writes at once or holds
 * them (`block`). Buffers written while it is corked reach it together, as one network write
 * (a TCP socket's writev): `chunks` has one entry per network write. As with a TCP socket, the
 * bytes of a write taken at once are copied then, and a held write's bytes are read when the
 * socket is released: until then the writer must leave them as they are.
 */
/** `costMs`: how long each write keeps the thread busy (a network write's system call). */
function fakeSocket(costMs = 0) {
  const chunks: Buffer[] = [];
  const held: (() => void)[] = [];
  let blocked = false;
  const closed: { code: number; reason: string }[] = [];
  const take = (given: Buffer[], cb: () => void) => {
    for (const end = performance.now() + costMs; performance.now() < end; );
    const at = chunks.push(Buffer.concat(given)) - 1;
    // Sent on release: the bytes as they are then.
    if (blocked) held.push(() => ((chunks[at] = Buffer.concat(given)), cb()));
    else cb();
  };
  const raw = new Writable({
    write: (chunk: Buffer, _enc, cb) => take([chunk], cb),
    writev: (written, cb) =>
      take(
        written.map((w) => w.chunk as Buffer),
        cb,
      ),
  });
  const socket = {
    OPEN: 1,
    readyState: 1,
    extensions: "",
    bufferedAmount: 0,
    _socket: raw,
    send: (data: string) => chunks.push(Buffer.from(data)),
    close(code: number, reason: string) {
      closed.push({ code, reason });
      socket.readyState = 2;
    },
  };
  return {
    socket,
    raw,
    chunks,
    closed,
    block: () => (blocked = true),
    release: () => {
      blocked = false;
      for (const cb of held.splice(0)) cb();
    },
    /** The `next` messages received, decoded from the frames written. */
    messages(): { id: string; payload: { data: { n: number } } }[] {
      const out: any[] = [];
      for (const chunk of chunks) {
        let at = 0;
        while (at < chunk.length) {
          let length = chunk[at + 1]! & 0x7f;
          let start = at + 2;
          if (length === 126) (length = chunk.readUInt16BE(at + 2)), (start = at + 4);
          else if (length === 127) (length = Number(chunk.readBigUInt64BE(at + 2))), (start = at + 10);
          out.push(JSON.parse(chunk.subarray(start, start + length).toString("utf8")));
          at = start + length;
        }
      }
      return out;
    },
  };
}

/** Waits for `check` to hold, looking every 2 ms. */
const until = (check: () => boolean, ms = 5000) => eventually(check, ms, 2);

/** What a test sets beyond the defaults: pacing, and the subscribers' token with how its liveness is read (the access cache's). */
interface Extra extends Pick<StreamOptions, "pacing" | "coreWaitMs"> {
  tokenId?: string;
  liveToken?: (tokenId: string) => Promise<boolean>;
}

function setup(
  maxBufferedBytes: number,
  whenIdle?: (maxMs: number) => Promise<boolean> | null,
  field: "events" | "state" = "events",
  { tokenId = "", liveToken, ...pacing }: Extra = {},
) {
  const streams = new LiveStreams({
    accessCache: { version: () => 0 } as any,
    maxBufferedBytes,
    quota: new SubscriptionQuota(0),
    serialize: (result) => JSON.stringify(result),
    fault: (err) => ({ errors: [{ message: String(err) }] as any }),
    whenIdle,
    ...pacing,
  });
  const events = source();
  const join = async (socket: ReturnType<typeof fakeSocket>, id: string) => {
    const ctx = { viewer: { userId: "usr_1", tokenId }, loaders: new Map(), accessCache: { liveToken } } as any;
    const op: StreamOperation = {
      key: "group",
      socket: socket.socket as any,
      id,
      args: {
        schema,
        document: parse(`subscription { ${field} }`),
        contextValue: ctx,
        rootValue: { subscribe: () => events.iterator },
      } as any,
    };
    const joined = await streams.join(op);
    expect(Symbol.asyncIterator in (joined as object)).toBe(true);
  };
  return { streams, events, join };
}

/**
 * A stream with `count` subscribers whose writes take `costMs` each: event 0, then, once every
 * socket has it, events 1 to 3, each executed in a turn of its own; resolves once every socket
 * has all four, with the network writes made before events 1 to 3.
 */
async function oneThenThree(count: number, costMs: number) {
  const { streams, events, join } = setup(1024 * 1024);
  const sockets = Array.from({ length: count }, () => fakeSocket(costMs));
  for (const [i, socket] of sockets.entries()) await join(socket, `s${i}`);
  events.push({ data: { n: 0 } });
  await until(() => sockets.every((s) => s.messages().length === 1));
  const writes = streams.stats.writes;
  for (let n = 1; n <= 3; n++) {
    events.push({ data: { n } });
    await new Promise((r) => setImmediate(r));
  }
  await until(() => sockets.every((s) => s.messages().length === 4));
  return { streams, sockets, writes };
}

/** A stream with two subscribers: `fast`, whose socket takes every write, and `slow`, whose socket holds them. */
async function fastAndBlocked(
  maxBufferedBytes: number,
  whenIdle?: (maxMs: number) => Promise<boolean> | null,
  field: "events" | "state" = "events",
) {
  const { streams, events, join } = setup(maxBufferedBytes, whenIdle, field);
  const fast = fakeSocket();
  const slow = fakeSocket();
  await join(fast, "f");
  await join(slow, "s");
  slow.block();
  return { streams, events, fast, slow };
}

describe("shared streams and sockets that cannot take more", () => {
  it("gives a blocked socket nothing more until it has sent what it holds, then everything it missed in one write, in order", async () => {
    const { streams, events, fast, slow } = await fastAndBlocked(1024 * 1024);
    const total = 50;
    for (let n = 0; n < total; n++) {
      events.push({ data: { n } });
      await new Promise((r) => setImmediate(r));
    }
    await until(() => fast.messages().length === total);
    // The slow socket's stream holds its first write and nothing was queued behind it.
    expect(slow.chunks.length).toBe(1);
    expect(slow.raw.writableLength).toBe(slow.chunks[0]!.length);
    const writesWhileBlocked = streams.stats.writes;
    slow.release();
    await until(() => slow.messages().length === total);
    // Everything it missed went in one more write.
    expect(slow.chunks.length).toBe(2);
    expect(streams.stats.writes).toBe(writesWhileBlocked + 1);
    expect(slow.messages().map((m) => m.payload.data.n)).toEqual(Array.from({ length: total }, (_, n) => n));
    expect(slow.messages().every((m) => m.id === "s")).toBe(true);
    expect(fast.messages().map((m) => m.payload.data.n)).toEqual(Array.from({ length: total }, (_, n) => n));
    expect(slow.closed).toEqual([]);
    streams.close();
  });

  it("gives blocked sockets whose clients number the operation each their own way the long events they missed in one write each, in order", async () => {
    const { streams, events, join } = setup(1024 * 1024);
    const sockets = ["a", "b-" + "x".repeat(40), "c"].map((id) => ({ id, socket: fakeSocket() }));
    for (const { id, socket } of sockets) await join(socket, id);
    const [fast, ...blocked] = sockets;
    for (const { socket } of blocked) socket.block();
    // 20 events of about 1,000 bytes: each blocked socket is owed about 20 kB, more than a buffer copied for one socket holds.
    const big = (n: number) => `${n}:`.padEnd(1000, "é");
    const total = 20;
    for (let n = 0; n < total; n++) {
      events.push({ data: { n, big: big(n) } as any });
      await new Promise((r) => setImmediate(r));
    }
    await until(() => fast!.socket.messages().length === total);
    for (const { socket } of blocked) expect(socket.chunks.length).toBe(1);
    for (const { socket } of blocked) socket.release();
    await until(() => blocked.every(({ socket }) => socket.messages().length === total));
    for (const { id, socket } of sockets) {
      const messages = socket.messages() as any[];
      expect(messages.map((m) => m.payload.data.n)).toEqual(Array.from({ length: total }, (_, n) => n));
      expect(messages.every((m, n) => m.id === id && m.payload.data.big === big(n))).toBe(true);
    }
    // What a blocked socket missed went in one more network write.
    for (const { socket } of blocked) expect(socket.chunks.length).toBe(2);
    streams.close();
  });

  it("leaves the bytes of every blocked socket's write as they were while it serves the others: past one buffer of frames (64 kB), and frames too long for it", async () => {
    // Deliveries wait for `whenIdle` before each pass: holding it lets events gather before the first pass.
    let held: Promise<boolean> | null = null;
    let resume!: (quiet: boolean) => void;
    held = new Promise((r) => (resume = r));
    const { streams, events, join } = setup(1024 * 1024 * 1024, () => held);
    // 30 blocked sockets, each its own operation id, each given ~3 kB of frames: 90 kB held in all.
    const sockets = Array.from({ length: 31 }, (_, i) => ({ id: `op-${i}`, socket: fakeSocket() }));
    for (const { id, socket } of sockets) await join(socket, id);
    const [fast, ...blocked] = sockets;
    for (const { socket } of blocked) socket.block();
    const body = (n: number) => `${n}:`.padEnd(40, "x");
    for (let n = 0; n < 30; n++) events.push({ data: { n, body: body(n) } as any });
    await new Promise((r) => setTimeout(r, 20));
    held = null;
    resume(true);
    await until(() => fast!.socket.messages().length === 30 && blocked.every(({ socket }) => socket.chunks.length === 1));
    // Then 600 more at once: each socket's frames need more than a quarter of the buffer.
    held = new Promise((r) => (resume = r));
    await new Promise((r) => setTimeout(r, 20));
    for (let n = 30; n < 630; n++) events.push({ data: { n, body: body(n) } as any });
    await new Promise((r) => setTimeout(r, 20));
    held = null;
    resume(true);
    await until(() => fast!.socket.messages().length === 630);
    for (const { socket } of blocked) socket.release();
    await until(() => blocked.every(({ socket }) => socket.messages().length === 630));
    for (const { id, socket } of sockets) {
      const messages = socket.messages() as any[];
      expect(messages.every((m, n) => m.id === id && m.payload.data.n === n && m.payload.data.body === body(n))).toBe(true);
    }
    streams.close();
  });

  it("does not send a state stream's result equal to the one before it (an event executed after a later write read the same state)", async () => {
    const { streams, events, join } = setup(1024 * 1024, undefined, "state");
    const socket = fakeSocket();
    await join(socket, "s");
    for (const n of [1, 1, 2, 2, 2, 1]) {
      events.push({ data: { n } });
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 50));
    const received = socket.messages().map((m) => m.payload.data.n);
    expect(received).toEqual([1, 2, 1]);
    streams.close();
  });

  it("closes a blocked socket with 4008 once what it holds and the events it missed pass the limit; the others receive every event", async () => {
    const { streams, events, fast, slow } = await fastAndBlocked(4096);
    const big = "x".repeat(1000);
    const total = 20;
    for (let n = 0; n < total; n++) {
      events.push({ data: { n, big } as any });
      await new Promise((r) => setImmediate(r));
    }
    await until(() => fast.messages().length === total && slow.closed.length === 1);
    expect(slow.closed).toEqual([{ code: SLOW_CONSUMER.code, reason: SLOW_CONSUMER.reason }]);
    expect(streams.stats.slowConsumers).toBe(1);
    // It was given events until it held some and missed more than 4,096 bytes: a few, not all.
    expect(slow.messages().length).toBeGreaterThan(0);
    expect(slow.messages().length).toBeLessThan(total);
    expect(fast.messages().map((m) => m.payload.data.n)).toEqual(Array.from({ length: total }, (_, n) => n));
    streams.close();
  });

  it("closes the sockets that hold a full log back (4,096 events) rather than ending the stream for everyone", async () => {
    const { streams, events, fast, slow } = await fastAndBlocked(1024 * 1024 * 1024);
    const total = 4_200;
    for (let n = 0; n < total; n++) {
      events.push({ data: { n } });
      if (n % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await until(() => fast.messages().length === total, 20_000);
    expect(slow.closed).toEqual([{ code: SLOW_CONSUMER.code, reason: SLOW_CONSUMER.reason }]);
    expect(fast.closed).toEqual([]);
    expect(fast.messages().map((m) => m.payload.data.n)).toEqual(Array.from({ length: total }, (_, n) => n));
    expect(fast.messages().some((m) => "errors" in m.payload)).toBe(false);
    streams.close();
  });

  it("sends every event executed while a pass's answer is on its way (events executed back to back, in runs of 1 to 12)", async () => {
    const { streams, events, join } = setup(1024 * 1024);
    const sockets = [fakeSocket(), fakeSocket()];
    await join(sockets[0]!, "a");
    await join(sockets[1]!, "b");
    let sent = 0;
    for (let run = 1; run <= 12; run++) {
      for (let i = 0; i < run; i++) events.push({ data: { n: sent++ } });
      await until(() => sockets.every((s) => s.messages().length === sent), 1000);
    }
    for (const socket of sockets) expect(socket.messages().map((m) => m.payload.data.n)).toEqual(Array.from({ length: sent }, (_, n) => n));
    streams.close();
  });
  it("paces a pass over many sockets: past 64, each slice is followed by a pause twice as long as it ran, and events executed meanwhile go with it to the sockets not yet served", async () => {
    // 200 sockets whose writes take 0.1 ms each: a pass runs about 20 ms, in slices of about 1 ms.
    const { streams, events, join } = setup(1024 * 1024);
    const sockets = Array.from({ length: 200 }, () => fakeSocket(0.1));
    for (const [i, socket] of sockets.entries()) await join(socket, `s${i}`);
    const before = performance.eventLoopUtilization();
    events.push({ data: { n: 0 } });
    await until(() => sockets.filter((s) => s.chunks.length > 0).length >= 80);
    for (let n = 1; n <= 3; n++) {
      events.push({ data: { n } });
      await new Promise((r) => setImmediate(r));
    }
    // (A cheap check: decoding every socket's frames at each look would keep the process busy itself.)
    await until(() => streams.stats.deliveries === 4 * sockets.length);
    // The process slept while the pass paused: its event loop was busy 0.62–0.71 of the time here
    // (0.72–0.81 with pauses as long as the slices), against 0.99 with a pass that only yields to
    // other work between its slices.
    expect(performance.eventLoopUtilization(before).utilization).toBeLessThan(0.9);
    expect(streams.stats.pausedMs).toBeGreaterThan(0);
    for (const socket of sockets) {
      expect(socket.messages().map((m) => m.payload.data.n)).toEqual([0, 1, 2, 3]);
      expect(socket.chunks.length).toBeLessThanOrEqual(2);
    }
    // Those not yet served when events 1 to 3 came received the four in one write.
    const once = sockets.filter((s) => s.chunks.length === 1).length;
    expect(once).toBeGreaterThanOrEqual(50);
    expect(streams.stats.writes).toBe(sockets.length + (sockets.length - once));
    streams.close();
  });
  it("with pacing 'contended', a large pass pauses only once its thread had to wait for a core", async () => {
    // The thread's run-queue delay as the kernel would report it: each reading adds 1 ms while another process holds the core.
    let contended = false;
    let waitedMs = 0;
    const { streams, events, join } = setup(1024 * 1024, undefined, "events", {
      pacing: "contended",
      coreWaitMs: () => (waitedMs += contended ? 1 : 0),
    });
    const sockets = Array.from({ length: 200 }, () => fakeSocket(0.1));
    for (const [i, socket] of sockets.entries()) await join(socket, `s${i}`);
    // Nobody else wants the cores: the pass runs through, yielding to the process's other work only.
    events.push({ data: { n: 0 } });
    await until(() => streams.stats.deliveries === sockets.length);
    expect(streams.stats.pausedMs).toBe(0);
    // Another process takes the core: the next slices pause.
    contended = true;
    events.push({ data: { n: 1 } });
    await until(() => streams.stats.deliveries === 2 * sockets.length);
    expect(streams.stats.pausedMs).toBeGreaterThan(0);
    for (const socket of sockets) expect(socket.messages().map((m) => m.payload.data.n)).toEqual([0, 1]);
    streams.close();
  });
  it("waits for the process's requests up to 24 ms before a slice while they come and go, 8 ms once a wait ran out with some still under way, 24 again once none was", async () => {
    // The gateway's whenIdle, answered at once: true (no request left), or false (the bound ran out, requests still under way).
    let load = false;
    const bounds: number[] = [];
    const whenIdle = (maxMs: number) => {
      bounds.push(maxMs);
      return Promise.resolve(!load);
    };
    const { streams, events, join } = setup(1024 * 1024, whenIdle);
    const sockets = Array.from({ length: 100 }, () => fakeSocket(0.1));
    for (const [i, socket] of sockets.entries()) await join(socket, `s${i}`);
    events.push({ data: { n: 0 } });
    await until(() => streams.stats.deliveries === sockets.length);
    // Requests came and went: every wait had the long bound.
    expect(bounds.length).toBeGreaterThan(2);
    expect(new Set(bounds)).toEqual(new Set([24]));
    // Constant load: the first wait runs out at 24 ms, every later one at 8.
    bounds.length = 0;
    load = true;
    events.push({ data: { n: 1 } });
    await until(() => streams.stats.deliveries === 2 * sockets.length);
    expect(bounds[0]).toBe(24);
    expect(bounds.length).toBeGreaterThan(2);
    expect(new Set(bounds.slice(1))).toEqual(new Set([8]));
    // The load let up: the first wait (still bound at 8) ends with none under way, the next ones are bound at 24 again.
    bounds.length = 0;
    load = false;
    events.push({ data: { n: 2 } });
    await until(() => streams.stats.deliveries === 3 * sockets.length);
    expect(bounds[0]).toBe(8);
    expect(new Set(bounds.slice(1))).toEqual(new Set([24]));
    for (const socket of sockets) expect(socket.messages().map((m) => m.payload.data.n)).toEqual([0, 1, 2]);
    streams.close();
  });
  it("does not pause after a pass over a few sockets, however long it ran: each event is sent at once", async () => {
    // Writes that take 1 ms each, but 8 sockets: fewer than a pause is worth.
    const { streams, sockets } = await oneThenThree(8, 1);
    for (const socket of sockets) expect(socket.chunks.length).toBe(4);
    streams.close();
  });
  it("gives an event executed while it looks again at the blocked sockets alone to everyone else too", async () => {
    // Deliveries wait for `whenIdle` before each pass: holding it suspends a pass at its start.
    let held: Promise<boolean> | null = null;
    const { streams, events, fast, slow } = await fastAndBlocked(1024 * 1024, () => held);
    for (let n = 0; n < 3; n++) events.push({ data: { n } });
    await until(() => fast.messages().length === 3);
    // Only the blocked socket is behind now: the delivery looks again at it alone, every few ms.
    await new Promise((r) => setTimeout(r, 20));
    let resume!: (quiet: boolean) => void;
    held = new Promise((r) => (resume = r));
    await new Promise((r) => setTimeout(r, 20));
    // A pass over the blocked socket alone waits at its start; an event is executed meanwhile.
    slow.release();
    events.push({ data: { n: 3 } });
    await new Promise((r) => setTimeout(r, 20));
    held = null;
    resume(true);
    await until(() => slow.messages().length === 4 && fast.messages().length === 4, 2000);
    expect(fast.messages().map((m) => m.payload.data.n)).toEqual([0, 1, 2, 3]);
    expect(slow.messages().map((m) => m.payload.data.n)).toEqual([0, 1, 2, 3]);
    streams.close();
  });

  it("gives a blocked socket of a state stream the newest result alone once it has sent what it holds, and never closes it", async () => {
    const { streams, events, fast, slow } = await fastAndBlocked(4096, undefined, "state");
    const big = "x".repeat(1000);
    const total = 20;
    for (let n = 0; n < total; n++) {
      events.push({ data: { n, big } as any });
      await new Promise((r) => setImmediate(r));
    }
    const newest = (socket: ReturnType<typeof fakeSocket>) => socket.messages().at(-1)?.payload.data.n;
    await until(() => newest(fast) === total - 1);
    // Past the 4,096 bytes that close a socket of another stream: what it is owed is one result.
    expect(slow.closed).toEqual([]);
    expect(streams.stats.slowConsumers).toBe(0);
    expect(slow.chunks.length).toBe(1);
    const before = slow.messages().map((m) => m.payload.data.n);
    slow.release();
    await until(() => newest(slow) === total - 1);
    // One more write, holding the newest result alone.
    expect(slow.chunks.length).toBe(2);
    expect(slow.messages().map((m) => m.payload.data.n)).toEqual([...before, total - 1]);
    expect(streams.stats.skipped).toBeGreaterThanOrEqual(total - 1 - before.length);
    // Each socket's results only ever go forward: an older state never follows a newer one.
    for (const socket of [fast, slow]) {
      const seen = socket.messages().map((m) => m.payload.data.n);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
      expect(new Set(seen).size).toBe(seen.length);
    }
    expect(slow.closed).toEqual([]);
    streams.close();
  });

  it("keeps one result of a state stream for a socket that stays blocked through 4,200 events, and closes nobody", async () => {
    const { streams, events, fast, slow } = await fastAndBlocked(1024 * 1024 * 1024, undefined, "state");
    const total = 4_200;
    for (let n = 0; n < total; n++) {
      events.push({ data: { n } });
      if (n % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await until(() => fast.messages().at(-1)?.payload.data.n === total - 1, 20_000);
    const group = [...(streams as any).groups.values()][0];
    expect(group.log.length).toBeLessThanOrEqual(1);
    expect(slow.closed).toEqual([]);
    expect(fast.closed).toEqual([]);
    slow.release();
    await until(() => slow.messages().at(-1)?.payload.data.n === total - 1);
    expect(slow.messages().length).toBe(2);
    expect(fast.messages().some((m) => "errors" in m.payload)).toBe(false);
    streams.close();
  });
});

describe("a delivery whose token check fails (the database unreachable)", () => {
  it("sends nothing unchecked, keeps the stream, and delivers once the check answers again", async () => {
    let down = true;
    let checks = 0;
    const liveToken = async () => {
      checks++;
      if (down) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
      return true;
    };
    const { streams, events, join } = setup(1024 * 1024, undefined, "events", { tokenId: "tok_1", liveToken });
    const socket = fakeSocket();
    await join(socket, "s");
    events.push({ data: { n: 0 } });
    await until(() => checks >= 1);
    await new Promise((r) => setTimeout(r, 50));
    // Not sent while the token could not be checked, not closed, and not asked again at once.
    expect(socket.chunks).toEqual([]);
    expect(socket.closed).toEqual([]);
    expect(checks).toBe(1);
    // The check answers again: the event waiting is sent at the next try, with no new event to wake it.
    down = false;
    await until(() => socket.messages().length === 1, 5000);
    events.push({ data: { n: 1 } });
    await until(() => socket.messages().length === 2);
    expect(socket.messages().map((m) => m.payload.data.n)).toEqual([0, 1]);
    streams.close();
  });
});

describe("a fault in a delivery", () => {
  it("ends its stream with the error, sent to each subscriber, instead of leaving a rejection to end the process", async () => {
    const { streams, events, join } = setup(1024 * 1024, () => Promise.reject(new Error("delivery fault")));
    const socket = fakeSocket();
    await join(socket, "s");
    events.push({ data: { n: 0 } });
    await until(() => streams.size().groups === 0);
    expect(socket.chunks.map((c) => c.toString())).toEqual([
      expect.stringMatching(/^\{"id":"s","type":"next","payload":\{"errors":\[\{"message":"Error: delivery fault"\}\]\}\}$/),
    ]);
    streams.close();
  });
});

describe("the run-queue delay read for pacing 'contended'", () => {
  it.runIf(process.platform === "linux")("reads this thread's wait for a core from /proc, in ms, never going back", () => {
    const read = runQueueDelay()!;
    expect(read).toBeTypeOf("function");
    const first = read();
    expect(Number.isFinite(first) && first >= 0).toBe(true);
    // Busy for a while: the reading may grow (other processes), never shrink.
    for (const end = performance.now() + 20; performance.now() < end; );
    expect(read()).toBeGreaterThanOrEqual(first);
  });
  it("paces when the reading fails (NaN): a delay it cannot tell counts as contended", async () => {
    const { streams, events, join } = setup(1024 * 1024, undefined, "events", { pacing: "contended", coreWaitMs: () => NaN });
    const sockets = Array.from({ length: 200 }, () => fakeSocket(0.1));
    for (const [i, socket] of sockets.entries()) await join(socket, `s${i}`);
    events.push({ data: { n: 0 } });
    await until(() => streams.stats.deliveries === sockets.length);
    expect(streams.stats.pausedMs).toBeGreaterThan(0);
    streams.close();
  });
});

describe("LIVE_STREAM_PACING", () => {
  it("always with DATABASE_URL (the database and other gateways share the cores), contended on the embedded database; set, as said; else refused by name", () => {
    expect(loadConfig({}).liveStreamPacing).toBe("contended");
    expect(loadConfig({ DATABASE_URL: "postgresql://db/docs" }).liveStreamPacing).toBe("always");
    expect(loadConfig({ DATABASE_URL: "postgresql://db/docs", LIVE_STREAM_PACING: "contended" }).liveStreamPacing).toBe("contended");
    expect(loadConfig({ LIVE_STREAM_PACING: " Always " }).liveStreamPacing).toBe("always");
    expect(loadConfig({ LIVE_STREAM_PACING: "auto" }).liveStreamPacing).toBe("contended");
    expect(() => loadConfig({ LIVE_STREAM_PACING: "sometimes" })).toThrow(
      /LIVE_STREAM_PACING must be always, contended or auto, got "sometimes"/,
    );
    expect(() => loadConfig({ LIVE_STREAM_PACING: "on" })).toThrow(/LIVE_STREAM_PACING must be always, contended or auto, got "on"/);
  });
});
