import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { GitBookAPI } from "@gitbook/api";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, expectError, expectIsoDate, type Member } from "../../helpers/fixtures.js";
import { failure, gitbookClient } from "../../helpers/gitbook-client.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let editor: Member;
let anonymous: Caller;
let org: string;
let api: GitBookAPI;
let visitor: GitBookAPI;
let docs: any;
let siteSpace: any;
let guide: string;
const pages: Record<string, string> = {};

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, org, editor } = await acmeDocs(t, { editor: ["eve@acme.test", "create"] }));
  anonymous = t.caller("");
  api = gitbookClient(t, admin.token);
  visitor = gitbookClient(t);
  guide = await space(admin, org, "Guide");
  const start = created(await admin.post(`/v1/spaces/${guide}/content/pages`, { title: "Getting started", markdown: "Start here." }));
  const install = created(
    await admin.post(`/v1/spaces/${guide}/content/pages`, { title: "Install", markdown: "Run it.", parent: start.id }),
  );
  pages.start = start.id;
  pages.install = install.id;
  docs = await site(admin, org, { title: "Docs", spaces: [guide] });
  siteSpace = (await admin.get(sitePath(org, docs.id, "/site-spaces"))).body.items[0];
  expect((await admin.post(sitePath(org, docs.id, "/publish"))).status).toBe(200);
});

afterAll(async () => {
  await t?.close();
});

/** Where a site space's pages are published, as the API says (the default site space sits at the site's base). */
const spaceUrl = () => siteSpace.urls.published as string;

describe("site redirects (GitBook's createSiteRedirect … getSiteRedirectBySource)", () => {
  it("creates a redirect to a page and resolves its source, for visitors, to the page's absolute URL", async () => {
    const redirect = (
      await api.orgs.createSiteRedirect(org, docs.id, {
        source: "/old-install",
        destination: { kind: "site-page", siteSpaceId: siteSpace.id, pageId: pages.install! },
        permanent: true,
      })
    ).data;
    expect(redirect).toMatchObject({
      object: "site-redirect",
      source: "/old-install",
      draft: false,
      captureWildcard: false,
      permanent: true,
      destination: { kind: "site-page", siteSpaceId: siteSpace.id, pageId: pages.install },
    });
    expect(redirect.id).toMatch(/^siterd_/);
    expectIsoDate(redirect.createdAt);

    const found = (await visitor.orgs.getSiteRedirectBySource(org, docs.id, { source: "/old-install" })).data;
    expect(found.redirect.id).toBe(redirect.id);
    expect(found.target).toBe(`${spaceUrl()}/getting-started/install`);
    expect(new URL(found.target).protocol).toMatch(/^https?:$/);

    expect(await failure(visitor.orgs.getSiteRedirectBySource(org, docs.id, { source: "/nothing-here" }))).toMatchObject({ code: 404 });
  });

  it("matches wildcard sources by their longest prefix, appending what they matched when they capture it", async () => {
    await api.orgs.createSiteRedirect(org, docs.id, {
      source: "/legacy/*",
      destination: { kind: "external", url: "https://example.com/docs?from=legacy" },
      captureWildcard: true,
    });
    await api.orgs.createSiteRedirect(org, docs.id, {
      source: "/legacy/api*",
      destination: { kind: "site-space", siteSpaceId: siteSpace.id },
    });
    const target = async (source: string) => (await visitor.orgs.getSiteRedirectBySource(org, docs.id, { source })).data.target;
    expect(await target("/legacy/a/b")).toBe("https://example.com/docs/a/b?from=legacy");
    expect(await target("/legacy")).toBe("https://example.com/docs?from=legacy");
    expect(await target("/legacy/api-v2/x")).toBe(spaceUrl());
    // A path to resolve is not a pattern.
    expectError(await anonymous.get(sitePath(org, docs.id, "/redirect"), { source: "/legacy/*" }), 400, "source");
  });

  it("takes a page by its path in a space of the site (kind path), and stores it as a site-page", async () => {
    const redirect = created(
      await admin.post(sitePath(org, docs.id, "/redirects"), {
        source: "/start",
        destination: { kind: "path", spaceId: guide, path: "/getting-started/" },
      }),
    );
    expect(redirect.destination).toEqual({ kind: "site-page", siteSpaceId: siteSpace.id, pageId: pages.start });
    const found = (await visitor.orgs.getSiteRedirectBySource(org, docs.id, { source: "/start" })).data;
    expect(found.target).toBe(`${spaceUrl()}/getting-started`);
  });

  it("refuses bad input with a 400 naming the field, and a second redirect from one source with a 409", async () => {
    const p = sitePath(org, docs.id, "/redirects");
    const page = { kind: "site-page", siteSpaceId: siteSpace.id, pageId: pages.install };
    expectError(await admin.post(p, { source: "no-slash", destination: page }), 400, "source");
    expectError(await admin.post(p, { source: "/a*b", destination: page }), 400, "source");
    expectError(await admin.post(p, { source: `/${"a".repeat(600)}`, destination: page }), 400, "source");
    expectError(
      await admin.post(p, { source: "/x", destination: { kind: "site-page", siteSpaceId: siteSpace.id } }),
      400,
      "destination.pageId",
    );
    expectError(
      await admin.post(p, { source: "/x", destination: { kind: "site-page", siteSpaceId: siteSpace.id, pageId: "page_missing" } }),
      400,
      "destination.pageId",
    );
    expectError(
      await admin.post(p, { source: "/x", destination: { kind: "site-space", siteSpaceId: "sitesp_missing" } }),
      400,
      "siteSpaceId",
    );
    expectError(
      await admin.post(p, { source: "/x", destination: { kind: "external", url: "javascript:alert(1)" } }),
      400,
      "destination.url",
    );
    expectError(await admin.post(p, { source: "/x", destination: { kind: "teleport" } }), 400, "kind");
    expectError(
      await admin.post(p, { source: "/x", destination: { kind: "path", spaceId: guide, path: "nowhere" } }),
      400,
      "destination.path",
    );
    expectError(await admin.post(p, { source: "/x" }), 400, "destination");
    expectError(await admin.post(p, { source: "/old-install", destination: page }), 409, "source");
    const bad = await failure(api.orgs.createSiteRedirect(org, docs.id, { source: "bad", destination: page as any }));
    expect(bad.code).toBe(400);
  });

  it("lists, changes and deletes redirects; drafts are listed apart and are not live", async () => {
    const draft = (
      await api.orgs.createSiteRedirect(org, docs.id, {
        source: "/soon",
        destination: { kind: "external", url: "https://example.com/soon" },
        draft: true,
      })
    ).data;
    expect(await failure(visitor.orgs.getSiteRedirectBySource(org, docs.id, { source: "/soon" }))).toMatchObject({ code: 404 });

    const live = (await api.orgs.listSiteRedirects(org, docs.id, { orderBy: "source" as any })).data;
    expect(live.items.map((r) => r.source)).toEqual(["/legacy/*", "/legacy/api*", "/old-install", "/start"]);
    expect(live.count).toBe(4);
    expect((await api.orgs.listSiteRedirects(org, docs.id, { draft: true })).data.items.map((r) => r.id)).toEqual([draft.id]);
    expect((await api.orgs.listSiteRedirects(org, docs.id, { search: "LEGACY" })).data.items).toHaveLength(2);
    const firstPage = (await api.orgs.listSiteRedirects(org, docs.id, { limit: 3 })).data;
    expect(firstPage.items).toHaveLength(3);
    const rest = (await api.orgs.listSiteRedirects(org, docs.id, { limit: 3, page: firstPage.next!.page })).data;
    expect([...firstPage.items, ...rest.items].map((r) => r.source).sort()).toEqual([
      "/legacy/*",
      "/legacy/api*",
      "/old-install",
      "/start",
    ]);

    const promoted = (await api.orgs.updateSiteRedirectById(org, docs.id, draft.id, { draft: false, source: "/now" })).data;
    expect(promoted).toMatchObject({ id: draft.id, source: "/now", draft: false, destination: { kind: "external" } });
    expectIsoDate(promoted.updatedAt);
    expect((await visitor.orgs.getSiteRedirectBySource(org, docs.id, { source: "/now" })).data.target).toBe("https://example.com/soon");
    expectError(await admin.patch(sitePath(org, docs.id, `/redirects/${draft.id}`), { source: "/start" }), 409, "source");
    expectError(await admin.patch(sitePath(org, docs.id, "/redirects/siterd_missing"), { draft: true }), 404);

    const gone = await admin.delete(sitePath(org, docs.id, `/redirects/${draft.id}`));
    expect(gone.status).toBe(204);
    expect((await admin.delete(sitePath(org, docs.id, `/redirects/${draft.id}`))).status).toBe(204);
    expect(await failure(visitor.orgs.getSiteRedirectBySource(org, docs.id, { source: "/now" }))).toMatchObject({ code: 404 });
  });

  it("lets only admins write, only members list, and visitors resolve only on published sites", async () => {
    const body = { source: "/eve", destination: { kind: "external", url: "https://example.com" } };
    expectError(await editor.post(sitePath(org, docs.id, "/redirects"), body), 403, "admin");
    expect((await editor.get(sitePath(org, docs.id, "/redirects"))).status).toBe(200);
    expectError(await other.get(sitePath(org, docs.id, "/redirects")), 404);
    expectError(await other.post(sitePath(org, docs.id, "/redirects"), body), 404);
    expect((await anonymous.get(sitePath(org, docs.id, "/redirects"))).status).toBe(401);

    expect((await admin.post(sitePath(org, docs.id, "/unpublish"))).status).toBe(200);
    expectError(await anonymous.get(sitePath(org, docs.id, "/redirect"), { source: "/old-install" }), 404);
    // Members preview an unpublished site, its redirects included.
    expect((await editor.get(sitePath(org, docs.id, "/redirect"), { source: "/old-install" })).status).toBe(200);
    expect((await admin.post(sitePath(org, docs.id, "/publish"))).status).toBe(200);
  });

  it("serves the same operations on the graph, and a deleted site takes its redirects with it", async () => {
    const res = await admin.graphql(
      `query($o: String!, $s: String!) {
        siteRedirects(organizationId: $o, siteId: $s, orderBy: source) { count items { source destination } }
        siteRedirectBySource(organizationId: $o, siteId: $s, source: "/old-install") { target redirect { id } }
      }`,
      { o: org, s: docs.id },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.siteRedirects.count).toBe(4);
    expect(res.data.siteRedirectBySource.target).toBe(`${spaceUrl()}/getting-started/install`);

    const doomed = await site(admin, org, { title: "Doomed", spaces: [guide] });
    await api.orgs.createSiteRedirect(org, doomed.id, { source: "/a", destination: { kind: "external", url: "https://example.com" } });
    expect(await t.gateway.db.prisma.siteRedirect.count({ where: { siteId: doomed.id } })).toBe(1);
    expect((await admin.delete(sitePath(org, doomed.id))).status).toBe(204);
    expect(await t.gateway.db.prisma.siteRedirect.count({ where: { siteId: doomed.id } })).toBe(0);
  });
});
