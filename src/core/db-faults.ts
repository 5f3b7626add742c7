import { AppError } from "./errors.js";

/**
 * Database faults that say nothing about the request: the connection to PostgreSQL was lost
 * (a restart, `pg_terminate_backend`, a dropped network), no connection could be had in time,
 * or PostgreSQL asked for the transaction to be tried again (deadlock, serialization failure).
 * Such a request is answered 503 with `Retry-After` — never a 500, and never an answer (a 404)
 * built on a read that did not happen.
 */

/** Seconds a client should wait before sending the request again. */
export const RETRY_AFTER_SECONDS = 1;

export const DATABASE_UNAVAILABLE = "The database could not be reached to complete this request; retry in a moment.";

/** SQLSTATE codes of lost connections and of transactions PostgreSQL asks to retry. */
const TRANSIENT_SQLSTATE = /^(08\w{3}|57P01|57P02|57P03|53300|40001|40P01)$/;
/** Prisma's codes for an unreachable server, a closed connection, a pool or transaction-start timeout. */
const TRANSIENT_PRISMA = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);
/** Driver adapter error kinds of the same faults. */
const TRANSIENT_KINDS = new Set(["ConnectionClosed", "DatabaseNotReachable", "SocketTimeout", "TooManyConnections", "TransactionWriteConflict"]);
/** Node socket errors. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH"]);
/** Messages of the pg driver and Prisma for the same faults, where they carry no code. */
const TRANSIENT_MESSAGE =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|terminating connection due to|server closed the connection|Can't reach database server|Server has closed the connection|Timed out fetching a new connection|Unable to start a transaction in the given time/i;

/** True when `error` (or an error it wraps) is a transient database fault (see above). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: any = error;
  for (let depth = 0; depth < 8 && current && typeof current === "object" && !seen.has(current); depth++) {
    seen.add(current);
    if (current instanceof AppError) return current.status === 503;
    const code = typeof current.code === "string" ? current.code : undefined;
    if (code && (TRANSIENT_SQLSTATE.test(code) || TRANSIENT_PRISMA.has(code) || SOCKET_CODES.has(code))) return true;
    if (typeof current.originalCode === "string" && TRANSIENT_SQLSTATE.test(current.originalCode)) return true;
    if (typeof current.kind === "string" && TRANSIENT_KINDS.has(current.kind)) return true;
    if (code === "P2028" && TRANSIENT_MESSAGE.test(String(current.message))) return true;
    if (typeof current.message === "string" && TRANSIENT_MESSAGE.test(current.message)) return true;
    current = current.meta?.driverAdapterError ?? current.cause ?? current.originalError;
  }
  return false;
}

/** The 503 a request gets for a transient database fault. */
export const databaseUnavailable = () => new AppError(503, DATABASE_UNAVAILABLE);
