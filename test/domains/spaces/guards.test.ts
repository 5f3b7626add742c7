import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, createSpace, type Admin } from "../../helpers/fixtures.js";

/**
 * Guards and `permissions` come from the same rules (spaces.policy.ts): for every role and edit
 * mode, an action succeeds exactly when the space's `permissions` says the caller may do it.
 */

let t: TestGateway;
let admin: Admin;
let callers: Record<string, Caller>;

beforeAll(async () => {
  t = await startGateway();
  const people = await acmeDocs(t, {
    editor: ["eve@acme.test", "edit"],
    reviewer: ["rob@acme.test", "review"],
    commenter: ["cam@acme.test", "comment"],
    reader: ["rita@acme.test", "read"],
  });
  admin = people.admin;
  callers = { admin, editor: people.editor, reviewer: people.reviewer, commenter: people.commenter, reader: people.reader };
}, 120_000);
afterAll(() => t?.close());

describe.each(["live", "locked"] as const)("a %s space", (editMode) => {
  it.each(["admin", "editor", "reviewer", "commenter", "reader"])(
    "%s: each write succeeds exactly when permissions allows it",
    async (who) => {
      const caller = callers[who]!;
      const space = await createSpace(admin, admin.organization, { title: "Guarded", editMode });
      const { permissions } = (await caller.get(`/v1/spaces/${space.id}`)).body;
      const outcome = (res: { status: number; body: any }) => {
        expect([200, 201, 403], JSON.stringify(res.body)).toContain(res.status);
        return res.status !== 403;
      };

      expect(outcome(await caller.patch(`/v1/spaces/${space.id}`, { title: "Renamed" })), "title").toBe(permissions.edit);
      expect(outcome(await caller.patch(`/v1/spaces/${space.id}`, { emoji: "📘" })), "emoji").toBe(permissions.edit);
      expect(outcome(await caller.post(`/v1/spaces/${space.id}/content/pages`, { title: "Page" })), "page").toBe(permissions.edit);
      expect(outcome(await caller.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "Hi" } })), "comment").toBe(
        permissions.comment,
      );
      expect(outcome(await caller.patch(`/v1/spaces/${space.id}`, { defaultLevel: "read" })), "defaultLevel").toBe(permissions.admin);
      // Change requests stay open to editors of a locked space: that is how locked content changes.
      expect(outcome(await caller.post(`/v1/spaces/${space.id}/change-requests`, { subject: "Fix" })), "change request").toBe(
        ["admin", "reviewer", "editor"].includes(who),
      ); // edit and above
      const stored = await t.gateway.db.prisma.space.findUniqueOrThrow({ where: { id: space.id } });
      expect(stored.title).toBe(permissions.edit ? "Renamed" : "Guarded");
    },
  );
});

it("an admin changes the title of a locked space by unlocking it, also in the same request", async () => {
  const space = await createSpace(admin, admin.organization, { title: "Locked", editMode: "locked" });
  const refused = await admin.patch(`/v1/spaces/${space.id}`, { title: "Renamed" });
  expect(refused.status).toBe(403);
  expect(refused.body.error.message).toMatch(/locked/);
  const res = await admin.patch(`/v1/spaces/${space.id}`, { title: "Renamed", editMode: "live" });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ title: "Renamed", editMode: "live", permissions: { edit: true } });
  // Locking and renaming at once is a rename of a locked space: refused, nothing changes.
  expect((await admin.patch(`/v1/spaces/${space.id}`, { title: "Again", editMode: "locked" })).status).toBe(403);
  expect((await admin.get(`/v1/spaces/${space.id}`)).body).toMatchObject({ title: "Renamed", editMode: "live" });
});
