import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeSpaceGateway, createSpace } from "../helpers/fixtures.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { Flights } from "../../src/rest/request-coalescing.js";
import { writtenTogether, type TogetherRequest } from "../helpers/together.js";

/**
 * Request coalescing (REQUEST_COALESCING, rest/request-coalescing.ts): identical REST GETs — same URL, same
 * credentials — that arrive together share one answer, made after every one of them arrived; a GET
 * that arrives once that answer is being made waits for the next. Each GET still gets its own 304
 * and its own log line; callers with other credentials never share.
 */

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("flights (rest/request-coalescing.ts)", () => {
  it("requests of one turn share one run; one arriving after the start waits for the next, which starts once the first landed", async () => {
    const flights = new Flights<number>(1_000);
    const runs: string[] = [];
    let release!: () => void;
    const first = () => {
      runs.push("first");
      return new Promise<number>((resolve) => (release = () => resolve(1)));
    };
    const a = flights.join("k", first);
    const b = flights.join("k", () => Promise.resolve(-1));
    expect(runs).toEqual([]); // nothing runs before the end of the turn
    await tick();
    expect(runs).toEqual(["first"]);
    // Arrived after the first started: a flight of its own, that waits.
    const c = flights.join("k", async () => (runs.push("second"), 2));
    const d = flights.join("k", async () => -2);
    await tick();
    await tick();
    expect(runs).toEqual(["first"]);
    release();
    expect(await Promise.all([a, b, c, d])).toEqual([1, 1, 2, 2]);
    expect(runs).toEqual(["first", "second"]);
    expect(flights.stats).toEqual({ flights: 2, joined: 2 });
    expect(flights.size).toBe(0);
  });

  it("other keys never share; a failure reaches every request of its flight and is not kept", async () => {
    const flights = new Flights<string>(1_000);
    const x = flights.join("x", async () => "x");
    const y = flights.join("y", async () => "y");
    expect(await Promise.all([x, y])).toEqual(["x", "y"]);
    const failing = [flights.join("k", () => Promise.reject(new Error("down"))), flights.join("k", async () => "never")];
    for (const f of failing) await expect(f).rejects.toThrow("down");
    expect(await flights.join("k", async () => "again")).toBe("again");
    expect(flights.size).toBe(0);
  });

  it("a flight that runs long holds the next one maxWaitMs at most", async () => {
    const flights = new Flights<string>(30);
    const slow = flights.join("k", () => new Promise<string>((resolve) => setTimeout(() => resolve("slow"), 1_000)));
    await tick();
    const started = performance.now();
    expect(await flights.join("k", async () => "next")).toBe("next");
    expect(performance.now() - started).toBeLessThan(800);
    expect(await slow).toBe("slow");
    expect(flights.size).toBe(0);
  });
});

const s = acmeSpaceGateway({ responseCache: "off" }, "rita@acme.test", "Coalesced");
beforeAll(async () => {
  for (let i = 0; i < 4; i++) await createSpace(s.admin, s.org, { title: `Listed ${i}` });
});

/** Calls made at once, each on a connection of its own (undici opens one per request under way). */
const atOnce = <T>(n: number, make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

/** Requests written together (test/helpers/together.ts), as the admin unless they say otherwise. */
const together = (requests: TogetherRequest[], leave?: (i: number) => boolean) => writtenTogether(s.t.url, s.admin.token, requests, leave);

describe("REST GETs that arrive together", () => {
  it("share one answer: the same body and ETag as a GET alone, fewer answers made than GETs", async () => {
    for (const path of [`/v1/spaces/${s.spaceId}`, `/v1/orgs/${s.org}/spaces`]) {
      const alone = await s.admin.get(path);
      expect(alone.status).toBe(200);
      const before = { ...s.t.gateway.coalesced };
      const answers = await together(Array.from({ length: 12 }, () => ({ path })));
      const made = s.t.gateway.coalesced.flights - before.flights;
      expect(s.t.gateway.coalesced.joined - before.joined).toBe(12 - made);
      expect(made).toBeLessThan(12);
      for (const answer of answers) {
        expect(answer!.status).toBe(200);
        expect(JSON.parse(answer!.body)).toEqual(alone.body);
        // (W/ when compressed: fetch asks for gzip, these requests do not.)
        expect(answer!.headers.etag).toBe(alone.headers.get("etag")!.replace(/^W\//, ""));
      }
    }
  });

  it("never share between callers: each gets the answer its own rights give", async () => {
    const [adminAlone, readerAlone] = [await s.admin.get(`/v1/spaces/${s.spaceId}`), await s.reader.get(`/v1/spaces/${s.spaceId}`)];
    expect(adminAlone.body.permissions.edit).toBe(true);
    expect(readerAlone.body.permissions.edit).toBe(false);
    const before = s.t.gateway.coalesced.joined;
    const answers = await together(
      Array.from({ length: 12 }, (_, i) => ({
        path: `/v1/spaces/${s.spaceId}`,
        headers: { authorization: `Bearer ${(i % 2 ? s.reader : s.admin).token}` },
      })),
    );
    answers.forEach((answer, i) => expect(JSON.parse(answer!.body)).toEqual(i % 2 ? readerAlone.body : adminAlone.body));
    expect(s.t.gateway.coalesced.joined).toBeGreaterThan(before);
  });

  it("each answer its own If-None-Match: a 304 beside a 200 of the same shared answer; HEAD beside GET", async () => {
    const path = `/v1/spaces/${s.spaceId}`;
    const alone = await s.admin.get(path);
    const etag = alone.headers.get("etag")!.replace(/^W\//, "");
    const before = s.t.gateway.coalesced.joined;
    const answers = await together(
      Array.from({ length: 12 }, (_, i) =>
        i % 3 === 0 ? { path, headers: { "if-none-match": etag } } : i % 3 === 1 ? { path, method: "HEAD" } : { path },
      ),
    );
    expect(s.t.gateway.coalesced.joined).toBeGreaterThan(before);
    for (const [i, answer] of answers.entries()) {
      expect(answer!.headers.etag).toBe(etag);
      if (i % 3 === 0) expect([answer!.status, answer!.body]).toEqual([304, ""]);
      else if (i % 3 === 1)
        expect([answer!.status, answer!.headers["content-length"]]).toEqual([200, String(Buffer.byteLength(JSON.stringify(alone.body)))]);
      else expect(JSON.parse(answer!.body)).toEqual(alone.body);
    }
  });

  it("a GET sent after a write was answered sees it, though identical GETs kept arriving all along", async () => {
    let polling = true;
    const paths = [`/v1/spaces/${s.spaceId}`, `/v1/orgs/${s.org}/spaces?limit=50`];
    const poll = async (i: number) => {
      while (polling) expect((await s.admin.get(paths[i % 2]!)).status).toBe(200);
    };
    const pollers = atOnce(8, poll);
    const before = s.t.gateway.coalesced.joined;
    try {
      for (let i = 0; i < 20; i++) {
        const title = `Renamed ${i}`;
        expect((await s.admin.patch(`/v1/spaces/${s.spaceId}`, { title })).status).toBe(200);
        const [one, list] = await Promise.all(paths.map((path) => s.admin.get(path)));
        expect(one!.body.title).toBe(title);
        expect(list!.body.items.find((space: { id: string }) => space.id === s.spaceId).title).toBe(title);
      }
    } finally {
      polling = false;
      await pollers;
    }
    expect(s.t.gateway.coalesced.joined).toBeGreaterThan(before);
  });

  it("a token revoked while identical GETs keep arriving: the next GET with it is refused", async () => {
    const { token } = (await runAdminCommand(s.t.gateway.db.prisma, { command: "token-create", email: "rita@acme.test" })) as {
      token: string;
    };
    const doomed = s.t.caller(token);
    let polling = true;
    const pollers = atOnce(6, async () => {
      while (polling) await doomed.get(`/v1/spaces/${s.spaceId}`);
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await runAdminCommand(s.t.gateway.db.prisma, { command: "token-revoke", token });
      expect((await doomed.get(`/v1/spaces/${s.spaceId}`)).status).toBe(401);
    } finally {
      polling = false;
      await pollers;
    }
  });

  it("share error answers too: a missing space's 404, a bad token's 401 with its challenge", async () => {
    const before = s.t.gateway.coalesced.joined;
    const missing = await together(Array.from({ length: 8 }, () => ({ path: "/v1/spaces/spc_missing" })));
    const refused = await together(
      Array.from({ length: 8 }, () => ({ path: `/v1/spaces/${s.spaceId}`, headers: { authorization: "Bearer not-a-token" } })),
    );
    expect(s.t.gateway.coalesced.joined - before).toBeGreaterThan(1);
    for (const answer of missing) expect([answer!.status, JSON.parse(answer!.body).error.code]).toEqual([404, 404]);
    for (const answer of refused) {
      expect([answer!.status, JSON.parse(answer!.body).error.code]).toEqual([401, 401]);
      expect(answer!.headers["www-authenticate"]).toBe("Bearer");
    }
  });

  it("callers that leave before their answer do not take it from the others", async () => {
    const before = s.t.gateway.coalesced.joined;
    const answers = await together(
      Array.from({ length: 10 }, () => ({ path: `/v1/orgs/${s.org}/spaces` })),
      (i) => i % 2 === 0,
    );
    expect(s.t.gateway.coalesced.joined).toBeGreaterThan(before);
    const kept = answers.filter((answer) => answer !== null);
    expect(kept).toHaveLength(5);
    for (const answer of kept) {
      expect(answer!.status).toBe(200);
      expect(JSON.parse(answer!.body).items.map((s: { title: string }) => s.title)).toContain("Listed 3");
    }
  });
});

describe("REQUEST_COALESCING=off", () => {
  let off: TestGateway;
  beforeAll(async () => {
    off = await startGateway({ responseCache: "off", requestCoalescing: false });
  }, 120_000);
  afterAll(() => off?.close());

  it("answers each GET on its own", async () => {
    const boss = await off.bootstrap("ada@acme.test", "Acme Docs");
    const answers = await atOnce(8, () => boss.get(`/v1/orgs/${boss.organization}`));
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(off.gateway.coalesced).toEqual({ flights: 0, joined: 0 });
  });
});
