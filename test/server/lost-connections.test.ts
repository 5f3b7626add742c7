import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Answer, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, createSpace, type Admin } from "../helpers/fixtures.js";
import { isConnectionLost, isDatabaseUnavailable } from "../../src/core/db/db-faults.js";
import { reportError } from "../../src/core/error-report.js";

/**
 * PostgreSQL connections lost while requests run (a restart, an administrator's
 * `pg_terminate_backend`): reads are sent again once, anything else answers 503 with
 * Retry-After — never a 500, never a 404 for something that exists, and the process and its
 * connection pool survive. Only PostgreSQL has connections to lose: on the embedded database
 * (one in-process connection) the requests below are skipped.
 */

const postgres = !!process.env.DATABASE_URL;

describe("transient database faults are recognized", () => {
  it("lost connections, pool timeouts and retryable transactions; not other faults", () => {
    const adapter = (cause: object) => Object.assign(new Error("x"), { name: "DriverAdapterError", cause });
    expect(isDatabaseUnavailable(adapter({ kind: "postgres", code: "57P01", originalCode: "57P01" }))).toBe(true);
    expect(isDatabaseUnavailable(adapter({ kind: "ConnectionClosed" }))).toBe(true);
    expect(isDatabaseUnavailable(adapter({ kind: "postgres", code: "40P01" }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Client has encountered a connection error and is not queryable"))).toBe(true);
    expect(isDatabaseUnavailable(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true);
    expect(isDatabaseUnavailable({ originalError: Object.assign(new Error("x"), { code: "P1017" }) })).toBe(true);
    expect(isDatabaseUnavailable(adapter({ kind: "UniqueConstraintViolation" }))).toBe(false);
    expect(isDatabaseUnavailable(adapter({ kind: "postgres", code: "22P02" }))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("undefined is not a function"))).toBe(false);
    // Only a lost connection makes a read worth sending again at once; a busy pool or a deadlock does not.
    expect(isConnectionLost(adapter({ kind: "postgres", code: "57P01", originalCode: "57P01" }))).toBe(true);
    expect(isConnectionLost(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionLost(new Error("timeout exceeded when trying to connect"))).toBe(false);
    expect(isConnectionLost(adapter({ kind: "postgres", code: "40P01" }))).toBe(false);
  });

  it("a write that lost a race with a concurrent delete is a 409 or a 404, not a 500", () => {
    const known = (code: string) => Object.assign(new Error("Invalid invocation"), { name: "PrismaClientKnownRequestError", code });
    const silent = () => {};
    // What it refers to is gone (a reply to a comment deleted meanwhile): 409, nothing stored.
    expect(reportError(known("P2003"), silent).error.code).toBe(409);
    expect(
      reportError({ originalError: Object.assign(new Error("x"), { cause: { kind: "ForeignKeyConstraintViolation" } }) }, silent).error
        .code,
    ).toBe(409);
    // Its own row is gone (an update of a comment deleted meanwhile): 404.
    expect(reportError(known("P2025"), silent).error).toMatchObject({
      code: 404,
      message: expect.stringMatching(/deleted by another request/),
    });
    // Anything else stays a masked 500, logged.
    const logged: unknown[] = [];
    expect(reportError(known("P2010"), (e) => logged.push(e)).error.code).toBe(500);
    expect(logged).toHaveLength(1);
  });
});

describe.skipIf(!postgres)("lost PostgreSQL connections (PostgreSQL only: the embedded database has no connection to lose)", () => {
  let t: TestGateway;
  let admin: Admin;
  let killer: pg.Client;
  let space: string;
  let page: string;

  beforeAll(async () => {
    t = await startGateway();
    ({ admin } = await acmeDocs(t));
    space = (await createSpace(admin, admin.organization, { title: "Survives" })).id;
    page = created(await admin.post(`/v1/spaces/${space}/content/pages`, { title: "Target" })).id;
    killer = new pg.Client({ connectionString: t.config.databaseUrl });
    await killer.connect();
  });
  afterAll(async () => {
    await killer?.end();
    await t?.close();
  });

  /** Ends every connection of the gateway's database but the killer's own; how many it ended. */
  const terminate = async () =>
    (
      await killer.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
      )
    ).rowCount ?? 0;

  function expectUnavailable(answer: Answer) {
    expect(answer.body).toEqual({ error: { code: 503, message: expect.stringContaining("retry") } });
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  }

  it("reads right after every connection was ended succeed: the pool replaces them", async () => {
    await Promise.all(Array.from({ length: 10 }, () => admin.get(`/v1/spaces/${space}`)));
    expect(await terminate()).toBeGreaterThan(0);
    const answers = await Promise.all(Array.from({ length: 10 }, () => admin.get(`/v1/spaces/${space}`)));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 10 }, () => 200));
  });

  it("under repeated terminations: only 2xx and 503 with Retry-After, nothing acknowledged is lost, and the server keeps serving", async () => {
    const until = Date.now() + 4_000;
    let terminated = 0;
    const killing = (async () => {
      while (Date.now() < until) {
        terminated += await terminate();
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const answers: { what: string; answer: Answer }[] = [];
    const loop = async (what: string, send: (n: number) => Promise<Answer>) => {
      for (let n = 0; Date.now() < until; n++) answers.push({ what, answer: await send(n) });
    };
    const graphql = async (): Promise<Answer> => {
      const res = await admin.graphql(`query($id: String!) { space(spaceId: $id) { id title } }`, { id: space });
      return { status: res.status, body: res, headers: new Headers() };
    };
    await Promise.all([
      killing,
      loop("GET space", () => admin.get(`/v1/spaces/${space}`)),
      loop("GET space", () => admin.get(`/v1/spaces/${space}`)),
      loop("GET page", () => admin.get(`/v1/spaces/${space}/content/page/${page}`)),
      loop("PATCH page", (n) => admin.patch(`/v1/spaces/${space}/content/page/${page}`, { markdown: `Edit ${n}` })),
      loop("POST change request", () => admin.post(`/v1/spaces/${space}/change-requests`, {})),
      loop("GraphQL space", graphql),
    ]);
    expect(terminated).toBeGreaterThan(0);
    for (const { what, answer } of answers) {
      if (what === "GraphQL space") {
        // Data, or a 503 error in the documented extensions: never a masked fault or a null space.
        const body = answer.body as any;
        if (body.errors)
          expect(
            body.errors.map((e: any) => e.extensions?.code),
            what,
          ).toEqual(body.errors.map(() => 503));
        else expect(body.data.space.id, what).toBe(space);
        continue;
      }
      expect([200, 201, 503], `${what}: ${JSON.stringify(answer.body)}`).toContain(answer.status);
      if (answer.status === 503) expectUnavailable(answer);
    }
    // Acknowledged change requests exist, numbered without gaps.
    const acknowledged = answers
      .filter((a) => a.what === "POST change request" && a.answer.status === 201)
      .map((a) => a.answer.body.number as number);
    const stored = (await admin.get(`/v1/spaces/${space}/change-requests`, { status: "draft", limit: 1000 })).body.items.map(
      (cr: any) => cr.number as number,
    );
    for (const n of acknowledged) expect(stored).toContain(n);
    expect([...stored].sort((a, b) => a - b)).toEqual(Array.from({ length: stored.length }, (_, i) => i + 1));
    // The pool kept no broken connection: more requests at once than it has connections all succeed.
    const after = await Promise.all(Array.from({ length: 25 }, () => admin.get(`/v1/spaces/${space}`)));
    expect(after.map((a) => a.status)).toEqual(Array.from({ length: 25 }, () => 200));
  });

  it("closes afterwards: every connection went back to the pool, none is held by a transaction that lost it", async () => {
    // Closing ends the pool, which waits for every checked-out connection; a leaked one would wait forever.
    const closed = await Promise.race([t.gateway.close().then(() => true), new Promise((r) => setTimeout(() => r(false), 20_000))]);
    expect(closed).toBe(true);
  });
});
