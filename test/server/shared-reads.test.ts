import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, fewestStatements, forgetKept, type Admin, type Member } from "../helpers/fixtures.js";
import { makeContext } from "../../src/core/context.js";
import { readOnce, readTogether, sharedReads } from "../../src/core/graph/loaders.js";
import { spaceById } from "../../src/domains/spaces/spaces.access.js";

/**
 * Reads of rows by key (core/graph/loaders.ts `defineSharedLoader`) asked by requests under way together
 * are sent as one statement: each request keeps its own loader (and cache), the answers are those
 * of reads one by one. A transaction reads alone. Identical pages and counts of a list asked
 * together are read once (`readOnce`).
 */
let t: TestGateway;
let admin: Admin;
let reader: Member;
let outsider: Admin;
let org: string;
const spaces: string[] = [];

beforeAll(async () => {
  t = await startGateway();
  ({
    admin,
    org,
    reader,
    other: outsider,
    secondAdmin,
  } = await acmeDocs(t, { reader: ["rita@acme.test", "read"], secondAdmin: ["sam@acme.test", "admin"] }));
  for (let i = 0; i < 12; i++) spaces.push((await createSpace(admin, org, { title: `Shared ${i}` })).id);
}, 180_000);
afterAll(() => t?.close());

let secondAdmin: Member;

const contextOf = (userId: string) => makeContext(t.gateway.services, { userId, tokenId: "" });

describe("rows read together by the requests under way", () => {
  it("two requests' loads in one turn: one statement, each its own copy of a row both asked for", async () => {
    const a = contextOf(admin.user);
    const b = contextOf(reader.user);
    const before = t.gateway.db.stats.statements;
    const [first, second, third] = await Promise.all([
      spaceById(a).load(spaces[0]!),
      spaceById(b).load(spaces[0]!),
      spaceById(b).load(spaces[1]!),
    ]);
    expect(t.gateway.db.stats.statements - before).toBe(1);
    expect(first).toEqual(second);
    expect(first).not.toBe(second);
    expect(third!.id).toBe(spaces[1]);
    // Each request's own cache: a second load in the same request reads nothing.
    const again = t.gateway.db.stats.statements;
    expect(await spaceById(a).load(spaces[0]!)).toBe(first);
    expect(t.gateway.db.stats.statements).toBe(again);
  });

  it("nothing kept between turns: a load after a write reads the written row", async () => {
    const id = spaces[2]!;
    const before = await spaceById(contextOf(admin.user)).load(id);
    expect((await admin.patch(`/v1/spaces/${id}`, { title: "Renamed together" })).status).toBe(200);
    const after = await spaceById(contextOf(reader.user)).load(id);
    expect(before!.title).toBe("Shared 2");
    expect(after!.title).toBe("Renamed together");
  });

  it("a transaction reads alone: it sees its own uncommitted write", async () => {
    const id = spaces[3]!;
    const base = contextOf(admin.user);
    await t.gateway.db.prisma
      .$transaction(async (tx) => {
        await tx.space.update({ where: { id }, data: { title: "Inside the transaction" } });
        const inside = { ...contextOf(admin.user), prisma: tx as typeof base.prisma };
        const [seen, outside] = await Promise.all([
          spaceById(inside).load(id),
          t.gateway.db.kind === "pglite" ? null : spaceById(base).load(id),
        ]);
        expect(seen!.title).toBe("Inside the transaction");
        if (outside) expect(outside.title).toBe("Shared 3");
        throw new Error("rolled back");
      })
      .catch((err: Error) => expect(err.message).toBe("rolled back"));
    expect((await spaceById(contextOf(admin.user)).load(id))!.title).toBe("Shared 3");
  });

  it("concurrent GETs of different spaces by different callers share statements, and answer as one by one", async () => {
    const callers = [admin, reader, outsider];
    const calls = spaces.flatMap((id) => callers.map((caller) => () => caller.get(`/v1/spaces/${id}`)));
    const alone: unknown[] = [];
    for (const call of calls) {
      const res = await call();
      alone.push({ status: res.status, body: res.body });
    }
    const joined = sharedReads.joined;
    const together = await fewestStatements(t, () => Promise.all(calls.map((call) => call())));
    expect(together.result.map((res) => ({ status: res.status, body: res.body }))).toEqual(alone);
    expect(alone.filter((a: any) => a.status === 200)).toHaveLength(spaces.length * 2);
    expect(alone.filter((a: any) => a.status === 404)).toHaveLength(spaces.length);
    // Alone, each GET is one statement (the space); together, far fewer than one each.
    expect(together.count).toBeLessThan(calls.length / 2);
    expect(sharedReads.joined).toBeGreaterThan(joined);
  });

  it("the same page of a list asked by several callers at once: read once, each answer whole and its own", async () => {
    const callers = [admin, secondAdmin, admin, secondAdmin, reader];
    const list = `/v1/orgs/${org}/spaces?limit=5`;
    const alone = [];
    for (const caller of callers) alone.push((await caller.get(list)).body);
    expect(alone[0].items).toHaveLength(5);
    expect(alone[0].count).toBeGreaterThan(5);
    const identical = sharedReads.identical;
    // The list's own statements (its page and its count), not the grants read for each item's permissions.
    let listReads = 0;
    t.gateway.db.observeStatements(
      (_s, _ok, sql) => void (/FROM "public"\."Space"|FROM \(SELECT "public"\."Space"/.test(sql) && listReads++),
    );
    let fewest = Infinity;
    let together: unknown[] = [];
    for (let run = 0; run < 3; run++) {
      // Each run reads: no answer, page or count kept from the one before.
      await forgetKept(t.gateway);
      const before = listReads;
      together = (await Promise.all(callers.map((caller) => caller.get(list)))).map((res) => res.body);
      fewest = Math.min(fewest, listReads - before);
    }
    expect(together).toEqual(alone);
    // Alone: a page and a count each (10 statements); together, once for all that arrived in one turn.
    expect(fewest).toBeLessThanOrEqual(4);
    expect(sharedReads.identical).toBeGreaterThan(identical);
    // Nothing kept: a space created after them is in the next read.
    await createSpace(admin, org, { title: "After the list" });
    expect((await secondAdmin.get(list)).body.count).toBe(alone[0].count + 1);
  });

  it("a copy is the row all the way down, prototype names included, and shares nothing that could change", async () => {
    const row = JSON.parse('{"id":"x","config":{"__proto__":{"polluted":true},"constructor":{"prototype":1},"list":[{"a":1}]}}');
    row.at = new Date(0);
    const client = { $transaction() {} } as unknown as Parameters<ReturnType<typeof readTogether>>[0];
    const loader = readTogether<string, typeof row>(async (keys) => keys.map(() => row))(client);
    const [first, second] = await Promise.all([loader.load("x"), loader.load("x")]);
    expect(first).toBe(row);
    expect(second).not.toBe(row);
    expect(JSON.stringify(second)).toBe(JSON.stringify(row));
    expect(Object.keys(second.config)).toEqual(["__proto__", "constructor", "list"]);
    expect(Object.getPrototypeOf(second.config)).toBe(Object.prototype);
    expect(({} as any).polluted).toBeUndefined();
    expect(second.config.list[0]).not.toBe(row.config.list[0]);
    expect(second.at).toEqual(row.at);
  });

  it("reads join only an identical one: arguments alike but of other types, or too long, are sent alone", async () => {
    const sent: unknown[] = [];
    const model = {
      findMany: async (args: object) => (sent.push(args), [{ id: "x", args }]),
      count: async () => 0,
    };
    const at = new Date(0);
    const answers = await Promise.all([
      readOnce(model, "findMany", { where: { at } }),
      readOnce(model, "findMany", { where: { at: at.toISOString() } }),
      readOnce(model, "findMany", { where: { at: new Date(0) } }),
      readOnce(model, "findMany", { where: { id: "y".repeat(5_000) } }),
      readOnce(model, "findMany", { where: { id: "y".repeat(5_000) } }),
    ]);
    expect(sent).toHaveLength(4);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[2]).not.toBe(answers[0]);
    // Sent after the turn: a read asked once the first was sent is sent again.
    const again = readOnce(model, "findMany", { where: { at } });
    expect(sent).toHaveLength(4);
    await again;
    expect(sent).toHaveLength(5);
  });

  it("a write reads alone: concurrent edits of one space each read its newest row, none joins another's read", async () => {
    const id = spaces[4]!;
    const joined = sharedReads.joined + sharedReads.identical;
    const coalesced = t.gateway.coalesced.joined;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => admin.patch(`/v1/spaces/${id}`, { title: `Edit ${i}` })));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(sharedReads.joined + sharedReads.identical).toBe(joined);
    expect(t.gateway.coalesced.joined).toBe(coalesced);
    // Reads beside them still share: the same GETs at once join (their row's read, or their whole answer: rest/request-coalescing.ts).
    await Promise.all(Array.from({ length: 10 }, () => reader.get(`/v1/spaces/${id}`)));
    expect(sharedReads.joined + sharedReads.identical + t.gateway.coalesced.joined).toBeGreaterThan(joined + coalesced);
  });

  it("a hostile key read together with others fails no one else: each answer is its own", async () => {
    const id = spaces[5]!;
    // As GraphQL variables, and as REST path segments (percent-encoded as a client would send them).
    const hostile = ["\u0000", "a\u0000b", "\ud800", "x".repeat(20_000), "__proto__", "constructor", "'", "\\", "%", ""];
    const paths = ["%00", "a%00b", "%ED%A0%80", "x".repeat(2_000), "__proto__", "constructor", "'", "%5C", "%25", "%20"];
    const joined = sharedReads.joined;
    for (let round = 0; round < 3; round++) {
      const calls = hostile.flatMap((bad, i) => [
        reader.get(`/v1/spaces/${id}`).then((r) => ({ valid: true, status: r.status, id: r.body?.id, errors: undefined })),
        reader
          .graphql(`query ($id: String!) { space(spaceId: $id) { id title } }`, { id })
          .then((r) => ({ valid: true, status: r.status, id: r.data?.space?.id, errors: r.errors })),
        reader.get(`/v1/spaces/${paths[i]}`).then((r) => ({ valid: false, status: r.status, id: undefined, errors: undefined })),
        reader
          .graphql(`query ($id: String!) { space(spaceId: $id) { id title } }`, { id: bad })
          .then((r) => ({ valid: false, status: r.status, id: undefined, errors: r.errors })),
      ]);
      for (const answer of await Promise.all(calls)) {
        if (answer.valid) expect(answer).toMatchObject({ status: 200, id, errors: undefined });
        else {
          expect(answer.status).toBeLessThan(500);
          for (const error of answer.errors ?? []) expect(Number(error.extensions?.code)).toBeLessThan(500);
        }
      }
    }
    // They were read together: the valid and the hostile keys that reached the database shared statements.
    expect(sharedReads.joined).toBeGreaterThan(joined);
  });
});
