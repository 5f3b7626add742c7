import { parse as protocolResults, protocol, type PGlite } from "@electric-sql/pglite";
import type { Query, QueryOptions } from "./pglite-rows.js";

/**
 * Statements of the embedded database through prepared statements, each in one call.
 *
 * PGlite's `query` sends a statement as six messages, each a call into its WebAssembly and back
 * (Parse, Describe, Bind, Describe, Execute, Sync), and PostgreSQL parses and plans the statement
 * anew each time: most of the cost of a GET by key. A statement run a second time is prepared
 * under a name of its own instead (Parse and Describe once: its parameter types and its row
 * description kept), and each run is then Bind, Execute and Sync in one call; writes gain as much
 * (figures in docs/performance.md). The rows (and the count
 * of rows a write changed) are read by PGlite's own result parser from the kept row description
 * and the messages of the run, with PGlite's own parameter serializers, so they are those of
 * `query` (test/server/pglite-rows.property.test.ts compares both, reads and writes).
 *
 * Only what `query` would run alone: a single SELECT, INSERT, UPDATE, DELETE or WITH statement
 * (no `;`), outside a transaction (it waits for a running transaction, as `query` does), with no
 * options but the row mode and the parsers PGlite applies anyway. Anything else (transaction
 * control, DDL, VACUUM, several statements), and a statement PostgreSQL refuses to prepare, goes
 * to `query`. A prepared statement whose result type changed (a migration) or that is gone is
 * dropped, and the statement goes to `query`: PostgreSQL tells both before it runs anything, so a
 * write is never made twice. At most MAX_PREPARED are kept; past it the one run least recently is
 * closed (Prisma writes `IN` lists of every length, each a statement text of its own).
 */
const MAX_PREPARED = 1_000;
/** A single statement that a prepared statement may run: a read or a write, no `;` (not even in a literal). */
const SINGLE_STATEMENT = /^\s*(?:SELECT|INSERT|UPDATE|DELETE|WITH)\b[^;]*$/i;
export const preparable = (sql: string) => SINGLE_STATEMENT.test(sql);

/** "cached plan must not change result type", "prepared statement … does not exist". */
const STALE = new Set(["0A000", "26000"]);

type BackendMessage = Awaited<ReturnType<PGlite["execProtocol"]>>["messages"][number];

interface Prepared {
  name: string;
  paramTypes: number[];
  /** The statement's row description (none for a statement without rows). */
  rowDescription: BackendMessage | undefined;
}

/** Statement names, unique in the process (each database has its own reader, tests several on one). */
let named = 0;

type Entry =
  | { state: "seen" }
  | { state: "refused" }
  | { state: "preparing"; ready: Promise<Prepared | null> }
  | { state: "ready"; prepared: Prepared };

export function preparedStatements(pglite: PGlite, query: Query, { max = MAX_PREPARED }: { max?: number } = {}) {
  /** By statement text: seen once (its first run goes to `query`), being prepared, prepared, or refused. */
  const statements = new Map<string, Entry>();
  const stats = { prepared: 0, runs: 0, closed: 0 };

  /** Runs `fn` when `query` would run: after a running transaction, alone. */
  const exclusive = <T>(fn: () => Promise<T>) => pglite._runExclusiveTransaction(() => pglite._runExclusiveQuery(fn));

  /** Forgets the statements run least recently past `max` (those being prepared stay), closing those prepared. */
  const evict = async () => {
    const closing: string[] = [];
    for (const [sql, entry] of statements) {
      if (statements.size <= max) break;
      if (entry.state === "preparing") continue;
      statements.delete(sql);
      if (entry.state === "ready") closing.push(entry.prepared.name);
    }
    if (!closing.length) return;
    await exclusive(() =>
      pglite.execProtocol(concat([...closing.map((name) => protocol.serialize.close({ type: "S", name })), protocol.serialize.sync()])),
    );
    stats.closed += closing.length;
  };

  const prepare = (sql: string): Promise<Prepared | null> =>
    exclusive(async () => {
      const name = `stmt_${++named}`;
      const { messages } = await pglite.execProtocol(
        concat([
          protocol.serialize.parse({ name, text: sql }),
          protocol.serialize.describe({ type: "S", name }),
          protocol.serialize.sync(),
        ]),
        { throwOnError: false },
      );
      if (messages.some((m) => m.name === "error")) return null;
      const parameters = messages.find((m) => m.name === "parameterDescription") as { dataTypeIDs?: number[] } | undefined;
      stats.prepared++;
      return { name, paramTypes: parameters?.dataTypeIDs ?? [], rowDescription: messages.find((m) => m.name === "rowDescription") };
    }).catch(() => null);

  const runPrepared = (prepared: Prepared, params: unknown[], options: QueryOptions | undefined) =>
    exclusive(async () => {
      // As `query` serializes them: by the parameter's type, PGlite's own serializers.
      const values = prepared.paramTypes.map((type, i) => {
        const value = params[i];
        if (value === null || value === undefined) return null;
        const serialize = pglite.serializers[type];
        return serialize ? serialize(value) : String(value);
      });
      const { messages } = await pglite.execProtocol(
        concat([protocol.serialize.bind({ statement: prepared.name, values }), protocol.serialize.execute({}), protocol.serialize.sync()]),
      );
      stats.runs++;
      return protocolResults.parseResults(
        prepared.rowDescription ? [prepared.rowDescription, ...messages] : messages,
        pglite.parsers,
        options,
      )[0];
    });

  const run: Query = async (sql, params = [], options) => {
    const eligible =
      preparable(sql) &&
      (!options || Object.keys(options).every((k) => k === "rowMode" || (k === "parsers" && options.parsers === undefined)));
    if (!eligible) return query(sql, params, options);
    let entry = statements.get(sql);
    if (!entry) {
      // Its first run as it is: a statement run once is not worth a name.
      statements.set(sql, { state: "seen" });
      if (statements.size > max) await evict();
      return query(sql, params, options);
    }
    if (entry.state === "ready") {
      // The most recently run last: past `max`, those run least recently go first.
      statements.delete(sql);
      statements.set(sql, entry);
    }
    if (entry.state === "seen") {
      const ready = prepare(sql);
      statements.set(sql, (entry = { state: "preparing", ready }));
      const prepared = await ready;
      if (statements.get(sql) === entry) statements.set(sql, (entry = prepared ? { state: "ready", prepared } : { state: "refused" }));
      if (!prepared) return query(sql, params, options);
    }
    const prepared = entry.state === "ready" ? entry.prepared : entry.state === "preparing" ? await entry.ready : null;
    if (!prepared || prepared.paramTypes.length !== params.length) return query(sql, params, options);
    try {
      return await runPrepared(prepared, params, options);
    } catch (err) {
      if (!STALE.has((err as { code?: string }).code ?? "")) throw err;
      // A migration changed what it reads, or it is gone (told before it ran): prepared again at its next run.
      if (statements.get(sql) === entry) statements.set(sql, { state: "seen" });
      return query(sql, params, options);
    }
  };
  return { run, stats };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
