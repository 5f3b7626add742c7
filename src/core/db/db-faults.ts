import { AppError } from "../errors.js";
import { DISK_FULL } from "./storage-guard.js";

/**
 * Database faults that say nothing about the request: the connection to PostgreSQL was lost
 * (a restart, `pg_terminate_backend`, a dropped network), no connection could be had in time,
 * PostgreSQL asked for the transaction to be tried again (deadlock, serialization failure), or a
 * statement ran past the gateway's bounds (DB_LOCK_TIMEOUT_MS waiting for rows another session
 * holds locked, DB_STATEMENT_TIMEOUT_MS in all: core/db/pg-pool.ts), or a transaction past Prisma's
 * (5 s unless the transaction sets its own).
 * Such a request is answered 503 with `Retry-After` — never a 500, and never an answer (a 404)
 * built on a read that did not happen.
 */

/** Seconds a client should wait before sending the request again. */
export const RETRY_AFTER_SECONDS = 1;

export const DATABASE_UNAVAILABLE = "The database could not be reached to complete this request; retry in a moment.";
export const DATABASE_TIMED_OUT =
  "The database did not complete this request in time (rows it needed stayed locked by another change, or a statement ran too long); retry in a moment.";

/** SQLSTATE codes of a lost connection (class 08, the server shutting down or starting up). */
const LOST_SQLSTATE = /^(08\w{3}|57P01|57P02|57P03)$/;
/** SQLSTATE codes of a busy server or of a transaction PostgreSQL asks to try again. */
const BUSY_SQLSTATE = /^(53300|40001|40P01)$/;
/** SQLSTATE codes of a statement that ran past a bound: lock_timeout (55P03), statement_timeout (57014). */
const TIMED_OUT_SQLSTATE = /^(55P03|57014)$/;
/** Prisma's codes for an unreachable server or a closed connection; for a pool timeout. */
const LOST_PRISMA = new Set(["P1001", "P1002", "P1017"]);
const BUSY_PRISMA = new Set(["P1008", "P2024"]);
/** Driver adapter error kinds of the same faults. */
const LOST_KINDS = new Set(["ConnectionClosed", "DatabaseNotReachable", "SocketTimeout"]);
const BUSY_KINDS = new Set(["TooManyConnections", "TransactionWriteConflict"]);
/** Node socket errors. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH"]);
/** Messages of the pg driver and Prisma for the same faults, where they carry no code. */
/** node-postgres's error for a statement not answered within `query_timeout` (core/db/pg-pool.ts discards its connection). */
export const READ_TIMEOUT = "Query read timeout";
const LOST_MESSAGE = new RegExp(
  `Connection terminated|not queryable|terminating connection due to|server closed the connection|Can't reach database server|Server has closed the connection|${READ_TIMEOUT}`,
  "i",
);
const BUSY_MESSAGE =
  /timeout exceeded when trying to connect|Timed out fetching a new connection|Unable to start a transaction in the given time/i;

/** Whether `error` or an error it wraps (cause, originalError, Prisma's driver error) satisfies `test`. */
function somewhereIn(error: unknown, test: (e: any) => boolean | undefined): boolean {
  return firstIn(error, test) !== undefined;
}

/** The first of `error` and the errors it wraps that satisfies `test`. */
function firstIn(error: unknown, test: (e: any) => boolean | undefined): any {
  const seen = new Set<unknown>();
  let current: any = error;
  for (let depth = 0; depth < 8 && current && typeof current === "object" && !seen.has(current); depth++) {
    seen.add(current);
    if (current instanceof AppError) return undefined;
    if (test(current)) return current;
    current = current.meta?.driverAdapterError ?? current.cause ?? current.originalError;
  }
  return undefined;
}

/** HTTP status of a write refused for want of storage (Insufficient Storage). */
export const STORAGE_FULL_STATUS = 507;
export const STORAGE_FULL = "The server's storage is full: nothing was written; retry once space is freed. Reads go on.";
/** The messages of the embedded database's own refusals (core/db/storage-guard.ts), shown as they are. */
const GUARD_MESSAGE = /^The (server's storage|embedded database's disk) /;

/**
 * What a client is told of a write the database refused for want of space (SQLSTATE 53100, from
 * PostgreSQL or from the embedded database's storage guard), or undefined for any other error.
 */
export function storageFullMessage(error: unknown): string | undefined {
  const full = firstIn(error, (e) => e.code === DISK_FULL || e.originalCode === DISK_FULL);
  if (!full) return undefined;
  return typeof full.message === "string" && GUARD_MESSAGE.test(full.message) ? full.message : STORAGE_FULL;
}

function lost(e: any): boolean {
  const code = typeof e.code === "string" ? e.code : undefined;
  return (
    (!!code && (LOST_SQLSTATE.test(code) || LOST_PRISMA.has(code) || SOCKET_CODES.has(code))) ||
    (typeof e.originalCode === "string" && LOST_SQLSTATE.test(e.originalCode)) ||
    (typeof e.kind === "string" && LOST_KINDS.has(e.kind)) ||
    (typeof e.message === "string" && LOST_MESSAGE.test(e.message))
  );
}

/** Prisma's interactive transaction that ran past its time (P2028, "…an expired transaction"): not other misuses of a transaction. */
const EXPIRED_TRANSACTION = /expired transaction|timeout for this transaction/i;

function timedOut(e: any): boolean {
  const code = typeof e.code === "string" ? e.code : typeof e.originalCode === "string" ? e.originalCode : undefined;
  if (code === "P2028") return typeof e.message === "string" && EXPIRED_TRANSACTION.test(e.message);
  return !!code && TIMED_OUT_SQLSTATE.test(code);
}

function busy(e: any): boolean {
  const code = typeof e.code === "string" ? e.code : undefined;
  return (
    timedOut(e) ||
    (!!code && (BUSY_SQLSTATE.test(code) || BUSY_PRISMA.has(code))) ||
    (typeof e.originalCode === "string" && BUSY_SQLSTATE.test(e.originalCode)) ||
    (typeof e.kind === "string" && BUSY_KINDS.has(e.kind)) ||
    (typeof e.message === "string" && BUSY_MESSAGE.test(e.message))
  );
}

/** True when `error` comes from a connection to PostgreSQL that was lost (a read on it may be sent again elsewhere). */
export function isConnectionLost(error: unknown): boolean {
  return somewhereIn(error, lost);
}

/** True when `error` (or an error it wraps) is a transient database fault (see above): answered 503. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof AppError) return error.status === 503;
  return somewhereIn(error, (e) => lost(e) || busy(e));
}

/** What a client is told of a transient database fault (see isDatabaseUnavailable). */
export function unavailableMessage(error: unknown): string {
  return somewhereIn(error, timedOut) ? DATABASE_TIMED_OUT : DATABASE_UNAVAILABLE;
}

/** SQLSTATE, Prisma code and driver adapter kind of a foreign key violation. */
function referenceGone(e: any): boolean {
  return e.code === "P2003" || e.code === "23503" || e.originalCode === "23503" || e.kind === "ForeignKeyConstraintViolation";
}

/**
 * True when a write failed because a row it refers to is gone: it was removed by another request
 * between this request's check and its write (a reply to a comment deleted at the same moment).
 */
export function isReferenceGone(error: unknown): boolean {
  return somewhereIn(error, referenceGone);
}

export const REFERENCE_GONE =
  "Something this request refers to was deleted while it was being written; nothing was stored. Check that it still exists.";

/** True when a statement asked for a row lock without waiting (NOWAIT) and another transaction held it (SQLSTATE 55P03). */
export function isLockBusy(error: unknown): boolean {
  return somewhereIn(
    error,
    (e) =>
      e.code === "55P03" || e.originalCode === "55P03" || (typeof e.message === "string" && /could not obtain lock on row/.test(e.message)),
  );
}

/** True when a write or a read that must find its row found none: another request deleted it after this one looked it up. */
export function isRowGone(error: unknown): boolean {
  return somewhereIn(error, (e) => e.code === "P2025");
}

export const ROW_GONE = "What this request acts on was deleted by another request while this one was being handled.";

/** The 503 a request gets for a transient database fault. */
export const databaseUnavailable = () => new AppError(503, DATABASE_UNAVAILABLE);
