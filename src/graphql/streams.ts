import type { ExecutionArgs, ExecutionResult } from "graphql";
import type { WebSocket } from "ws";
import type { Context } from "../core/context.js";
import type { AccessCache } from "../core/access-cache.js";
import { revokedTokenError, tokenIsLive } from "../core/live-token.js";

/**
 * Shared graphql-ws subscription streams: an event is executed once per group of subscriptions
 * that would answer it alike, and the serialized result is sent to every socket of the group.
 *
 * - A group is (document text, operation name, variables, viewer): the viewer is the user and the
 *   SSO provider of their token, everything the membership door (core/access.ts) answers from, so
 *   subscribers in one group have the same access and their results are the same. Tokens of one
 *   user share a group; each subscriber's own token is checked before each delivery, from the
 *   access cache (core/access-cache.ts): a revoked token's subscription receives one 401 error and
 *   completes, the others go on.
 * - The group's source stream is opened once (the field's `subscribe`, with its access check), and
 *   each event is executed once, with the context of the subscription that opened it (loaders
 *   cleared before each event), through the yoga plugins (masked errors, limits checked at subscribe).
 * - Access changes: whenever the access cache drops its answers (a change of tokens, members, SSO,
 *   here or in another process through the pub/sub), the group's access check (the field's
 *   `subscribe`) runs again before its next delivery; when it refuses, every subscriber of the group
 *   receives that error and completes.
 * - Writes never wait for subscribers: delivery runs off the write's path (after the pub/sub event),
 *   and yields to other work every SEND_SLICE sockets. A socket with more than `maxBufferedBytes`
 *   not yet sent is closed with SLOW_CONSUMER (4008): it never slows the others nor the writer, and
 *   the group's events stay in order for every socket that receives them.
 */

/** Close code and reason of a socket that fell behind by more than WS_MAX_BUFFERED_BYTES. */
export const SLOW_CONSUMER = { code: 4008, reason: "Slow consumer: too much waiting to be sent; reconnect and subscribe again" } as const;

/** Sockets served before delivery yields to other work (requests, other groups). */
const SEND_SLICE = 500;
/** Frames are encoded once per operation id and sent as text. */
const TEXT = { binary: false } as const;

type Subscribe = (args: ExecutionArgs) => unknown;

/** A graphql-ws subscription operation that may share a stream. */
export interface StreamOperation {
  args: ExecutionArgs & { contextValue: Context; rootValue: { subscribe: Subscribe } };
  /** The group key (see groupKey). */
  key: string;
  socket: WebSocket;
  id: string;
}

/** The key of the group a subscription belongs to: its document, operation, variables and viewer. */
export function groupKey(query: string, operationName: string | null | undefined, variables: unknown, ctx: Context): string {
  return JSON.stringify([query, operationName ?? null, variables ?? null, ctx.viewer.userId, ctx.viewer.ssoProvider ?? null]);
}

export interface StreamOptions {
  accessCache: AccessCache;
  maxBufferedBytes: number;
  /** The payload of a result as sent (errors as the socket shows them: masked, without HTTP details). */
  serialize(result: ExecutionResult): string;
  /** The result answered for a fault while opening or running a stream. */
  fault(err: unknown): ExecutionResult;
}

interface Member {
  id: string;
  socket: WebSocket;
  tokenId: string;
  /** `{"id":…,"type":"next","payload":` */
  prefix: string;
  ended: boolean;
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
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<ExecutionResult> => typeof (value as any)?.[Symbol.asyncIterator] === "function";
const DONE: IteratorResult<never> = { done: true, value: undefined };

export class LiveStreams {
  private readonly groups = new Map<string, Group>();
  /** For the metrics: events executed (once per group), deliveries (once per socket), slow consumers closed. */
  readonly stats = { executions: 0, deliveries: 0, slowConsumers: 0 };

  constructor(private readonly opts: StreamOptions) {}

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
    for (;;) {
      const group = this.groups.get(op.key) ?? this.open(op);
      const refusal = await group.ready;
      if (refusal) return refusal;
      if (group.closed) continue; // ended meanwhile: open another
      return this.member(group, op);
    }
  }

  /** Ends every stream (the gateway is closing). */
  close(): void {
    for (const group of [...this.groups.values()]) this.end(group);
  }

  private open(op: StreamOperation): Group {
    const ctx: Context = { ...op.args.contextValue, loaders: new Map(), sharedStream: true };
    const args = { ...op.args, contextValue: ctx };
    const group: Group = { key: op.key, ctx, args, members: new Set(), ready: undefined as any, checked: 0, closed: false };
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

  private member(group: Group, op: StreamOperation): AsyncIterableIterator<never> {
    let waiting: ((result: IteratorResult<never>) => void) | null = null;
    const member: Member = {
      id: op.id,
      socket: op.socket,
      tokenId: op.args.contextValue.viewer.tokenId,
      prefix: `{"id":${JSON.stringify(op.id)},"type":"next","payload":`,
      ended: false,
      finish: (payload) => {
        if (member.ended) return;
        member.ended = true;
        if (payload !== undefined && member.socket.readyState === member.socket.OPEN) member.socket.send(member.prefix + payload + "}");
        group.members.delete(member);
        if (group.members.size === 0) this.end(group);
        waiting?.(DONE);
        waiting = null;
      },
    };
    group.members.add(member);
    return {
      [Symbol.asyncIterator]() {
        return this;
      },
      next: () => (member.ended ? Promise.resolve(DONE) : new Promise((resolve) => (waiting = resolve))),
      return: async () => {
        member.finish();
        return DONE;
      },
      throw: async () => {
        member.finish();
        return DONE;
      },
    };
  }

  /** Executes the group's events one after another and delivers each before the next. */
  private async run(group: Group): Promise<void> {
    try {
      for (;;) {
        const next = await group.source!.next();
        group.ctx.loaders.clear();
        if (next.done || group.closed) break;
        this.stats.executions++;
        if (!(await this.allowed(group))) return;
        await this.deliver(group, next.value);
      }
      this.end(group);
    } catch (err) {
      this.end(group, this.opts.serialize(this.opts.fault(err)));
    }
  }

  /** Whether the group's access still holds: checked again (the field's `subscribe`) once access changed. */
  private async allowed(group: Group): Promise<boolean> {
    const version = this.opts.accessCache.version();
    if (version === group.checked) return true;
    const args = { ...group.args, contextValue: { ...group.ctx, loaders: new Map() } };
    let result: unknown;
    try {
      result = await args.rootValue.subscribe(args);
    } catch (err) {
      result = this.opts.fault(err);
    }
    if (isAsyncIterable(result)) {
      await result[Symbol.asyncIterator]().return?.();
      group.checked = version;
      return true;
    }
    this.end(group, this.opts.serialize(result as ExecutionResult));
    return false;
  }

  private async deliver(group: Group, result: ExecutionResult): Promise<void> {
    const payload = this.opts.serialize(result);
    const members = [...group.members];
    // Each subscriber's own token, once per distinct token (from the access cache).
    const tokens = new Map<string, Member[]>();
    for (const m of members) tokens.get(m.tokenId)?.push(m) ?? tokens.set(m.tokenId, [m]);
    let revoked: string | undefined;
    for (const [tokenId, holders] of tokens) {
      if (!tokenId || (await tokenIsLive(group.ctx, tokenId))) continue;
      revoked ??= this.opts.serialize({ errors: [revokedTokenError()] });
      for (const m of holders) m.finish(revoked);
    }
    const max = this.opts.maxBufferedBytes;
    // Sockets whose clients number their operations alike share one encoded frame.
    const frames = new Map<string, Buffer>();
    let sent = 0;
    for (const m of members) {
      if (m.ended) continue;
      const socket = m.socket;
      if (socket.readyState !== socket.OPEN) continue;
      if (socket.bufferedAmount > max) {
        this.stats.slowConsumers++;
        socket.close(SLOW_CONSUMER.code, SLOW_CONSUMER.reason);
        continue;
      }
      let frame = frames.get(m.id);
      if (!frame) frames.set(m.id, (frame = Buffer.from(m.prefix + payload + "}")));
      socket.send(frame, TEXT);
      this.stats.deliveries++;
      if (++sent % SEND_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Ends the group: every subscriber receives `payload` (when given) and completes; the source closes. */
  private end(group: Group, payload?: string): void {
    if (this.groups.get(group.key) === group) this.groups.delete(group.key);
    if (group.closed && group.members.size === 0) return;
    group.closed = true;
    for (const m of [...group.members]) m.finish(payload);
    void Promise.resolve(group.source?.return?.()).catch(() => undefined);
  }
}

