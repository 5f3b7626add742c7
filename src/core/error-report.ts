import { GraphQLError } from "graphql";
import { maskError as yogaMaskError, type Plugin } from "graphql-yoga";
import { appErrorOf, boundEchoes } from "./errors.js";
import { log as logger } from "./logger.js";
import {
  REFERENCE_GONE,
  RETRY_AFTER_SECONDS,
  ROW_GONE,
  STORAGE_FULL_STATUS,
  isDatabaseUnavailable,
  isReferenceGone,
  isRowGone,
  storageFullMessage,
  unavailableMessage,
} from "./db/db-faults.js";
import { isGraphQLPath } from "./graphql-path.js";

/** Errors already logged: a /v1 fault is seen by yoga's masking and by the REST answer, and logged once. */
const logged = new WeakSet<object>();

function logOnce(err: unknown, write: () => void): void {
  if (err !== null && typeof err === "object") {
    if (logged.has(err)) return;
    logged.add(err);
  }
  write();
}

/** Logs a fault in full (with the request id of the request it happened in), once. */
function logUnexpected(err: unknown): void {
  logOnce(err, () => logger.error({ err }, "unexpected error"));
}

/** A lost database connection: a warning (the client is told to retry), once. */
function logUnavailable(err: unknown): void {
  logOnce(err, () => logger.warn({ err }, "database unavailable"));
}

export interface ErrorBody {
  error: { code: number; message: string };
}

/**
 * The error body of an answer made before any operation runs (a refused body, the rate limit):
 * the documented `{ error: { code, message } }`, and on the GraphQL endpoint the same message in
 * `errors` as well, where GraphQL clients read it.
 */
export function errorBodyFor(
  pathname: string,
  code: number,
  message: string,
): ErrorBody & { errors?: { message: string; extensions: { code: number } }[] } {
  message = boundEchoes(message);
  const body: ErrorBody & { errors?: { message: string; extensions: { code: number } }[] } = { error: { code, message } };
  if (isGraphQLPath(pathname)) body.errors = [{ message, extensions: { code } }];
  return body;
}

/** A fault: logged in full on the server, shown to clients only as this message. */
export const UNEXPECTED = "Unexpected error.";

/**
 * Decides what a client learns of an error: an AppError keeps its status and message; a GraphQL
 * request error (a variable of the wrong type, a missing argument) is a 400 with its message; a
 * lost database connection is a 503 (core/db/db-faults.ts; answered with Retry-After); a write whose
 * referenced row was deleted by a concurrent request is a 409, one whose own row was is a 404;
 * anything else is a masked 500.
 */
export function reportError(error: unknown, log: (err: unknown) => void = logUnexpected): ErrorBody {
  const original = originalOf(error);
  const known = knownError(original);
  if (!known) {
    log(original);
    return { error: { code: 500, message: UNEXPECTED } };
  }
  if (known.unavailable) logUnavailable(original);
  return { error: { code: known.code, message: known.message } };
}

/** What yoga's masking hid (/v1 operations run through yoga's envelop too), or the error itself. */
function originalOf(error: unknown): unknown {
  const unmasked = (error as { [MASKED]?: unknown } | null)?.[MASKED];
  return unmasked === undefined ? error : originalOf(unmasked);
}

/** What a client is told of an error that is not a fault (undefined for a fault); reports nothing. */
function knownError(error: unknown): (ErrorBody["error"] & { unavailable?: true }) | undefined {
  const app = appErrorOf(error);
  if (app) return { code: app.status, message: app.message };
  if (error instanceof GraphQLError && !error.path) {
    return { code: 400, message: error.message.replace(/^Variable "\$(\w+)"/, 'Parameter "$1"') };
  }
  const http = (error as any)?.extensions?.http?.status;
  if (typeof http === "number" && http >= 400 && http < 500) return { code: http, message: (error as Error).message };
  if (isDatabaseUnavailable(error)) return { code: 503, message: unavailableMessage(error), unavailable: true };
  return refusedWriteOf(error);
}

/**
 * yoga's logger: its warnings go to the process's logger, its debug chatter is dropped, and what it
 * reports as an error (the original of an error its masking replaced, or what it cannot read as a
 * GraphQL error) is reported as `reportError` decides — a fault logged once, a lost database
 * connection warned once, and a client's mistake or a lost race not logged as an error at all.
 */
export function yogaLogger() {
  const report =
    (level: "warn" | "error") =>
    (...args: unknown[]) => {
      const err = args.find((a) => a instanceof Error);
      if (level === "error" && err) return void reportError(err);
      const text = args.filter((a) => typeof a === "string").join(" ") || (err as Error | undefined)?.message || "graphql-yoga";
      logger[level](err ? { err } : {}, text);
    };
  return { debug: () => undefined, info: () => undefined, warn: report("warn"), error: report("error") };
}

/**
 * A write that lost a race with a concurrent delete: what it refers to (409) or its own row (404)
 * is gone; or one the database refused for want of storage (507; core/db/storage-guard.ts logs when that starts and ends).
 */
function refusedWriteOf(error: unknown): ErrorBody["error"] | undefined {
  const full = storageFullMessage(error);
  if (full) return { code: STORAGE_FULL_STATUS, message: full };
  if (isReferenceGone(error)) return { code: 409, message: REFERENCE_GONE };
  if (isRowGone(error)) return { code: 404, message: ROW_GONE };
  return undefined;
}

/** The error that decides the status when several were raised: the most severe client error. */
export function pickError(errors: readonly unknown[], log?: (err: unknown) => void): ErrorBody {
  const reports = errors.map((e) => reportError(e, log));
  return reports.find((r) => r.error.code >= 500) ?? reports.sort((a, b) => b.error.code - a.error.code)[0]!;
}

/**
 * GraphQL's error masking (yoga `maskedErrors.maskError`): a transient database fault is shown as
 * a 503 with Retry-After (the HTTP status when no data could be returned); every other error is
 * masked as yoga does.
 */
export function maskGraphQLError(error: unknown, message: string, isDev?: boolean): Error {
  if (!appErrorOf(error) && isDatabaseUnavailable(error)) {
    logUnavailable(error);
    const original = error instanceof GraphQLError ? error : undefined;
    const unavailable = new GraphQLError(unavailableMessage(error), {
      nodes: original?.nodes,
      path: original?.path,
      extensions: { code: 503, http: { status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } } },
    });
    return maskedAs(unavailable, error);
  }
  const refused = appErrorOf(error) ? undefined : refusedWriteOf(error);
  if (refused) {
    const original = error instanceof GraphQLError ? error : undefined;
    const shown = new GraphQLError(refused.message, {
      nodes: original?.nodes,
      path: original?.path,
      extensions: { code: refused.code, http: { status: refused.code } },
    });
    return maskedAs(shown, error);
  }
  const masked = yogaMaskError(error, message, isDev);
  if (masked !== error) return maskedAs(masked, error);
  // A client error shown as it is: the client's input it echoes is cut (core/errors.ts, boundEchoes).
  const bounded = masked instanceof GraphQLError ? boundedError(masked) : masked;
  return bounded !== masked ? maskedAs(bounded, error) : masked;
}

/** `error` with its message's echoes cut (core/errors.ts, boundEchoes), or itself when nothing is cut. */
function boundedError(error: GraphQLError): GraphQLError {
  const message = boundEchoes(error.message);
  if (message === error.message) return error;
  const { nodes, source, positions, path, originalError, extensions } = error;
  return new GraphQLError(message, { nodes, source, positions, path, originalError, extensions });
}

/**
 * Cuts the echoes in the messages of the GraphQL errors that error masking does not see: a
 * document's syntax errors (a token as sent) and its validation errors (a variable's value, which
 * the cost estimate coerces while validating).
 */
export function useBoundedEchoes(): Plugin {
  // The after-hooks are made once: every request parses and validates (or finds both cached).
  const afterParse: AfterParse = ({ result, replaceParseResult }) => {
    if (!(result instanceof GraphQLError)) return;
    const bounded = boundedError(result);
    if (bounded !== result) replaceParseResult(bounded);
  };
  const afterValidate: AfterValidate = ({ result, setResult }) => {
    if (!result.length) return;
    const bounded = result.map((e) => (e instanceof GraphQLError ? boundedError(e) : e));
    if (bounded.some((e, i) => e !== result[i])) setResult(bounded as GraphQLError[]);
  };
  return { onParse: () => afterParse, onValidate: () => afterValidate };
}

type AfterParse = Exclude<ReturnType<NonNullable<Plugin["onParse"]>>, void | Promise<unknown>>;
type AfterValidate = Exclude<ReturnType<NonNullable<Plugin["onValidate"]>>, void | Promise<unknown>>;

/** `masked`, remembering the error it stands for (a /v1 answer is decided from that one). */
function maskedAs(masked: Error, error: unknown): Error {
  Object.defineProperty(masked, MASKED, { value: error, enumerable: false });
  return masked;
}

/** The error a masked one stands for (never serialized). */
const MASKED = Symbol("masked");
