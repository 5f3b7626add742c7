import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, expectIsoDate, type Admin, type Member } from "../../helpers/fixtures.js";
import { processorFor, resumeOpenApiProcessing } from "../../../src/domains/openapi/openapi.processing.js";
import { PETSTORE_V2_YAML, PETSTORE_YAML, SWAGGER_JSON, startSources, type Sources } from "./sources.js";

let t: TestGateway;
let src: Sources;
let admin: Admin;
let other: Admin;
let creator: Member;
let reader: Member;
let guest: Member;

const TIMEOUT_MS = 3000; // generous: a loaded CI machine must not turn good fetches into timeouts
const MAX_BYTES = 64 * 1024;
const base = () => `/v1/orgs/${admin.organization}/openapi`;
const specPath = (slug: string) => `${base()}/${slug}`;

beforeAll(async () => {
  src = await startSources();
  t = await startGateway({ openApiFetchTimeoutMs: TIMEOUT_MS, openApiMaxBytes: MAX_BYTES });
  ({ admin, other, creator, reader, guest } = await acmeDocs(t, {
    creator: ["cora@acme.test", "create"],
    reader: ["rita@acme.test", "review"],
    guest: ["gus@acme.test", null],
  }));
}, 120_000);
afterAll(async () => {
  await t?.close();
  await src?.close();
});

/** Polls the spec until processing has ended (completed or failed). */
async function settled(slug: string, caller = admin) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await caller.get(specPath(slug));
    expect(res.status).toBe(200);
    if (res.body.processingState === "completed" || res.body.processingState === "failed") return res.body;
    if (Date.now() > deadline) throw new Error(`spec ${slug} still ${res.body.processingState}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("OpenAPI spec lifecycle", () => {
  let firstVersion: string;

  it("POST creates a pending spec (201) and processes the source in the background", async () => {
    const res = await creator.post(base(), { slug: "petstore", source: { url: `${src.url}/petstore.yaml` } });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(Object.keys(s).sort()).toEqual(
      [
        "createdAt",
        "id",
        "lastProcessedErrorCount",
        "object",
        "permissions",
        "processingState",
        "slug",
        "sourceURL",
        "updatedAt",
        "urls",
        "visibility",
      ].sort(),
    );
    expect(s).toMatchObject({
      object: "openapi-spec",
      slug: "petstore",
      sourceURL: `${src.url}/petstore.yaml`,
      processingState: "pending",
      visibility: "private",
      permissions: { view: true, edit: true },
      urls: {
        location: `${t.url}${specPath("petstore")}`,
        app: `${t.url}/app/o/${admin.organization}/openapi/petstore`,
      },
    });
    expect(s.urls).not.toHaveProperty("published");
    expect(s.id).toMatch(/^oas_/);
    expectIsoDate(s.createdAt);
    expectIsoDate(s.updatedAt);

    const done = await settled("petstore");
    expect(done.processingState, done.lastProcessErrorCode).toBe("completed");
    expect(done.lastVersion).toMatch(/^oasv_/);
    expectIsoDate(done.lastProcessedAt);
    expect(done).not.toHaveProperty("lastProcessErrorCode");
    firstVersion = done.lastVersion;
  });

  it("serves the version, the latest version and their content", async () => {
    const list = await reader.get(`${specPath("petstore")}/versions`);
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(1);
    const v = list.body.items[0];
    expect(Object.keys(v).sort()).toEqual(["createdAt", "id", "object", "url", "urls"]);
    expect(v).toMatchObject({
      object: "openapi-spec-version",
      id: firstVersion,
      url: `${src.url}/petstore.yaml`,
      urls: { location: `${t.url}${specPath("petstore")}/versions/${firstVersion}` },
    });
    expectIsoDate(v.createdAt);

    const latest = await reader.get(`${specPath("petstore")}/versions/latest`);
    expect(latest.status).toBe(200);
    expect(latest.body).toEqual(v);
    const byId = await reader.get(`${specPath("petstore")}/versions/${firstVersion}`);
    expect(byId.body).toEqual(v);

    const content = await reader.get(`${specPath("petstore")}/versions/latest/content`);
    expect(content.status).toBe(200);
    expect(content.body).toMatchObject({ filesystem: { "openapi.yaml": PETSTORE_YAML }, url: `${src.url}/petstore.yaml` });
    expect(content.body.urls.source).toBe(`${src.url}/petstore.yaml`);
    expect((await reader.get(`${specPath("petstore")}/versions/${firstVersion}/content`)).body).toEqual(content.body);
  });

  it("records each failure with its code and keeps the last good version", async () => {
    const cases: [string, string][] = [
      ["/invalid-spec.yaml", "VALIDATION_ERROR"],
      ["/not-yaml.yaml", "PARSE_ERROR"],
      ["/scalar.yaml", "PARSE_ERROR"],
      ["/hang", "FETCH_TIMEOUT"],
      ["/slow-body", "FETCH_TIMEOUT"],
      ["/huge", "FETCH_TOO_LARGE"],
      ["/huge-declared", "FETCH_TOO_LARGE"],
      ["/missing.yaml", "FETCH_ERROR"],
    ];
    for (const [path, code] of cases) {
      const started = Date.now();
      const put = await admin.put(specPath("petstore"), { source: { url: `${src.url}${path}` } });
      expect(put.status, path).toBe(200);
      expect(put.body.processingState, path).toBe("pending");
      expect(put.body.sourceURL).toBe(`${src.url}${path}`);
      expect(put.body.lastVersion).toBe(firstVersion);
      const done = await settled("petstore");
      expect(done.processingState, path).toBe("failed");
      expect(done.lastProcessErrorCode, path).toBe(code);
      expect(done.lastVersion, path).toBe(firstVersion);
      if (code === "FETCH_TIMEOUT") expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 15_000);
    }
    // A port nobody listens on.
    await admin.put(specPath("petstore"), { source: { url: "http://127.0.0.1:9/openapi.yaml" } });
    expect((await settled("petstore")).lastProcessErrorCode).toBe("FETCH_ERROR");

    const versions = await admin.get(`${specPath("petstore")}/versions`);
    expect(versions.body.count).toBe(1);
    const content = await admin.get(`${specPath("petstore")}/versions/latest/content`);
    expect(content.body.filesystem).toEqual({ "openapi.yaml": PETSTORE_YAML });
  });

  it("records a new version once the source is fixed; versions list newest first", async () => {
    src.set("/fixed.yaml", PETSTORE_V2_YAML);
    const put = await creator.put(specPath("petstore"), { source: { url: `${src.url}/fixed.yaml` } });
    expect(put.status).toBe(200);
    const done = await settled("petstore");
    expect(done.processingState, done.lastProcessErrorCode).toBe("completed");
    expect(done).not.toHaveProperty("lastProcessErrorCode");
    expect(done.lastVersion).not.toBe(firstVersion);

    const versions = await admin.get(`${specPath("petstore")}/versions`);
    expect(versions.body.count).toBe(2);
    expect(versions.body.items.map((v: any) => v.id)).toEqual([done.lastVersion, firstVersion]);
    const page1 = await admin.get(`${specPath("petstore")}/versions`, { limit: 1 });
    expect(page1.body.items[0].id).toBe(done.lastVersion);
    const page2 = await admin.get(`${specPath("petstore")}/versions`, { limit: 1, page: page1.body.next.page });
    expect(page2.body.items.map((v: any) => v.id)).toEqual([firstVersion]);
    expect(page2.body).not.toHaveProperty("next");

    expect((await admin.get(`${specPath("petstore")}/versions/latest`)).body.id).toBe(done.lastVersion);
    expect((await admin.get(`${specPath("petstore")}/versions/latest/content`)).body).toEqual({
      filesystem: { "openapi.yaml": PETSTORE_V2_YAML },
      url: `${src.url}/fixed.yaml`,
      urls: { source: `${src.url}/fixed.yaml`, public: null }, // a private spec
    });
    expect((await admin.get(`${specPath("petstore")}/versions/${firstVersion}/content`)).body.filesystem).toEqual({
      "openapi.yaml": PETSTORE_YAML,
    });
  });

  it("accepts Swagger 2.0 and OpenAPI 3.1 JSON, and follows redirects", async () => {
    for (const [slug, path] of [
      ["legacy", "/swagger.json"],
      ["modern", "/modern.json"],
      ["redirected", "/redirect"],
    ]) {
      expect((await admin.post(base(), { slug, source: { url: `${src.url}${path}` } })).status).toBe(201);
      const done = await settled(slug);
      expect(done.processingState, `${slug}: ${done.lastProcessErrorCode}`).toBe("completed");
    }
    const content = await admin.get(`${specPath("legacy")}/versions/latest/content`);
    expect(content.body.filesystem).toEqual({ "openapi.json": SWAGGER_JSON });
  });
});

describe("OpenAPI spec input and access", () => {
  it("rejects bad input with a 400 naming the field", async () => {
    const url = `${src.url}/petstore.yaml`;
    const longUrl = (n: number) => `${src.url}/` + "a".repeat(n - src.url.length - 1);
    const cases: [unknown, string][] = [
      [{ source: { url } }, "slug"],
      [{ slug: "", source: { url } }, "slug"],
      [{ slug: "Pets", source: { url } }, "slug"],
      [{ slug: "pets--store", source: { url } }, "slug"],
      [{ slug: "-pets", source: { url } }, "slug"],
      [{ slug: "pets-", source: { url } }, "slug"],
      [{ slug: "pet store", source: { url } }, "slug"],
      [{ slug: "a".repeat(101), source: { url } }, "slug"],
      [{ slug: "ok" }, "source"],
      [{ slug: "ok", source: {} }, "source.url"],
      [{ slug: "ok", source: { url: "not a url" } }, "source.url"],
      [{ slug: "ok", source: { url: "ftp://example.com/spec.yaml" } }, "source.url"],
      [{ slug: "ok", source: { url: longUrl(2049) } }, "source.url"],
      [{ slug: "ok", source: { url, extra: 1 } }, "extra"],
      [{ slug: "ok", source: { url }, visibility: "public" }, "visibility"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post(base(), body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body).slice(0, 200)).toContain(field);
    }
    // Exactly at the limits is accepted.
    expect((await admin.post(base(), { slug: "a".repeat(100), source: { url: longUrl(2048) } })).status).toBe(201);
    expect((await admin.put(specPath("petstore"), { source: { url: longUrl(2049) } })).body.error.message).toContain("source.url");
    expect((await admin.put(specPath("petstore"), {})).body.error.message).toContain("source");
  });

  it("answers 409 for a slug the organization already uses; another organization may use it", async () => {
    const dup = await admin.post(base(), { slug: "petstore", source: { url: `${src.url}/petstore.yaml` } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.message).toContain("petstore");
    const theirs = await other.post(`/v1/orgs/${other.organization}/openapi`, {
      slug: "petstore",
      source: { url: `${src.url}/petstore.yaml` },
    });
    expect(theirs.status).toBe(201);
  });

  it("PATCH sets the visibility; public adds urls.published", async () => {
    const pub = await creator.patch(specPath("petstore"), { visibility: "public" });
    expect(pub.status).toBe(200);
    expect(pub.body.visibility).toBe("public");
    expect(pub.body.urls.published).toBe(`${t.url}/app/public/o/${admin.organization}/openapi/petstore`);
    expect((await admin.patch(specPath("petstore"), {})).body.visibility).toBe("public");
    for (const body of [{ visibility: "secret" }, { visibility: null }, { visibility: 1 }]) {
      const res = await admin.patch(specPath("petstore"), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.message).toContain("visibility");
    }
    const priv = await admin.patch(specPath("petstore"), { visibility: "private" });
    expect(priv.body.visibility).toBe("private");
    expect(priv.body.urls).not.toHaveProperty("published");
    // Public does not open the API to non-members.
    await admin.patch(specPath("petstore"), { visibility: "public" });
    expect((await other.get(specPath("petstore"))).status).toBe(404);
    expect((await other.get(`${specPath("petstore")}/versions/latest/content`)).status).toBe(404);
  });

  it("lists by slug with paging; members read, create or above writes", async () => {
    const list = await reader.get(base());
    expect(list.status).toBe(200);
    const slugs = list.body.items.map((s: any) => s.slug);
    expect(slugs).toEqual([...slugs].sort());
    expect(slugs).toContain("petstore");
    expect(list.body.count).toBe(slugs.length);
    expect(list.body.items[0].permissions).toEqual({ view: true, edit: false });
    const page = await reader.get(base(), { limit: 2 });
    expect(page.body.items).toHaveLength(2);
    const rest = await reader.get(base(), { page: page.body.next.page });
    expect(rest.body.items.map((s: any) => s.slug)).toEqual(slugs.slice(2));
    expect((await guest.get(specPath("petstore"))).body.permissions).toEqual({ view: true, edit: false });
    expect((await admin.get(base(), { limit: 1001 })).body.error.message).toContain("limit");

    for (const res of [
      await reader.post(base(), { slug: "mine", source: { url: `${src.url}/petstore.yaml` } }),
      await reader.put(specPath("petstore"), { source: { url: `${src.url}/petstore.yaml` } }),
      await reader.patch(specPath("petstore"), { visibility: "private" }),
      await reader.delete(specPath("petstore")),
      await guest.post(base(), { slug: "mine", source: { url: `${src.url}/petstore.yaml` } }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain("create");
    }
  });

  it("is 401 without a token and 404 for another organization, on every operation", async () => {
    const anon = t.caller("");
    const p = specPath("petstore");
    const v = (await admin.get(`${p}/versions/latest`)).body.id;
    const reads = [
      base(),
      p,
      `${p}/versions`,
      `${p}/versions/latest`,
      `${p}/versions/latest/content`,
      `${p}/versions/${v}`,
      `${p}/versions/${v}/content`,
    ];
    for (const path of reads) {
      expect((await anon.get(path)).status, path).toBe(401);
      const hidden = await other.get(path);
      expect(hidden.status, path).toBe(404);
      expect(hidden.body.error.message).toContain(admin.organization);
    }
    const body = { slug: "x", source: { url: `${src.url}/petstore.yaml` } };
    expect((await anon.post(base(), body)).status).toBe(401);
    expect((await anon.put(p, body)).status).toBe(401);
    expect((await anon.patch(p, { visibility: "public" })).status).toBe(401);
    expect((await anon.delete(p)).status).toBe(401);
    expect((await other.post(base(), body)).status).toBe(404);
    expect((await other.put(p, { source: body.source })).status).toBe(404);
    expect((await other.patch(p, { visibility: "public" })).status).toBe(404);
    expect((await other.delete(p)).status).toBe(404);
  });

  it("answers 404 for unknown specs and versions, and for latest before any version", async () => {
    expect((await admin.get(specPath("nope"))).status).toBe(404);
    expect((await admin.put(specPath("nope"), { source: { url: `${src.url}/petstore.yaml` } })).status).toBe(404);
    expect((await admin.patch(specPath("nope"), { visibility: "public" })).status).toBe(404);
    expect((await admin.get(`${specPath("petstore")}/versions/oasv_nope`)).status).toBe(404);
    expect((await admin.get(`${specPath("petstore")}/versions/oasv_nope/content`)).status).toBe(404);
    // A version of another spec is not reachable through this one.
    const legacyVersion = (await admin.get(`${specPath("legacy")}/versions/latest`)).body.id;
    expect((await admin.get(`${specPath("petstore")}/versions/${legacyVersion}`)).status).toBe(404);

    await admin.post(base(), { slug: "never", source: { url: `${src.url}/hang` } });
    const latest = await admin.get(`${specPath("never")}/versions/latest`);
    expect(latest.status).toBe(404);
    expect(latest.body.error.message).toContain("never");
    expect((await admin.get(`${specPath("never")}/versions/latest/content`)).status).toBe(404);
    expect((await settled("never")).lastProcessErrorCode).toBe("FETCH_TIMEOUT");
    expect((await admin.get(`${specPath("never")}/versions`)).body).toEqual({ count: 0, items: [] });
  });

  it("DELETE answers 204 empty, also when the spec is absent, and takes the versions along", async () => {
    await admin.post(base(), { slug: "doomed", source: { url: `${src.url}/petstore.yaml` } });
    await settled("doomed");
    const specId = (await admin.get(specPath("doomed"))).body.id;
    const res = await creator.delete(specPath("doomed"));
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await admin.get(specPath("doomed"))).status).toBe(404);
    expect(await t.gateway.db.prisma.openApiSpecVersion.count({ where: { specId } })).toBe(0);
    expect((await admin.delete(specPath("doomed"))).status).toBe(204);
    // A spec deleted while it is being processed leaves nothing behind.
    await admin.post(base(), { slug: "gone", source: { url: `${src.url}/hang` } });
    expect((await admin.delete(specPath("gone"))).status).toBe(204);
  });
});

describe("processing at start", () => {
  it("processes again the specs left pending or in progress", async () => {
    const prisma = t.gateway.db.prisma;
    await prisma.openApiSpec.create({
      data: {
        id: "oas_resume1",
        organizationId: admin.organization,
        slug: "resumed",
        sourceURL: `${src.url}/petstore.yaml`,
        processingState: "progress",
      },
    });
    await prisma.openApiSpec.create({
      data: {
        id: "oas_resume2",
        organizationId: admin.organization,
        slug: "resumed-pending",
        sourceURL: `${src.url}/swagger.json`,
        processingState: "pending",
      },
    });
    const before = src.hits("/swagger.json");
    await resumeOpenApiProcessing(t.gateway.services).done;
    const resumed = (await admin.get(specPath("resumed"))).body;
    expect(resumed.processingState).toBe("completed");
    expect(resumed.lastVersion).toMatch(/^oasv_/);
    const pending = (await admin.get(specPath("resumed-pending"))).body;
    expect(pending.processingState, pending.lastProcessErrorCode).toBe("completed");
    expect(src.hits("/swagger.json")).toBe(before + 1);
  });
});

describe("restart", () => {
  it("a restarted server processes again the specs it left pending or in progress", async () => {
    // The second server shares the first one's storage: the same embedded data folder once the
    // first is closed, or the same PostgreSQL database.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "openapi-restart-"));
    const pgUrl = t.config.databaseUrl;
    const first = pgUrl ? t : await startGateway({ dataDir });
    const owner = pgUrl ? admin : await first.bootstrap("ada@acme.test", "Acme Docs");
    await first.gateway.db.prisma.openApiSpec.createMany({
      data: [
        {
          id: "oas_restart1",
          organizationId: owner.organization,
          slug: "left-in-progress",
          sourceURL: `${src.url}/petstore.yaml`,
          processingState: "progress",
        },
        {
          id: "oas_restart2",
          organizationId: owner.organization,
          slug: "left-pending",
          sourceURL: `${src.url}/not-yaml.yaml`,
          processingState: "pending",
        },
      ],
    });
    if (!pgUrl) await first.close();
    const second = await startGateway(pgUrl ? { databaseUrl: pgUrl } : { dataDir });
    try {
      const prisma = second.gateway.db.prisma;
      const deadline = Date.now() + 30_000;
      let specs = await prisma.openApiSpec.findMany({ where: { id: { in: ["oas_restart1", "oas_restart2"] } }, orderBy: { id: "asc" } });
      while (specs.some((s) => s.processingState === "pending" || s.processingState === "progress") && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        specs = await prisma.openApiSpec.findMany({ where: { id: { in: ["oas_restart1", "oas_restart2"] } }, orderBy: { id: "asc" } });
      }
      expect(specs.map((s) => [s.processingState, s.lastProcessErrorCode])).toEqual([
        ["completed", null],
        ["failed", "PARSE_ERROR"],
      ]);
      expect(await prisma.openApiSpecVersion.count({ where: { specId: "oas_restart1" } })).toBe(1);
      if (pgUrl) await prisma.openApiSpec.deleteMany({ where: { id: { in: ["oas_restart1", "oas_restart2"] } } });
    } finally {
      await second.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe("GraphQL", () => {
  it("reaches specs and their versions as connections with totalCount", async () => {
    const q = `query($id: String!) {
      organization(organizationId: $id) {
        openAPISpecs(first: 20) {
          totalCount
          edges { node { slug processingState lastVersion versions(first: 1) { totalCount edges { node { id url content { filesystem url } } } } } }
        }
      }
    }`;
    await processorFor(t.gateway.services).idle(); // nothing left running in the background
    const stats = t.gateway.db.stats;
    const before = stats.statements;
    const res = await reader.graphql(q, { id: admin.organization });
    const statements = stats.statements - before;
    expect(res.errors).toBeUndefined();
    const conn = res.data.organization.openAPISpecs;
    // Nested connections are batched: the statement count does not grow with the number of specs.
    expect(conn.edges.length).toBeGreaterThan(5);
    expect(statements, `${statements} statements`).toBeLessThanOrEqual(10);
    const rest = await reader.get(base());
    expect(conn.totalCount).toBe(rest.body.count);
    const pet = conn.edges.find((e: any) => e.node.slug === "petstore").node;
    expect(pet.versions.totalCount).toBe(2);
    expect(pet.versions.edges[0].node.id).toBe(pet.lastVersion);
    expect(pet.versions.edges[0].node.content.filesystem).toEqual({ "openapi.yaml": PETSTORE_V2_YAML });

    const created = await admin.graphql(
      `mutation($o: String!, $u: String!) { openAPISpecCreate(organizationId: $o, slug: "from-graphql", source: { url: $u }) { slug processingState } }`,
      { o: admin.organization, u: `${src.url}/petstore.yaml` },
    );
    expect(created.data.openAPISpecCreate).toEqual({ slug: "from-graphql", processingState: "pending" });
    const dup = await admin.graphql(
      `mutation($o: String!, $u: String!) { openAPISpecCreate(organizationId: $o, slug: "from-graphql", source: { url: $u }) { slug } }`,
      { o: admin.organization, u: `${src.url}/petstore.yaml` },
    );
    expect(dup.errors[0].extensions.code).toBe(409);
    await settled("from-graphql");
  });
});
