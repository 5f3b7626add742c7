import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, createSpace, type Admin } from "../helpers/fixtures.js";

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
    await db().$executeRawUnsafe(`CREATE OR REPLACE FUNCTION test_refuse_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'events cannot be stored'; END $$`);
    await db().$executeRawUnsafe(`CREATE TRIGGER test_refuse_events BEFORE INSERT ON "IntegrationEvent" FOR EACH ROW EXECUTE FUNCTION test_refuse_events()`);
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
  const writes = () => [
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
});
