import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, expectError, type Admin } from "../../helpers/fixtures.js";
import { migrationsDir } from "../../../src/core/db/migrate.js";

/**
 * Content is stored as JSON records keyed by page and file ids, and those ids come from request
 * paths: names of Object.prototype's members (`constructor`, `__proto__`, …) are ids like any
 * other, of nothing. They answer 404 (400 where they name a parent or a page in a body) and write
 * nothing; revisions already holding such junk keys are repaired by a migration.
 */
const NAMES = [
  "constructor",
  "__proto__",
  "hasOwnProperty",
  "toString",
  "valueOf",
  "isPrototypeOf",
  "__defineGetter__",
  "propertyIsEnumerable",
];

let t: TestGateway;
let admin: Admin;
let spaceId: string;
let pageId: string;
let crId: string;

const head = async () => (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id as string;
const revisions = () => t.gateway.db.prisma.revision.count({ where: { spaceId } });

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  spaceId = created(await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Prototype" })).id;
  pageId = created(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Intro", markdown: "Hello\n\nWorld" })).id;
  crId = created(await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Edits" })).id;
});
afterAll(() => t?.close());

describe("prototype names as page and file ids", () => {
  it("answer 404 on every page and file route of the space and of a change request, and write nothing", { timeout: 180_000 }, async () => {
    const before = await head();
    const count = await revisions();
    for (const name of NAMES) {
      const id = encodeURIComponent(name);
      for (const base of [`/v1/spaces/${spaceId}/content`, `/v1/spaces/${spaceId}/change-requests/${crId}/content`]) {
        expectError(await admin.patch(`${base}/page/${id}`, { title: "Junk" }), 404, name);
        expectError(await admin.patch(`${base}/page/${id}`, { parent: null, position: 0 }), 404);
        expectError(await admin.get(`${base}/page/${id}`), 404);
        expectError(await admin.get(`${base}/page/${id}/links`), 404);
        expectError(await admin.get(`${base}/files/${id}`), 404);
        expectError(await admin.get(`${base}/files/${id}/backlinks`), 404);
        expect((await admin.delete(`${base}/page/${id}`)).status).toBe(204);
        // As a parent, in a body: a 400 naming the field.
        expectError(await admin.post(`${base}/pages`, { title: "Child", parent: name }), 400, "parent");
        expectError(await admin.patch(`${base}/page/${pageId}`, { parent: name }), 400, "parent");
      }
      const comment = await admin.post(`/v1/spaces/${spaceId}/change-requests/${crId}/comments`, { body: { markdown: "Hm" }, page: name });
      expect(comment.status, JSON.stringify(comment.body)).toBe(400);
      expect((await t.caller(admin.token).get(`/v1/spaces/${spaceId}/change-requests/${crId}/pdf`, { pageId: name })).status).toBe(404);
    }
    expect(await head()).toBe(before);
    expect(await revisions()).toBe(count);
    // The content is intact: one page, and edits and merges go on.
    const pages = (await admin.get(`/v1/spaces/${spaceId}/content/pages`)).body;
    expect(pages.pages.map((p: any) => p.id)).toEqual([pageId]);
    expect(
      (await admin.patch(`/v1/spaces/${spaceId}/change-requests/${crId}/content/page/${pageId}`, { markdown: "Hello\n\nEveryone" })).status,
    ).toBe(200);
    expect((await admin.patch(`/v1/spaces/${spaceId}/content/page/${pageId}`, { title: "Introduction" })).status).toBe(200);
    expect((await admin.patch(`/v1/spaces/${spaceId}/change-requests/${crId}`, { status: "open" })).status).toBe(200);
    const merged = await admin.post(`/v1/spaces/${spaceId}/change-requests/${crId}/merge`, {});
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    const page = (await admin.get(`/v1/spaces/${spaceId}/content/page/${pageId}`)).body;
    expect(page.title).toBe("Introduction");
  });

  it("a page can still be titled with such a name", async () => {
    const page = created(await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "constructor", slug: "constructor" }));
    expect((await admin.get(`/v1/spaces/${spaceId}/content/page/${page.id}`)).body.title).toBe("constructor");
    expect((await admin.delete(`/v1/spaces/${spaceId}/content/page/${page.id}`)).status).toBe(204);
  });
});

describe("revisions stored with junk keys", () => {
  it("are read without them, merge again, and are repaired by the migration", async () => {
    const space = created(await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Damaged" }));
    const page = created(await admin.post(`/v1/spaces/${space.id}/content/pages`, { title: "Kept", markdown: "a" }));
    const cr = created(await admin.post(`/v1/spaces/${space.id}/change-requests`, { subject: "Later" }));
    // What earlier versions wrote for PATCH …/page/constructor and …/page/hasOwnProperty.
    const junk = {
      constructor: { title: "Junk", markdown: "", updatedAt: "2026-01-01T00:00:00.000Z" },
      hasOwnProperty: { title: "Junk" },
      toString: "not even an object",
    };
    const { prisma } = t.gateway.db;
    const damaged = await prisma.revision.findMany({ where: { spaceId: space.id } });
    for (const r of damaged) {
      const content = r.content as any;
      await prisma.revision.update({
        where: { id: r.id },
        data: {
          content: { ...content, pages: { ...content.pages, ...junk }, files: { ...junk }, variables: { ok: "yes", bad: { x: 1 } } },
        },
      });
    }
    const pages = await admin.get(`/v1/spaces/${space.id}/content/pages`);
    expect(pages.status).toBe(200);
    expect(pages.body.pages.map((p: any) => p.id)).toEqual([page.id]);
    expect((await admin.get(`/v1/spaces/${space.id}/content/files`)).body.count).toBe(0);
    expect((await admin.patch(`/v1/spaces/${space.id}/change-requests/${cr.id}/content/page/${page.id}`, { markdown: "b" })).status).toBe(
      200,
    );
    expect((await admin.patch(`/v1/spaces/${space.id}/change-requests/${cr.id}`, { status: "open" })).status).toBe(200);
    expect((await admin.post(`/v1/spaces/${space.id}/change-requests/${cr.id}/merge`, {})).status).toBe(200);

    // The repair migration, run again on the damaged rows (it ran once at start, on none).
    const dir = fs.readdirSync(migrationsDir).find((d) => d.endsWith("_revision_content_own_ids"))!;
    const sql = fs.readFileSync(path.join(migrationsDir, dir, "migration.sql"), "utf8");
    for (const statement of sql
      .split(/;\s*\n/)
      .map((s) => s.replace(/^--.*$/gm, "").trim())
      .filter(Boolean)) {
      await prisma.$executeRawUnsafe(statement);
    }
    for (const r of await prisma.revision.findMany({ where: { id: { in: damaged.map((d) => d.id) } } })) {
      const content = r.content as any;
      for (const name of Object.keys(junk)) {
        expect(Object.hasOwn(content.pages, name), `${r.id} pages.${name}`).toBe(false);
        expect(Object.hasOwn(content.files, name)).toBe(false);
      }
      expect(content.variables).toEqual({ ok: "yes" });
      for (const [key, value] of Object.entries<any>(content.pages)) expect(value.id).toBe(key);
    }
    expect((await admin.get(`/v1/spaces/${space.id}/content/page/${page.id}`)).body.markdown).toBe("b");
  });
});
