import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readerGateway, startGateway, TWO_PROCESSES, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, createSpace, type Admin } from "../helpers/fixtures.js";
import { collect, wsClient } from "../helpers/graphql-ws.js";

/**
 * Space activity is recorded in the transaction of the write that caused it: the integration
 * event exists exactly when the change does. A database that refuses to store integration events
 * (a trigger, standing in for any failure while recording) makes the write fail and leaves
 * nothing of it behind; once events can be stored, every write has its event.
 */

let t: TestGateway;
let admin: Admin;
let spaceId: string;
let pageId: string;

const db = () => t.gateway.db.prisma;

async function refuseEvents(on: boolean) {
  if (on) {
    await db().$executeRawUnsafe(
      `CREATE OR REPLACE FUNCTION test_refuse_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'events cannot be stored'; END $$`,
    );
    await db().$executeRawUnsafe(
      `CREATE TRIGGER test_refuse_events BEFORE INSERT ON "IntegrationEvent" FOR EACH ROW EXECUTE FUNCTION test_refuse_events()`,
    );
  } else {
    await db().$executeRawUnsafe(`DROP TRIGGER IF EXISTS test_refuse_events ON "IntegrationEvent"`);
  }
}

/** Sends a write through the API without the documented-shape check (a failed write answers 500). */
async function send(method: string, path: string, body: unknown) {
  const res = await fetch(t.url + path, {
    method,
    headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function snapshot() {
  const [space, comments, changeRequests, events, revisions] = await Promise.all([
    db().space.findUniqueOrThrow({ where: { id: spaceId } }),
    db().comment.count({ where: { spaceId } }),
    db().changeRequest.count({ where: { spaceId } }),
    db().integrationEvent.count(),
    db().revision.count({ where: { spaceId } }),
  ]);
  return { revisionId: space.revisionId, comments, changeRequests, events, revisions };
}

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  const org = admin.organization;
  created(
    await admin.post("/v1/integrations/watcher", {
      title: "Watcher",
      organization: org,
      scopes: ["space:content:read", "space:comments:read", "space:change-requests:read"],
    }),
  );
  const installation = created(await admin.post("/v1/integrations/watcher/installations", { organization: org }));
  expect((await admin.patch(`/v1/integrations/watcher/installations/${installation.id}`, { space_selection: "all" })).status).toBe(200);
  spaceId = (await createSpace(admin, org, { title: "Handbook" })).id;
  pageId = created(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Setup" })).id;
}, 120_000);
afterAll(async () => {
  await refuseEvents(false).catch(() => undefined);
  await t?.close();
});

describe("space activity and its write", () => {
  const writes = () =>
    [
      ["page edit", "PATCH", `/v1/spaces/${spaceId}/content/page/${pageId}`, { title: "Installing" }],
      ["page creation", "POST", `/v1/spaces/${spaceId}/content/pages`, { title: "Later" }],
      ["comment", "POST", `/v1/spaces/${spaceId}/comments`, { body: { markdown: "Is this right?" } }],
      ["change request", "POST", `/v1/spaces/${spaceId}/change-requests`, { subject: "Typos" }],
    ] as const;

  it("a write whose event cannot be recorded fails and leaves nothing behind", async () => {
    const before = await snapshot();
    await refuseEvents(true);
    try {
      for (const [what, method, path, body] of writes()) {
        const res = await send(method, path, body);
        expect(res.status, what).toBe(500);
      }
    } finally {
      await refuseEvents(false);
    }
    expect(await snapshot()).toEqual(before);
    expect((await admin.get(`/v1/spaces/${spaceId}/content/page/${pageId}`)).body.title).toBe("Setup");
  });

  it("each write has its event once they can be recorded", async () => {
    const before = await snapshot();
    const results: Record<string, any> = {};
    for (const [what, method, path, body] of writes()) {
      const res = await send(method, path, body);
      expect([200, 201], what).toContain(res.status);
      results[what] = res.body;
    }
    const after = await snapshot();
    expect(after.events - before.events).toBe(4);
    const events = (await admin.get("/v1/integrations/watcher/events", { limit: 4 })).body.items.map((e: any) => e.payload);
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "change_request_opened", changeRequestId: results["change request"].id }),
        expect.objectContaining({ type: "comment_posted", commentId: results.comment.id }),
        expect.objectContaining({ type: "space_content_updated", spaceId, revisionId: after.revisionId }),
      ]),
    );
  });

  it("a burst of concurrent edits records one event per edit per installation, announced in commit order; failed edits record none", {
    timeout: 120_000,
  }, async () => {
    const spaces = await Promise.all(
      ["Burst A", "Burst B", "Burst C"].map(async (title) => {
        const id = (await createSpace(admin, admin.organization, { title })).id;
        return { id, page: created(await admin.post(`/v1/spaces/${id}/content/pages`, { title: "Start" })).id as string };
      }),
    );
    const perSpace = 12;
    const c = wsClient(t.url, admin.token);
    const live = collect(
      c,
      `subscription { integrationEvents(integrationName: "watcher", types: ["space_content_updated"]) { id payload { spaceId revisionId } } }`,
      {},
      spaces.length * perSpace,
    );
    await live.ready;
    const eventsBefore = await db().integrationEvent.count();
    // Every edit at once; one in four is of a page that does not exist and fails inside its transaction.
    const answers = await Promise.all(
      spaces.flatMap((space) =>
        Array.from({ length: perSpace + perSpace / 4 }, async (_, k) => {
          const missing = k % 5 === 4;
          const page = missing ? "pg_missing" : space.page;
          const res = await send("PATCH", `/v1/spaces/${space.id}/content/page/${page}`, { title: `Edit ${k}` });
          expect(res.status, JSON.stringify(res.body)).toBe(missing ? 404 : 200);
          return res.status;
        }),
      ),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(spaces.length * perSpace);
    expect((await db().integrationEvent.count()) - eventsBefore).toBe(spaces.length * perSpace);
    const received = (await live.results).map((r) => r.data.integrationEvents.payload as { spaceId: string; revisionId: string });
    await c.dispose();
    for (const space of spaces) {
      // The space's events, in the order the subscriber got them: each edit's revision has the previous one as parent.
      const order = received.filter((p) => p.spaceId === space.id).map((p) => p.revisionId);
      expect(order).toHaveLength(perSpace);
      const revisions = await db().revision.findMany({ where: { id: { in: order } }, select: { id: true, parents: true } });
      const parentOf = new Map(revisions.map((r) => [r.id, r.parents[0]]));
      for (let k = 1; k < order.length; k++) expect(parentOf.get(order[k]!), `edit ${k} of ${space.id}`).toBe(order[k - 1]);
      const head = (await db().space.findUniqueOrThrow({ where: { id: space.id } })).revisionId;
      expect(order.at(-1)).toBe(head);
    }
  });

  it("records for the installations as they are now: a change of installations or scopes applies to the next write", async () => {
    const edit = async () =>
      expect((await send("PATCH", `/v1/spaces/${spaceId}/content/page/${pageId}`, { title: `Now ${Math.random()}` })).status).toBe(200);
    const observed = () => db().integrationEvent.count({ where: { integration: { name: "observer" }, type: "space_content_updated" } });
    created(
      await admin.post("/v1/integrations/observer", {
        title: "Observer",
        organization: admin.organization,
        scopes: ["space:content:read"],
      }),
    );
    await edit(); // the organization's installations are read (and kept) before the next one
    const installation = created(await admin.post("/v1/integrations/observer/installations", { organization: admin.organization }));
    const installed = await observed();
    await edit(); // installed, but not in this space (space_selection "selected")
    expect(await observed()).toBe(installed);
    expect((await admin.put(`/v1/integrations/observer/installations/${installation.id}/spaces/${spaceId}`, {})).status).toBe(200);
    await edit();
    expect(await observed()).toBe(installed + 1);
    // A new version without the scope: no more content events.
    expect(
      (
        await admin.post("/v1/integrations/observer", {
          title: "Observer",
          organization: admin.organization,
          scopes: ["space:comments:read"],
        })
      ).status,
    ).toBe(200);
    await edit();
    expect(await observed()).toBe(installed + 1);
    expect(
      (
        await admin.post("/v1/integrations/observer", {
          title: "Observer",
          organization: admin.organization,
          scopes: ["space:content:read"],
        })
      ).status,
    ).toBe(200);
    await edit();
    expect(await observed()).toBe(installed + 2);
    expect((await admin.delete(`/v1/integrations/observer/installations/${installation.id}/spaces/${spaceId}`)).status).toBe(204);
    await edit();
    expect(await observed()).toBe(installed + 2);
    expect((await admin.patch(`/v1/integrations/observer/installations/${installation.id}`, { space_selection: "all" })).status).toBe(200);
    await edit();
    expect(await observed()).toBe(installed + 3);
    expect((await admin.delete(`/v1/integrations/observer/installations/${installation.id}`)).status).toBe(204);
    const uninstalled = await observed();
    await edit();
    expect(await observed()).toBe(uninstalled);
  });

  it(`an installation made through one gateway applies to the next write through ${TWO_PROCESSES ? "another (PostgreSQL + Redis)" : "it"}`, async () => {
    const other = await readerGateway(t);
    try {
      const edit = async () => {
        const res = await fetch(`${other.url}/v1/spaces/${spaceId}/content/page/${pageId}`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
          body: JSON.stringify({ title: `Relayed ${Math.random()}` }),
        });
        expect(res.status).toBe(200);
      };
      const relayed = () => db().integrationEvent.count({ where: { integration: { name: "relay" }, type: "space_content_updated" } });
      created(
        await admin.post("/v1/integrations/relay", { title: "Relay", organization: admin.organization, scopes: ["space:content:read"] }),
      );
      await edit(); // the other gateway keeps the organization's installations
      expect(await relayed()).toBe(0);
      const installation = created(await admin.post("/v1/integrations/relay/installations", { organization: admin.organization }));
      expect((await admin.patch(`/v1/integrations/relay/installations/${installation.id}`, { space_selection: "all" })).status).toBe(200);
      await edit();
      expect(await relayed()).toBe(1);
      expect((await admin.delete(`/v1/integrations/relay/installations/${installation.id}`)).status).toBe(204);
      await edit();
      expect(await relayed()).toBe(1);
    } finally {
      await other.close();
    }
  });
});
