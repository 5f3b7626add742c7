import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import http from "node:http";
import LZString from "lz-string";
import { startGateway, type Caller, type TestGateway } from "../../helpers/gateway.js";
import { startReceiver } from "../../events/receiver.js";
import { recordSpaceActivity as recordActivity, type SpaceActivity } from "../../../src/events/activity.js";
import { verifySignature } from "../../../src/events/signing.js";
import { purgeSettledEvents } from "../../../src/events/record.js";
import { fewestStatements, statementsOf } from "../../helpers/fixtures.js";

// A shared machine can be slow: generous limits, so that only real failures fail.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let other: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let reader: Caller & { user: string };

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme Docs");
  other = await t.bootstrap("oscar@other.test", "Other Org");
  reader = await t.member(admin.organization, "rita@acme.test", "read");
  await admin.patch(`/v1/orgs/${admin.organization}`, { hostname: "acme" });
}, 180_000);
afterAll(() => t?.close());

const FULL = {
  runtime: "v1",
  icon: PNG,
  title: "Figma",
  description: "Embed Figma frames",
  summary: "# Figma\n\nLong **markdown**.",
  previewImages: [PNG],
  visibility: "public",
  target: "space",
  scopes: ["space:content:read", "space:comments:read"],
  categories: ["visual", "collaboration"],
  blocks: [
    {
      id: "figma-embed",
      title: "Figma frame",
      description: "A frame",
      icon: "figma",
      urlUnfurl: ["https://www.figma.com/file/"],
      markdown: { codeblock: "figma", body: "url" },
    },
  ],
  contentSources: [{ id: "frames", title: "Frames", description: "Import frames", configuration: { componentId: "source-config" } }],
  externalLinks: [{ url: "https://figma.example/docs", label: "Documentation" }],
  configurations: {
    account: {
      properties: {
        apiKey: { title: "API key", type: "string", description: "Key" },
        mode: { type: "string", enum: ["fast", "slow"], default: "fast" },
        enabled: { type: "boolean" },
      },
      required: ["apiKey"],
    },
    space: { properties: { folder: { type: "string" } }, required: [] },
  },
  script: "export default {}",
  organization: "acme",
  secrets: { FIGMA_TOKEN: "s3cret" },
  contentSecurityPolicy: "script-src 'self' https://figma.example",
};

describe("POST /v1/integrations/{integrationName} (publish)", () => {
  it("creates an integration (201, version 1) with every documented field and never returns secrets", async () => {
    const res = await admin.post("/v1/integrations/figma", FULL);
    expect(res.status).toBe(201);
    const i = res.body;
    expect(Object.keys(i).sort()).toEqual(
      [
        "object",
        "name",
        "version",
        "title",
        "description",
        "summary",
        "previewImages",
        "target",
        "verified",
        "visibility",
        "scopes",
        "categories",
        "blocks",
        "contentSources",
        "configurations",
        "externalLinks",
        "owner",
        "urls",
        "permissions",
        "contentSecurityPolicy",
      ].sort(),
    );
    expect(i).toMatchObject({
      object: "integration",
      name: "figma",
      version: 1,
      title: "Figma",
      description: "Embed Figma frames",
      summary: FULL.summary,
      target: "space",
      verified: false,
      visibility: "public",
      scopes: FULL.scopes,
      categories: FULL.categories,
      blocks: FULL.blocks,
      contentSources: FULL.contentSources,
      configurations: FULL.configurations,
      externalLinks: FULL.externalLinks,
      permissions: { admin: true, install: true },
      contentSecurityPolicy: FULL.contentSecurityPolicy,
    });
    expect(i.owner).toMatchObject({ object: "organization", id: admin.organization, title: "Acme Docs" });
    expect(i.urls).toEqual({
      location: `${t.url}/v1/integrations/figma`,
      icon: `${t.url}/integrations/figma/assets/icon?v=1`,
      app: `${t.url}/app/integrations/figma`,
      assets: `${t.url}/integrations/figma/assets/`,
      publicEndpoint: `${t.url}/integrations/figma/public`,
      publicContentEndpoint: `${t.url}/integrations/figma/public`,
    });
    expect(i.previewImages).toEqual([`${t.url}/integrations/figma/assets/preview-0?v=1`]);
    expect(JSON.stringify(i)).not.toContain("s3cret");
    expect(JSON.stringify(i)).not.toContain("export default");

    const icon = await fetch(i.urls.icon);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await icon.arrayBuffer()).equals(Buffer.from(PNG, "base64"))).toBe(true);
    expect((await fetch(i.previewImages[0])).status).toBe(200);
  });

  it("publishes a new version (200, version + 1): omitted fields are kept, null resets one", async () => {
    const res = await admin.post("/v1/integrations/figma", { title: "Figma 2", summary: null, organization: admin.organization });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 2, title: "Figma 2", description: "Embed Figma frames", scopes: FULL.scopes });
    expect(res.body).not.toHaveProperty("summary");
    expect((await admin.post("/v1/integrations/figma", {})).body.version).toBe(3);
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    expect(Object.keys(doc.paths["/v1/integrations/{integrationName}"].post.responses)).toEqual(expect.arrayContaining(["200", "201"]));
  });

  it("rejects bad input with a 400 naming the field", async () => {
    const cases: [string, unknown, string][] = [
      ["bad name!", { title: "x", organization: "acme" }, "integrationName"],
      ["fresh", { organization: "acme" }, "title"],
      ["fresh", { title: "x" }, "organization"],
      ["fresh", { title: "x", organization: "acme", runtime: "v2" }, "runtime"],
      ["fresh", { title: "x", organization: "acme", visibility: "secret" }, "visibility"],
      ["fresh", { title: "x", organization: "acme", target: "page" }, "target"],
      ["fresh", { title: "x", organization: "acme", icon: "not base64!!" }, "icon"],
      ["fresh", { title: "x", organization: "acme", previewImages: ["%%%"] }, "previewImages[0]"],
      ["fresh", { title: "x", organization: "acme", scopes: ["Space Read"] }, "scopes[0]"],
      ["fresh", { title: "x", organization: "acme", categories: ["Has Space"] }, "categories[0]"],
      ["fresh", { title: "x", organization: "acme", blocks: [{ id: "a b", title: "x" }] }, "blocks[0].id"],
      [
        "fresh",
        {
          title: "x",
          organization: "acme",
          blocks: [
            { id: "a", title: "x" },
            { id: "a", title: "y" },
          ],
        },
        "blocks[1].id",
      ],
      ["fresh", { title: "x", organization: "acme", blocks: [{ title: "x" }] }, "id"],
      ["fresh", { title: "x", organization: "acme", contentSources: [{ id: "a", title: "x", configuration: {} }] }, "componentId"],
      ["fresh", { title: "x", organization: "acme", externalLinks: [{ url: "nope", label: "x" }] }, "externalLinks[0].url"],
      [
        "fresh",
        { title: "x", organization: "acme", configurations: { account: { properties: { a: { type: "date" } } } } },
        "configurations.account.properties.a.type",
      ],
      [
        "fresh",
        { title: "x", organization: "acme", configurations: { account: { properties: {}, required: ["zzz"] } } },
        "configurations.account.required[0]",
      ],
      ["fresh", { title: "x", organization: "acme", secrets: { KEY: 3 } }, "secrets"],
      ["fresh", { title: "x", organization: "acme", contentSecurityPolicy: "a\nb" }, "contentSecurityPolicy"],
      ["fresh", { title: "x", organization: "acme", unknownField: 1 }, "unknownField"],
    ];
    for (const [name, body, field] of cases) {
      const res = await admin.post(`/v1/integrations/${encodeURIComponent(name)}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body)).toContain(field);
    }
    expect((await admin.get("/v1/integrations/fresh")).status).toBe(404);
  });

  it("is 403 for members who are not admins, 404 for strangers of a private integration", async () => {
    const created = await admin.post("/v1/integrations/acme-private", { title: "Private", organization: admin.organization });
    expect(created.status).toBe(201);
    expect(created.body.visibility).toBe("private");
    expect(created.body.target).toBe("all");
    const res = await reader.post("/v1/integrations/acme-private", { title: "Mine" });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain("admin");
    expect((await other.post("/v1/integrations/acme-private", { title: "Mine" })).status).toBe(404);
    // Publishing in an organization one is not an admin of.
    expect((await reader.post("/v1/integrations/reader-one", { title: "x", organization: admin.organization })).status).toBe(403);
    expect((await other.post("/v1/integrations/other-one", { title: "x", organization: admin.organization })).status).toBe(404);
    // The public one is visible to strangers, but not theirs to publish: it does not exist among theirs.
    expect((await other.post("/v1/integrations/figma", { title: "Mine" })).status).toBe(404);
  });
});

describe("GET /v1/integrations and /v1/integrations/{integrationName}", () => {
  it("shows public integrations to everyone and private ones to members of the owner only", async () => {
    const seen = await other.get("/v1/integrations/figma");
    expect(seen.status).toBe(200);
    expect(seen.body.permissions).toEqual({ admin: false, install: true });
    expect(seen.body.owner.permissions.view).toBe(false);
    expect((await other.get("/v1/integrations/acme-private")).status).toBe(404);
    expect((await reader.get("/v1/integrations/acme-private")).body.permissions).toEqual({ admin: false, install: false });
    expect((await admin.get("/v1/integrations/bad name")).status).toBe(400);
  });

  it("lists with every filter of note A", async () => {
    await other.post("/v1/integrations/slack", {
      title: "Slack",
      organization: other.organization,
      visibility: "public",
      target: "organization",
      categories: ["collaboration"],
      scopes: ["space:change-requests:read"],
    });
    await other.post("/v1/integrations/other-unlisted", { title: "Hidden", organization: other.organization, visibility: "unlisted" });
    const names = async (query: Record<string, string | number | boolean> = {}) =>
      (await admin.get("/v1/integrations", query)).body.items.map((i: any) => i.name);
    expect(await names()).toEqual(["acme-private", "figma", "slack"]);
    expect(await names({ search: "FIG" })).toEqual(["figma"]);
    expect(await names({ category: "collaboration" })).toEqual(["figma", "slack"]);
    expect(await names({ blockDomain: "figma.com" })).toEqual(["figma"]);
    expect(await names({ blockDomain: "example.com" })).toEqual([]);
    expect(await names({ hasBlocks: true })).toEqual(["figma"]);
    expect(await names({ hasBlocks: false })).toEqual(["acme-private", "slack"]);
    expect(await names({ hasContentSources: true })).toEqual(["figma"]);
    expect(await names({ owner: other.organization })).toEqual(["slack"]);
    expect(await names({ owner: "acme" })).toEqual(["acme-private", "figma"]);
    expect(await names({ scope: "space:change-requests:read" })).toEqual(["slack"]);
    expect(await names({ target: "space" })).toEqual(["acme-private", "figma"]);
    expect(await names({ target: "organization" })).toEqual(["acme-private", "slack"]);
    const first = await admin.get("/v1/integrations", { limit: 2 });
    expect(first.body.count).toBe(3);
    expect((await admin.get("/v1/integrations", { limit: 2, page: first.body.next.page })).body.items.map((i: any) => i.name)).toEqual([
      "slack",
    ]);
    const paged = await admin.get("/v1/integrations", { hasBlocks: false, limit: 1 });
    expect(paged.body).toMatchObject({ count: 2, items: [{ name: "acme-private" }] });
    expect((await admin.get("/v1/integrations", { blockDomain: "bad domain" })).status).toBe(400);
    expect((await admin.get("/v1/integrations", { target: "page" })).status).toBe(400);
    expect((await other.get("/v1/integrations")).body.items.map((i: any) => i.name)).toEqual(["figma", "other-unlisted", "slack"]);
  });
});

let spaceId: string;

describe("installations", () => {
  let installation: any;

  it("installs in an organization (201) with every documented field and records installation_setup", async () => {
    const res = await admin.post("/v1/integrations/figma/installations", { organization: admin.organization });
    expect(res.status).toBe(201);
    installation = res.body;
    expect(Object.keys(installation).sort()).toEqual(
      [
        "id",
        "status",
        "space_selection",
        "site_selection",
        "spaces",
        "configuration",
        "createdAt",
        "updatedAt",
        "urls",
        "externalIds",
        "target",
      ].sort(),
    );
    expect(installation).toMatchObject({
      status: "active",
      space_selection: "selected",
      site_selection: "selected",
      spaces: 0,
      configuration: {},
      externalIds: [],
      target: { organization: admin.organization },
      urls: {
        location: `${t.url}/v1/integrations/figma/installations/${installation.id}`,
        app: `${t.url}/app/o/${admin.organization}/integrations/figma`,
        publicEndpoint: `${t.url}/integrations/figma/installations/${installation.id}/public`,
        publicContentEndpoint: `${t.url}/integrations/figma/installations/${installation.id}/public`,
      },
    });
    const again = await admin.post("/v1/integrations/figma/installations", { organization: admin.organization });
    expect(again.status).toBe(409);
    expect((await reader.post("/v1/integrations/figma/installations", { organization: admin.organization })).status).toBe(403);
    expect((await admin.post("/v1/integrations/figma/installations", {})).status).toBe(400);
    expect((await other.post("/v1/integrations/acme-private/installations", { organization: other.organization })).status).toBe(404);

    const events = await admin.get("/v1/integrations/figma/events");
    expect(events.body.items[0]).toMatchObject({
      integrationId: expect.stringMatching(/^intg_/),
      installationId: installation.id,
      status: "skipped",
      payload: { type: "installation_setup", installationId: installation.id, status: "active" },
    });
    expect(events.body.items[0].payload.eventId).toBe(events.body.items[0].id);
    expect(events.body.items[0].payload).not.toHaveProperty("previous");
  });

  it("changes configuration, selection and external ids (PATCH); a new configuration records installation_setup with previous", async () => {
    const bad = await admin.patch(`/v1/integrations/figma/installations/${installation.id}`, { configuration: { mode: "fast" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("configuration.apiKey");
    expect(
      (await admin.patch(`/v1/integrations/figma/installations/${installation.id}`, { configuration: { apiKey: 1 } })).body.error.message,
    ).toContain("configuration.apiKey");
    expect((await admin.patch(`/v1/integrations/figma/installations/${installation.id}`, { space_selection: "some" })).status).toBe(400);
    const res = await admin.patch(`/v1/integrations/figma/installations/${installation.id}`, {
      configuration: { apiKey: "k1", mode: "slow" },
      externalIds: ["acct-1", "acct-2"],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ configuration: { apiKey: "k1", mode: "slow" }, externalIds: ["acct-1", "acct-2"] });
    expect(new Date(res.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(installation.updatedAt).getTime());
    const events = await admin.get("/v1/integrations/figma/events", { type: "installation_setup" });
    expect(events.body.count).toBe(2);
    expect(events.body.items[0].payload).toEqual({
      eventId: events.body.items[0].id,
      type: "installation_setup",
      installationId: installation.id,
      status: "active",
      previous: { status: "active", configuration: {} },
    });
    expect((await reader.patch(`/v1/integrations/figma/installations/${installation.id}`, { externalIds: [] })).status).toBe(403);
    expect((await other.patch(`/v1/integrations/figma/installations/${installation.id}`, { externalIds: [] })).status).toBe(404);
  });

  it("reads and lists installations with the external id filter", async () => {
    expect((await admin.get(`/v1/integrations/figma/installations/${installation.id}`)).body.id).toBe(installation.id);
    expect((await admin.get("/v1/integrations/figma/installations", { externalId: "acct-2" })).body.items.map((i: any) => i.id)).toEqual([
      installation.id,
    ]);
    expect((await admin.get("/v1/integrations/figma/installations", { externalId: "nope" })).body.count).toBe(0);
    // Another organization installs it: the owner's admins see both, the other organization only its own.
    const theirs = await other.post("/v1/integrations/figma/installations", { organization: other.organization });
    expect(theirs.status).toBe(201);
    expect((await admin.get("/v1/integrations/figma/installations")).body.count).toBe(2);
    expect((await other.get("/v1/integrations/figma/installations")).body.items.map((i: any) => i.id)).toEqual([theirs.body.id]);
    expect((await other.get(`/v1/integrations/figma/installations/${installation.id}`)).status).toBe(404);
  });

  it("installs in a space (PUT), lists spaces with expand and the external id filter, removes (DELETE)", async () => {
    spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Handbook" })).body.id;
    const otherSpace = (await other.post(`/v1/orgs/${other.organization}/spaces`, { title: "Theirs" })).body.id;
    const path = `/v1/integrations/figma/installations/${installation.id}/spaces/${spaceId}`;
    const res = await admin.put(path, { configuration: { folder: "/designs" }, externalIds: ["space-ext"] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      integration: "figma",
      installation: installation.id,
      status: "active",
      configuration: { folder: "/designs" },
      externalIds: ["space-ext"],
      urls: {
        location: `${t.url}${path}`,
        publicEndpoint: `${t.url}/integrations/figma/installations/${installation.id}/spaces/${spaceId}/public`,
        publicContentEndpoint: `${t.url}/integrations/figma/installations/${installation.id}/spaces/${spaceId}/public`,
      },
      space: spaceId,
    });
    expect((await admin.put(`/v1/integrations/figma/installations/${installation.id}/spaces/${otherSpace}`, {})).status).toBe(404);
    expect((await admin.put(path, { configuration: { folder: 3 } })).status).toBe(400);
    expect((await admin.get(`/v1/integrations/figma/installations/${installation.id}`)).body.spaces).toBe(1);

    const plain = await admin.get("/v1/integrations/figma/spaces");
    expect(plain.body).toMatchObject({ count: 1, items: [{ space: spaceId, installation: installation.id }] });
    const expanded = await admin.get("/v1/integrations/figma/spaces", { expand: true });
    expect(expanded.body.items[0].space).toMatchObject({
      object: "space",
      id: spaceId,
      title: "Handbook",
      organization: admin.organization,
    });
    expect((await admin.get("/v1/integrations/figma/spaces", { externalId: "space-ext" })).body.count).toBe(1);
    expect((await admin.get("/v1/integrations/figma/spaces", { externalId: "other" })).body.count).toBe(0);
    expect((await other.get("/v1/integrations/figma/spaces")).body.count).toBe(0);
    expect((await admin.get(path, { expand: true })).body.space.id).toBe(spaceId);

    const events = await admin.get("/v1/integrations/figma/events", { type: "space_installation_setup" });
    expect(events.body.items[0].payload).toMatchObject({ spaceId, status: "active" });

    // Selection "all" covers every live space of the organization.
    const all = await admin.patch(`/v1/integrations/figma/installations/${installation.id}`, { space_selection: "all" });
    expect(all.body).toMatchObject({ space_selection: "all", spaces: 1 });
    await admin.patch(`/v1/integrations/figma/installations/${installation.id}`, { space_selection: "selected" });

    expect((await admin.delete(path)).status).toBe(204);
    expect((await admin.delete(path)).status).toBe(204);
    expect((await admin.get("/v1/integrations/figma/spaces")).body.count).toBe(0);
    expect((await admin.put(path, {})).status).toBe(200);
  });

  it("refuses space installations for integrations that target organizations only", async () => {
    const inst = (await admin.post("/v1/integrations/slack/installations", { organization: admin.organization })).body;
    const res = await admin.put(`/v1/integrations/slack/installations/${inst.id}/spaces/${spaceId}`, {});
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("organization");
  });

  it("installs in a site (PUT), lists sites with expand and the external id filter, removes (DELETE)", async () => {
    // figma targets spaces: a site installation is refused; an integration targeting sites (or all) is accepted.
    const site = (await admin.post(`/v1/orgs/${admin.organization}/sites`, { title: "Help center" })).body;
    const theirSite = (await other.post(`/v1/orgs/${other.organization}/sites`, { title: "Their site" })).body;
    expect((await admin.put(`/v1/integrations/figma/installations/${installation.id}/sites/${site.id}`, {})).status).toBe(409);
    expect(
      (
        await admin.post("/v1/integrations/analytics", {
          title: "Analytics",
          organization: admin.organization,
          visibility: "public",
          target: "site",
          configurations: { site: { properties: { trackingId: { type: "string" } }, required: ["trackingId"] } },
        })
      ).status,
    ).toBe(201);
    const inst = (await admin.post("/v1/integrations/analytics/installations", { organization: admin.organization })).body;
    const path = `/v1/integrations/analytics/installations/${inst.id}/sites/${site.id}`;

    const missing = await admin.put(path, { configuration: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("trackingId");
    expect(
      (await admin.put(`/v1/integrations/analytics/installations/${inst.id}/sites/${theirSite.id}`, { configuration: { trackingId: "x" } }))
        .status,
    ).toBe(404);
    expect(
      (await admin.put(`/v1/integrations/analytics/installations/${inst.id}/sites/site_nope`, { configuration: { trackingId: "x" } }))
        .status,
    ).toBe(404);
    expect((await reader.put(path, { configuration: { trackingId: "x" } })).status).toBe(403);

    const res = await admin.put(path, { configuration: { trackingId: "UA-1" }, externalIds: ["prop-1"] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      integration: "analytics",
      installation: inst.id,
      status: "active",
      configuration: { trackingId: "UA-1" },
      externalIds: ["prop-1"],
      urls: {
        location: `${t.url}${path}`,
        publicEndpoint: `${t.url}/integrations/analytics/installations/${inst.id}/sites/${site.id}/public`,
        publicContentEndpoint: `${t.url}/integrations/analytics/installations/${inst.id}/sites/${site.id}/public`,
      },
      site: site.id,
    });
    // The same PUT again changes nothing and records nothing; a new configuration records the change with `previous`.
    await admin.put(path, { configuration: { trackingId: "UA-1" } });
    await admin.put(path, { configuration: { trackingId: "UA-2" } });
    const setups = (await admin.get("/v1/integrations/analytics/events", { type: "site_installation_setup" })).body;
    expect(setups.count).toBe(2);
    expect(setups.items[0].payload).toEqual({
      eventId: setups.items[0].id,
      type: "site_installation_setup",
      installationId: inst.id,
      siteId: site.id,
      status: "active",
      previous: { status: "active", configuration: { trackingId: "UA-1" } },
    });
    expect(setups.items[1].payload).toMatchObject({ siteId: site.id, status: "active" });
    expect(setups.items[1].payload).not.toHaveProperty("previous");

    const plain = await admin.get("/v1/integrations/analytics/sites");
    expect(plain.body).toMatchObject({
      count: 1,
      items: [{ site: site.id, installation: inst.id, configuration: { trackingId: "UA-2" } }],
    });
    const expanded = await admin.get("/v1/integrations/analytics/sites", { expand: true });
    expect(expanded.body.items[0].site).toMatchObject({ object: "site", id: site.id, title: "Help center" });
    expect((await admin.get(path, { expand: true })).body.site).toMatchObject({ object: "site", id: site.id });
    expect((await admin.get(path)).body.site).toBe(site.id);
    expect((await admin.get("/v1/integrations/analytics/sites", { externalId: "prop-1" })).body.count).toBe(1);
    expect((await admin.get("/v1/integrations/analytics/sites", { externalId: "other" })).body.count).toBe(0);
    // Another organization sees no site installations of Acme's installation, and cannot read one.
    expect((await other.get("/v1/integrations/analytics/sites")).body.count).toBe(0);
    expect((await other.get(path)).status).toBe(404);
    expect((await other.get("/v1/integrations/acme-private/sites")).status).toBe(404);

    // site_selection is part of the installation: a change records installation_setup.
    const selection = await admin.patch(`/v1/integrations/analytics/installations/${inst.id}`, { site_selection: "all" });
    expect(selection.body.site_selection).toBe("all");
    expect((await admin.patch(`/v1/integrations/analytics/installations/${inst.id}`, { site_selection: "some" })).status).toBe(400);
    expect((await admin.get("/v1/integrations/analytics/events", { type: "installation_setup" })).body.count).toBe(2);

    expect((await admin.delete(path)).status).toBe(204);
    expect((await admin.delete(path)).status).toBe(204);
    const deleted = (await admin.get("/v1/integrations/analytics/events", { type: "site_installation_deleted" })).body;
    expect(deleted.count).toBe(1);
    expect(deleted.items[0].payload).toMatchObject({
      siteId: site.id,
      status: "active",
      previous: { configuration: { trackingId: "UA-2" } },
    });
    expect((await admin.get("/v1/integrations/analytics/sites")).body.count).toBe(0);

    // Deleting the site removes its installations.
    await admin.put(path, { configuration: { trackingId: "UA-3" } });
    expect((await admin.delete(`/v1/orgs/${admin.organization}/sites/${site.id}`)).status).toBe(204);
    expect((await admin.get("/v1/integrations/analytics/sites")).body.count).toBe(0);
  });

  it("reads site installations in GraphQL", async () => {
    const site = (await admin.post(`/v1/orgs/${admin.organization}/sites`, { title: "Graph site" })).body;
    const inst = (await admin.get("/v1/integrations/analytics/installations")).body.items[0];
    await admin.put(`/v1/integrations/analytics/installations/${inst.id}/sites/${site.id}`, { configuration: { trackingId: "G-1" } });
    const res = await admin.graphql(
      `query { integrationSiteInstallations(integrationName: "analytics", expand: true) { count items { installation site configuration urls { location } } } }`,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.integrationSiteInstallations.count).toBe(1);
    expect(res.data.integrationSiteInstallations.items[0]).toMatchObject({ installation: inst.id, configuration: { trackingId: "G-1" } });
    expect(res.data.integrationSiteInstallations.items[0].site).toMatchObject({ id: site.id, title: "Graph site" });
  });

  it("pages through site and space installation lists (limit, next.page)", async () => {
    const inst = (await admin.get("/v1/integrations/analytics/installations")).body.items[0];
    const site = (await admin.post(`/v1/orgs/${admin.organization}/sites`, { title: "Second site" })).body;
    await admin.put(`/v1/integrations/analytics/installations/${inst.id}/sites/${site.id}`, { configuration: { trackingId: "G-2" } });
    const all = (await admin.get("/v1/integrations/analytics/sites")).body;
    expect(all.count).toBe(2);
    const first = (await admin.get("/v1/integrations/analytics/sites", { limit: 1 })).body;
    expect(first.items).toHaveLength(1);
    const second = (await admin.get("/v1/integrations/analytics/sites", { limit: 1, page: first.next.page })).body;
    expect([...first.items, ...second.items].map((i: any) => i.site)).toEqual(all.items.map((i: any) => i.site));
    expect(second.next).toBeUndefined();
    expect((await admin.get("/v1/integrations/analytics/sites", { limit: 1001 })).status).toBe(400);
    expect((await admin.get("/v1/integrations/figma/spaces", { limit: 1 })).body.items.length).toBeLessThanOrEqual(1);
  });

  it("records space activity for installations whose scopes cover it", async () => {
    const before = (await admin.get("/v1/integrations/figma/events")).body.count;
    const services = { ...t.gateway.services, viewer: { userId: admin.user, tokenId: "" } };
    const ctx = services.prisma; // recorded on its own, outside any other write's transaction
    const recordSpaceActivity = async (db: typeof ctx, activity: SpaceActivity) => (await recordActivity(db, services, activity))();
    await recordSpaceActivity(ctx, { type: "space_content_updated", spaceId, revisionId: "rev_1" });
    await recordSpaceActivity(ctx, { type: "comment_posted", spaceId, commentId: "cmt_1" });
    // No space:change-requests:read scope: not recorded.
    await recordSpaceActivity(ctx, { type: "change_request_opened", spaceId, changeRequestId: "cr_1" });
    const events = (await admin.get("/v1/integrations/figma/events")).body;
    expect(events.count).toBe(before + 2);
    expect(events.items[0].payload).toMatchObject({ type: "comment_posted", spaceId, commentId: "cmt_1", installationId: installation.id });
    expect(events.items[1].payload).toMatchObject({ type: "space_content_updated", spaceId, revisionId: "rev_1" });
    // A space that is not installed (selection "selected") receives nothing.
    const loose = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Loose" })).body.id;
    await recordSpaceActivity(ctx, { type: "space_content_updated", spaceId: loose, revisionId: "rev_2" });
    expect((await admin.get("/v1/integrations/figma/events")).body.count).toBe(before + 2);
    // Slack listens to change requests, installed for all spaces.
    const slackInst = (await admin.get("/v1/integrations/slack/installations")).body.items.find(
      (i: any) => i.target.organization === admin.organization,
    );
    await admin.patch(`/v1/integrations/slack/installations/${slackInst.id}`, { space_selection: "all" });
    await recordSpaceActivity(ctx, { type: "change_request_status_updated", spaceId: loose, changeRequestId: "cr_2", status: "merged" });
    const slackEvents = (await other.get("/v1/integrations/slack/events", { type: "change_request_status_updated" })).body;
    expect(slackEvents.items[0].payload).toMatchObject({
      spaceId: loose,
      changeRequestId: "cr_2",
      changeRequestStatus: "merged",
      installationId: slackInst.id,
    });
  });

  it("reads events (page, limit, newest first) and one event with its trace, for members of the owner only", async () => {
    const first = await admin.get("/v1/integrations/figma/events", { limit: 2 });
    expect(first.body.items).toHaveLength(2);
    expect(new Date(first.body.items[0].createdAt) >= new Date(first.body.items[1].createdAt)).toBe(true);
    const second = await admin.get("/v1/integrations/figma/events", { limit: 2, page: first.body.next.page });
    expect(second.body.items[0].id).not.toBe(first.body.items[1].id);
    const id = first.body.items[0].id;
    const one = await reader.get(`/v1/integrations/figma/events/${id}`);
    expect(one.status).toBe(200);
    expect(one.body.event).toEqual(first.body.items[0]);
    expect(one.body.trace.logs[0]).toEqual({ message: expect.stringContaining("Recorded"), timestamp: expect.any(String), level: "info" });
    expect(one.body.trace.logs[1].message).toContain("development mode is off");
    expect(one.body.trace.logs).toHaveLength(2);
    // Both entries come from the event's row: recording an event writes no log row to check.
    expect(await t.gateway.db.prisma.integrationEventLog.count({ where: { eventId: id } })).toBe(0);
    expect((await admin.get("/v1/integrations/figma/events", { status: "skipped" })).body.count).toBe(first.body.count);
    expect((await admin.get("/v1/integrations/figma/events", { status: "nope" })).status).toBe(400);
    expect((await other.get(`/v1/integrations/figma/events/${id}`)).status).toBe(404);
    expect((await other.get(`/v1/integrations/figma/events`)).status).toBe(404);
    expect((await other.get(`/v1/integrations/acme-private/events`)).status).toBe(404);
    expect((await admin.get(`/v1/integrations/figma/events/evt_nope`)).status).toBe(404);
  });

  it("uninstalls (204, also when absent) and records installation_deleted", async () => {
    const theirs = (await other.get("/v1/integrations/figma/installations")).body.items[0];
    expect((await admin.delete(`/v1/integrations/figma/installations/${theirs.id}`)).status).toBe(403);
    expect((await other.delete(`/v1/integrations/figma/installations/${theirs.id}`)).status).toBe(204);
    expect((await other.delete(`/v1/integrations/figma/installations/${theirs.id}`)).status).toBe(204);
    const deleted = (await admin.get("/v1/integrations/figma/events", { type: "installation_deleted" })).body.items[0];
    expect(deleted.payload).toMatchObject({ installationId: theirs.id, organizationId: other.organization });
    expect(deleted).not.toHaveProperty("installationId");
  });
});

describe("development mode, signing secret and render", () => {
  it("turns development mode on and off (204), admins of the owner only", async () => {
    expect((await admin.put("/v1/integrations/figma/dev", { tunnelUrl: "not a url" })).status).toBe(400);
    expect((await admin.put("/v1/integrations/figma/dev", {})).status).toBe(400);
    expect((await reader.put("/v1/integrations/figma/dev", { tunnelUrl: "http://127.0.0.1:9/x" })).status).toBe(403);
    expect((await other.put("/v1/integrations/acme-private/dev", { tunnelUrl: "http://127.0.0.1:9/x" })).status).toBe(404);
    expect((await admin.put("/v1/integrations/figma/dev", { tunnelUrl: "http://127.0.0.1:9/x", all: true })).status).toBe(204);
    expect((await admin.delete("/v1/integrations/figma/dev")).status).toBe(204);
    expect((await admin.delete("/v1/integrations/never-published/dev")).status).toBe(204);
    expect((await reader.delete("/v1/integrations/figma/dev")).status).toBe(403);
  });

  it("exposes and rotates the signing secret to admins of the owner", async () => {
    const secret = await admin.get("/v1/integrations/figma/signing-secret");
    expect(secret.body.signingSecret).toMatch(/^whsec_/);
    expect((await reader.get("/v1/integrations/figma/signing-secret")).status).toBe(403);
    expect((await other.get("/v1/integrations/figma/signing-secret")).status).toBe(404);
    const rotated = await admin.post("/v1/integrations/figma/signing-secret");
    expect(rotated.body.signingSecret).not.toBe(secret.body.signingSecret);
  });

  it("renders through the integration's endpoint (POST and GET with an LZ-string request), signed, with the CSP", async () => {
    const output = {
      type: "element",
      element: {
        type: "block",
        children: [
          {
            type: "button",
            style: "primary",
            label: "Open",
            onPress: { action: "open" },
            icon: "close",
            confirm: { title: "Sure?", text: "Open it", confirm: "Yes", style: "danger" },
            disabled: false,
          },
        ],
        controls: [{ icon: "edit", label: "Edit", onPress: { action: "edit" } }],
      },
      state: { open: true },
      props: { url: "https://figma.com/file/1" },
    };
    const receiver = await startReceiver([
      { status: 200, body: output },
      { status: 200, body: output },
      { status: 200, body: { type: "element", element: { type: "card" } } },
      { status: 500 },
    ]);
    try {
      const nothing = await admin.post("/v1/integrations/figma/render", { componentId: "embed" });
      expect(nothing.status).toBe(409);
      expect(nothing.body.error.message).toContain("development mode");
      await admin.put("/v1/integrations/figma/dev", { tunnelUrl: receiver.url });
      const res = await admin.post("/v1/integrations/figma/render", {
        componentId: "embed",
        props: { url: "u" },
        state: {},
        context: { type: "document" },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(output);
      expect(res.headers.get("content-security-policy")).toBe(FULL.contentSecurityPolicy);
      const sent = receiver.received[0]!;
      expect(sent.json).toEqual({ type: "ui_render", componentId: "embed", props: { url: "u" }, state: {}, context: { type: "document" } });
      expect(sent.headers["content-security-policy"]).toBe(FULL.contentSecurityPolicy);
      const secret = (await admin.get("/v1/integrations/figma/signing-secret")).body.signingSecret;
      expect(
        verifySignature(secret, sent.body, {
          signature: sent.headers["x-signature"] as string,
          timestamp: sent.headers["x-signature-timestamp"] as string,
        }),
      ).toBe(true);

      const request = LZString.compressToEncodedURIComponent(JSON.stringify({ componentId: "embed", props: { url: "v" } }));
      const viaGet = await admin.get("/v1/integrations/figma/render", { request });
      expect(viaGet.status).toBe(200);
      expect(receiver.received[1]!.json).toMatchObject({ componentId: "embed", props: { url: "v" } });

      const invalid = await admin.post("/v1/integrations/figma/render", { componentId: "embed" });
      expect(invalid.status).toBe(502);
      expect(invalid.body.error.message).toContain("output.element.type");
      const failing = await admin.post("/v1/integrations/figma/render", { componentId: "embed" });
      expect(failing.status).toBe(502);
      expect(failing.body.error.message).toContain("HTTP 500");
      expect(receiver.received[0]!.headers["x-integration-event-type"]).toBe("block_fetch");

      // Each render is a block_fetch event with its outcome and trace, never queued for delivery.
      const fetches = (await admin.get("/v1/integrations/figma/events", { type: "block_fetch" })).body;
      expect(fetches.count).toBe(4);
      expect(fetches.items.map((e: any) => e.status)).toEqual(["failed", "failed", "success", "success"]);
      expect(fetches.items[3]).toMatchObject({ payload: { type: "block_fetch", componentId: "embed" } });
      expect(fetches.items[3]).not.toHaveProperty("installationId");
      expect(fetches.items[3].id).toBe(receiver.received[0]!.headers["x-integration-event-id"]);
      const trace = (await admin.get(`/v1/integrations/figma/events/${fetches.items[0].id}`)).body.trace.logs.map((l: any) => l.message);
      expect(trace.join("\n")).toContain("HTTP 500");
      expect(trace[0]).toContain("Recorded block_fetch");

      expect((await admin.get("/v1/integrations/figma/render", { request: "garbage" })).status).toBe(400);
      expect((await admin.post("/v1/integrations/figma/render", {})).status).toBe(400);
      expect((await admin.post("/v1/integrations/figma/render", { componentId: "x", props: [1] })).status).toBe(400);
      // all = false: the owner's members only.
      expect((await other.post("/v1/integrations/figma/render", { componentId: "embed" })).status).toBe(409);
    } finally {
      await admin.delete("/v1/integrations/figma/dev");
      await receiver.close();
    }
  });
});

describe("public endpoints", () => {
  /** A stand-in for the integration's web server: echoes what it got, sets a cookie, answers 500 on /boom. */
  async function startIntegrationServer() {
    const got: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        got.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        if (req.url!.startsWith("/hook/boom")) {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end("boom");
          return;
        }
        res.writeHead(req.url!.startsWith("/hook/oauth") ? 302 : 200, {
          "content-type": "text/html; charset=utf-8",
          "set-cookie": ["a=1; Path=/", "b=2; Path=/"],
          ...(req.url!.startsWith("/hook/oauth") ? { location: "https://app.example/done" } : {}),
        });
        res.end(`<p>${req.method} ${req.url} ${body.length}</p>`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as any).port}/hook`,
      got,
      close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    };
  }

  it("forwards requests without a token to the integration (signed, with the CSP) and relays its answer; each is a script_fetch event", async () => {
    const inst = (await admin.get("/v1/integrations/figma/installations")).body.items.find(
      (i: any) => i.target.organization === admin.organization,
    );
    const base = inst.urls.publicEndpoint as string;
    expect(base).toBe(`${t.url}/integrations/figma/installations/${inst.id}/public`);
    // Development mode off: no endpoint to forward to.
    const off = await fetch(`${base}/webhook`, { method: "POST", body: "{}" });
    expect(off.status).toBe(503);
    expect((await off.json()).error.message).toContain("development mode");

    const server = await startIntegrationServer();
    await admin.put("/v1/integrations/figma/dev", { tunnelUrl: server.url });
    try {
      const payload = Buffer.from([0, 1, 2, 250, 255]);
      const res = await fetch(`${base}/webhook/slack?team=T1`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream", "x-slack-signature": "v0=abc", "x-signature": "forged" },
        body: payload,
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("<p>POST /hook/webhook/slack?team=T1 5</p>");
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("content-security-policy")).toBe(FULL.contentSecurityPolicy);
      expect(res.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);

      const sent = server.got[0]!;
      expect(sent.body.equals(payload)).toBe(true);
      expect(sent.headers).toMatchObject({
        "content-type": "application/octet-stream",
        "x-slack-signature": "v0=abc",
        "x-integration-event-type": "script_fetch",
        "x-integration-name": "figma",
        "x-integration-installation-id": inst.id,
        "content-security-policy": FULL.contentSecurityPolicy,
        "x-forwarded-proto": "http",
      });
      const secret = (await admin.get("/v1/integrations/figma/signing-secret")).body.signingSecret;
      expect(
        verifySignature(secret, sent.body, {
          signature: sent.headers["x-signature"] as string,
          timestamp: sent.headers["x-signature-timestamp"] as string,
        }),
      ).toBe(true);

      // Redirects are relayed, not followed; the integration-level and space-level endpoints forward too.
      const redirect = await fetch(`${t.url}/integrations/figma/public/oauth/callback?code=c1`, { redirect: "manual" });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get("location")).toBe("https://app.example/done");
      expect(server.got[1]!.headers["x-integration-installation-id"]).toBeUndefined();
      const spacePath = `${t.url}/integrations/figma/installations/${inst.id}/spaces/${spaceId}/public`;
      await admin.put(`/v1/integrations/figma/installations/${inst.id}/spaces/${spaceId}`, {});
      expect((await fetch(spacePath, { method: "PUT", body: "x" })).status).toBe(200);
      expect(server.got[2]).toMatchObject({ method: "PUT", url: "/hook", headers: { "x-integration-space-id": spaceId } });

      const boom = await fetch(`${base}/boom`);
      expect(boom.status).toBe(500);
      expect(await boom.text()).toBe("boom");

      const events = (await admin.get("/v1/integrations/figma/events", { type: "script_fetch" })).body;
      expect(events.count).toBe(4);
      expect(events.items.map((e: any) => e.status)).toEqual(["failed", "success", "success", "success"]);
      expect(events.items[3].payload).toEqual({
        eventId: events.items[3].id,
        type: "script_fetch",
        installationId: inst.id,
        method: "POST",
        path: "/webhook/slack",
      });
      expect(events.items[1].payload).toMatchObject({ method: "PUT", path: "/", spaceId });
      expect(events.items[3].id).toBe(sent.headers["x-integration-event-id"]);

      // Development mode forwards only the owner organization's installations (all = false): another organization's gets 503.
      const theirs =
        (await other.get("/v1/integrations/figma/installations")).body.items[0] ??
        (await other.post("/v1/integrations/figma/installations", { organization: other.organization })).body;
      const notForwarded = await fetch(theirs.urls.publicEndpoint);
      expect(notForwarded.status).toBe(503);
      expect((await notForwarded.json()).error.message).toContain("owner organization");
      // Unknown integration, installation or space installation: 404; oversized body: 413.
      expect((await fetch(`${t.url}/integrations/nope/public/x`)).status).toBe(404);
      expect((await fetch(`${t.url}/integrations/figma/installations/inst_nope/public`)).status).toBe(404);
      expect((await fetch(`${t.url}/integrations/figma/installations/${inst.id}/sites/site_nope/public`)).status).toBe(404);
      expect((await fetch(`${base}/big`, { method: "POST", body: Buffer.alloc(1024 * 1024 + 1) })).status).toBe(413);
    } finally {
      await admin.delete("/v1/integrations/figma/dev");
      await server.close();
    }
    // The integration is gone: a 502 names it.
    await admin.put("/v1/integrations/figma/dev", { tunnelUrl: server.url });
    try {
      const gone = await fetch(`${base}/webhook`, { method: "POST", body: "{}" });
      expect(gone.status).toBe(502);
      expect((await gone.json()).error.message).toContain("could not be reached");
    } finally {
      await admin.delete("/v1/integrations/figma/dev");
    }
  });
});

describe("event retention", () => {
  it("removes settled events older than the retention period with their traces, never pending ones", async () => {
    const prisma = t.gateway.db.prisma;
    const integration = await prisma.integration.findUniqueOrThrow({ where: { name: "figma" } });
    const old = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    const base = { integrationId: integration.id, type: "installation_setup", payload: {}, createdAt: old };
    await prisma.integrationEvent.createMany({
      data: [
        { ...base, id: "iev_old_success", status: "success" },
        { ...base, id: "iev_old_pending", status: "pending" },
        { ...base, id: "iev_recent_failed", status: "failed", createdAt: new Date() },
      ],
    });
    await prisma.integrationEventLog.create({ data: { id: "log_old", eventId: "iev_old_success", level: "info", message: "old" } });
    expect(await purgeSettledEvents(prisma, 30)).toBe(1);
    const left = await prisma.integrationEvent.findMany({
      where: { id: { in: ["iev_old_success", "iev_old_pending", "iev_recent_failed"] } },
    });
    expect(left.map((e) => e.id).sort()).toEqual(["iev_old_pending", "iev_recent_failed"]);
    expect(await prisma.integrationEventLog.count({ where: { id: "log_old" } })).toBe(0);
    expect(await purgeSettledEvents(prisma, 0)).toBe(0);
    await prisma.integrationEvent.deleteMany({ where: { id: { in: ["iev_old_pending", "iev_recent_failed"] } } });
  });
});

describe("GraphQL graph", () => {
  it("walks organization → integrations and installations, integration → events, with total counts", async () => {
    const res = await admin.graphql(
      `query($org: String!) { organization(organizationId: $org) {
          integrations(first: 10) { totalCount edges { node { name events(first: 2) { totalCount edges { node { id status payload { type } } } } } } }
          installations(first: 10) { totalCount edges { node { id spacesCount integration { name } organization { id } } } }
      } }`,
      { org: admin.organization },
    );
    expect(res.errors).toBeUndefined();
    const org = res.data.organization;
    expect(org.integrations.totalCount).toBe(3);
    const figma = org.integrations.edges.find((e: any) => e.node.name === "figma").node;
    expect(figma.events.totalCount).toBeGreaterThan(3);
    expect(figma.events.edges).toHaveLength(2);
    expect(org.installations.totalCount).toBe(3);
    expect(org.installations.edges.map((e: any) => e.node.integration.name).sort()).toEqual(["analytics", "figma", "slack"]);
    // A stranger sees no events through the graph either.
    const stranger = await other.graphql(`{ integration(integrationName: "figma") { events(first: 5) { totalCount } } }`);
    expect(stranger.data.integration.events.totalCount).toBe(0);
  });
});

describe("DELETE /v1/integrations/{integrationName}", () => {
  it("deletes (204, also when absent); 403 for a member who is not an admin", async () => {
    expect((await reader.delete("/v1/integrations/acme-private")).status).toBe(403);
    expect((await other.delete("/v1/integrations/acme-private")).status).toBe(404);
    expect((await other.delete("/v1/integrations/figma")).status).toBe(404);
    expect((await other.delete("/v1/integrations/figma/dev")).status).toBe(404);
    expect((await reader.get("/v1/integrations/acme-private")).status).toBe(200);
    expect((await admin.delete("/v1/integrations/acme-private")).status).toBe(204);
    expect((await admin.delete("/v1/integrations/acme-private")).status).toBe(204);
    expect((await admin.get("/v1/integrations/acme-private")).status).toBe(404);
    // Recreated: version 1 again, 201.
    expect((await admin.post("/v1/integrations/acme-private", { title: "Again", organization: "acme" })).status).toBe(201);
  });
});

describe("batching", () => {
  const QUERY = `query($org: String!) { organization(organizationId: $org) {
    integrations(first: 50) { totalCount edges { node {
      name version owner { id title permissions { admin } } permissions { admin install } urls { location icon }
      events(first: 5) { totalCount edges { node { id status payload { type } } } }
      installations(first: 5) { totalCount edges { node { id spacesCount urls { location } target { organization } integration { name } } } }
    } } }
  } }`;

  /** Statements of the query: the fewest of three runs, as background work (the dispatcher's poll on PostgreSQL) may add one. */
  async function statementsFor(caller: Caller, org: string) {
    const { count, result: res } = await fewestStatements(t, () => caller.graphql(QUERY, { org }));
    expect(res.errors).toBeUndefined();
    return { statements: count, count: res.data.organization.integrations.edges.length };
  }

  it("reads organization → integrations → owner, events and installations with as many statements for 2 as for 6 integrations", async () => {
    const small = await t.bootstrap("sam@small.test", "Small");
    const big = await t.bootstrap("bea@big.test", "Big");
    for (const [caller, n] of [
      [small, 2],
      [big, 6],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const name = `${caller === small ? "small" : "big"}-${i}`;
        await caller.post(`/v1/integrations/${name}`, { title: name, organization: caller.organization, icon: PNG });
        await caller.post(`/v1/integrations/${name}/installations`, { organization: caller.organization });
      }
    }
    // Token use is recorded at most once a minute, off the request's path: use both tokens first so no such write lands in the counts.
    await small.get("/v1/orgs");
    await big.get("/v1/orgs");
    await new Promise((r) => setTimeout(r, 300));
    const a = await statementsFor(small, small.organization);
    const b = await statementsFor(big, big.organization);
    expect([a.count, b.count]).toEqual([2, 6]);
    expect(b.statements).toBe(a.statements);
    // REST lists too.
    const smallRest = await statementsOf(t, () => small.get("/v1/integrations", { owner: small.organization }));
    const bigRest = await statementsOf(t, () => big.get("/v1/integrations", { owner: big.organization }));
    expect(bigRest).toBe(smallRest);
  });
});
