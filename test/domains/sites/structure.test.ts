import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

// Many requests per test, on a machine that may be busy: generous time limits.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let reader: Caller & { user: string };
let org: string;
let spaces: Record<string, string>;

const SCHEMA = {
  type: "object",
  properties: {
    unsigned: { type: "object", properties: { lang: { type: "string" } } },
    isBetaUser: { type: "boolean", description: "Beta program member" },
    plan: { type: "string", description: "Plan" },
  },
  additionalProperties: false,
};

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme Docs");
  org = admin.organization;
  reader = await t.member(org, "rita@acme.test", "read");
  spaces = {};
  for (const title of ["Guide", "API", "Changelog", "Beta", "Extra"]) spaces[title] = await space(admin, org, title);
});
afterAll(() => t?.close());

const ids = (items: any[]) => items.map((x) => x.id);

describe("site sections", () => {
  it("adds the first section: the root site spaces move into it (keeping their order and default)", async () => {
    const s = await site(admin, org, { title: "Sectioned", spaces: [spaces.Guide, spaces.API] });
    const roots = (await admin.get(sitePath(org, s.id, "/site-spaces"))).body.items;
    await admin.patch(sitePath(org, s.id), { defaultSiteSpace: roots[1].id });

    const res = await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Changelog, icon: "book" });
    expect(res.status).toBe(201);
    const section = res.body;
    expect(section).toEqual({
      object: "site-section",
      id: expect.stringMatching(/^sitesc_/),
      title: "Changelog",
      default: true,
      path: "changelog",
      icon: "book",
      siteSpaces: expect.any(Array),
      draft: true, // until the site is published
      // The default section is the site's root (GitBook's convention).
      urls: { published: `${t.url}/sites/${org}/${s.id}` },
    });
    expect(section.siteSpaces.map((x: any) => [x.space.id, x.section, x.default, x.path])).toEqual([
      [spaces.Guide, section.id, false, "guide"],
      [spaces.API, section.id, true, "api"],
      [spaces.Changelog, section.id, false, "changelog"],
    ]);
    const [first] = section.siteSpaces;
    expect(first).toEqual({
      object: "site-space",
      id: roots[0].id,
      path: "guide",
      section: section.id,
      space: expect.objectContaining({
        object: "space",
        id: spaces.Guide,
        title: "Guide",
        organization: org,
        urls: expect.any(Object),
        permissions: expect.any(Object),
      }),
      title: "Guide",
      default: false,
      hasAdvancedCustomizationFeature: false,
      draft: true,
      urls: { published: `${t.url}/sites/${org}/${s.id}/changelog/guide` },
    });
    expect((await admin.get(sitePath(org, s.id))).body.siteSpaces).toBe(3);

    // A second section: its own first site space is its default; titles default to the space's.
    const second = await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title: null, icon: null });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ title: "Guide", path: "guide", default: false });
    expect(second.body).not.toHaveProperty("icon");
    expect(second.body.siteSpaces.map((x: any) => [x.space.id, x.default])).toEqual([[spaces.Guide, true]]);
    // Same title: the generated path gets a suffix.
    const third = await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.API, title: "Guide" });
    expect(third.body.path).toBe("guide-2");

    const list = await reader.get(sitePath(org, s.id, "/sections"));
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(3);
    expect(ids(list.body.items)).toEqual([section.id, second.body.id, third.body.id]);
    const paged = await reader.get(sitePath(org, s.id, "/sections"), { limit: 2 });
    expect(paged.body.items).toHaveLength(2);
    const rest = await reader.get(sitePath(org, s.id, "/sections"), { limit: 2, page: paged.body.next.page });
    expect(ids(rest.body.items)).toEqual([third.body.id]);
    // A share key rides on the published URLs of share-link sites.
    await admin.patch(sitePath(org, s.id), { visibility: "share-link" });
    const shared = await reader.get(sitePath(org, s.id, "/sections"), { shareKey: "abc123" });
    expect(shared.body.items[0].urls.published).toBe(`${t.url}/sites/${org}/${s.id}/abc123`);
    expect(shared.body.items[0].siteSpaces[0].urls.published).toBe(`${t.url}/sites/${org}/${s.id}/abc123/changelog/guide`);
    expect((await reader.get(sitePath(org, s.id, "/sections"), { shareKey: "bad key!" })).status).toBe(400);
  });

  it("enforces the limits when adding a section", async () => {
    const s = await site(admin, org, { title: "Section Limits" });
    const cases: [unknown, string][] = [
      [{}, "spaceId"],
      [{ spaceId: spaces.Guide, title: "x" }, "title"],
      [{ spaceId: spaces.Guide, title: "x".repeat(129) }, "title"],
      [{ spaceId: spaces.Guide, icon: "i".repeat(51) }, "icon"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post(sitePath(org, s.id, "/sections"), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toContain(field);
    }
    const missing = await admin.post(sitePath(org, s.id, "/sections"), { spaceId: "spc_nope" });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("spc_nope");
    const edge = await admin.post(sitePath(org, s.id, "/sections"), {
      spaceId: spaces.Guide,
      title: "x".repeat(128),
      icon: "i".repeat(50),
    });
    expect(edge.status).toBe(201);
    expect(edge.body.path).toBe("x".repeat(100));
    expect((await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title: "ab" })).status).toBe(201);
    expect((await reader.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide })).status).toBe(403);
  });

  it("updates a section; null removes condition, icon and description; omitted leaves them", async () => {
    const s = await site(admin, org, { title: "Section Patch" });
    await admin.put(sitePath(org, s.id, "/adaptive-schema"), { jsonSchema: SCHEMA });
    const a = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title: "Alpha" })).body;
    const b = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.API, title: "Beta" })).body;
    const extra = (await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Extra, sectionId: a.id })).body;

    const res = await admin.patch(sitePath(org, s.id, `/sections/${a.id}`), {
      title: "Alpha Docs",
      path: "alpha-docs",
      defaultSiteSpace: extra.id,
      condition: "visitor.claims.isBetaUser === true && (visitor.claims.plan == 'pro' || !visitor.claims.unsigned.lang)",
      icon: "rocket",
      description: "The alpha part",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: a.id,
      title: "Alpha Docs",
      path: "alpha-docs",
      condition: "visitor.claims.isBetaUser === true && (visitor.claims.plan == 'pro' || !visitor.claims.unsigned.lang)",
      icon: "rocket",
      description: "The alpha part",
      urls: { published: `${t.url}/sites/${org}/${s.id}` }, // the default section is the site's root
    });
    expect(res.body.siteSpaces.map((x: any) => [x.id, x.default])).toEqual([
      [a.siteSpaces[0].id, false],
      [extra.id, true],
    ]);
    const untouched = await admin.patch(sitePath(org, s.id, `/sections/${a.id}`), { title: "Alpha Again" });
    expect(untouched.body).toMatchObject({ icon: "rocket", description: "The alpha part", condition: expect.any(String) });
    const cleared = await admin.patch(sitePath(org, s.id, `/sections/${a.id}`), { condition: null, icon: null, description: null });
    expect(cleared.status).toBe(200);
    for (const key of ["condition", "icon", "description"]) expect(cleared.body).not.toHaveProperty(key);

    const taken = await admin.patch(sitePath(org, s.id, `/sections/${b.id}`), { path: "alpha-docs" });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toContain("path");

    const cases: [unknown, string][] = [
      [{ title: "x" }, "title"],
      [{ title: "x".repeat(129) }, "title"],
      [{ title: null }, "title"],
      [{ path: "" }, "path"],
      [{ path: "p".repeat(101) }, "path"],
      [{ path: "a/b" }, "path"],
      [{ path: null }, "path"],
      [{ description: "d".repeat(257) }, "description"],
      [{ icon: "i".repeat(51) }, "icon"],
      [{ condition: "" }, "condition"],
      [{ condition: "visitor.claims.plan === '" + "p".repeat(1025 - 26) + "'" }, "condition"],
      [{ condition: "visitor.claims.isBetaUser ===" }, "condition"],
      [{ condition: "visitor.claims.unknownClaim === true" }, "condition"],
      [{ condition: "process.exit(1)" }, "condition"],
      [{ condition: "visitor.claims.plan = 'pro'" }, "condition"],
      [{ condition: "visitor.claims.plan ? 1 : 2" }, "condition"],
      [{ condition: "visitor.claims.plan + 'x'" }, "condition"],
      [{ condition: "constructor" }, "condition"],
      [{ condition: "[1, 2]" }, "condition"],
      [{ defaultSiteSpace: b.siteSpaces[0].id }, "defaultSiteSpace"],
    ];
    for (const [body, field] of cases) {
      const r = await admin.patch(sitePath(org, s.id, `/sections/${a.id}`), body);
      expect(r.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body).slice(0, 100)).toContain(field);
    }
    const longest = "visitor.claims.plan === '" + "p".repeat(1024 - 26) + "'";
    expect(longest.length).toBe(1024);
    const edge = await admin.patch(sitePath(org, s.id, `/sections/${a.id}`), {
      path: "p".repeat(100),
      description: "d".repeat(256),
      icon: "i".repeat(50),
      condition: longest,
    });
    expect(edge.status).toBe(200);
    expect((await admin.patch(sitePath(org, s.id, `/sections/${a.id}`), { path: "p", condition: "true" })).status).toBe(200);
    expect((await admin.patch(sitePath(org, s.id, "/sections/sitesc_nope"), { title: "Nope" })).status).toBe(404);
  });

  it("deletes a section (and its site spaces); the next section becomes the default", async () => {
    const s = await site(admin, org, { title: "Section Delete" });
    const a = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title: "Alpha" })).body;
    const b = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.API, title: "Beta" })).body;
    expect((await admin.delete(sitePath(org, s.id, `/sections/${a.id}`))).status).toBe(204);
    expect((await admin.delete(sitePath(org, s.id, `/sections/${a.id}`))).status).toBe(204);
    const left = (await admin.get(sitePath(org, s.id, "/sections"))).body.items;
    expect(left.map((x: any) => [x.id, x.default])).toEqual([[b.id, true]]);
    expect((await admin.get(sitePath(org, s.id))).body.siteSpaces).toBe(1);
    expect((await reader.delete(sitePath(org, s.id, `/sections/${b.id}`))).status).toBe(403);
  });

  it("moves sections (deprecated) with both documented position shapes", async () => {
    const s = await site(admin, org, { title: "Section Move" });
    const made: any[] = [];
    for (const title of ["One", "Two", "Three"])
      made.push((await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title })).body);
    const order = async () => ids((await admin.get(sitePath(org, s.id, "/sections"))).body.items);
    const res = await admin.post(sitePath(org, s.id, `/sections/${made[2].id}/move`), {
      position: { before: { type: "site-section", siteSection: made[0].id } },
    });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(made[2].id);
    expect(await order()).toEqual([made[2].id, made[0].id, made[1].id]);
    await admin.post(sitePath(org, s.id, `/sections/${made[2].id}/move`), {
      position: { after: { type: "site-section", id: made[1].id } },
    });
    expect(await order()).toEqual([made[0].id, made[1].id, made[2].id]);
    await admin.post(sitePath(org, s.id, `/sections/${made[0].id}/move`), {});
    expect(await order()).toEqual([made[1].id, made[2].id, made[0].id]);
    const bad = await admin.post(sitePath(org, s.id, `/sections/${made[0].id}/move`), {
      position: { before: { type: "site-section", siteSection: "sitesc_nope" } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("position.before");
    const wrongType = await admin.post(sitePath(org, s.id, `/sections/${made[0].id}/move`), {
      position: { before: { type: "site-space", id: made[1].id } },
    });
    expect(wrongType.status).toBe(400);
    const badShape = await admin.post(sitePath(org, s.id, `/sections/${made[0].id}/move`), {
      position: { before: { type: "page", id: made[1].id } },
    });
    expect(badShape.status).toBe(400);
    expect(badShape.body.error.message).toContain("type");
  });
});

describe("site section groups", () => {
  it("creates a group from sections and returns it whole (sections → siteSpaces → space)", async () => {
    const s = await site(admin, org, { title: "Grouped" });
    const made: any[] = [];
    for (const title of ["One", "Two", "Three", "Four"])
      made.push((await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title })).body);

    const res = await admin.post(sitePath(org, s.id, "/section-groups"), {
      title: "Middle",
      icon: "folder",
      sections: [made[2].id, made[1].id],
    });
    expect(res.status).toBe(201);
    const group = res.body;
    expect(group).toEqual({
      object: "site-section-group",
      id: expect.stringMatching(/^sitesg_/),
      title: "Middle",
      icon: "folder",
      sections: [
        expect.objectContaining({ id: made[2].id, sectionGroup: expect.any(String) }),
        expect.objectContaining({ id: made[1].id }),
      ],
      children: [expect.objectContaining({ id: made[2].id }), expect.objectContaining({ id: made[1].id })],
      draft: true,
    });
    // Nested objects come out whole through REST: group → sections → siteSpaces → space.
    const nestedSpace = group.sections[0].siteSpaces[0].space;
    expect(nestedSpace).toMatchObject({
      object: "space",
      id: spaces.Guide,
      title: "Guide",
      urls: { location: expect.any(String) },
      permissions: { view: true },
    });
    expect(group.sections[0].sectionGroup).toBe(group.id);
    // The group took the place of the first listed section that was at the top level.
    expect(ids((await admin.get(sitePath(org, s.id, "/sections"))).body.items)).toEqual([made[0].id, made[2].id, made[1].id, made[3].id]);

    const list = await admin.get(sitePath(org, s.id, "/section-groups"));
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(1);
    expect(list.body.items[0]).toEqual(group);
    // A reader sees the same structure, with their own permissions on the spaces.
    const read = await reader.get(sitePath(org, s.id, "/section-groups"));
    expect(read.body.items[0].sections[0].siteSpaces[0].space.permissions).toMatchObject({ view: true, edit: false, admin: false });

    const unknown = await admin.post(sitePath(org, s.id, "/section-groups"), { title: "Bad", sections: ["sitesc_nope"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("sections");
    const cases: [unknown, string][] = [
      [{}, "title"],
      [{ title: "" }, "title"],
      [{ title: "t".repeat(101) }, "title"],
      [{ title: "Ok", icon: "i".repeat(51) }, "icon"],
    ];
    for (const [body, field] of cases) {
      const r = await admin.post(sitePath(org, s.id, "/section-groups"), body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message, JSON.stringify(body)).toContain(field);
    }
    const edge = await admin.post(sitePath(org, s.id, "/section-groups"), { title: "t".repeat(100), icon: "i".repeat(50) });
    expect(edge.status).toBe(201);
    expect(edge.body.sections).toEqual([]);
    expect((await admin.post(sitePath(org, s.id, "/section-groups"), { title: "t" })).status).toBe(201);
    expect((await reader.post(sitePath(org, s.id, "/section-groups"), { title: "Mine" })).status).toBe(403);
  });

  it("updates, adds and removes sections, moves and deletes a group (its sections stay)", async () => {
    const s = await site(admin, org, { title: "Group Ops" });
    const made: any[] = [];
    for (const title of ["One", "Two", "Three"])
      made.push((await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title })).body);
    const group = (await admin.post(sitePath(org, s.id, "/section-groups"), { title: "G", icon: "folder" })).body;
    const g = sitePath(org, s.id, `/section-groups/${group.id}`);

    const patched = await admin.patch(g, { title: "Group", icon: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ object: "site-section-group", id: group.id, title: "Group", sections: [], children: [], draft: true });
    for (const [body, field] of [
      [{ title: "" }, "title"],
      [{ title: "t".repeat(101) }, "title"],
      [{ title: null }, "title"],
      [{ icon: "i".repeat(51) }, "icon"],
    ] as [unknown, string][]) {
      const r = await admin.patch(g, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }

    const added = await admin.post(`${g}/sections`, { sectionId: made[0].id });
    expect(added.status).toBe(201);
    expect(added.body.object).toBe("site-section-group");
    expect(ids(added.body.sections)).toEqual([made[0].id]);
    expect(ids((await admin.post(`${g}/sections`, { sectionId: made[2].id })).body.sections)).toEqual([made[0].id, made[2].id]);
    const missing = await admin.post(`${g}/sections`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("sectionId");
    const unknown = await admin.post(`${g}/sections`, { sectionId: "sitesc_nope" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("sectionId");
    expect((await admin.post(sitePath(org, s.id, "/section-groups/sitesg_nope/sections"), { sectionId: made[1].id })).status).toBe(404);

    // Top level: Two, then the group (One, Three).
    expect(ids((await admin.get(sitePath(org, s.id, "/sections"))).body.items)).toEqual([made[1].id, made[0].id, made[2].id]);
    // Move the group before Two (deprecated shape with `id`).
    const moved = await admin.post(`${g}/move`, { position: { before: { type: "site-section", id: made[1].id } } });
    expect(moved.status).toBe(200);
    expect(moved.body.id).toBe(group.id);
    expect(ids((await admin.get(sitePath(org, s.id, "/sections"))).body.items)).toEqual([made[0].id, made[2].id, made[1].id]);
    const inGroup = await admin.post(`${g}/move`, { position: { before: { type: "site-section", id: made[0].id } } });
    expect(inGroup.status).toBe(400);

    expect((await admin.delete(`${g}/sections/${made[0].id}`)).status).toBe(204);
    expect((await admin.delete(`${g}/sections/${made[0].id}`)).status).toBe(204);
    expect((await admin.delete(`${g}/sections/sitesc_nope`)).status).toBe(204);
    // The section went right after the group.
    const afterRemove = (await admin.get(sitePath(org, s.id, "/sections"))).body.items;
    expect(ids(afterRemove)).toEqual([made[2].id, made[0].id, made[1].id]);
    expect(afterRemove[1]).not.toHaveProperty("sectionGroup");

    expect((await admin.delete(g)).status).toBe(204);
    expect((await admin.delete(g)).status).toBe(204);
    const afterDelete = (await admin.get(sitePath(org, s.id, "/sections"))).body.items;
    expect(ids(afterDelete)).toEqual([made[2].id, made[0].id, made[1].id]);
    expect(afterDelete.every((x: any) => !("sectionGroup" in x))).toBe(true);
    expect((await admin.get(sitePath(org, s.id, "/section-groups"))).body.count).toBe(0);
  });
});

describe("site spaces", () => {
  it("adds site spaces at the root, to the default section, or to a given section", async () => {
    const s = await site(admin, org, { title: "Spaces" });
    const first = await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Guide });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      object: "site-space",
      id: expect.stringMatching(/^sitesp_/),
      path: "guide",
      space: expect.objectContaining({ id: spaces.Guide }),
      title: "Guide",
      default: true,
      hasAdvancedCustomizationFeature: false,
      draft: true, // until the site is published
      urls: { published: `${t.url}/sites/${org}/${s.id}` }, // the default site space is the site's root
    });
    const second = await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.API });
    expect(second.body).toMatchObject({ default: false, path: "api" });
    const dup = await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Guide });
    expect(dup.status).toBe(409);
    expect(dup.body.error.message).toContain("spaceId");

    const a = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Changelog, title: "Alpha" })).body;
    const b = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Beta, title: "Beta" })).body;
    const toDefault = await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Extra });
    expect(toDefault.body.section).toBe(a.id);
    const toB = await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Guide, sectionId: b.id });
    expect(toB.status).toBe(201);
    expect(toB.body).toMatchObject({ section: b.id, default: false, path: "guide" });
    const badSection = await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Guide, sectionId: "sitesc_nope" });
    expect(badSection.status).toBe(400);
    expect(badSection.body.error.message).toContain("sectionId");
    const missing = await admin.post(sitePath(org, s.id, "/site-spaces"), {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("spaceId");

    const all = await reader.get(sitePath(org, s.id, "/site-spaces"));
    expect(all.status).toBe(200);
    expect(all.body.items.map((x: any) => [x.section, x.space.id])).toEqual([
      [a.id, spaces.Guide],
      [a.id, spaces.API],
      [a.id, spaces.Changelog],
      [a.id, spaces.Extra],
      [b.id, spaces.Beta],
      [b.id, spaces.Guide],
    ]);
    const defaults = await reader.get(sitePath(org, s.id, "/site-spaces"), { default: true });
    expect(defaults.body.items.map((x: any) => x.space.id)).toEqual([spaces.Guide, spaces.Beta]);
    expect((await reader.get(sitePath(org, s.id, "/site-spaces"), { default: false })).body.count).toBe(4);
    const page = await reader.get(sitePath(org, s.id, "/site-spaces"), { limit: 4 });
    expect(page.body.items).toHaveLength(4);
    expect((await reader.get(sitePath(org, s.id, "/site-spaces"), { limit: 4, page: page.body.next.page })).body.items).toHaveLength(2);
    expect((await reader.get(sitePath(org, s.id, "/site-spaces"), { limit: 1001 })).status).toBe(400);
    expect((await reader.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Extra })).status).toBe(403);
  });

  it("updates path, condition and space; deletes with default promotion; moves", async () => {
    const s = await site(admin, org, { title: "Space Ops", spaces: [spaces.Guide, spaces.API, spaces.Changelog] });
    await admin.put(sitePath(org, s.id, "/adaptive-schema"), { jsonSchema: SCHEMA });
    const [g, a, c] = (await admin.get(sitePath(org, s.id, "/site-spaces"))).body.items;
    const p = (id: string) => sitePath(org, s.id, `/site-spaces/${id}`);

    const res = await admin.patch(p(a.id), { path: "reference", condition: "visitor.claims.plan === 'pro'", spaceId: spaces.Beta });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: a.id,
      path: "reference",
      condition: "visitor.claims.plan === 'pro'",
      title: "Beta",
      space: { id: spaces.Beta },
    });
    expect((await admin.patch(p(a.id), { path: "ref" })).body.condition).toBe("visitor.claims.plan === 'pro'");
    const cleared = await admin.patch(p(a.id), { condition: null });
    expect(cleared.body).not.toHaveProperty("condition");
    expect(cleared.body.space.id).toBe(spaces.Beta);

    const taken = await admin.patch(p(a.id), { path: "guide" });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toContain("path");
    const sameSpace = await admin.patch(p(a.id), { spaceId: spaces.Guide });
    expect(sameSpace.status).toBe(409);
    const cases: [unknown, string][] = [
      [{ path: "" }, "path"],
      [{ path: "p".repeat(101) }, "path"],
      [{ path: null }, "path"],
      [{ condition: "" }, "condition"],
      [{ condition: "visitor.claims.plan === '" + "p".repeat(1025 - 26) + "'" }, "condition"],
      [{ condition: "visitor.claims.nope" }, "condition"],
      [{ condition: "visitor.claims.plan ===" }, "condition"],
      [{ spaceId: null }, "spaceId"],
    ];
    for (const [body, field] of cases) {
      const r = await admin.patch(p(a.id), body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body.error.message).toContain(field);
    }
    expect(
      (await admin.patch(p(a.id), { path: "p".repeat(100), condition: "visitor.claims.plan === '" + "p".repeat(1024 - 26) + "'" })).status,
    ).toBe(200);
    expect((await admin.patch(p(a.id), { path: "p", condition: null })).status).toBe(200);
    expect((await admin.patch(p(a.id), { spaceId: "spc_nope" })).status).toBe(404);
    expect((await admin.patch(p("sitesp_nope"), { path: "x" })).status).toBe(404);

    // Move (deprecated): c before g, then g after a.
    const order = async () => ids((await admin.get(sitePath(org, s.id, "/site-spaces"))).body.items);
    const moved = await admin.post(`${p(c.id)}/move`, { position: { before: { type: "site-space", siteSpace: g.id } } });
    expect(moved.status).toBe(200);
    expect(moved.body.id).toBe(c.id);
    expect(await order()).toEqual([c.id, g.id, a.id]);
    await admin.post(`${p(g.id)}/move`, { position: { after: { type: "site-space", siteSpace: a.id } } });
    expect(await order()).toEqual([c.id, a.id, g.id]);
    const both = await admin.post(`${p(g.id)}/move`, {
      position: { after: { type: "site-space", siteSpace: a.id }, before: { type: "site-space", siteSpace: c.id } },
    });
    expect(both.status).toBe(400);

    // Deleting the default promotes the first remaining site space.
    expect((await admin.delete(p(g.id))).status).toBe(204);
    expect((await admin.delete(p(g.id))).status).toBe(204);
    const left = (await admin.get(sitePath(org, s.id, "/site-spaces"))).body.items;
    expect(left.map((x: any) => [x.id, x.default])).toEqual([
      [c.id, true],
      [a.id, false],
    ]);
    expect((await reader.delete(p(c.id))).status).toBe(403);
  });
});

describe("PUT /v1/orgs/{organizationId}/sites/{siteId}/structure (sortSiteStructure)", () => {
  it("sets the whole order in one call, and refuses a tree that does not list exactly the site's items", async () => {
    const s = await site(admin, org, { title: "Sorted" });
    const one = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Guide, title: "One" })).body;
    const two = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.API, title: "Two" })).body;
    const three = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId: spaces.Changelog, title: "Three" })).body;
    const extra = (await admin.post(sitePath(org, s.id, "/site-spaces"), { spaceId: spaces.Extra, sectionId: one.id })).body;
    const group = (await admin.post(sitePath(org, s.id, "/section-groups"), { title: "G" })).body;
    const ss = (section: any) => section.siteSpaces.map((x: any) => ({ type: "site-space", id: x.id }));

    const tree = [
      { type: "site-section", id: three.id, children: ss(three) },
      {
        type: "site-section-group",
        id: group.id,
        children: [
          { type: "site-section", id: two.id, children: [...ss(two), { type: "site-space", id: extra.id }] },
          { type: "site-section", id: one.id, children: ss(one) },
        ],
      },
    ];
    const res = await admin.put(sitePath(org, s.id, "/structure"), { structure: tree });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "site", id: s.id, siteSpaces: 4 });
    const sections = (await admin.get(sitePath(org, s.id, "/sections"))).body.items;
    expect(ids(sections)).toEqual([three.id, two.id, one.id]);
    expect(sections.map((x: any) => x.sectionGroup ?? null)).toEqual([null, group.id, group.id]);
    expect(sections[1].siteSpaces.map((x: any) => x.id)).toEqual([two.siteSpaces[0].id, extra.id]);
    expect(sections[2].siteSpaces.map((x: any) => [x.id, x.default])).toEqual([[one.siteSpaces[0].id, true]]);
    expect(ids((await admin.get(sitePath(org, s.id, "/section-groups"))).body.items[0].sections)).toEqual([two.id, one.id]);

    const bad: [unknown, number, string][] = [
      [{ structure: tree.slice(1) }, 400, "missing"],
      [{ structure: [...tree, { type: "site-section", id: three.id }] }, 400, three.id],
      [{ structure: [{ type: "site-section", id: "sitesc_nope" }, ...tree] }, 400, "sitesc_nope"],
      [{ structure: [{ type: "site-space", id: extra.id }, ...tree.slice(0, 1)] }, 400, "structure[0]"],
      [{ structure: [{ type: "folder", id: three.id }] }, 400, "type"],
      [{}, 400, "structure"],
    ];
    for (const [body, status, text] of bad) {
      const r = await admin.put(sitePath(org, s.id, "/structure"), body);
      expect(r.status, JSON.stringify(body).slice(0, 100)).toBe(status);
      expect(r.body.error.message).toContain(text);
    }
    // Moving a site space next to one with the same path is a conflict.
    const clash = [
      { type: "site-section", id: three.id, children: [...ss(three), ...ss(one)] },
      {
        type: "site-section-group",
        id: group.id,
        children: [
          { type: "site-section", id: two.id, children: [...ss(two), { type: "site-space", id: extra.id }] },
          { type: "site-section", id: one.id },
        ],
      },
    ];
    const renamed = await admin.patch(sitePath(org, s.id, `/site-spaces/${one.siteSpaces[0].id}`), { path: "changelog" });
    expect(renamed.status).toBe(200);
    const conflict = await admin.put(sitePath(org, s.id, "/structure"), { structure: clash });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.message).toContain("changelog");
    expect((await reader.put(sitePath(org, s.id, "/structure"), { structure: tree })).status).toBe(403);

    // A site without sections sorts its root site spaces.
    const flat = await site(admin, org, { title: "Flat", spaces: [spaces.Guide, spaces.API] });
    const roots = (await admin.get(sitePath(org, flat.id, "/site-spaces"))).body.items;
    const sorted = await admin.put(sitePath(org, flat.id, "/structure"), {
      structure: [roots[1], roots[0]].map((r: any) => ({ type: "site-space", id: r.id })),
    });
    expect(sorted.status).toBe(200);
    expect(ids((await admin.get(sitePath(org, flat.id, "/site-spaces"))).body.items)).toEqual([roots[1].id, roots[0].id]);
    // A group without sections there is listed too, without children.
    const empty = (await admin.post(sitePath(org, flat.id, "/section-groups"), { title: "Later" })).body;
    const flatTree = [
      { type: "site-section-group", id: empty.id },
      ...[roots[0], roots[1]].map((r: any) => ({ type: "site-space", id: r.id })),
    ];
    expect((await admin.put(sitePath(org, flat.id, "/structure"), { structure: flatTree.slice(1) })).status).toBe(400);
    expect((await admin.put(sitePath(org, flat.id, "/structure"), { structure: flatTree })).status).toBe(200);
    expect(ids((await admin.get(sitePath(org, flat.id, "/site-spaces"))).body.items)).toEqual([roots[0].id, roots[1].id]);
  });
});
