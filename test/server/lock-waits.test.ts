import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { acmeGateway, createSpace } from "../helpers/fixtures.js";
import { DATABASE_TIMED_OUT, isConnectionLost, isDatabaseUnavailable, unavailableMessage } from "../../src/core/db/db-faults.js";

/**
 * On PostgreSQL other sessions share the database: an operator's transaction left open, or a
 * stuck client, may hold rows locked. A statement of the gateway waits at most DB_LOCK_TIMEOUT_MS
 * for them (and runs at most DB_STATEMENT_TIMEOUT_MS): past it the request is answered 503 with
 * Retry-After, naming the wait, and its connection is free again — one locked row never holds the
 * pool's ten connections, so every other request goes on. Nothing stored is lost: once the lock
 * is released the same write succeeds. (The embedded database has one session: nothing else can
 * hold its rows; the requests below are skipped there.)
 */

const postgres = !!process.env.DATABASE_URL;

/**
 * In the enclosing describe: a gateway with `bounds`, its organization's admin, and another
 * session of the same database (`locker`) that holds rows locked, as the returned function gives them once set up.
 */
function withLocker(bounds: Partial<Config>) {
  const current = acmeGateway(bounds);
  let session: pg.Client;
  beforeAll(async () => {
    session = new pg.Client({ connectionString: current().t.config.databaseUrl });
    await session.connect();
  });
  afterAll(async () => {
    await session?.end().catch(() => undefined);
  });
  return () => ({ ...current(), locker: session });
}

describe("statement bounds are recognized as transient faults", () => {
  it("lock_timeout (55P03) and statement_timeout (57014) are 503s with their own message; not lost connections", () => {
    const adapter = (cause: object) => Object.assign(new Error("x"), { name: "DriverAdapterError", cause });
    for (const code of ["55P03", "57014"]) {
      const error = adapter({ kind: "postgres", code, originalCode: code });
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(isConnectionLost(error)).toBe(false);
      expect(unavailableMessage(error)).toBe(DATABASE_TIMED_OUT);
    }
    expect(unavailableMessage(adapter({ kind: "postgres", code: "57P01", originalCode: "57P01" }))).not.toBe(DATABASE_TIMED_OUT);
    // Prisma's interactive transaction past its time; not another misuse of a transaction (a fault).
    const prisma = (message: string) => Object.assign(new Error(message), { name: "PrismaClientKnownRequestError", code: "P2028" });
    const expired = prisma(
      "Transaction API error: Transaction already closed: A query cannot be executed on an expired transaction. The timeout for this transaction was 5000 ms, however 5012 ms passed since the start of the transaction.",
    );
    expect(isDatabaseUnavailable(expired)).toBe(true);
    expect(unavailableMessage(expired)).toBe(DATABASE_TIMED_OUT);
    expect(isDatabaseUnavailable(prisma("Transaction API error: Transaction not found. Transaction ID is invalid."))).toBe(false);
  });
});

describe.skipIf(!postgres)("rows held locked by another session (PostgreSQL)", () => {
  const current = withLocker({ dbLockTimeoutMs: 400 });

  it("writes to a locked row answer 503 after the bound, the pool stays free for everyone else, and the write succeeds once the lock is gone", async () => {
    const { admin, locker } = current();
    const locked = await createSpace(admin, admin.organization, { title: "Locked" });
    const other = await createSpace(admin, admin.organization, { title: "Other" });
    await locker.query("BEGIN");
    await locker.query(`SELECT 1 FROM "Space" WHERE "id" = $1 FOR UPDATE`, [locked.id]);
    try {
      // More writes than the pool has connections (10), all at once.
      const writes = await Promise.all(Array.from({ length: 14 }, (_, k) => admin.patch(`/v1/spaces/${locked.id}`, { title: `Try ${k}` })));
      for (const res of writes) {
        expect(res.status, JSON.stringify(res.body)).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        expect(res.body.error.message).toBe(DATABASE_TIMED_OUT);
      }
      // Everything else goes on while the row stays locked: a read of it, a write elsewhere, GraphQL.
      expect((await admin.get(`/v1/spaces/${locked.id}`)).body.title).toBe("Locked");
      expect((await admin.patch(`/v1/spaces/${other.id}`, { title: "Other, renamed" })).status).toBe(200);
      const graph = await admin.graphql(`mutation($id: String!) { spaceUpdate(spaceId: $id, title: "By GraphQL") { id } }`, {
        id: locked.id,
      });
      expect(graph.errors?.[0]?.message).toBe(DATABASE_TIMED_OUT);
      expect(graph.errors?.[0]?.extensions?.code).toBe(503);
    } finally {
      await locker.query("ROLLBACK");
    }
    // Nothing was written by the refused writes, and the same write now succeeds.
    expect((await admin.get(`/v1/spaces/${locked.id}`)).body.title).toBe("Locked");
    expect((await admin.patch(`/v1/spaces/${locked.id}`, { title: "Unlocked" })).status).toBe(200);
    expect((await admin.get(`/v1/spaces/${locked.id}`)).body.title).toBe("Unlocked");
    expect((await admin.get(`/v1/spaces/${other.id}`)).body.title).toBe("Other, renamed");
  }, 60_000);

  it("a transaction waiting for a locked row (a member's role, the organization held locked) answers 503, and succeeds once the lock is gone", async () => {
    await roleChangeWhileOrganizationLocked(current(), "locked-role@acme.test");
  }, 60_000);
});

describe.skipIf(!postgres)("a statement past DB_STATEMENT_TIMEOUT_MS, with no bound on lock waits (PostgreSQL)", () => {
  const current = withLocker({ dbLockTimeoutMs: 0, dbStatementTimeoutMs: 1_000 });

  it("answers 503, and the connection serves again once the lock is gone", async () => {
    await roleChangeWhileOrganizationLocked(current(), "expired@acme.test");
  }, 60_000);
});

/**
 * A member's role changed while another session holds their organization's row locked (the
 * change's transaction locks it first): 503 naming the wait, the role unchanged; once the lock
 * is gone the same change succeeds.
 */
async function roleChangeWhileOrganizationLocked({ t, admin, locker }: ReturnType<ReturnType<typeof withLocker>>, email: string) {
  const member = await t.member(admin.organization, email, "read");
  const path = `/v1/orgs/${admin.organization}/members/${member.user}`;
  await locker.query("BEGIN");
  await locker.query(`SELECT 1 FROM "Organization" WHERE "id" = $1 FOR UPDATE`, [admin.organization]);
  try {
    const res = await admin.patch(path, { role: "edit" });
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.body.error.message).toBe(DATABASE_TIMED_OUT);
  } finally {
    await locker.query("ROLLBACK");
  }
  expect((await admin.get(path)).body.role).toBe("read");
  expect((await admin.patch(path, { role: "edit" })).body.role).toBe("edit");
}
