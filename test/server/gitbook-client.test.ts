import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContentType, GitBookAPI, GitBookAPIError } from "@gitbook/api";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, type Admin } from "../helpers/fixtures.js";

/**
 * GitBook's own TypeScript client (`@gitbook/api`) pointed at a started gateway: a realistic
 * flow through its methods. Every answer it receives is also checked against this server's
 * /openapi.json and GitBook's schema for the operation (the same checker as the other REST
 * tests; test/gitbook-allowlist.ts lists the accepted differences).
 */
let t: TestGateway;
let admin: Admin;
let org: string;
let api: GitBookAPI;
const seen: string[] = [];

beforeAll(async () => {
  t = await startGateway();
  ({ admin, org } = await acmeDocs(t));
  api = new GitBookAPI({
    endpoint: t.url,
    authToken: admin.token,
    // The client sends every request through this binding: check each answer on its way back.
    serviceBinding: {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const res = await fetch(input, init);
        const url = new URL(typeof input === "string" || input instanceof URL ? input.toString() : input.url);
        const method = (init?.method ?? "GET").toUpperCase();
        const text = await res.clone().text();
        t.openapi.check(method, url.pathname, res.status, text ? JSON.parse(text) : undefined, text);
        seen.push(`${method} ${url.pathname} ${res.status}`);
        return res;
      },
    } as any,
  });
});

afterAll(async () => {
  await t?.close();
});

describe("GitBook's client (@gitbook/api) against this server", () => {
  it("creates a space, writes content through a change request, merges it, comments, and publishes a site", {
    timeout: 120_000,
  }, async () => {
    // Organizations and a space.
    const orgs = await api.orgs.listOrganizationsForAuthenticatedUser();
    expect(orgs.data.items.map((o) => o.id)).toContain(org);

    const space = (await api.orgs.createSpace(org, { title: "Handbook" })).data;
    expect(space).toMatchObject({ object: "space", title: "Handbook", organization: org, emoji: "", defaultLevel: "inherit" });
    expect(space.revision).toEqual(expect.any(String)); // a new space has its first, empty revision
    expect(space.mergeRules).toEqual({ type: "inherit" });

    const initial = (await api.spaces.getCurrentRevision(space.id)).data;
    expect(initial.id).toBe(space.revision);
    expect(initial.pages).toEqual([]);

    // A change request, content written into it, then merged.
    const cr = (await api.spaces.createChangeRequest(space.id, { subject: "First pages" })).data;
    expect(cr).toMatchObject({ object: "change-request", space: space.id, subject: "First pages", status: "draft" });

    // Writing pages is this server's own route (the spec's), sent through the client's transport.
    const page = (
      await api.request({
        path: `/spaces/${space.id}/change-requests/${cr.id}/content/pages`,
        method: "POST",
        body: { title: "Getting started", markdown: "# Getting started\n\nInstall it, then run it." },
        type: "application/json" as any,
        format: "json",
        secure: true,
      })
    ).data as any;
    expect(page).toMatchObject({ title: "Getting started", type: "document", kind: "sheet", tags: [] });

    const crPages = (await api.spaces.listPagesInChangeRequest(space.id, cr.id)).data;
    expect(crPages.pages.map((p) => p.title)).toEqual(["Getting started"]);

    // A discussion on the change request, with a reply.
    const comment = (await api.spaces.postCommentInChangeRequest(space.id, cr.id, { body: { markdown: "Looks good?" } as any })).data;
    expect(comment).toMatchObject({ object: "comment", repliers: [] });
    await api.spaces.postCommentReplyInChangeRequest(space.id, cr.id, comment.id, { body: { markdown: "Yes, merge it." } as any });
    const discussed = (await api.spaces.getCommentInChangeRequest(space.id, cr.id, comment.id)).data;
    expect(discussed.replies).toBe(1);
    expect(discussed.repliers).toEqual([expect.objectContaining({ count: 1, user: expect.objectContaining({ id: admin.user }) })]);

    const merged = (await api.spaces.mergeChangeRequest(space.id, cr.id)).data;
    expect(merged.result).toBe("merge");
    const after = (await api.spaces.getChangeRequestById(space.id, cr.id)).data;
    expect(after).toMatchObject({ status: "merged", revisionMerged: merged.revision });

    const live = (await api.spaces.getSpaceById(space.id)).data;
    expect(live.revision).toBe(merged.revision);
    const revision = (await api.spaces.getCurrentRevision(space.id)).data as any;
    expect(revision).toMatchObject({ id: merged.revision, type: "merge" });
    expect(revision.mergedFrom).toMatchObject({ id: cr.id, number: cr.number });
    const pages = (await api.spaces.listPages(space.id)).data;
    expect(pages.pages.map((p) => p.title)).toEqual(["Getting started"]);

    // A comment on the space itself.
    const onSpace = (await api.spaces.postCommentInSpace(space.id, { body: { markdown: "Merged, thanks." } as any })).data;
    expect((await api.spaces.listCommentsInSpace(space.id)).data.items.map((c) => c.id)).toContain(onSpace.id);

    // A site showing the space, published.
    const site = (await api.orgs.createSite(org, { title: "Acme Handbook" })).data;
    expect(site).toMatchObject({ object: "site", published: false, appliedType: site.type, defaultLevel: "inherit" });
    expect(site.permissions).toMatchObject({ view: true, admin: true });
    const siteSpace = (await api.orgs.addSpaceToSite(org, site.id, { spaceId: space.id })).data;
    expect(siteSpace).toMatchObject({ object: "site-space", draft: true, space: expect.objectContaining({ id: space.id }) });

    const published = (await api.orgs.publishSite(org, site.id)).data;
    expect((published as { published?: boolean }).published).toBe(true);
    const siteSpaces = (await api.orgs.listSiteSpaces(org, site.id)).data;
    expect(siteSpaces.items.map((s) => [s.space.id, s.draft])).toEqual([[space.id, false]]);

    // What a visitor sees, without a token.
    const visitor = new GitBookAPI({ endpoint: t.url });
    const seenByVisitor = (await visitor.orgs.getPublishedContentSite(org, site.id)).data;
    expect(seenByVisitor.site.id).toBe(site.id);
    expect(seenByVisitor.scripts).toEqual([]);

    // The client's errors carry the documented message.
    const missing = await api.spaces.getSpaceById("spc_missing").catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(GitBookAPIError);
    expect((missing as GitBookAPIError).code).toBe(404);

    expect(seen.length).toBeGreaterThan(20);
  });

  it("writes a change request's content with its batched changes (updateChangeRequestContent), then merges it", {
    timeout: 60_000,
  }, async () => {
    const space = (await api.orgs.createSpace(org, { title: "Batched" })).data;
    const cr = (await api.spaces.createChangeRequest(space.id, { subject: "Write the guide" })).data;

    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const batch = (
      await api.spaces.updateChangeRequestContent(
        space.id,
        cr.id,
        {
          changes: [
            {
              operation: "insert_page",
              ref: "start",
              document: { markdown: "# Getting started\n\nThen read [the details](./details.md).\n\n![Overview](./overview.png)\n" },
            },
            { operation: "insert_page", ref: "details", title: "Details", document: { markdown: "Back to [the start](./start.md)." } },
            { operation: "insert_files", files: [{ ref: "overview.png", name: "overview.png", contentType: "image/png", base64: png }] },
          ],
        },
        { compat: false },
      )
    ).data;
    if (!("changes" in batch)) throw new Error("compat=false answers the pages touched");
    expect(batch.changeRequest.id).toBe(cr.id);
    expect(batch.changes.map((c) => c.object)).toEqual(["created_page", "created_page"]);
    const [start, details] = batch.changes.map((c) => (c.object === "deleted_page" ? c.page : c.page.id));
    const file = batch.insertedFiles![0]!;
    expect(file).toMatchObject({ name: "overview.png", contentType: "image/png", dimensions: { width: 1, height: 1 } });

    const page = (await api.spaces.getPageInChangeRequestById(space.id, cr.id, start!)).data as any;
    expect(page.title).toBe("Getting started");
    expect(page.markdown).toBe(`Then read [the details](page:${details}).\n\n![Overview](file:${file.id})\n`);

    // Without compat the answer is the change request, as GitBook's clients have read it so far.
    const renamed = (
      await api.spaces.updateChangeRequestContent(space.id, cr.id, {
        changes: [{ operation: "update_page", page: details!, title: "The details", into: start }],
      })
    ).data;
    expect(renamed).toMatchObject({ object: "change-request", id: cr.id });

    // One wrong change rejects the batch, with the client's error.
    const refused = await api.spaces
      .updateChangeRequestContent(space.id, cr.id, {
        changes: [
          { operation: "delete_page", page: details! },
          { operation: "delete_page", page: "page_missing" },
        ],
      })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(GitBookAPIError);
    expect((refused as GitBookAPIError).code).toBe(400);

    await api.spaces.mergeChangeRequest(space.id, cr.id);
    const pages = (await api.spaces.listPages(space.id)).data.pages as any[];
    expect(pages.map((p) => [p.title, p.pages.map((c: any) => c.title)])).toEqual([["Getting started", ["The details"]]]);
    expect((await api.spaces.listFiles(space.id)).data.items.map((f) => f.id)).toEqual([file.id]);
  });

  it("reads reusable contents written through the spec's routes (getReusableContent… of a change request, a revision and the space)", {
    timeout: 60_000,
  }, async () => {
    const space = (await api.orgs.createSpace(org, { title: "Reused" })).data;
    const cr = (await api.spaces.createChangeRequest(space.id, { subject: "A shared notice" })).data;
    // GitBook's client has no write for them: its generic request() reaches the spec's route.
    const written = await api.request<{ id: string }>({
      method: "POST",
      path: `/spaces/${space.id}/change-requests/${cr.id}/content/reusable-contents`,
      body: { title: "Notice", markdown: "Read **this**.\n" },
      type: ContentType.Json,
      format: "json",
      secure: true,
    });
    const rc = written.data;
    expect(rc.id).toMatch(/^rc_/);

    const inCr = (await api.spaces.getReusableContentInChangeRequestById(space.id, cr.id, rc.id)).data;
    expect(inCr).toMatchObject({ id: rc.id, title: "Notice", document: expect.any(String) });
    const revision = (await api.spaces.getChangeRequestById(space.id, cr.id)).data.revision;
    expect((await api.spaces.getReusableContentInRevisionById(space.id, revision, rc.id)).data).toEqual(inCr);
    const document = (await api.spaces.getReusableContentDocumentInRevisionById(space.id, revision, rc.id)).data;
    expect(document.object).toBe("document");

    const missing = await api.spaces.getReusableContentById(space.id, rc.id).catch((err: unknown) => err);
    expect((missing as GitBookAPIError).code).toBe(404);
    await api.spaces.mergeChangeRequest(space.id, cr.id);
    expect((await api.spaces.getReusableContentById(space.id, rc.id)).data).toMatchObject({ id: rc.id, title: "Notice" });
    expect((await api.spaces.getCurrentRevision(space.id)).data.reusableContents).toEqual([inCr]);
  });
});
