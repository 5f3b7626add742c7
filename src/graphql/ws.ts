import { GraphQLError, getOperationAST, type ExecutionArgs, type ExecutionResult } from "graphql";
import type { ServerOptions } from "graphql-ws";
import type { YogaServerInstance } from "graphql-yoga";
import { UNEXPECTED } from "../core/error-report.js";
import { trustedQuery, type TrustedDocuments } from "./trusted-documents.js";
import type { LiveStreams, StreamOperation } from "./streams/live-streams.js";

type Enveloped = ReturnType<YogaServerInstance<any, any>["getEnveloped"]>;
type Operation = ExecutionArgs & {
  rootValue: { execute: Enveloped["execute"]; subscribe: Enveloped["subscribe"] };
  /** Set on subscriptions: what shares a stream (graphql/streams/live-streams.ts). */
  stream?: Omit<StreamOperation, "args">;
};

/** Longest close reason a WebSocket may carry, in UTF-8 bytes (RFC 6455 5.5: a control frame's 125, less the code's 2). */
const MAX_CLOSE_REASON_BYTES = 123;

/** What of a ws socket `guardClientFaults` replaces: its class's own methods stay underneath. */
interface Patched {
  close(code?: number, reason?: string | Buffer): void;
  emit(event: string | symbol, ...args: any[]): boolean;
}

/**
 * Keeps a client's mistakes on a graphql-ws socket from being reported as the server's, with one
 * pair of functions for every socket (nothing allocated per socket; each calls its class's own):
 * - `close` shortens a reason too long for a close frame. graphql-ws writes client data into some
 *   reasons (`Subscriber for <id> already exists`, with the operation id as sent): ws refuses a
 *   reason over 123 bytes with a RangeError, which graphql-ws turns into 4500 "Internal error".
 *   The code is kept; the reason is cut at a character boundary and ends with "…".
 * - `emit` keeps ws's errors about what the peer sent — a message past the bound (MAX_BODY_BYTES),
 *   a malformed frame: the codes `WS_ERR_…` — from graphql-ws's listener, which writes each to
 *   standard error as "Internal error emitted on a WebSocket socket. Please check your
 *   implementation." and closes with 1011. ws has closed the socket already with the protocol's
 *   code for it (1009, 1002, 1007), which the socket's log line gives (server/http.ts).
 */
export function guardClientFaults(socket: Patched): void {
  socket.close = closeWithShortReason;
  socket.emit = emitUnlessPeerFault;
}

function own(socket: Patched): Patched {
  return Object.getPrototypeOf(socket) as Patched;
}

function closeWithShortReason(this: Patched, code?: number, reason?: string | Buffer): void {
  own(this).close.call(this, code, typeof reason === "string" ? shortReason(reason) : reason);
}

function emitUnlessPeerFault(this: Patched, event: string | symbol, ...args: unknown[]): boolean {
  if (event === "error" && isPeerFault(args[0])) return true;
  return own(this).emit.call(this, event, ...args);
}

function isPeerFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("WS_ERR_");
}

export function shortReason(reason: string): string {
  if (Buffer.byteLength(reason) <= MAX_CLOSE_REASON_BYTES) return reason;
  let cut = "";
  for (const char of reason) {
    if (Buffer.byteLength(cut + char) > MAX_CLOSE_REASON_BYTES - 3) break;
    cut += char;
  }
  return cut + "…";
}

/** An error as a graphql-ws message carries it: without the HTTP status meant for HTTP answers. */
export function forSocket(error: GraphQLError): GraphQLError {
  if (!error.extensions?.http) return error;
  const { http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions,
  });
}

/**
 * Empties a shared subscription's arguments once it joined its stream (or was refused): graphql-ws
 * keeps the object it was given for as long as the subscription lasts, and the stream keeps what
 * it needs of them (graphql/streams/live-streams.ts) — 10,000 subscriptions would each hold a whole context.
 */
function forget(op: Operation): void {
  const emptied = op as Partial<Operation>;
  emptied.contextValue = undefined;
  emptied.variableValues = undefined;
  emptied.rootValue = undefined;
  emptied.stream = undefined;
}

/** The errors an operation that could not start answers with: its own, or a masked fault. */
export function asErrors(err: unknown): readonly GraphQLError[] {
  if (err instanceof GraphQLError) return [forSocket(err)];
  console.error("graphql-ws operation failed:", err);
  return [new GraphQLError(UNEXPECTED)];
}

/**
 * How graphql-ws runs operations through the yoga server's plugins (parse, limits, validation,
 * context, masked errors). One operation that fails (a syntax error, a document over a limit,
 * a token revoked meanwhile) answers an `error` message for its own id; the socket and the other
 * operations on it stay open. With trusted documents, an operation names one by id. Subscriptions
 * share their streams with the same subscriptions of other sockets (`streams`, graphql/streams/live-streams.ts).
 */
export function graphqlWsOperations(
  yoga: YogaServerInstance<any, any>,
  trusted?: TrustedDocuments,
  streams?: LiveStreams,
): Pick<ServerOptions, "onSubscribe" | "execute" | "subscribe"> {
  const run = async (args: Operation, kind: "execute" | "subscribe"): Promise<ExecutionResult | AsyncIterable<ExecutionResult>> => {
    try {
      return (await args.rootValue[kind](args)) as ExecutionResult | AsyncIterable<ExecutionResult>;
    } catch (err) {
      return { errors: asErrors(err) };
    }
  };
  return {
    execute: (args) => run(args as Operation, "execute") as any,
    subscribe: async (args) => {
      const op = args as Operation;
      if (!streams || !op.stream) return run(op, "subscribe") as any;
      const joined = await streams.join({ ...op.stream, args: op as StreamOperation["args"] });
      forget(op);
      return joined as any;
    },
    onSubscribe: async (ctx, id, params) => {
      try {
        // Neither the connection's upgrade request nor its socket: nothing run here reads them, each
        // operation's context would keep them while it lasts, and a shared stream's context (its
        // opener's) for as long as the stream lasts, after the opener's socket closed.
        const enveloped = yoga.getEnveloped({ params, connectionParams: ctx.connectionParams } as any);
        const query = trusted ? trustedQuery(trusted, params as any) : params.query;
        const document = enveloped.parse(query);
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length) return errors.map(forSocket);
        const contextValue = await enveloped.contextFactory();
        const args: Operation = {
          schema: enveloped.schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables,
          contextValue,
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
        if (streams && getOperationAST(document, params.operationName)?.operation === "subscription") {
          const key = await streams.groupKey(
            enveloped.schema,
            document,
            query,
            params.operationName,
            params.variables,
            contextValue as any,
          );
          args.stream = { key, socket: (ctx.extra as any).socket, id };
        }
        return args;
      } catch (err) {
        return asErrors(err);
      }
    },
  };
}
