import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLSchema } from "graphql";
import type { WebSocket } from "ws";
import type { Writable } from "node:stream";
import type { Context } from "../../core/context.js";
import type { Viewer } from "../../core/access/viewer.js";
import type { AccessCache } from "../../core/access/access-cache.js";
import { AppError } from "../../core/errors.js";
import { revokedTokenError, tokenIsLive, tooManySubscriptions, type SubscriptionQuota } from "../../core/access/live-token.js";
import { accessGrade, isStateStream } from "./grouping.js";
import { DONE, isAsyncIterable } from "./gate.js";
import { buildFrames, FrameArena, nextMessage, pendingBytes, rawSocket, tcpOf, TEXT } from "./frames.js";
import { CLOCK_EVERY, DEFER_BUSY_MS, DEFER_MS, PAUSE_PER_RUN, paces, runQueueDelay, SLICE_MS, sliceContended } from "./pacing.js";

/**
 * Shared graphql-ws streams: each event is executed once per group of subscriptions that would
 * answer it alike (groupKey, grouping.ts), encoded once, and written to every socket of the group.
 * Access is checked again per viewer when it changes (gate.ts), and per token before each delivery.
 * Writes never wait for subscribers: delivery runs off their path in paced slices (pacing.ts), with
 * no per-socket queue: a socket still sending keeps its place in the log and later gets all it
 * missed in one write, or is closed as SLOW_CONSUMER. State streams send only the newest result.
 */

/** What a pass found, as of log position `checked`; "blocked": everyone behind is still sending what they were given. */
interface PassResult {
  behind: "none" | "behind" | "blocked" | "unchecked";
  blocked: Member[];
  checked: number;
}

/** Close code and reason of a socket that fell behind by more than WS_MAX_BUFFERED_BYTES. */
export const SLOW_CONSUMER = { code: 4008, reason: "Slow consumer: too much waiting to be sent; reconnect and subscribe again" } as const;

/** Events a group may hold executed but not yet sent (a delivery far slower than its events). */
const MAX_QUEUED = 4_096;
/** How long a delivery waits before looking again at sockets still sending (sooner on a new event), in ms. */
const BLOCKED_RETRY_MS = 4;
/** Retry delay when tokens could not be checked (database unreachable): nothing is sent unchecked, the log is kept. */
const UNCHECKED_RETRY_MS = 1_000;

/** Identifies log stretch `from`..`end` within a pass: unique since a stretch is at most MAX_QUEUED long (positions below 2^39). */
const stretchKey = (from: number, end: number) => from * (2 * MAX_QUEUED) + (end - from);

type Subscribe = (args: ExecutionArgs) => unknown;

export interface StreamOperation {
  args: ExecutionArgs & { contextValue: Context; rootValue: { subscribe: Subscribe } };
  /** The group key (see LiveStreams.groupKey). */
  key: string;
  socket: WebSocket;
  id: string;
}

export interface StreamOptions {
  accessCache: AccessCache;
  maxBufferedBytes: number;
  /** Live subscriptions per API token in this process, shared with SSE subscriptions (core/access/live-token.ts). */
  quota: SubscriptionQuota;
  /** The payload of a result as sent (errors as the socket shows them: masked, without HTTP details). */
  serialize(result: ExecutionResult): string;
  fault(err: unknown): ExecutionResult;
  /** Null when no request is under way, else resolves true once none is, or false after `maxMs` (HttpFront.whenIdle). */
  whenIdle?(maxMs: number): Promise<boolean> | null;
  /** The thread's run-queue delay so far, in ms; default runQueueDelay(); null: large passes always pace. */
  coreWaitMs?: (() => number) | null;
  /** Whether large passes pace always (default) or only while the cores are contended (pacing.ts). */
  pacing?: "always" | "contended";
  /** Told of each pass that wrote to sockets: from its start to its last write. */
  passed?(ms: number): void;
}

interface Member {
  id: string;
  socket: WebSocket;
  raw: Writable | undefined;
  /** Not the whole context: thousands of subscriptions would each keep what their connection opened with. */
  viewer: Viewer;
  prefix: Buffer;
  /** Log position of the next payload this subscriber is to receive. */
  cursor: number;
  ended: boolean;
  waiting: ((result: IteratorResult<never>) => void) | null;
  /** Ends the subscription, sending `payload` first when given; graphql-ws then sends `complete`. */
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
  /** A state stream (isStateStream), and its newest payload: an equal result is not sent again. */
  latest: boolean;
  newest?: Buffer;
  /** Payloads not yet sent to every subscriber; `log[0]` is at position `logStart`, counted from the group's first payload. */
  log: Buffer[];
  logStart: number;
  /** Cumulative payload bytes up to the end of each `log` entry, and before `log[0]`. */
  logEnds: number[];
  startBytes: number;
  sending: boolean;
  arena: FrameArena;
  wake?: () => void;
}

/** What graphql-ws holds per subscription (results go to the socket directly): a class, so thousands hold no closures. */
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

const viewerOf = (viewer: Viewer) => `${viewer.userId}\u0000${viewer.ssoProvider ?? ""}`;

export class LiveStreams {
  private readonly groups = new Map<string, Group>();
  /** For the metrics: executions per group and event, deliveries per socket and event, writes per socket and pass. */
  readonly stats = { executions: 0, deliveries: 0, writes: 0, skipped: 0, slowConsumers: 0, accessGrades: 0, pausedMs: 0 };
  private readonly grading = new Map<string, Promise<string | null>>();
  private readonly coreWaitMs: (() => number) | null;
  private contendedAt = -Infinity;
  private busy = false;
  constructor(private readonly opts: StreamOptions) {
    this.coreWaitMs = opts.pacing !== "contended" ? null : opts.coreWaitMs === undefined ? runQueueDelay() : opts.coreWaitMs;
  }

  /**
   * A subscription's group: document, operation, variables and either the viewer's access grade
   * (when nothing selected depends on the viewer) or the viewer (user, SSO provider). Concurrent
   * calls of one viewer (sockets reconnecting together) share one grading; none is kept after.
   */
  async groupKey(
    schema: GraphQLSchema,
    document: DocumentNode,
    query: string,
    operationName: string | null | undefined,
    variables: Record<string, unknown> | null | undefined,
    ctx: Context,
  ): Promise<string> {
    // JSON holds no raw NUL, so "\u0000" parts the key unambiguously.
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

  size(): { groups: number; subscriptions: number } {
    let subscriptions = 0;
    for (const g of this.groups.values()) subscriptions += g.members.size;
    return { groups: this.groups.size, subscriptions };
  }

  /** Subscribes `op` to its group, opening it if needed: an iterator lasting as long as the subscription, or the refusal. */
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

  close(): void {
    for (const group of [...this.groups.values()]) this.end(group);
  }

  private open(op: StreamOperation): Group {
    const ctx: Context = { ...op.args.contextValue, loaders: new Map(), sharedStream: true };
    // Only the operation, not graphql-ws's extras holding the opener's socket: the group outlives it.
    const { schema, document, operationName, variableValues, rootValue } = op.args;
    const args = { schema, document, operationName, variableValues, rootValue, contextValue: ctx };
    const group: Group = {
      key: op.key,
      ctx,
      args,
      members: new Set(),
      ready: undefined as any,
      checked: 0,
      closed: false,
      latest: isStateStream(args),
      log: [],
      logStart: 0,
      logEnds: [],
      startBytes: 0,
      sending: false,
      arena: new FrameArena(),
    };
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
      // Events already executed were published before it joined.
      cursor: group.logStart + group.log.length,
      ended: false,
      waiting: null,
      finish: (payload) => {
        if (member.ended) return;
        member.ended = true;
        release();
        if (payload !== undefined && member.socket.readyState === member.socket.OPEN)
          member.socket.send(nextMessage(member.prefix, Buffer.from(payload)), TEXT);
        group.members.delete(member);
        if (group.members.size === 0) this.end(group);
        member.waiting?.(DONE);
        member.waiting = null;
      },
    };
    group.members.add(member);
    return new MemberIterator(member);
  }

  private async run(group: Group): Promise<void> {
    try {
      for (;;) {
        const next = await group.source!.next();
        group.ctx.loaders.clear();
        if (next.done || group.closed) break;
        this.stats.executions++;
        // Checked again for access changed during execution: a result with errors, executed as a
        // viewer who lost access meanwhile, is no answer for those who kept theirs.
        const access = await this.allowed(group);
        if (!access) return;
        if (access === "moved" && next.value.errors?.length) continue;
        if (group.log.length >= MAX_QUEUED) this.dropStalled(group);
        if (group.log.length >= MAX_QUEUED)
          throw new AppError(
            503,
            `This live stream fell more than ${MAX_QUEUED} events behind its delivery and was ended; subscribe again.`,
          );
        const payload = Buffer.from(this.opts.serialize(next.value));
        // An event executed after a later write reads the same newest state: nothing new.
        if (group.latest && group.newest?.equals(payload)) continue;
        if (group.latest) group.newest = payload;
        group.log.push(payload);
        group.logEnds.push(this.bytesAt(group, group.logStart + group.log.length - 1) + payload.length);
        if (group.sending) group.wake?.();
        // A delivery fault ends its group with that error, never the process.
        else void this.send(group).catch((err) => this.end(group, this.opts.serialize(this.opts.fault(err))));
      }
      this.end(group);
    } catch (err) {
      this.end(group, this.opts.serialize(this.opts.fault(err)));
    }
  }

  /** The group's streamGate (gate.ts): runs before each event is executed. */
  private async gate(group: Group): Promise<boolean> {
    if (group.closed) return false;
    const access = await this.allowed(group);
    group.ctx.loaders.clear();
    return access !== false && !group.closed;
  }

  /** After an access change, re-runs the field's `subscribe` per viewer; refused viewers' subscriptions complete. */
  private async allowed(group: Group): Promise<boolean | "moved"> {
    const version = this.opts.accessCache.version();
    if (version === group.checked) return true;
    const viewers = new Map<string, Member[]>();
    for (const m of group.members) viewers.get(viewerOf(m.viewer))?.push(m) ?? viewers.set(viewerOf(m.viewer), [m]);
    const refusals = await Promise.all(
      [...viewers.values()].map(async ([first]) => {
        // No gate: this check reads no event.
        const contextValue: Context = {
          ...group.ctx,
          viewer: first!.viewer,
          loaders: new Map(),
          sharedStream: true,
          streamGate: undefined,
        };
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
    // Execute as a viewer who kept access (the opener may have left or lost it).
    group.checked = version;
    if (kept.some((v) => viewerOf(v) === viewerOf(group.ctx.viewer))) return true;
    group.ctx.viewer = kept[0]!;
    return "moved";
  }

  /** Delivers the log in passes until nobody is behind; blocked sockets are retried alone, everyone on a new event. */
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
        // An event executed after the pass looked is owed to everyone, and a pass over the blocked
        // ones alone cannot tell who else an event during it is for: both need another pass.
        if (behind === "none" && checked === end && !(only && moved)) break;
        only = undefined;
        if (behind === "unchecked") await new Promise((resolve) => setTimeout(resolve, UNCHECKED_RETRY_MS));
        if (behind === "blocked" && !moved) {
          await this.pause(group);
          // No event since: only the blocked ones may be behind.
          if (before === group.logStart + group.log.length) only = blocked;
        }
      }
    } finally {
      group.sending = false;
      group.wake = undefined;
    }
  }

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

  /** One pass over the group's subscribers, or `only` those when the others have the whole log. */
  private async pass(group: Group, only?: Member[]): Promise<PassResult> {
    const members = only ?? [...group.members];
    if (!only) this.trim(group, members);
    if (group.log.length === 0) return { behind: "none", blocked: [], checked: group.logStart };
    const tokens = new Map<string, Member[]>();
    for (const m of members) tokens.get(m.viewer.tokenId)?.push(m) ?? tokens.set(m.viewer.tokenId, [m]);
    // All at once: tokens the access cache does not hold are read in one batched statement.
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
    // Reused by the next socket when its operation id and log stretch are the same (simple clients all use "1").
    let last: { id: string; stretch: number; chunks: Buffer[] } | undefined;
    await this.waitForIdleRequests();
    const passStart = performance.now();
    let sliceStart = passStart;
    let sliceWait = this.coreWaitMs?.() ?? 0;
    let served = 0;
    for (let i = 0; i < members.length; i++) {
      const m = members[i]!;
      if (m.ended) continue;
      const end = group.logStart + group.log.length;
      if (m.cursor >= end) continue;
      const from = group.latest ? Math.max(m.cursor, end - 1) : m.cursor;
      const socket = m.socket;
      if (socket.readyState !== socket.OPEN) {
        m.cursor = end;
        continue;
      }
      const pending = pendingBytes(m);
      if (pending > 0) {
        // Owed: what its socket holds plus the events not yet given (a state stream owes one at most).
        if (!group.latest && pending + this.bytesAt(group, end) - this.bytesAt(group, from) > max) this.dropSlow(m, end);
        continue;
      }
      this.stats.skipped += from - m.cursor;
      m.cursor = end;
      const first = from - group.logStart;
      if (m.raw) {
        const stretch = stretchKey(from, end);
        if (last?.id !== m.id || last.stretch !== stretch)
          last = { id: m.id, stretch, chunks: buildFrames(group.arena, m.prefix, group.log, first, end - group.logStart) };
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
        if (sliceContended(this.coreWaitMs, sliceWait, ranMs)) this.contendedAt = now;
        // A large pass pauses while the cores are contended; any pass lets the process's other work run.
        if (paces(served, now - this.contendedAt)) {
          await new Promise((resolve) => setTimeout(resolve, ranMs * PAUSE_PER_RUN));
          this.stats.pausedMs += performance.now() - now;
        } else await new Promise((resolve) => setImmediate(resolve));
        await this.waitForIdleRequests();
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

  /** Lets the process's requests finish first, up to DEFER_MS (DEFER_BUSY_MS under constant load). */
  private async waitForIdleRequests(): Promise<void> {
    const waiting = this.opts.whenIdle?.(this.busy ? DEFER_BUSY_MS : DEFER_MS);
    this.busy = waiting ? !(await waiting) : false;
  }

  private dropSlow(m: Member, end: number): void {
    m.cursor = end;
    this.stats.slowConsumers++;
    m.socket.close(SLOW_CONSUMER.code, SLOW_CONSUMER.reason);
  }

  /** The log is full: blocked sockets holding its first event are closed as slow (never for a state stream), then it is trimmed. */
  private dropStalled(group: Group): void {
    const end = group.logStart + group.log.length;
    if (!group.latest) {
      for (const m of group.members) {
        if (!m.ended && m.cursor <= group.logStart && m.socket.readyState === m.socket.OPEN && pendingBytes(m) > 0) this.dropSlow(m, end);
      }
    }
    this.trim(group, group.members);
  }

  private bytesAt(group: Group, at: number): number {
    const i = at - group.logStart;
    return i <= 0 ? group.startBytes : group.logEnds[i - 1]!;
  }

  /** Drops the payloads every subscriber has received (of a state stream, all but the newest). */
  private trim(group: Group, members: Member[] | Set<Member>): void {
    const end = group.logStart + group.log.length;
    let low = end;
    // forEach: no iterator result per member, on every pass over thousands of them.
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

  /** Every subscriber receives `payload` (when given) and completes; the source closes. */
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
