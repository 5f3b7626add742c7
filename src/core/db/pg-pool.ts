import pg from "pg";
import { READ_TIMEOUT, isConnectionLost, isDatabaseUnavailable } from "./db-faults.js";
import { log } from "../logger.js";

/**
 * The PostgreSQL connection pool, made to outlive lost connections (a restart of PostgreSQL, an
 * administrator's `pg_terminate_backend`, a dropped network):
 *
 * - every connection keeps an error listener for its whole life, so an error that arrives between
 *   two statements can never end the process;
 * - a checked-out connection that ends goes back to the pool at once, marked broken: Prisma does
 *   not release a transaction's connection when its ROLLBACK fails on a dead connection, and each
 *   such connection would otherwise be lost to the pool until every request waits forever;
 * - waiting for a free connection is bounded (`connectionTimeoutMillis`): the request then fails
 *   with a transient fault, answered 503 (core/db/db-faults.ts);
 * - so is each statement (`lockTimeoutMs`: waiting for rows another session holds locked — an
 *   operator's transaction left open, a stuck client of the same database; `statementTimeoutMs`:
 *   running at all), set for every connection as it opens: without them one row held locked
 *   kept every write to it waiting, each holding one of the pool's ten connections, until no
 *   request at all could get one;
 * - and so is the wait for an answer on this side (the statement bound and READ_MARGIN_MS): a
 *   database that stops answering without closing anything (a managed database failing over, a
 *   network path that drops packets, a firewall that forgot the connection) cannot cancel a
 *   statement it never received. The statement fails as a lost connection (a read is sent again
 *   once on a new one) and its connection is discarded, so the pool makes new ones and serves
 *   again as soon as the database answers — before, each such connection waited without end.
 */
export function createPool(connectionString: string, bounds: { lockTimeoutMs?: number; statementTimeoutMs?: number } = {}): ResilientPool {
  const pool = new ResilientPool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: 10_000,
    // node-postgres sends these with each connection's start-up (unset when 0).
    ...(bounds.lockTimeoutMs ? { lock_timeout: bounds.lockTimeoutMs } : {}),
    ...(bounds.statementTimeoutMs
      ? { statement_timeout: bounds.statementTimeoutMs, query_timeout: bounds.statementTimeoutMs + READ_MARGIN_MS }
      : {}),
  });
  // An idle connection the server closes is replaced on the next query.
  pool.on("error", (err) => log.warn(`PostgreSQL connection lost: ${err.message}`));
  pool.on("connect", (client) => {
    client.on("error", (err) => log.debug(`PostgreSQL connection error: ${err.message}`));
    discardOnReadTimeout(client);
  });
  return pool;
}

/** How much longer than the statement bound this side waits for an answer, in ms: the server's own cancellation comes first. */
const READ_MARGIN_MS = 5_000;
/** Connections whose statement was not answered in time: released to the pool as broken (discarded). */
const unanswered = new WeakSet<pg.PoolClient>();

/** A connection whose statement was not answered in time is closed: it would serve the next one after the unanswered one. */
function discardOnReadTimeout(client: pg.PoolClient): void {
  const query = client.query as (...args: unknown[]) => unknown;
  client.query = function (this: pg.PoolClient, ...args: unknown[]) {
    const result = query.apply(this, args);
    if (result instanceof Promise) {
      result.catch((err: unknown) => {
        if ((err as Error)?.message !== READ_TIMEOUT) return;
        unanswered.add(client);
        (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      });
    }
    return result;
  } as typeof client.query;
}

/** How long the start-up waits for PostgreSQL to accept its first connection, in ms. */
export const FIRST_CONNECTION_WINDOW_MS = 30_000;

/**
 * The start-up's work on PostgreSQL (its first connection, the migrations): run again, 250 ms then
 * up to 4 s apart, while PostgreSQL is unreachable, refuses, is starting up, does not answer in
 * time or drops the connection (a database started with the gateway, a failover, a gateway busy
 * loading its modules while a connection's timer ran), until FIRST_CONNECTION_WINDOW_MS have passed
 * since the first failure; each failure is reported through `progress`. Other refusals
 * (authentication, an unknown database) fail at once. `run` must be safe to run again (each
 * migration is applied in a transaction and recorded).
 */
export async function retryStartup<T>(
  run: () => Promise<T>,
  opts: { label: string; progress?: (message: string) => void; windowMs?: number; sleep?: (ms: number) => Promise<void> },
): Promise<T> {
  let deadline: number | undefined;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let wait = 250; ; wait = Math.min(wait * 2, 4_000)) {
    try {
      return await run();
    } catch (err) {
      deadline ??= Date.now() + (opts.windowMs ?? FIRST_CONNECTION_WINDOW_MS);
      if (!isDatabaseUnavailable(err) || Date.now() + wait > deadline) throw err;
      opts.progress?.(`Database: PostgreSQL at ${opts.label} not reachable yet (${(err as Error).message}); trying again in ${wait} ms`);
      await sleep(wait);
    }
  }
}

/** The start-up's first connection, tried again as retryStartup says. */
export function firstConnection(pool: Pick<pg.Pool, "connect">, opts: Parameters<typeof retryStartup>[1]): Promise<pg.PoolClient> {
  return retryStartup(() => pool.connect(), opts);
}

type Release = (err?: Error | boolean) => void;

export class ResilientPool extends pg.Pool {
  /**
   * Ends every idle connection: once one connection was found lost, the others often are too (a
   * restart, a mass `pg_terminate_backend`) before their error has arrived, and a read sent again
   * must not land on one of them.
   */
  discardIdle(): void {
    const internals = this as unknown as { _idle?: { client: pg.PoolClient }[]; _remove?: (client: pg.PoolClient) => void };
    if (!Array.isArray(internals._idle) || typeof internals._remove !== "function") return;
    for (const { client } of [...internals._idle]) internals._remove.call(this, client);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: Release) => void): void;
  override connect(callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: Release) => void): any {
    if (callback) {
      return super.connect((err, client, done) => {
        if (client) releaseWhenEnded(client);
        callback(err, client, client ? client.release : done);
      });
    }
    return super.connect().then(releaseWhenEnded);
  }
}

/** Hands a checked-out connection back to the pool (to be discarded) as soon as it ends; a later release is a no-op. */
function releaseWhenEnded(client: pg.PoolClient): pg.PoolClient {
  const release = client.release as Release;
  let released = false;
  const onEnd = () => {
    if (released) return;
    released = true;
    release(new Error("The connection to PostgreSQL ended."));
  };
  client.once("end", onEnd);
  client.release = ((err?: Error | boolean) => {
    client.removeListener("end", onEnd);
    if (released) return;
    released = true;
    release(err || (unanswered.has(client) ? new Error("A statement on this connection was not answered in time.") : undefined));
  }) as typeof client.release;
  return client;
}

/**
 * Wraps the Prisma driver adapter factory of PostgreSQL so that a read that fails because its
 * connection was lost is sent once more, on a new connection (`onLost` first drops the pool's
 * idle ones): a SELECT outside a transaction changes nothing, so sending it again is safe.
 * Starting a transaction (BEGIN on a connection that turns out dead) is retried once too. Writes
 * and statements inside transactions are not: their request answers 503 and the client decides.
 */
export function retryingReads<F extends object>(factory: F, onLost: () => void): F {
  const retryOnce =
    <A extends unknown[], R>(what: string, run: (...args: A) => Promise<R>, when: (...args: A) => boolean) =>
    async (...args: A): Promise<R> => {
      try {
        return await run(...args);
      } catch (err) {
        if (!isConnectionLost(err)) throw err;
        onLost();
        if (!when(...args)) throw err;
        log.warn(`PostgreSQL connection lost during ${what}; sending it again once: ${(err as Error).message}`);
        return run(...args);
      }
    };
  /** A transaction's statements are not sent again; a lost connection still drops the idle ones. */
  const transaction = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, prop) {
        const value = Reflect.get(obj, prop, obj);
        if (typeof value !== "function") return value;
        if (prop === "queryRaw" || prop === "executeRaw")
          return retryOnce(
            "a transaction",
            (...args: unknown[]) => value.apply(obj, args),
            () => false,
          );
        return value.bind(obj);
      },
    });
  const adapter = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, prop) {
        const value = Reflect.get(obj, prop, obj);
        if (typeof value !== "function") return value;
        if (prop === "queryRaw") {
          const isRead = (query: { sql: string }) =>
            /^\s*SELECT\b/i.test(query.sql) && !/\bFOR\s+(NO\s+KEY\s+)?(UPDATE|SHARE)\b/i.test(query.sql);
          return retryOnce("a read", (query: { sql: string }) => value.call(obj, query), isRead);
        }
        if (prop === "startTransaction") {
          return retryOnce(
            "the start of a transaction",
            async (...args: unknown[]) => transaction(await value.apply(obj, args)),
            () => true,
          );
        }
        return value.bind(obj);
      },
    });
  return new Proxy(factory, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj);
      if (prop === "connect" && typeof value === "function") return async (...args: unknown[]) => adapter(await value.apply(obj, args));
      return typeof value === "function" ? value.bind(obj) : value;
    },
  });
}
