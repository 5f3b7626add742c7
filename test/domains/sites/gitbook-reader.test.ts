import { GitBookAPIError } from "@gitbook/api";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { created } from "../../helpers/fixtures.js";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { gitbookClient } from "../../helpers/gitbook-client.js";
import { acmeDocs } from "../../helpers/fixtures.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

/**
 * One page view of GitBook's reader, call by call in the order it makes them, through GitBook's
 * own client: the URL lookup without a token, then every read with the site token it minted.
 * Each answer is checked against this server's /openapi.json and GitBook's schema on its way back
 * (gitbookClient); the walk prints each call with its status.
 */

vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

let t: TestGateway;
let admin: Admin;
let org: string;
let guide: string;
const pages: Record<string, string> = {};
let docs: any;

beforeAll(async () => {
  t = await startGateway({ sitesDomain: "docs.test" });
  ({ admin, org } = await acmeDocs(t));
  expect((await admin.patch(`/v1/orgs/${org}`, { hostname: "acme" })).status).toBe(200);
  guide = await space(admin, org, "Guide");
  const start = created(
    await admin.post(`/v1/spaces/${guide}/content/pages`, {
      title: "Getting started",
      markdown: "Read **this** first, then [install](page:INSTALL).\n\n## Requirements\n\n- Node\n- `npm`\n",
    }),
  );
  const install = created(
    await admin.post(`/v1/spaces/${guide}/content/pages`, { title: "Install", markdown: "```sh\nnpm install\n```\n", parent: start.id }),
  );
  await admin.patch(`/v1/spaces/${guide}/content/page/${start.id}`, {
    markdown: `Read **this** first, then [install](page:${install.id}).\n\n## Requirements\n\n- Node\n- \`npm\`\n`,
  });
  pages.start = start.id;
  pages.install = install.id;
  docs = await site(admin, org, { title: "Docs", spaces: [guide] });
  await admin.patch(sitePath(org, docs.id), { basename: "guide" });
  expect((await admin.post(sitePath(org, docs.id, "/publish"))).status).toBe(200);
  const siteSpace = (await admin.get(sitePath(org, docs.id, "/site-spaces"))).body.items[0];
  const redirect = await admin.post(sitePath(org, docs.id, "/redirects"), {
    source: "/old-install",
    destination: { kind: "site-page", siteSpaceId: siteSpace.id, pageId: pages.install },
  });
  expect(redirect.status, JSON.stringify(redirect.body)).toBe(201);
});

afterAll(() => t?.close());

describe("GitBook's reader, one page view", () => {
  it("answers every call it makes, each valid against GitBook's schema", async () => {
    const calls: string[] = [];
    async function call<T>(name: string, run: () => Promise<{ status: number; data: T }>): Promise<T> {
      const res = await run();
      calls.push(`${res.status} ${name}`);
      return res.data;
    }
    async function missing(name: string, run: () => Promise<unknown>): Promise<number> {
      const err = await run().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, name).toBeInstanceOf(GitBookAPIError);
      calls.push(`${(err as GitBookAPIError).code} ${name}`);
      return (err as GitBookAPIError).code;
    }

    // 1. The middleware's lookup, without a token, of the page's URL (and of its prefixes).
    const visitor = gitbookClient(t);
    const url = "https://acme.docs.test/guide/getting-started/install";
    const found: any = await call("POST /v1/urls/published", () =>
      visitor.urls.resolvePublishedContentByUrl({ url, visitor: { unsignedClaims: {} }, redirectOnError: false } as any),
    );
    expect(found).toMatchObject({ site: docs.id, space: guide, pathname: "getting-started/install", complete: true });
    expect(
      await missing("POST /v1/urls/published (no site there)", () =>
        visitor.urls.resolvePublishedContentByUrl({ url: "https://nobody.docs.test/x" } as any),
      ),
    ).toBe(404);
    const claims = decodeJwt(found.apiToken);
    expect(claims).toMatchObject({ kind: "site", site: docs.id, space: guide, organization: org });

    // 2. The site's layout, with the site token.
    const reader = gitbookClient(t, found.apiToken);
    const published: any = await call("GET /v1/orgs/{org}/sites/{site}/published", () => reader.orgs.getPublishedContentSite(org, docs.id));
    expect(published.customizations.site.styling).toBeDefined();
    const spaceBody: any = await call("GET /v1/spaces/{space}", () => reader.spaces.getSpaceById(guide));
    const revision: any = await call("GET /v1/spaces/{space}/revisions/{revision}?metadata=true", () =>
      reader.spaces.getRevisionById(guide, spaceBody.revision, { metadata: true }),
    );
    expect(revision.pages.map((p: any) => p.path)).toContain("getting-started");

    // 3. The page: a path the tree does not hold goes to the redirects, then to the path lookup.
    expect(
      await missing("GET /v1/orgs/{org}/sites/{site}/redirect?source= (none)", () =>
        reader.orgs.getSiteRedirectBySource(org, docs.id, { source: "/nothing-here" }),
      ),
    ).toBe(404);
    const redirected: any = await call("GET /v1/orgs/{org}/sites/{site}/redirect?source=", () =>
      reader.orgs.getSiteRedirectBySource(org, docs.id, { source: "/old-install" }),
    );
    expect(redirected.target).toMatch(/^https?:\/\/.+\/getting-started\/install$/);
    const byPath: any = await call("GET /v1/spaces/{space}/revisions/{revision}/path/{path}", () =>
      reader.spaces.getPageInRevisionByPath(guide, spaceBody.revision, encodeURIComponent("Getting-Started/Install")),
    );
    expect(byPath.id).toBe(pages.install);
    await call("GET …/revisions/{revision}/page/{page}/meta-links", () =>
      reader.spaces.listRevisionPageMetaLinks(guide, spaceBody.revision, pages.start!),
    );
    const document: any = await call("GET …/revisions/{revision}/page/{page}/document", () =>
      reader.spaces.getPageDocumentInRevisionById(guide, spaceBody.revision, pages.start!, {
        evaluated: "deterministic-only",
        dereferenced: "reusable-contents",
      } as any),
    );
    const text = JSON.stringify(document);
    expect(text).toContain('"object":"leaf"');
    expect(text).toContain('"type":"bold"');

    // 4. The twins and the rest.
    const markdown: any = await call("GET …/revisions/{revision}/page/{page}?format=markdown", () =>
      reader.spaces.getPageInRevisionById(guide, spaceBody.revision, pages.start!, { format: "markdown" } as any),
    );
    expect(markdown.markdown).toContain("**this**");
    await call("GET …/revisions/{revision}/changes", () =>
      reader.spaces.getRevisionSemanticChanges(guide, spaceBody.revision, { limit: 100 } as any),
    );
    const results: any = await call("POST /v1/orgs/{org}/sites/{site}/search", () =>
      reader.orgs.searchSiteContent(org, docs.id, { query: "install" } as any),
    );
    expect(JSON.stringify(results)).toContain(pages.install);
    await call("GET /v1/spaces/{space}/embed?url=", () => reader.spaces.getEmbedByUrlInSpace(guide, { url: "https://example.invalid/x" }));
    const me = gitbookClient(t, admin.token);
    await call("GET /v1/users/{user}", () => me.users.getUserById(admin.user));

    // The site token reads; it never writes.
    expect(
      await missing("PATCH /v1/spaces/{space} with the site token", () => reader.spaces.updateSpaceById(guide, { title: "x" } as any)),
    ).toBe(403);

    console.log(`[gitbook-reader] calls of one page view:\n  ${calls.join("\n  ")}`);
    expect(calls.filter((c) => c.startsWith("2"))).toHaveLength(13);
  });
});
