import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, expectIsoDate, type Admin, type Member } from "../../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin;
let other: Admin;
let creator: Member;
let reader: Member;
let guest: Member;

const base = () => `/v1/orgs/${admin.organization}/translations`;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, creator, reader, guest } = await acmeDocs(t, {
    creator: ["cora@acme.test", "create"],
    reader: ["rita@acme.test", "review"],
    guest: ["gus@acme.test", null],
  }));
}, 120_000);
afterAll(() => t?.close());

describe("POST /v1/orgs/{organizationId}/translations", () => {
  it("creates settings with 201 and every documented field", async () => {
    const res = await admin.post(base(), { title: "  French and German  ", languages: ["fr", "de-de", "fr"] });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(Object.keys(s).sort()).toEqual(["createdAt", "id", "languages", "object", "permissions", "title", "updatedAt", "urls"]);
    expect(s.object).toBe("translation-settings");
    expect(s.id).toMatch(/^trs_/);
    expect(s.title).toBe("French and German");
    expect(s.languages).toEqual(["fr", "de-DE"]);
    expectIsoDate(s.createdAt);
    expectIsoDate(s.updatedAt);
    expect(s.permissions).toEqual({ view: true, edit: true });
    expect(s.urls).toEqual({ location: `${t.url}${base()}/${s.id}` });
  });

  it("takes only a title, and a create-role member may create", async () => {
    const res = await creator.post(base(), { title: "T" });
    expect(res.status).toBe(201);
    expect(res.body.languages).toEqual([]);
    expect(res.body.permissions).toEqual({ view: true, edit: true });
  });

  it("rejects bad input with a 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{}, "title"],
      [{ title: "" }, "title"],
      [{ title: "   " }, "title"],
      [{ title: "x".repeat(101) }, "title"],
      [{ title: null }, "title"],
      [{ title: 5 }, "title"],
      [{ title: "ok", languages: ["en", "xx-nope"] }, "languages[1]"],
      [{ title: "ok", languages: ["english"] }, "english"],
      [{ title: "ok", languages: [""] }, "languages[0]"],
      [{ title: "ok", languages: "en" }, "languages"],
      [{ title: "ok", colour: "red" }, "colour"],
      [{ title: "ok", languages: Array.from({ length: 201 }, () => "en") }, "languages"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post(base(), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toContain(field);
    }
    // exactly at the edge is fine
    expect(
      (await admin.post(base(), { title: "x".repeat(100), languages: Array.from({ length: 200 }, () => "en") })).body.languages,
    ).toEqual(["en"]);
  });

  it("is 401 without a token, 403 below the create role, 404 for another organization", async () => {
    expect((await t.caller("").post(base(), { title: "x" })).status).toBe(401);
    const denied = await reader.post(base(), { title: "x" });
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain("create");
    expect((await guest.post(base(), { title: "x" })).status).toBe(403);
    const hidden = await other.post(base(), { title: "x" });
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.message).toContain(admin.organization);
  });
});

describe("GET /v1/orgs/{organizationId}/translations", () => {
  it("lists oldest first with count and cursor pages; permissions follow the caller", async () => {
    const all = await admin.get(base());
    expect(all.status).toBe(200);
    expect(all.body.count).toBe(3);
    expect(all.body.items.map((s: any) => s.title)).toEqual(["French and German", "T", "x".repeat(100)]);
    expect(all.body).not.toHaveProperty("next");

    const first = await reader.get(base(), { limit: 2 });
    expect(first.body.items).toHaveLength(2);
    expect(first.body.items[0].permissions).toEqual({ view: true, edit: false });
    const second = await reader.get(base(), { limit: 2, page: first.body.next.page });
    expect(second.body.items.map((s: any) => s.title)).toEqual(["x".repeat(100)]);
    expect((await guest.get(base())).body.items[0].permissions).toEqual({ view: true, edit: false });

    expect((await admin.get(base(), { limit: 1001 })).status).toBe(400);
    expect((await admin.get(base(), { limit: 0 })).body.error.message).toContain("limit");
    expect((await admin.get(base(), { page: "garbage" })).body.error.message).toContain("page");
    expect((await t.caller("").get(base())).status).toBe(401);
    expect((await other.get(base())).status).toBe(404);
  });
});

describe("GET, PUT and DELETE /v1/orgs/{organizationId}/translations/{translationSettingsId}", () => {
  it("reads, replaces and deletes", async () => {
    const created = (await admin.post(base(), { title: "Spanish", languages: ["es"] })).body;
    const path = `${base()}/${created.id}`;
    const got = await reader.get(path);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...created, permissions: { view: true, edit: false } });

    await new Promise((r) => setTimeout(r, 5));
    const put = await creator.put(path, { title: "Spanish (Latin America)" });
    expect(put.status).toBe(200);
    expect(put.body.title).toBe("Spanish (Latin America)");
    expect(put.body.languages).toEqual(["es"]); // kept when absent
    expect(put.body.createdAt).toBe(created.createdAt);
    expect(new Date(put.body.updatedAt).getTime()).toBeGreaterThan(new Date(created.updatedAt).getTime());
    const put2 = await admin.put(path, { title: "Spanish", languages: ["es-419", "ES-mx"] });
    expect(put2.body.languages).toEqual(["es-419", "es-MX"]);
    expect((await admin.put(path, { title: "Spanish", languages: null })).body.languages).toEqual([]);

    for (const [body, field] of [
      [{}, "title"],
      [{ title: "" }, "title"],
      [{ title: "y".repeat(101) }, "title"],
      [{ title: "ok", languages: ["en", "zz"] }, "languages[1]"],
    ] as [unknown, string][]) {
      const res = await admin.put(path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toContain(field);
    }
    expect((await reader.put(path, { title: "no" })).status).toBe(403);
    expect((await other.put(path, { title: "no" })).status).toBe(404);
    expect((await other.get(path)).status).toBe(404);
    expect((await t.caller("").get(path)).status).toBe(401);
    expect((await admin.get(`${base()}/trs_missing`)).status).toBe(404);
    expect((await admin.put(`${base()}/trs_missing`, { title: "x" })).status).toBe(404);

    expect((await reader.delete(path)).status).toBe(403);
    expect((await other.delete(path)).status).toBe(404);
    expect((await t.caller("").delete(path)).status).toBe(401);
    expect((await creator.delete(path)).status).toBe(204);
    expect((await admin.get(path)).status).toBe(404);
    expect((await admin.delete(path)).status).toBe(204);
  });

  it("keeps another organization's settings out of reach even by id", async () => {
    const theirs = (await other.post(`/v1/orgs/${other.organization}/translations`, { title: "Theirs" })).body;
    expect((await admin.get(`${base()}/${theirs.id}`)).status).toBe(404);
    expect((await admin.delete(`${base()}/${theirs.id}`)).status).toBe(204);
    expect((await other.get(`/v1/orgs/${other.organization}/translations/${theirs.id}`)).status).toBe(200);
  });
});

describe("GraphQL", () => {
  it("reaches translations from the organization as a connection with totalCount", async () => {
    const q = `query($id: String!) { organization(organizationId: $id) { translations(first: 2) { totalCount edges { node { id title languages permissions { edit } } } pageInfo { hasNextPage } } } }`;
    const res = await admin.graphql(q, { id: admin.organization });
    expect(res.errors).toBeUndefined();
    const conn = res.data.organization.translations;
    expect(conn.totalCount).toBe(3);
    expect(conn.edges).toHaveLength(2);
    expect(conn.pageInfo.hasNextPage).toBe(true);
    expect(conn.edges[0].node).toMatchObject({ title: "French and German", languages: ["fr", "de-DE"], permissions: { edit: true } });

    const created = await admin.graphql(
      `mutation($o: String!) { translationSettingsCreate(organizationId: $o, title: "GQL", languages: ["ja"]) { id languages } }`,
      { o: admin.organization },
    );
    expect(created.data.translationSettingsCreate.languages).toEqual(["ja"]);
    const bad = await admin.graphql(
      `mutation($o: String!) { translationSettingsCreate(organizationId: $o, title: "GQL", languages: ["nope-nope-nope"]) { id } }`,
      { o: admin.organization },
    );
    expect(bad.errors[0].extensions.code).toBe(400);
    expect(bad.errors[0].message).toContain("languages[0]");
  });
});
