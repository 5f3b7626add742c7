import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import siteRoutes from "../../../src/domains/sites/sites.routes.js";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs } from "../../helpers/fixtures.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

// Many requests per test, on a machine that may be busy: generous time limits.
vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let params: Record<string, string>;

/** A body each write accepts, so that only access decides the answer. */
const BODIES: Record<string, unknown> = {
  "Mutation.siteCreate": { title: "Intruder" },
  "Mutation.siteUpdate": { title: "Intruded" },
  "Mutation.siteAdaptiveSchemaUpdate": { jsonSchema: { type: "object" } },
  "Mutation.siteStructureSort": { structure: [] },
  "Mutation.siteShareLinkCreate": {},
  "Mutation.sitePublish": {},
  "Mutation.siteUnpublish": {},
  "Mutation.siteSectionCreate": { spaceId: "" },
  "Mutation.siteSectionUpdate": { title: "Intruded" },
  "Mutation.siteSectionMove": {},
  "Mutation.siteSectionGroupCreate": { title: "Intruders" },
  "Mutation.siteSectionGroupUpdate": { title: "Intruded" },
  "Mutation.siteSectionGroupSectionAdd": { sectionId: "" },
  "Mutation.siteSectionGroupMove": {},
  "Mutation.siteSpaceCreate": { spaceId: "" },
  "Mutation.siteSpaceUpdate": { path: "intruded" },
  "Mutation.siteSpaceMove": {},
  "Mutation.siteRedirectCreate": { source: "/intruder", destination: { kind: "external", url: "https://example.com" } },
  "Mutation.siteRedirectUpdate": { draft: true },
  "Query.siteSearch": { query: "guide" },
};

/** The query string a read needs, so that only access decides the answer. */
const QUERIES: Record<string, Record<string, string>> = {
  "Query.siteRedirectBySource": { source: "/old" },
};

function fill(path: string): string {
  return "/v1" + path.replace(/\{(\w+)\}/g, (_m, name: string) => params[name] ?? `missing-${name}`);
}

async function send(caller: Admin | ReturnType<TestGateway["caller"]>, method: string, path: string, field: string) {
  const body = BODIES[field] ?? {};
  const b = JSON.parse(JSON.stringify(body).replace(/""/g, JSON.stringify(params.spaceId)));
  if (field === "Mutation.siteSectionGroupSectionAdd") b.sectionId = params.siteSectionId;
  switch (method) {
    case "GET":
      return caller.get(path, QUERIES[field]);
    case "DELETE":
      return caller.delete(path);
    case "POST":
      return caller.post(path, b);
    case "PUT":
      return caller.put(path, b);
    default:
      return caller.patch(path, b);
  }
}

beforeAll(async () => {
  t = await startGateway();
  let org: string;
  ({ admin, other, org } = await acmeDocs(t));
  const spaceId = await space(admin, org, "Guide");
  const s = await site(admin, org, { title: "Private Site", spaces: [spaceId] });
  const section = (await admin.post(sitePath(org, s.id, "/sections"), { spaceId })).body;
  const group = (await admin.post(sitePath(org, s.id, "/section-groups"), { title: "G", sections: [section.id] })).body;
  const link = (await admin.post(sitePath(org, s.id, "/share-links"))).body;
  const redirect = (
    await admin.post(sitePath(org, s.id, "/redirects"), { source: "/old", destination: { kind: "external", url: "https://example.com" } })
  ).body;
  params = {
    organizationId: org,
    siteId: s.id,
    siteSectionId: section.id,
    siteSectionGroupId: group.id,
    siteSpaceId: section.siteSpaces[0].id,
    shareLinkId: link.id,
    siteRedirectId: redirect.id,
    spaceId,
  };
});
afterAll(() => t?.close());

describe("access to every site operation", () => {
  it("covers the documented operations and the added ones", () => {
    const tags = new Map<string, number>();
    for (const r of siteRoutes) tags.set(r.tag, (tags.get(r.tag) ?? 0) + 1);
    // Docs sites: 9 documented + publish, unpublish, structure, share links (3), visitor-auth, search.
    expect(Object.fromEntries(tags)).toEqual({
      "Docs sites": 17,
      "Site sections": 5,
      "Site section groups": 7,
      "Site spaces": 5,
      "Site redirects": 5,
    });
  });

  it("is 404 for a member of another organization, on every operation, and changes nothing", async () => {
    for (const route of siteRoutes) {
      const res = await send(other, route.method, fill(route.path), route.field);
      expect(res.status, `${route.method} ${route.path}`).toBe(404);
      expect(res.body.error.code).toBe(404);
    }
    const org = params.organizationId!;
    const still = await admin.get(sitePath(org, params.siteId!));
    expect(still.body).toMatchObject({ title: "Private Site", published: false, siteSpaces: 1 });
    expect((await admin.get(sitePath(org, params.siteId!, "/sections"))).body.count).toBe(1);
    expect((await admin.get(sitePath(org, params.siteId!, "/section-groups"))).body.items[0].sections).toHaveLength(1);
    expect((await admin.get(sitePath(org, params.siteId!, "/share-links"))).body.items[0]).not.toHaveProperty("revokedAt");
    expect((await admin.get(`/v1/orgs/${org}/sites`)).body.count).toBe(1);
    expect((await admin.get(sitePath(org, params.siteId!, "/redirects"))).body.items.map((r: any) => [r.source, r.draft])).toEqual([
      ["/old", false],
    ]);
  });

  it("refuses a list limit over 1000 on every list, naming limit", async () => {
    const lists = siteRoutes.filter((r) => r.method === "GET" && /sites$|sections$|section-groups$|site-spaces$|share-links$/.test(r.path));
    expect(lists).toHaveLength(5);
    for (const route of lists) {
      const res = await admin.get(fill(route.path), { limit: 1001 });
      expect(res.status, route.path).toBe(400);
      expect(res.body.error.message).toContain("limit");
      expect((await admin.get(fill(route.path), { limit: 1000 })).status, route.path).toBe(200);
    }
  });

  it("is 401 without a token on member operations; the published structure is for visitors (404 while unpublished)", async () => {
    const anonymous = t.caller("");
    for (const route of siteRoutes) {
      const res = await send(anonymous, route.method, fill(route.path), route.field);
      const expected = route.auth === "optional" ? 404 : 401;
      expect(res.status, `${route.method} ${route.path}`).toBe(expected);
      if (expected === 401) expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
    expect(siteRoutes.filter((r) => r.auth === "optional").map((r) => r.field)).toEqual([
      "Query.sitePublished",
      "Query.siteSearch",
      "Query.siteRedirectBySource",
    ]);
  });
});
