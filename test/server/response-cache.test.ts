import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, expectError, type Admin, type Member } from "../helpers/fixtures.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { loadConfig } from "../../src/config.js";

/**
 * The response cache (src/server/response-cache.ts): a repeated read is answered without a
 * statement, per caller, and what a write changes is seen by the next read — derived values
 * (counts) and lists included. test/server/response-cache.property.test.ts checks the same under
 * random writes, on one or two gateway processes.
 */
let t: TestGateway;
let admin: Admin;
let reader: Member;
let org: string;
let spaceId: string;

const SPACE = `query($id: String!) { space(spaceId: $id) { id title commentsCount permissions { edit } } }`;

/** The statements `call` sends (the integration dispatcher is kept quiet, nothing else runs). */
async function statements(call: () => Promise<unknown>): Promise<number> {
  const before = t.gateway.db.stats.statements;
  await call();
  return t.gateway.db.stats.statements - before;
}

beforeAll(async () => {
  t = await startGateway({ integrationDispatchPollMs: 60 * 60 * 1000, responseCache: "on" });
  ({ admin, org, reader } = await acmeDocs(t, { reader: ["rory@acme.test", "read"] }));
  spaceId = (await createSpace(admin, org, { title: "Cached" })).id;
});
afterAll(() => t?.close());

describe("the response cache", () => {
  it("answers a repeated REST GET and GraphQL query without a statement, the same answer each time", async () => {
    const first = await admin.get(`/v1/spaces/${spaceId}`);
    expect(await statements(() => admin.get(`/v1/spaces/${spaceId}`))).toBe(0);
    const again = await admin.get(`/v1/spaces/${spaceId}`);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    // If-None-Match is honored on a cached answer too.
    const res = await fetch(`${t.url}/v1/spaces/${spaceId}`, {
      headers: { authorization: `Bearer ${admin.token}`, "if-none-match": first.headers.get("etag")! },
    });
    expect(res.status).toBe(304);
    // A kept answer goes out as the answer it was kept from: the same bytes, headers and status line.
    const raw = async () => {
      const answer = await fetch(`${t.url}/v1/spaces/${spaceId}`, { headers: { authorization: `Bearer ${admin.token}` } });
      const headers = Object.fromEntries(["content-type", "content-length", "etag"].map((h) => [h, answer.headers.get(h)]));
      return { status: answer.status, statusText: answer.statusText, headers, text: await answer.text() };
    };
    const kept = await raw();
    expect(kept).toEqual({
      status: 200,
      statusText: "OK",
      headers: expect.objectContaining({ "content-type": "application/json; charset=utf-8" }),
      text: JSON.stringify(first.body),
    });
    expect(await raw()).toEqual(kept);

    const graph = await admin.graphql(SPACE, { id: spaceId });
    expect(await statements(() => admin.graphql(SPACE, { id: spaceId }))).toBe(0);
    expect((await admin.graphql(SPACE, { id: spaceId })).data).toEqual(graph.data);
  });

  it("keeps answers per caller: each sees their own permissions", async () => {
    await admin.get(`/v1/spaces/${spaceId}`);
    expect((await reader.get(`/v1/spaces/${spaceId}`)).body.permissions.edit).toBe(false);
    expect((await admin.get(`/v1/spaces/${spaceId}`)).body.permissions.edit).toBe(true);
    expect((await reader.graphql(SPACE, { id: spaceId })).data.space.permissions.edit).toBe(false);
    expect((await admin.graphql(SPACE, { id: spaceId })).data.space.permissions.edit).toBe(true);
  });

  it("shows what a write changed at the next read: a count, a list, a role, a revoked token", async () => {
    const before = (await admin.get(`/v1/spaces/${spaceId}`)).body.comments;
    const count = (await admin.graphql(SPACE, { id: spaceId })).data.space.commentsCount;
    const list = (await reader.get(`/v1/orgs/${org}/spaces`)).body.items.length;
    expect((await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "New" } })).status).toBe(201);
    expect((await admin.get(`/v1/spaces/${spaceId}`)).body.comments).toBe(before + 1);
    expect((await admin.graphql(SPACE, { id: spaceId })).data.space.commentsCount).toBe(count + 1);

    await createSpace(admin, org, { title: "Another" });
    expect((await reader.get(`/v1/orgs/${org}/spaces`)).body.items.length).toBe(list + 1);

    expect((await admin.patch(`/v1/orgs/${org}/members/${reader.user}`, { role: "edit" })).status).toBe(200);
    expect((await reader.get(`/v1/spaces/${spaceId}`)).body.permissions.edit).toBe(true);
    expect((await reader.graphql(SPACE, { id: spaceId })).data.space.permissions.edit).toBe(true);

    await runAdminCommand(t.gateway.db.prisma, { command: "token-revoke", token: reader.token });
    expectError(await reader.get(`/v1/spaces/${spaceId}`), 401);
    expect((await reader.graphql(SPACE, { id: spaceId })).status).toBe(401);
  });

  it("shows an integration's new event and its trace at the next read: a space write records them in one statement", async () => {
    expect(
      (await admin.post("/v1/integrations/cached", { title: "Cached", organization: org, scopes: ["space:content:read"] })).status,
    ).toBe(201);
    const installation = (await admin.post("/v1/integrations/cached/installations", { organization: org })).body;
    expect((await admin.patch(`/v1/integrations/cached/installations/${installation.id}`, { space_selection: "all" })).status).toBe(200);
    const page = (await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Traced" })).body;
    const events = async () =>
      (await admin.get("/v1/integrations/cached/events")).body.items as { id: string; payload: { type: string } }[];
    const before = await events();
    expect(await statements(events)).toBe(0); // kept
    expect((await admin.patch(`/v1/spaces/${spaceId}/content/page/${page.id}`, { title: "Traced again" })).status).toBe(200);
    const after = await events();
    expect(after.length).toBe(before.length + 1);
    const recorded = after.find((e) => !before.some((b) => b.id === e.id))!;
    expect(recorded.payload.type).toBe("space_content_updated");
    const { trace } = (await admin.get(`/v1/integrations/cached/events/${recorded.id}`)).body;
    expect(trace.logs.map((l: { message: string }) => l.message)).toContain("Recorded space_content_updated event.");
  });

  it("drops an answer made from a kept page (no statement sent) with the writes that change its rows", async () => {
    // On the embedded database the list's page and count are kept between writes (core/cache/list-cache.ts):
    // an answer made anew from them sends no statement, yet depends on their rows.
    const list = `/v1/orgs/${org}/spaces`;
    const before = (await admin.get(list)).body;
    await t.gateway.responseCache.forget();
    if (t.gateway.listCache) expect(await statements(() => admin.get(list))).toBe(0);
    const kept = before.items.find((s: { id: string }) => s.id === spaceId);
    expect((await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "Counted" } })).status).toBe(201);
    const after = (await admin.get(list)).body.items.find((s: { id: string }) => s.id === spaceId);
    expect(after.comments).toBe(kept.comments + 1);
  });

  it("drops per row: a comment in one space leaves another space's answers in place, and refreshes its own", async () => {
    const a = (await createSpace(admin, org, { title: "Space A" })).id;
    const b = (await createSpace(admin, org, { title: "Space B" })).id;
    expect((await admin.post(`/v1/spaces/${b}/comments`, { body: { markdown: "In B" } })).status).toBe(201);
    const stats = t.gateway.responseCache.stats;
    /** The answer, whether the cache gave it, and the statements it took. */
    const read = async (call: () => Promise<any>) => {
      const hits = stats.hits;
      const before = t.gateway.db.stats.statements;
      const answer = await call();
      return { answer, hit: stats.hits - hits === 1, statements: t.gateway.db.stats.statements - before };
    };
    const reads = {
      a: () => admin.get(`/v1/spaces/${a}`),
      b: () => admin.get(`/v1/spaces/${b}`),
      bComments: () => admin.get(`/v1/spaces/${b}/comments`),
      bGraph: () => admin.graphql(SPACE, { id: b }),
      aGraph: () => admin.graphql(SPACE, { id: a }),
    };
    for (const call of Object.values(reads)) await call();
    for (const call of Object.values(reads)) expect((await read(call)).hit).toBe(true);
    const before = { rest: (await reads.a()).body.comments, graph: (await reads.aGraph()).data.space.commentsCount };

    expect((await admin.post(`/v1/spaces/${a}/comments`, { body: { markdown: "In A" } })).status).toBe(201);

    // Space B's answers were kept: served from the cache, without a statement.
    for (const call of [reads.b, reads.bComments, reads.bGraph]) {
      const { hit, statements: sent } = await read(call);
      expect({ hit, sent }).toEqual({ hit: true, sent: 0 });
    }
    expect((await reads.bComments()).body.items.map((c: any) => c.body?.markdown ?? c.markdown)).not.toContain("In A");
    // Space A's were dropped: read again, with the new count, then kept again.
    const rest = await read(reads.a);
    expect(rest.hit).toBe(false);
    expect(rest.answer.body.comments).toBe(before.rest + 1);
    const graph = await read(reads.aGraph);
    expect(graph.hit).toBe(false);
    expect(graph.answer.data.space.commentsCount).toBe(before.graph + 1);
    expect((await read(reads.a)).hit).toBe(true);
  });

  it("never keeps an error, and a mutation always runs", async () => {
    const missing = `/v1/spaces/spc_missing_${Date.now()}`;
    expectError(await admin.get(missing), 404);
    expect(await statements(() => admin.get(missing))).toBeGreaterThan(0);
    const title = `Renamed ${Date.now()}`;
    const rename = `mutation($id: String!, $title: String!) { spaceUpdate(spaceId: $id, title: $title) { id title } }`;
    for (let i = 0; i < 2; i++) {
      const res = await admin.graphql(rename, { id: spaceId, title: `${title} ${i}` });
      expect(res.data?.spaceUpdate?.title ?? res.errors).toBe(`${title} ${i}`);
    }
    expect((await admin.get(`/v1/spaces/${spaceId}`)).body.title).toBe(`${title} 1`);
  });
});

describe("RESPONSE_CACHE", () => {
  it("reads on and off as every switch does (any case), unset or auto as auto; anything else is refused by name", () => {
    expect(loadConfig({}).responseCache).toBe("auto");
    expect(loadConfig({ RESPONSE_CACHE: " Auto " }).responseCache).toBe("auto");
    for (const on of ["on", "ON", "true", "1", "yes"]) expect(loadConfig({ RESPONSE_CACHE: on }).responseCache).toBe("on");
    for (const off of ["off", "False", "0", "no"]) expect(loadConfig({ RESPONSE_CACHE: off }).responseCache).toBe("off");
    expect(() => loadConfig({ RESPONSE_CACHE: "sometimes" })).toThrow(/RESPONSE_CACHE must be on, off or auto, got "sometimes"/);
    expect(() => loadConfig({ RESPONSE_CACHE: "always" })).toThrow(/RESPONSE_CACHE must be on, off or auto/);
  });
});

describe("RESPONSE_CACHE=off", () => {
  it("answers every read by running it", async () => {
    const off = await startGateway({ integrationDispatchPollMs: 60 * 60 * 1000, responseCache: "off" });
    try {
      const boss = await off.bootstrap("ada@acme.test", "Acme Docs");
      const space = await createSpace(boss, boss.organization, { title: "Uncached" });
      await boss.get(`/v1/spaces/${space.id}`);
      const before = off.gateway.db.stats.statements;
      await boss.get(`/v1/spaces/${space.id}`);
      expect(off.gateway.db.stats.statements - before).toBeGreaterThan(0);
      expect(off.gateway.responseCache.enabled).toBe(false);
    } finally {
      await off.close();
    }
  });
});
