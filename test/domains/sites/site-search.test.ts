import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { GitBookAPI } from "@gitbook/api";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, expectError } from "../../helpers/fixtures.js";
import { failure, gitbookClient } from "../../helpers/gitbook-client.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let anonymous: Caller;
let org: string;
let visitor: GitBookAPI;
let docs: any;
const spaces: Record<string, string> = {};
const siteSpaces: Record<string, string> = {};
const pages: Record<string, string> = {};

async function page(spaceId: string, body: Record<string, unknown>): Promise<string> {
  return created(await admin.post(`/v1/spaces/${spaceId}/content/pages`, body)).id;
}

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, org } = await acmeDocs(t));
  anonymous = t.caller("");
  visitor = gitbookClient(t);
  for (const title of ["Guide", "Reference", "Secret"]) spaces[title] = await space(admin, org, title);
  pages.start = await page(spaces.Guide!, { title: "Getting started", markdown: "Welcome." });
  pages.install = await page(spaces.Guide!, {
    title: "Install",
    parent: pages.start,
    description: "Put the gizmo on your machine",
    markdown: "Download the package.\n\n## Requirements\n\nThe gizmo needs Node 20.\n",
  });
  pages.api = await page(spaces.Reference!, { title: "Gizmo API", markdown: "Every call of the gizmo." });
  await page(spaces.Secret!, { title: "Gizmo secrets", markdown: "The gizmo's secret plans." });
  docs = await site(admin, org, { title: "Docs", spaces: [spaces.Guide, spaces.Reference] });
  for (const s of (await admin.get(sitePath(org, docs.id, "/site-spaces"))).body.items) siteSpaces[s.space.id] = s.id;
  expect((await admin.post(sitePath(org, docs.id, "/publish"))).status).toBe(200);
});

afterAll(async () => {
  await t?.close();
});

/** [space id, [page titles]] of a search answer. */
const found = (items: any[]) => items.map((i) => [i.id, i.pages.map((p: any) => p.title)]);

describe("site search (GitBook's searchSiteContent)", () => {
  it("answers visitors with GitBook's shape: spaces of the site, pages with rank, ancestors, description and sections", async () => {
    const res = (await visitor.orgs.searchSiteContent(org, docs.id, { query: "gizmo", mode: "all" })).data;
    expect(res.count).toBe(2);
    expect(found(res.items).sort()).toEqual(
      [
        [spaces.Guide, ["Install"]],
        [spaces.Reference, ["Gizmo API"]],
      ].sort(),
    );
    const guide = res.items.find((i) => i.id === spaces.Guide) as any;
    expect(guide).toMatchObject({ type: "space", title: "Guide", score: expect.any(Number) });
    const install = guide.pages[0];
    expect(install).toMatchObject({
      id: pages.install,
      title: "Install",
      description: "Put the gizmo on your machine",
      path: "getting-started/install",
      ancestors: [{ title: "Getting started" }],
    });
    expect(install.sections[0]).toMatchObject({ id: "requirements", title: "Requirements", path: "getting-started/install#requirements" });
    expect(install.sections[0].body).toContain("Node 20");
    // Ranks are one-based positions among all pages found, best first.
    const ranks = res.items.flatMap((i: any) => i.pages.map((p: any) => p.rank)).sort();
    expect(ranks).toEqual([1, 2]);
    const top = res.items.flatMap((i: any) => i.pages).find((p: any) => p.rank === 1);
    expect(top.title).toBe("Gizmo API"); // a title match ranks first
    expect(JSON.stringify(res)).not.toContain("secret");
  });

  it("narrows to the scope asked: default site spaces, the current one, the others, specific ones", async () => {
    const search = async (body: any) => found((await visitor.orgs.searchSiteContent(org, docs.id, { query: "gizmo", ...body })).data.items);
    const guide = siteSpaces[spaces.Guide!]!;
    const reference = siteSpaces[spaces.Reference!]!;
    expect(await search({ scope: { mode: "default" } })).toEqual([[spaces.Guide, ["Install"]]]);
    expect((await search({ scope: { mode: "default", currentSiteSpace: reference } })).map((i) => i[0]).sort()).toEqual(
      [spaces.Guide, spaces.Reference].sort(),
    );
    expect(await search({ scope: { mode: "default", currentSiteSpace: reference, restrictTo: "currentSiteSpace" } })).toEqual([
      [spaces.Reference, ["Gizmo API"]],
    ]);
    expect(await search({ scope: { mode: "default", currentSiteSpace: reference, restrictTo: "otherSiteSpaces" } })).toEqual([
      [spaces.Guide, ["Install"]],
    ]);
    expect(await search({ scope: { mode: "specific", siteSpaceIds: [reference, "sitesp_unknown"] } })).toEqual([
      [spaces.Reference, ["Gizmo API"]],
    ]);
    expect(await search({ mode: "specific", siteSpaceIds: [guide] })).toEqual([[spaces.Guide, ["Install"]]]);
    expect((await search({ mode: "current", siteSpaceId: reference })).length).toBe(2);
    expect(await search({ scope: { mode: "all" }, query: "nothing-matches-this" })).toEqual([]);
  });

  it("refuses bad input with a 400 naming the field", async () => {
    const p = sitePath(org, docs.id, "/search");
    expectError(await anonymous.post(p, { query: "" }), 400, "query");
    expectError(await anonymous.post(p, { query: "x".repeat(600) }), 400, "query");
    expectError(await anonymous.post(p, { query: "gizmo", scope: { mode: "bogus" } }), 400, "mode");
    expectError(
      await anonymous.post(p, { query: "gizmo", scope: { mode: "default", restrictTo: "currentSiteSpace" } }),
      400,
      "currentSiteSpace",
    );
    expectError(await anonymous.post(p, { query: "gizmo", mode: "current" }), 400, "siteSpaceId");
    expectError(await anonymous.post(p, { query: "gizmo", mode: "specific" }), 400, "siteSpaceIds");
    expectError(await anonymous.post(p, { query: "gizmo", extra: 1 }), 400, "extra");
    expect((await failure(visitor.orgs.searchSiteContent(org, docs.id, { query: "", mode: "all" }))).code).toBe(400);
  });

  it("serves only what the caller may read: unpublished sites to members, share-link sites with their key", async () => {
    expect((await admin.post(sitePath(org, docs.id, "/unpublish"))).status).toBe(200);
    expect((await failure(visitor.orgs.searchSiteContent(org, docs.id, { query: "gizmo", mode: "all" }))).code).toBe(404);
    expectError(await other.post(sitePath(org, docs.id, "/search"), { query: "gizmo" }), 404);
    const preview = await admin.post(sitePath(org, docs.id, "/search"), { query: "gizmo", mode: "all" });
    expect(preview.body.count).toBe(2);
    expect((await admin.post(sitePath(org, docs.id, "/publish"))).status).toBe(200);

    const shared = await site(admin, org, { title: "Shared", spaces: [spaces.Guide], visibility: "share-link" });
    expect((await admin.post(sitePath(org, shared.id, "/publish"))).status).toBe(200);
    const key = created(await admin.post(sitePath(org, shared.id, "/share-links"), {})).key;
    expectError(await anonymous.post(sitePath(org, shared.id, "/search"), { query: "gizmo" }), 404);
    const withKey = await anonymous.post(`${sitePath(org, shared.id, "/search")}?shareKey=${key}`, { query: "gizmo" });
    expect(found(withKey.body.items)).toEqual([[spaces.Guide, ["Install"]]]);
  });

  it("is the siteSearch field of the graph", async () => {
    const res = await admin.graphql(
      `query($o: String!, $s: String!) { siteSearch(organizationId: $o, siteId: $s, query: "gizmo", scope: {mode: "all"}) {
        count items { id pages { title rank ancestors { title } } } } }`,
      { o: org, s: docs.id },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.siteSearch.count).toBe(2);
  });
});
