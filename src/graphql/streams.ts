import {
  defaultFieldResolver,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import type { WebSocket } from "ws";
import fs from "node:fs";
import type { Writable } from "node:stream";
import type { Context } from "../core/context.js";
import type { Viewer } from "../core/access/viewer.js";
import type { AccessCache } from "../core/access/access-cache.js";
import { AppError } from "../core/errors.js";
import { revokedTokenError, tokenIsLive, tooManySubscriptions, type SubscriptionQuota } from "../core/access/live-token.js";

/**
 * Shared graphql-ws subscription streams: an event is executed once per group of subscriptions
 * that would answer it alike, and the serialized result is sent to every socket of the group.
 *
 * - A group is (document text, operation name, variables, access): see `groupKey`. When the
 *   subscription field declares how access to it is graded (`extensions.streamAccess`, e.g. the
 *   viewer's role on the space) and nothing the selection asks for can depend on who is asking
 *   (every field below the root reads only its parent and arguments), viewers with the same
 *   grade and SSO state share a group. Otherwise the group is per viewer: the user and the SSO
 *   provider of their token, everything the membership door (core/access/access.ts) answers from.
 *   Each subscriber's own token is checked before each delivery, from the access cache
 *   (core/access/access-cache.ts): a revoked token's subscription receives one 401 error and completes,
 *   the others go on.
 * - The group's source stream is opened once (the field's `subscribe`, with its access check), and
 *   each event is executed once, with the context of the subscription that opened it (with the
 *   viewer of another subscriber once that one lost access, see below; loaders cleared before each
 *   event), through the yoga plugins (masked errors, limits checked at subscribe).
 * - Access changes: whenever the access cache drops its answers (a change of tokens, members, SSO,
 *   here or in another process through the pub/sub), the field's subscribe-time check runs again,
 *   once per viewer of the group, before its next event is executed: every subscription field's
 *   source passes each event through the group's gate first (`gateSubscriptions`, the context's
 *   `streamGate`). The subscriptions of a viewer it refuses receive that error and complete, the
 *   others go on; when the viewer the group executes with is refused, the event is executed with
 *   the access of a viewer who kept it, so they miss none. The check runs again after execution
 *   for access that changed meanwhile: an event executed with access lost in between, whose result
 *   has errors, is not sent to the viewers who kept theirs.
 * - Writes never wait for subscribers: delivery runs off the write's path (after the pub/sub event),
 *   yields to other work every SLICE_MS and, while the process serves requests, waits for them
 *   (at most DEFER_MS a slice, DEFER_BUSY_MS under constant load); once a pass has written to PACE_FROM_WRITES sockets, it gives its
 *   core away after each slice for PAUSE_PER_RUN times as long as the slice ran (always, or only
 *   while the cores are contended: StreamOptions.pacing). Each socket receives, in one network
 *   write, every event executed and not yet sent to it when its turn comes (events executed while a delivery
 *   is under way go with it to the sockets not yet served). Each payload is encoded once, when it
 *   is executed; a socket's frames are its own operation id's prefix and those bytes — copied into
 *   one buffer when short, else the payloads' own bytes between small buffers of the frames' heads
 *   and ends (see COPIED_FRAMES_BELOW) — which the next socket takes as they are when its client
 *   numbers the operation alike (graphql-ws's client numbers each with a random UUID; simpler
 *   clients all say "1"). A
 *   socket still sending what it was last given is passed over and keeps its place in the group's
 *   log (no queue of writes per socket in the process: a slow reader costs memory only through
 *   the log, and none to the collector of every pass). A socket with more than `maxBufferedBytes`
 *   not yet sent (what it holds and the events it was not given) is closed with SLOW_CONSUMER
 *   (4008): it never slows the others nor the writer, and the group's events stay in order for
 *   every socket that receives them.
 * - State streams (a subscription field with `extensions.streamLatest`, e.g. `spaceUpdated`, whose
 *   every result is the whole newest state): a socket behind receives the group's newest result
 *   alone, those before it skipped (`stats.skipped`), and the group keeps no older result for it.
 *   Such a socket is never closed as a slow consumer: what it is owed never grows past one result,
 *   and it skips to the newest state once its socket has sent what it holds. A result equal to the
 *   one before it (an event executed after a later write, reading the same newest state) is not sent.
 * - At most `maxPerToken` live subscriptions per API token in this process: the one past it is
 *   answered with a 429 error for its own operation; the socket and its other operations go on.
 */

/**
 * What a pass over a group's subscribers found (see LiveStreams.pass): "behind" when some are still
 * behind the log and may be sent to, "blocked" when all of those (`blocked`) are still sending what
 * they were given, "unchecked" when their tokens could not be checked (nothing was sent), else
 * "none"; as of the log's end `checked`.
 */
interface PassResult {
  behind: "none" | "behind" | "blocked" | "unchecked";
  blocked: Member[];
  checked: number;
}

/** Close code and reason of a socket that fell behind by more than WS_MAX_BUFFERED_BYTES. */
export const SLOW_CONSUMER = { code: 4008, reason: "Slow consumer: too much waiting to be sent; reconnect and subscribe again" } as const;

/**
 * Longest a delivery runs before it yields to other work (requests, other groups), in ms. A write
 * waits up to this long at each of its steps (a statement, the answer) while a delivery is under
 * way in its process, and a write has about ten of them.
 */
const SLICE_MS = 1;
/**
 * Longest a delivery waits for the requests under way in its process (StreamOptions.quiet) before
 * its next slice, in ms, while requests come and go: a write is answered before a delivery of its
 * process runs again, unless it takes longer than this. (Two gateways of 5,000 subscribers each on
 * PostgreSQL + Redis, `npm run bench -- streams`: with 8, while titles streamed, the written
 * gateway's event-loop delay p99/max was 27/33 ms (prom-client's, 10 of them its sampling) and its
 * main thread ran 10 ms during the slowest title write, 43 ms; with 24, four runs the same day:
 * 13–18/15–26 ms, 4–7 ms during the slowest, 15–22 ms.)
 */
const DEFER_MS = 24;
/**
 * The bound of those waits once one ran out with requests still under way (constant load), until
 * one ends with none under way: deliveries then get at least SLICE_MS of every SLICE_MS +
 * DEFER_BUSY_MS. (With 4 ms, the slowest of 50 page edits at 10,000 subscribers of integration
 * events took 30 and 47 ms in two runs of the streams benchmark on the embedded database; with 8,
 * 22–34 ms in four, the arrival at the subscribers as fast.)
 */
const DEFER_BUSY_MS = 8;
/**
 * Once a pass over a group's subscribers has written to PACE_FROM_WRITES sockets, each of its
 * slices (StreamOptions.pacing "always"; "contended": while the cores are, see CONTENDED_SHARE)
 * is followed by a pause (PAUSE_PER_RUN times as long as the slice ran; a timer: the process
 * sleeps unless it has other work), before the next slice. A large group's delivery then uses about
 * a third of its process's time, and it uses it in slices of SLICE_MS: a write waking in another
 * process on the same cores (the other gateway, the database) finds a core free, or one within a slice, instead
 * of queueing behind a pass over thousands of sockets; events executed meanwhile go to each socket
 * not yet served in one write with the others, fewer and larger writes exactly when sending costs
 * the most. A small group is never held back. (A pause after each whole pass, as long as the pass
 * ran, instead: with 5,000 sockets in each of two gateways on PostgreSQL + Redis, four runs of
 * `npm run bench -- streams`, the slowest of 50 writes to the first gateway took 23–44 ms, 2–30 of
 * them waiting for a core, and 1.1–2.1 times the slowest with no subscriber; with a pause after
 * each slice, four runs: 22–35 ms, 2–16 waiting, 0.8–1.6 times. The price is arrival: a title's
 * arrival p50 at the subscribers 134–151 ms instead of 77–92. With no pause at all, two runs:
 * titles reached the subscribers as fast as from the minimal server, but an integration event's
 * two results each took a network write of their own, 1,002,518 for 1,420,000 results instead of
 * 470,000–513,000, and their arrival p99 was 3.1 and 8.5 times the minimal server's. Pacing a pass
 * only once an event came while it ran, on the embedded database: the pause lengthens the pass,
 * more events come while it runs, and passes of 233–306 ms, 1.2–2.6 times the minimal server's
 * title arrival p99, two runs. Pacing only while a group's newest event came sooner after the one
 * before than its last large pass ran, pauses left out (three runs on each database): titles went
 * unpaced and an integration event's two results together, but the slowest title write with
 * subscribers was 3.7 and 2.5 times the slowest with none in two runs, and on the embedded
 * database, where a pass over 10,000 sockets runs about as long as the 100 ms between titles,
 * titles paced in the third, their arrival p99 2.0 times the minimal server's.)
 */
const PACE_FROM_WRITES = 64;
/**
 * How long a paced pass gives its core away after each slice, as a multiple of the slice: a large
 * group's delivery then uses about a third of its process's time. The readers of the sockets
 * need the cores too (where they share the machine, as in the benchmark), and a reader that
 * gets no core holds its socket's bytes unread until it does; a pass that takes longer carries
 * more events to each socket in one network write, so the same events cost fewer writes. With two
 * gateways of 5,000 subscribers each on PostgreSQL + Redis (`npm run bench -- streams`, 10,000
 * subscribers), a pause as long as the slice (a half): in two runs a title's arrival p50/p99
 * 220–254/511–675 ms, 71 page edits' arrivals p99 3.7–4.0 s, titles sent in 404,000–417,000 network
 * writes, the slowest write with subscribers 1.94–2.64 and 1.72–2.12 times the slowest with none;
 * twice as long (a third), three runs: 122–129/281–311 ms, 1.3–3.8 s, 340,000–349,000 writes,
 * 1.46–1.99 and 1.25–1.85 times; three times (a quarter), one run: 154/414 ms, 0.9 s, 280,000 writes, but 1.67
 * and 2.66 times.
 */
const PAUSE_PER_RUN = 2;
/**
 * StreamOptions.pacing "contended": the cores count as contended for CONTENDED_FOR_MS after a
 * slice of a delivery spent more than CONTENDED_SHARE of its time waiting for a core (its thread
 * runnable, another process on the core: the kernel's run-queue delay, StreamOptions.coreWaitMs),
 * and a large pass paces itself only then. Pacing leaves a core to the processes that serve the
 * same writes; where there are none (the embedded database runs in the gateway's own thread, and
 * no other gateway can share it), a pause only delays the sockets not yet served: one gateway of
 * 10,000 subscribers on the embedded database paced every large pass, 174–213 ms a pass of which
 * half paused, while the machine's second core was mostly idle (0.81–1.09 of 2 cores in use, five
 * runs of `npm run bench -- streams`); paced while contended, eight runs: 90–117 ms of which
 * 14–27 paused (1.41–1.62 cores), the arrival p99 0.17–1.26 times the minimal server's against
 * 0.19–1.77, the slowest write with subscribers 0.45–2.35 times the slowest with none against
 * 0.53–2.69, but for one page edit held 79 ms by a 135 ms stall of the event loop. A
 * process that needs a core takes it from the delivery's thread, so a slice sees it. Where the
 * delay cannot be read, large passes always pace. (With two gateways of 5,000 subscribers on
 * PostgreSQL + Redis and `LIVE_STREAM_PACING=contended`, one run: the slices' delay share at p50,
 * p90 and p99 was 0, 0.04–0.08 and 0.78, 5–7% of them over a fifth, yet CONTENDED_FOR_MS kept
 * passes paused for 51 of their 91 ms on average: there, contended is nearly always.)
 */
const CONTENDED_SHARE = 0.2;
const CONTENDED_FOR_MS = 50;
/** Sockets served between two looks at the clock. */
const CLOCK_EVERY = 8;
/** Events a group may hold executed but not yet sent (a delivery far slower than its events). */
const MAX_QUEUED = 4_096;
/** Messages that ws frames (on a socket with extensions) are sent as text. */
const TEXT = { binary: false } as const;
/** The end of a `next` message, after its payload. */
const CLOSE = Buffer.from("}");

/** The reader runQueueDelay made (the main thread's: deliveries run on it). */
let delayReader: (() => number) | null | undefined;

/**
 * The calling thread's run-queue delay so far in ms (Linux's /proc/thread-self/schedstat: time
 * on a core, time runnable waiting for one, in ns; one read of a file kept open; NaN when a read
 * fails), or null where it cannot be read.
 */
export function runQueueDelay(): (() => number) | null {
  if (delayReader === undefined) delayReader = openRunQueueDelay();
  return delayReader;
}

function openRunQueueDelay(): (() => number) | null {
  let fd: number;
  try {
    fd = fs.openSync("/proc/thread-self/schedstat", "r");
  } catch {
    return null;
  }
  const buffer = Buffer.alloc(96);
  const read = () => {
    try {
      const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
      return Number(buffer.toString("latin1", 0, length).split(" ")[1]) / 1e6;
    } catch {
      return NaN;
    }
  };
  if (Number.isFinite(read())) return read;
  fs.closeSync(fd);
  return null;
}

/** Bytes of the frame of a `next` message of `length` bytes: the header of an unmasked frame (RFC 6455 5.2), then the message. */
function frameBytes(length: number): number {
  return (length < 126 ? 2 : length < 65_536 ? 4 : 10) + length;
}

/**
 * Writes at `at` in `target` the head of the frame of the `next` message `prefix`, a payload of
 * `payloadLength` bytes, `}` as a server sends it (RFC 6455 5.2: final, text, unmasked, the
 * length in 7, 7+16 or 7+64 bits), then `prefix`; returns the offset after it, where the payload goes.
 */
function writeHead(target: Buffer, at: number, prefix: Buffer, payloadLength: number): number {
  const length = prefix.length + payloadLength + CLOSE.length;
  target[at++] = 0x81;
  if (length < 126) target[at++] = length;
  else if (length < 65_536) {
    target[at] = 126;
    at = target.writeUInt16BE(length, at + 1);
  } else {
    target[at] = 127;
    target.writeUInt32BE(Math.floor(length / 2 ** 32), at + 1);
    at = target.writeUInt32BE(length >>> 0, at + 5);
  }
  return at + prefix.copy(target, at);
}

/**
 * Frames of a socket's stretch of events shorter than this are copied into one buffer (written
 * with one network write); longer ones are written as the bytes of their payloads, shared by
 * every socket, between small buffers of the socket's own (a frame's end, the next one's head).
 * A buffer per socket of every payload it is owed copied (10,000 sockets each 8 kB behind: 80 MB
 * allocated outside the pool for one pass) made the collector run full collections.
 */
const COPIED_FRAMES_BELOW = Buffer.poolSize >>> 1;

/** Bytes of a group's frame arena; frames that need more than a quarter of it get a buffer of their own. */
const ARENA_BYTES = 64 * 1024;

/**
 * Where a group's deliveries build the frames they write: one buffer, reused. A socket that takes
 * its write at once (nothing left in its stream: the kernel copied the bytes) leaves the frames'
 * bytes free for the next frames built; one that keeps part of its write holds them (`hold`), and
 * they stay as they are (the next frames go after them, in a new buffer once this one is full).
 * A buffer per socket and pass instead (10,000 sockets, 1 to 4 kB each, from Node's pool of small
 * buffers: 10 to 40 MB a pass, outside V8's heap) made V8 start full collections for "external
 * memory pressure" about once a second while events streamed, and during one every buffer
 * allocated does a step of its marking (the embedded database's driver allocates several for each
 * statement): statements of 300 ms, and page edits waiting for them.
 */
class FrameArena {
  private buffer: Buffer | undefined;
  /** The frames last built: bytes `start` to `end` of `buffer`. */
  private start = 0;
  private end = 0;
  /** A socket holds the frames last built (see hold). */
  private held = false;

  /** `length` bytes for new frames; those last built are written over unless a socket holds them. */
  take(length: number): Buffer {
    let at = this.held ? this.end : this.start;
    this.held = false;
    if (length > ARENA_BYTES >>> 2) {
      this.start = this.end = at;
      return Buffer.allocUnsafe(length);
    }
    if (!this.buffer || at + length > ARENA_BYTES) {
      this.buffer = Buffer.allocUnsafeSlow(ARENA_BYTES);
      at = 0;
    }
    this.start = at;
    this.end = at + length;
    return this.buffer.subarray(this.start, this.end);
  }

  /** A socket was given the frames last built and has not yet handed all of them to the network. */
  hold(): void {
    this.held = true;
  }
}

/** A `next` message whole, for ws to frame (a socket with extensions, a final refusal). */
function nextMessage(prefix: Buffer, payload: Buffer): Buffer {
  return Buffer.concat([prefix, payload, CLOSE]);
}

/**
 * How long a delivery waits before it looks again at sockets still sending what they were last
 * given (it looks sooner when the group has a new event), in ms.
 */
const BLOCKED_RETRY_MS = 4;
/**
 * How long a delivery waits before it tries again when its subscribers' tokens could not be
 * checked (the database unreachable): nothing is sent unchecked, the stream and its log are kept
 * (up to MAX_QUEUED events), in ms.
 */
const UNCHECKED_RETRY_MS = 1_000;

/** A WebSocket's TCP stream (ws keeps it as `_socket`, not declared by its types). */
function tcpOf(socket: WebSocket): Writable | undefined {
  return (socket as unknown as { _socket?: Writable })._socket;
}

/**
 * A socket's TCP stream, when ws sends a frame as plain bytes on it (no extensions: no
 * compression), which ws then holds none of. Extensions are settled by the handshake: a member
 * asks once (ws's `extensions` getter builds a string at every call).
 */
function rawSocket(socket: WebSocket): Writable | undefined {
  return socket.extensions === "" ? tcpOf(socket) : undefined;
}

/** Bytes a member's socket has been given and not yet handed to the network. */
function pendingBytes(m: Member): number {
  return m.raw ? m.raw.writableLength : m.socket.bufferedAmount;
}

/**
 * The key of a stretch of a group's log (positions `from` to `end`) among the frames encoded in a
 * pass: a stretch is at most MAX_QUEUED events long, so the number is unique while positions stay
 * below 2^39.
 */
const stretchKey = (from: number, end: number) => from * (2 * MAX_QUEUED) + (end - from);

type Subscribe = (args: ExecutionArgs) => unknown;

/** A graphql-ws subscription operation that may share a stream. */
export interface StreamOperation {
  args: ExecutionArgs & { contextValue: Context; rootValue: { subscribe: Subscribe } };
  /** The group key (see LiveStreams.groupKey). */
  key: string;
  socket: WebSocket;
  id: string;
}

/** How a subscription field grades access to it: subscribers with equal grades (and selections that cannot tell viewers apart) share a stream. Throws when refused. */
export type StreamAccess = (args: Record<string, unknown>, ctx: Context) => Promise<string>;

/**
 * The field a subscription operation subscribes to: its one root selection, when that is a field
 * (a fragment spread or more than one selection: null), with the schema's definition of it.
 */
function subscriptionField(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined) {
  const operation = getOperationAST(document, operationName);
  const selections = operation?.selectionSet.selections ?? [];
  const node = selections[0];
  if (operation?.operation !== "subscription" || selections.length !== 1 || node?.kind !== Kind.FIELD) return null;
  const field = schema.getSubscriptionType()?.getFields()[node.name.value];
  return field ? { node, field } : null;
}

/**
 * Whether the operation's subscription field is a state stream (`extensions.streamLatest`): a
 * subscriber behind needs its newest result only. Any other operation has every result delivered.
 */
function isStateStream(args: ExecutionArgs): boolean {
  return subscriptionField(args.schema, args.document, args.operationName)?.field.extensions?.streamLatest === true;
}

/** The subscription field's access grade, or null when the selection may depend on the viewer (or the field grades nothing). */
async function accessGrade(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>, ctx: Context): Promise<string | null> {
  const subscribed = subscriptionField(schema, document, operationName);
  const grade = subscribed?.field.extensions?.streamAccess as StreamAccess | undefined;
  if (!subscribed || !grade) return null;
  const { node, field } = subscribed;
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  if (node.selectionSet && !viewerFree(schema, getNamedType(field.type), node.selectionSet, fragments, new Set())) return null;
  const args: Record<string, unknown> = {};
  for (const arg of node.arguments ?? []) {
    args[arg.name.value] = arg.value.kind === Kind.VARIABLE ? variables[arg.value.name.value] : valueOf(arg.value, variables);
  }
  return grade(args, { ...ctx, loaders: new Map() });
}

function valueOf(node: any, variables: Record<string, unknown>): unknown {
  switch (node.kind) {
    case Kind.VARIABLE:
      return variables[node.name.value];
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.LIST:
      return node.values.map((v: any) => valueOf(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f: any) => [f.name.value, valueOf(f.value, variables)]));
    case Kind.NULL:
      return null;
    default:
      return node.value;
  }
}

/**
 * Whether every field of `selection` (on `type`) reads only its parent and arguments, so that the
 * result is the same whoever asks: the default resolver, a field exposed by Pothos, a Node `id`
 * (the builder's global ids are the row ids), or a resolver declared with at most two parameters
 * (parent, arguments) that neither gathers them with `...` nor reads `arguments`. Anything else
 * (a resolver that receives the context: permissions, urls, relations read with the viewer's
 * access) counts as viewer-specific.
 */
function viewerFree(schema: GraphQLSchema, type: ReturnType<typeof getNamedType>, selection: SelectionSetNode, fragments: Map<string, any>, visiting: Set<string>): boolean {
  const types = isObjectType(type) ? [type] : isAbstractType(type) ? schema.getPossibleTypes(type) : [];
  for (const s of selection.selections) {
    if (s.kind === Kind.FIELD) {
      if (s.name.value === "__typename") continue;
      for (const t of types) {
        const field = t.getFields()[s.name.value];
        if (!field) continue;
        if (!resolvesFromParent(field, t.getInterfaces().some((i) => i.name === "Node"))) return false;
        if (s.selectionSet && !viewerFree(schema, getNamedType(field.type), s.selectionSet, fragments, visiting)) return false;
      }
    } else {
      const name = s.kind === Kind.FRAGMENT_SPREAD ? s.name.value : null;
      if (name && visiting.has(name)) continue;
      const fragment = name ? fragments.get(name) : s;
      if (!fragment) return false;
      const on = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
      if (!on) return false;
      if (!viewerFree(schema, on as any, fragment.selectionSet, fragments, name ? new Set([...visiting, name]) : visiting)) return false;
    }
  }
  return true;
}

function resolvesFromParent(field: GraphQLField<unknown, unknown>, onNode: boolean): boolean {
  const ext = field.extensions as Record<string, unknown> | undefined;
  if (ext?.pothosExposedField) return true;
  if (onNode && field.name === "id") return true;
  const resolve = (ext?.pothosOriginalResolve ?? field.resolve) as ((...args: unknown[]) => unknown) | undefined;
  if (!resolve || resolve === defaultFieldResolver) return true;
  if (resolve.length > 2) return false;
  const source = Function.prototype.toString.call(resolve);
  const params = /^[^(=]*\(([^)]*)\)|^\s*(?:async\s+)?([\w$]+)\s*=>/.exec(source);
  if (!params) return false;
  return !(params[1] ?? "").includes("...") && !/\barguments\b/.test(source);
}

/** The `subscribe` functions gateSubscriptions made (a schema is gated once). */
const GATED = new WeakSet<object>();

/**
 * Makes every subscription field of `schema` wait for the gate of a shared stream (the context's
 * `streamGate`, set by LiveStreams) after each event of its source and before graphql executes
 * that event; once, when the schema is built. Fields answer as they are when the context has no
 * gate (SSE, a single subscriber's check).
 */
export function gateSubscriptions(schema: GraphQLSchema): GraphQLSchema {
  for (const field of Object.values(schema.getSubscriptionType()?.getFields() ?? {})) {
    const subscribe = field.subscribe ?? defaultFieldResolver;
    if (GATED.has(subscribe)) continue;
    const gatedSubscribe: typeof subscribe = async (root, args, ctx, info) => {
      const source = await subscribe(root, args, ctx, info);
      const gate = (ctx as Context | undefined)?.streamGate;
      return gate && isAsyncIterable(source) ? gated(source, gate) : source;
    };
    GATED.add(gatedSubscribe);
    field.subscribe = gatedSubscribe;
  }
  return schema;
}

/** `source`'s events, each once `gate()` answered true; done (and `source` closed) once it answers false. */
function gated<T>(source: AsyncIterable<T>, gate: () => Promise<boolean>): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const close = async (): Promise<IteratorResult<T>> => {
    await iterator.return?.();
    return DONE;
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      const next = await iterator.next();
      if (next.done || (await gate())) return next;
      return close();
    },
    return: close,
    async throw(error) {
      await iterator.return?.();
      throw error;
    },
  };
}

export interface StreamOptions {
  accessCache: AccessCache;
  maxBufferedBytes: number;
  /** Live subscriptions per API token in this process, shared with SSE subscriptions (core/access/live-token.ts). */
  quota: SubscriptionQuota;
  /** The payload of a result as sent (errors as the socket shows them: masked, without HTTP details). */
  serialize(result: ExecutionResult): string;
  /** The result answered for a fault while opening or running a stream. */
  fault(err: unknown): ExecutionResult;
  /**
   * Null when the process serves no request, else a promise that resolves true once it serves
   * none, or false after `maxMs` (the gateway's HttpFront.quiet): deliveries wait for it before
   * each slice (see DEFER_MS, DEFER_BUSY_MS).
   */
  quiet?(maxMs: number): Promise<boolean> | null;
  /**
   * How long the process's thread has waited for a core so far, in ms (see CONTENDED_SHARE);
   * default: Linux's /proc/thread-self/schedstat, else none (large passes always pace).
   */
  coreWaitMs?: (() => number) | null;
  /**
   * "always" (default): every large pass paces itself (see PACE_FROM_WRITES); "contended": only
   * while the cores are contended (see CONTENDED_SHARE).
   */
  pacing?: "always" | "contended";
  /** Told of each pass that wrote to sockets: its duration from its start to its last write. */
  passed?(ms: number): void;
}

interface Member {
  id: string;
  socket: WebSocket;
  /** The socket's TCP stream when frames are written to it directly (see rawSocket). */
  raw: Writable | undefined;
  /**
   * The subscriber (access is checked again as them, with the group's context). Not its whole
   * context: a socket's context holds what its connection was opened with, kept by each of
   * thousands of subscriptions for as long as they last.
   */
  viewer: Viewer;
  /** `{"id":…,"type":"next","payload":`, encoded. */
  prefix: Buffer;
  /** Position in the group's log of the next payload this subscriber is to receive. */
  cursor: number;
  ended: boolean;
  /** Resolves graphql-ws's wait for the subscription's next result (see MemberIterator): at its end. */
  waiting: ((result: IteratorResult<never>) => void) | null;
  /** Ends the subscription: sends `payload` first when given; graphql-ws then sends `complete`. */
  finish(payload?: string): void;
}

interface Group {
  key: string;
  ctx: Context;
  args: StreamOperation["args"];
  members: Set<Member>;
  /** Null once the stream is open, else the result refusing it. */
  ready: Promise<ExecutionResult | null>;
  source?: AsyncIterator<ExecutionResult>;
  /** Access cache version the group's access was last checked at. */
  checked: number;
  closed: boolean;
  /** A state stream (see isStateStream): a subscriber behind receives the newest payload alone. */
  latest: boolean;
  /** A state stream's last payload executed (a result equal to it is not sent). */
  newest?: Buffer;
  /**
   * Payloads executed and not yet sent to every subscriber (UTF-8), in order; `log[0]` is the payload at
   * position `logStart` (subscribers' cursors count from the group's first payload).
   */
  log: Buffer[];
  logStart: number;
  /** Bytes of the payloads from the group's first one up to the end of each of `log` (UTF-8). */
  logEnds: number[];
  /** Bytes of the payloads before `log[0]`. */
  startBytes: number;
  sending: boolean;
  /** Where its deliveries build frames (see FrameArena). */
  arena: FrameArena;
  /** Wakes a delivery waiting for sockets that had not sent what they were last given (see send). */
  wake?: () => void;
}

/**
 * What graphql-ws holds of a member's subscription: an iterator that yields nothing (results are
 * sent to the socket directly) and ends when the subscription does. A class, so that each of
 * thousands of subscriptions holds one small object and no closures of its own.
 */
class MemberIterator implements AsyncIterableIterator<never> {
  constructor(private readonly member: Member) {}
  [Symbol.asyncIterator](): this {
    return this;
  }
  next(): Promise<IteratorResult<never>> {
    return this.member.ended ? Promise.resolve(DONE) : new Promise((resolve) => (this.member.waiting = resolve));
  }
  async return(): Promise<IteratorResult<never>> {
    this.member.finish();
    return DONE;
  }
  async throw(): Promise<IteratorResult<never>> {
    this.member.finish();
    return DONE;
  }
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<ExecutionResult> => typeof (value as any)?.[Symbol.asyncIterator] === "function";
const DONE: IteratorResult<never> = { done: true, value: undefined };
const viewerOf = (viewer: Viewer) => `${viewer.userId}\u0000${viewer.ssoProvider ?? ""}`;

export class LiveStreams {
  private readonly groups = new Map<string, Group>();
  /**
   * For the metrics: events executed (once per group), deliveries (once per socket and event),
   * network writes (once per socket and pass: every event it was behind), results of state streams
   * skipped for a newer one (once per socket and result), slow consumers closed, access grades
   * computed (see groupKey), time passes paused (see PACE_FROM_WRITES).
   */
  readonly stats = { executions: 0, deliveries: 0, writes: 0, skipped: 0, slowConsumers: 0, accessGrades: 0, pausedMs: 0 };
  /** Access grades being computed, by everything they depend on (see groupKey). */
  private readonly grading = new Map<string, Promise<string | null>>();
  private readonly coreWaitMs: (() => number) | null;
  /** When a slice of a delivery last found the cores contended (see CONTENDED_SHARE). */
  private contendedAt = -Infinity;
  /** The last wait for the process's requests ran out with some still under way (see DEFER_BUSY_MS). */
  private busy = false;
  constructor(private readonly opts: StreamOptions) {
    this.coreWaitMs = opts.pacing !== "contended" ? null : opts.coreWaitMs === undefined ? runQueueDelay() : opts.coreWaitMs;
  }

  /**
   * The key of the group a subscription belongs to: its document, operation, variables and either
   * the grade of the viewer's access (see StreamAccess; only when nothing selected can depend on
   * the viewer) or the viewer (user and SSO provider).
   *
   * The grade depends on the subscription and the viewer alone, so the subscriptions of one viewer
   * that arrive while it is being computed (a dashboard's sockets reconnecting together after a
   * restart) wait for that computation instead of each running the field's access checks with a
   * request's worth of loaders: nothing is kept once it settles, and each later subscription
   * computes its own, as fresh as the access it reads.
   */
  async groupKey(
    schema: GraphQLSchema,
    document: DocumentNode,
    query: string,
    operationName: string | null | undefined,
    variables: Record<string, unknown> | null | undefined,
    ctx: Context,
  ): Promise<string> {
    // The subscription as JSON, written once; JSON holds no raw NUL, so "\u0000" parts the key unambiguously.
    const base = JSON.stringify([query, operationName ?? null, variables ?? null]);
    const sso = ctx.viewer.ssoProvider ?? null;
    const viewer = `${base}\u0000${JSON.stringify(["viewer", ctx.viewer.userId, sso])}`;
    let grade = this.grading.get(viewer);
    if (!grade) {
      this.stats.accessGrades++;
      grade = accessGrade(schema, document, operationName, variables ?? {}, ctx)
        .catch(() => null)
        .finally(() => this.grading.delete(viewer));
      this.grading.set(viewer, grade);
    }
    const graded = await grade;
    return graded === null ? viewer : `${base}\u0000${JSON.stringify(["access", graded, sso])}`;
  }

  /** Groups open and subscriptions in them. */
  size(): { groups: number; subscriptions: number } {
    let subscriptions = 0;
    for (const g of this.groups.values()) subscriptions += g.members.size;
    return { groups: this.groups.size, subscriptions };
  }

  /**
   * Subscribes `op`'s socket to its group (opening it when it is the first): an iterator that
   * yields nothing (results are sent to the socket directly) and ends when the subscription does,
   * or the result refusing the subscription.
   */
  async join(op: StreamOperation): Promise<ExecutionResult | AsyncIterableIterator<never>> {
    const release = this.opts.quota.acquire(op.args.contextValue.viewer.tokenId);
    if (!release) return this.opts.fault(tooManySubscriptions(this.opts.quota.max));
    try {
      for (;;) {
        const group = this.groups.get(op.key) ?? this.open(op);
        const refusal = await group.ready;
        if (refusal) {
          release();
          return refusal;
        }
        if (group.closed) continue; // ended meanwhile: open another
        return this.member(group, op, release);
      }
    } catch (err) {
      release();
      throw err;
    }
  }

  /** Ends every stream (the gateway is closing). */
  close(): void {
    for (const group of [...this.groups.values()]) this.end(group);
  }

  private open(op: StreamOperation): Group {
    const ctx: Context = { ...op.args.contextValue, loaders: new Map(), sharedStream: true };
    // The opener's operation alone, not whatever else its arguments carry (graphql-ws's, with the
    // opener's socket): the group lasts after the opener's socket closed.
    const { schema, document, operationName, variableValues, rootValue } = op.args;
    const args = { schema, document, operationName, variableValues, rootValue, contextValue: ctx };
    const group: Group = { key: op.key, ctx, args, members: new Set(), ready: undefined as any, checked: 0, closed: false, latest: isStateStream(args), log: [], logStart: 0, logEnds: [], startBytes: 0, sending: false, arena: new FrameArena() };
    // Each source event passes the group's access check before it is executed (gateSubscriptions).
    ctx.streamGate = () => this.gate(group);
    this.groups.set(op.key, group);
    group.ready = (async () => {
      const version = this.opts.accessCache.version();
      let result: unknown;
      try {
        result = await args.rootValue.subscribe(args);
      } catch (err) {
        result = this.opts.fault(err);
      }
      if (!isAsyncIterable(result)) {
        group.closed = true;
        if (this.groups.get(group.key) === group) this.groups.delete(group.key);
        return result as ExecutionResult;
      }
      group.checked = version;
      group.source = result[Symbol.asyncIterator]();
      ctx.loaders.clear();
      void this.run(group);
      return null;
    })();
    return group;
  }

  private member(group: Group, op: StreamOperation, release: () => void): AsyncIterableIterator<never> {
    const member: Member = {
      id: op.id,
      socket: op.socket,
      raw: rawSocket(op.socket),
      viewer: op.args.contextValue.viewer,
      prefix: Buffer.from(`{"id":${JSON.stringify(op.id)},"type":"next","payload":`),
      // Events executed from now on (those already executed were published before it joined).
      cursor: group.logStart + group.log.length,
      ended: false,
      waiting: null,
      finish: (payload) => {
        if (member.ended) return;
        member.ended = true;
        release();
        if (payload !== undefined && member.socket.readyState === member.socket.OPEN) member.socket.send(nextMessage(member.prefix, Buffer.from(payload)), TEXT);
        group.members.delete(member);
        if (group.members.size === 0) this.end(group);
        member.waiting?.(DONE);
        member.waiting = null;
      },
    };
    group.members.add(member);
    return new MemberIterator(member);
  }

  /** Executes the group's events one after another, queueing each for delivery. */
  private async run(group: Group): Promise<void> {
    try {
      for (;;) {
        const next = await group.source!.next();
        group.ctx.loaders.clear();
        if (next.done || group.closed) break;
        this.stats.executions++;
        // Access was checked before execution (gate); again for a change while the event was executed.
        const access = await this.allowed(group);
        if (!access) return;
        // Executed with the access of a viewer who lost it meanwhile: not an answer for those who kept it.
        if (access === "moved" && next.value.errors?.length) continue;
        if (group.log.length >= MAX_QUEUED) this.dropStalled(group);
        if (group.log.length >= MAX_QUEUED) throw new AppError(503, `This live stream fell more than ${MAX_QUEUED} events behind its delivery and was ended; subscribe again.`);
        const payload = Buffer.from(this.opts.serialize(next.value));
        // A state stream's event executed after a later one read the same newest state: nothing new to send.
        if (group.latest && group.newest?.equals(payload)) continue;
        if (group.latest) group.newest = payload;
        group.log.push(payload);
        group.logEnds.push(this.bytesAt(group, group.logStart + group.log.length - 1) + payload.length);
        if (group.sending) group.wake?.();
        // A fault of a delivery ends its group with that error (the subscribers complete and may subscribe again), never the process.
        else void this.send(group).catch((err) => this.end(group, this.opts.serialize(this.opts.fault(err))));
      }
      this.end(group);
    } catch (err) {
      this.end(group, this.opts.serialize(this.opts.fault(err)));
    }
  }

  /**
   * The gate of the group's source (see gateSubscriptions), before an event is executed: whether
   * the group goes on, its executing viewer one who kept access, its loaders empty.
   */
  private async gate(group: Group): Promise<boolean> {
    if (group.closed) return false;
    const access = await this.allowed(group);
    group.ctx.loaders.clear();
    return access !== false && !group.closed;
  }

  /**
   * Whether the group goes on: once access changed, the field's `subscribe` runs again for each
   * viewer of the group; subscriptions of a viewer it refuses receive the refusal and complete.
   */
  private async allowed(group: Group): Promise<boolean | "moved"> {
    const version = this.opts.accessCache.version();
    if (version === group.checked) return true;
    const viewers = new Map<string, Member[]>();
    for (const m of group.members) viewers.get(viewerOf(m.viewer))?.push(m) ?? viewers.set(viewerOf(m.viewer), [m]);
    const refusals = await Promise.all(
      [...viewers.values()].map(async ([first]) => {
        // The group's context as this viewer: nothing else in it depends on who subscribed; no gate (no event is read).
        const contextValue: Context = { ...group.ctx, viewer: first!.viewer, loaders: new Map(), sharedStream: true, streamGate: undefined };
        const args = { ...group.args, contextValue };
        let result: unknown;
        try {
          result = await args.rootValue.subscribe(args);
        } catch (err) {
          result = this.opts.fault(err);
        }
        if (!isAsyncIterable(result)) return this.opts.serialize(result as ExecutionResult);
        await result[Symbol.asyncIterator]().return?.();
        return null;
      }),
    );
    const kept: Viewer[] = [];
    [...viewers.values()].forEach((members, i) => {
      const refusal = refusals[i];
      if (refusal === null || refusal === undefined) kept.push(members[0]!.viewer);
      else for (const m of members) m.finish(refusal);
    });
    if (group.closed || kept.length === 0) return false;
    // Events are executed with the access of a viewer who kept it (the opener may have left or lost it).
    group.checked = version;
    if (kept.some((v) => viewerOf(v) === viewerOf(group.ctx.viewer))) return true;
    group.ctx.viewer = kept[0]!;
    return "moved";
  }

  /**
   * Sends the group's log to its subscribers, in passes over them: each subscriber receives, in
   * one network write, every payload from its cursor to the end of the log as it is when its turn
   * comes, so events executed while a pass is under way go with it to the subscribers not yet
   * served, and with the next pass to the others. A socket that has not yet handed the network
   * what it was last given keeps its place and is passed over: it receives what it missed in one
   * write once it has (those sockets alone are looked at again every BLOCKED_RETRY_MS; all of
   * them at the next event), so the process keeps no queue of writes per socket — a slow reader
   * holds a place in the group's log, not a copy of every event — until it is closed as a slow
   * consumer (see pass).
   */
  private async send(group: Group): Promise<void> {
    if (group.sending) return;
    group.sending = true;
    try {
      let only: Member[] | undefined;
      while (!group.closed) {
        const before = group.logStart + group.log.length;
        const { behind, blocked, checked } = await this.pass(group, only);
        const end = group.logStart + group.log.length;
        const moved = before !== end;
        // Done when nobody is behind the log as it is now: an event executed after the pass looked
        // (while its answer was on its way here) is owed to everyone. A pass over the blocked ones
        // alone does not know who else an event executed during it is for.
        if (behind === "none" && checked === end && !(only && moved)) break;
        only = undefined;
        if (behind === "unchecked") await new Promise((resolve) => setTimeout(resolve, UNCHECKED_RETRY_MS));
        if (behind === "blocked" && !moved) {
          await this.pause(group);
          // No event since: every other subscriber has the whole log, only the blocked ones may be behind.
          if (before === group.logStart + group.log.length) only = blocked;
        }
      }
    } finally {
      group.sending = false;
      group.wake = undefined;
    }
  }

  /** Waits BLOCKED_RETRY_MS, or until the group's next event. */
  private pause(group: Group): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, BLOCKED_RETRY_MS);
      function done() {
        clearTimeout(timer);
        group.wake = undefined;
        resolve();
      }
      group.wake = done;
    });
  }

  /**
   * One pass over the group's subscribers (or over `only`, when the others have the whole log):
   * who is still behind (see PassResult).
   */
  private async pass(group: Group, only?: Member[]): Promise<PassResult> {
    const members = only ?? [...group.members];
    if (!only) this.trim(group, members);
    if (group.log.length === 0) return { behind: "none", blocked: [], checked: group.logStart };
    // Each subscriber's own token, once per distinct token (from the access cache).
    const tokens = new Map<string, Member[]>();
    for (const m of members) tokens.get(m.viewer.tokenId)?.push(m) ?? tokens.set(m.viewer.tokenId, [m]);
    // All at once: those the access cache does not hold are read in one statement (a batch).
    const holders = [...tokens];
    let live: boolean[];
    try {
      live = await Promise.all(holders.map(([tokenId]) => !tokenId || tokenIsLive(group.ctx, tokenId)));
    } catch {
      return { behind: "unchecked", blocked: [], checked: group.logStart };
    }
    let revoked: string | undefined;
    holders.forEach(([, members], i) => {
      if (live[i]) return;
      revoked ??= this.opts.serialize({ errors: [revokedTokenError()] });
      for (const m of members) m.finish(revoked);
    });
    const max = this.opts.maxBufferedBytes;
    // The frames last built, which the next socket takes when its client numbers the operation alike and it is owed the same stretch of the log.
    let last: { id: string; stretch: number; chunks: Buffer[] } | undefined;
    await this.giveWay();
    const passStart = performance.now();
    let sliceStart = passStart;
    let sliceWait = this.coreWaitMs?.() ?? 0;
    /** Sockets written to. */
    let served = 0;
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      if (m.ended) continue;
      const end = group.logStart + group.log.length;
      if (m.cursor >= end) continue;
      // A state stream's subscriber needs the newest payload alone.
      const from = group.latest ? Math.max(m.cursor, end - 1) : m.cursor;
      const socket = m.socket;
      if (socket.readyState !== socket.OPEN) {
        m.cursor = end;
        continue;
      }
      const pending = pendingBytes(m);
      if (pending > 0) {
        // Not yet sent to it: what its socket holds, and the events it has not been given (of a state stream, one payload at most).
        if (!group.latest && pending + this.bytesAt(group, end) - this.bytesAt(group, from) > max) this.dropSlow(m, end);
        continue;
      }
      this.stats.skipped += from - m.cursor;
      m.cursor = end;
      // One write to the network for all of them (log positions `first` to `end - logStart`; no array of them per socket).
      const first = from - group.logStart;
      if (m.raw) {
        const stretch = stretchKey(from, end);
        if (last?.id !== m.id || last.stretch !== stretch) last = { id: m.id, stretch, chunks: this.frames(group.arena, m.prefix, group.log, first, end - group.logStart) };
        const { chunks } = last;
        if (chunks.length === 1) m.raw.write(chunks[0]!);
        else {
          m.raw.cork();
          for (const chunk of chunks) m.raw.write(chunk);
          m.raw.uncork();
        }
        if (pendingBytes(m) > 0) group.arena.hold();
      } else {
        const corked = tcpOf(socket);
        corked?.cork();
        for (let at = first; at < end - group.logStart; at++) socket.send(nextMessage(m.prefix, group.log[at]!), TEXT);
        corked?.uncork();
      }
      this.stats.deliveries += end - from;
      this.stats.writes++;
      if (++served % CLOCK_EVERY !== 0) continue;
      const now = performance.now();
      const ranMs = now - sliceStart;
      if (ranMs >= SLICE_MS) {
        // Without a reading (pacing "always", none to be had, or it failed: NaN), every slice counts as contended.
        if (!this.coreWaitMs || !(this.coreWaitMs() - sliceWait <= CONTENDED_SHARE * ranMs)) this.contendedAt = now;
        // A large pass paces itself while the cores are contended (see PACE_FROM_WRITES, CONTENDED_SHARE); any pass lets the process's other work run.
        if (served >= PACE_FROM_WRITES && now - this.contendedAt < CONTENDED_FOR_MS) {
          await new Promise((resolve) => setTimeout(resolve, ranMs * PAUSE_PER_RUN));
          this.stats.pausedMs += performance.now() - now;
        } else await new Promise((resolve) => setImmediate(resolve));
        await this.giveWay();
        sliceStart = performance.now();
        sliceWait = this.coreWaitMs?.() ?? 0;
      }
    }
    if (served > 0) this.opts.passed?.(performance.now() - passStart);
    if (group.closed) return { behind: "none", blocked: [], checked: group.logStart + group.log.length };
    const end = group.logStart + group.log.length;
    const blocked: Member[] = [];
    for (const m of only ?? [...group.members]) {
      if (m.ended || m.cursor >= end) continue;
      if (m.socket.readyState !== m.socket.OPEN || pendingBytes(m) === 0) return { behind: "behind", blocked: [], checked: end };
      blocked.push(m);
    }
    if (!only || blocked.length === 0) this.trim(group, group.members);
    return { behind: blocked.length ? "blocked" : "none", blocked, checked: end };
  }

  /** Waits for the requests under way in the process, at most DEFER_MS, or DEFER_BUSY_MS while they never let up. */
  private async giveWay(): Promise<void> {
    const waiting = this.opts.quiet?.(this.busy ? DEFER_BUSY_MS : DEFER_MS);
    this.busy = waiting ? !(await waiting) : false;
  }

  /** Closes a subscriber's socket as a slow consumer; it holds no place in the log any more. */
  private dropSlow(m: Member, end: number): void {
    m.cursor = end;
    this.stats.slowConsumers++;
    m.socket.close(SLOW_CONSUMER.code, SLOW_CONSUMER.reason);
  }

  /**
   * The log is full (MAX_QUEUED): the subscribers holding its first event whose sockets have not
   * yet sent what they were given are closed as slow consumers, and the log is trimmed. When no
   * socket holds it back (delivery itself falls behind the events), the log stays full. A state
   * stream's log is trimmed to its newest payload, and nobody is closed.
   */
  private dropStalled(group: Group): void {
    const end = group.logStart + group.log.length;
    if (!group.latest) {
      for (const m of group.members) {
        if (!m.ended && m.cursor <= group.logStart && m.socket.readyState === m.socket.OPEN && pendingBytes(m) > 0) this.dropSlow(m, end);
      }
    }
    this.trim(group, group.members);
  }

  /** Bytes of the group's payloads before position `at` of its log (counted from its first payload). */
  private bytesAt(group: Group, at: number): number {
    const i = at - group.logStart;
    return i <= 0 ? group.startBytes : group.logEnds[i - 1]!;
  }

  /** Drops the payloads every subscriber has received (of a state stream, all but the newest). */
  private trim(group: Group, members: Member[] | Set<Member>): void {
    const end = group.logStart + group.log.length;
    let low = end;
    // forEach: no iterator result a member, in a loop run at every pass over thousands of them.
    members.forEach((m) => {
      if (!m.ended && m.cursor < low) low = m.cursor;
    });
    if (group.latest) low = Math.max(low, end - 1);
    if (low <= group.logStart) return;
    const count = low - group.logStart;
    group.startBytes = group.logEnds[count - 1]!;
    group.log.splice(0, count);
    group.logEnds.splice(0, count);
    group.logStart = low;
  }

  /**
   * The WebSocket frames of the `next` messages of `log[first]` to `log[end - 1]` for the operation
   * of `prefix`, as the buffers to write in order: one (COPIED_FRAMES_BELOW), or the payloads
   * themselves between buffers of the frames' own bytes.
   */
  private frames(arena: FrameArena, prefix: Buffer, log: Buffer[], first: number, end: number): Buffer[] {
    let length = 0;
    let payloadBytes = 0;
    for (let i = first; i < end; i++) {
      length += frameBytes(prefix.length + log[i]!.length + CLOSE.length);
      payloadBytes += log[i]!.length;
    }
    const copied = length < COPIED_FRAMES_BELOW;
    const own = arena.take(copied ? length : length - payloadBytes);
    const chunks: Buffer[] = [];
    let at = 0;
    let start = 0;
    for (let i = first; i < end; i++) {
      const payload = log[i]!;
      at = writeHead(own, at, prefix, payload.length);
      if (copied) at += payload.copy(own, at);
      else {
        chunks.push(own.subarray(start, at), payload);
        start = at;
      }
      at += CLOSE.copy(own, at);
    }
    chunks.push(copied ? own : own.subarray(start, at));
    return chunks;
  }

  /** Ends the group: every subscriber receives `payload` (when given) and completes; the source closes. */
  private end(group: Group, payload?: string): void {
    if (this.groups.get(group.key) === group) this.groups.delete(group.key);
    if (group.closed && group.members.size === 0) return;
    group.closed = true;
    group.log.length = 0;
    group.logEnds.length = 0;
    for (const m of [...group.members]) m.finish(payload);
    void Promise.resolve(group.source?.return?.()).catch(() => undefined);
  }
}
