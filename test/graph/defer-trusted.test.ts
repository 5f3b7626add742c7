import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { wsClient } from "../helpers/graphql-ws.js";
import { acmeDocs, createCollection, type Admin } from "../helpers/fixtures.js";
import { testTmpDir } from "../helpers/tmp.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

const TRUSTED = `query Mine { viewer { displayName organizations(first: 5) { nodes { title } } } }`;
const TRUSTED_ID = crypto.createHash("sha256").update(TRUSTED).digest("hex");

let t: TestGateway;
let trusted: TestGateway;
let admin: Admin;
let trustedAdmin: Admin;
let dir: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  for (const title of ["One", "Two", "Three"]) await createCollection(admin, admin.organization, { title });
  dir = fs.mkdtempSync(path.join(testTmpDir(), "trusted-"));
  fs.writeFileSync(path.join(dir, "documents.json"), JSON.stringify({ [`sha256:${TRUSTED_ID}`]: TRUSTED }));
  trusted = await startGateway({ graphqlTrustedDocuments: path.join(dir, "documents.json") });
  trustedAdmin = await trusted.bootstrap("ada@acme.test", "Acme Docs");
});
afterAll(async () => {
  await t?.close();
  await trusted?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function multipart(url: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "multipart/mixed", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  // Each part is a JSON payload between boundaries.
  const parts = [...text.matchAll(/\r\n\r\n(\{.*?\})\r\n/gs)].map((m) => JSON.parse(m[1]!));
  return { res, parts };
}

describe("@defer and @stream", () => {
  it("answers the immediate part first, then the deferred fragment", async () => {
    const { res, parts } = await multipart(
      t.url,
      admin.token,
      `query { viewer { displayName ... @defer(label: "orgs") { organizations(first: 5) { nodes { title } } } } }`,
    );
    expect(res.headers.get("content-type")).toContain("multipart/mixed");
    expect(parts[0]).toMatchObject({ data: { viewer: { displayName: expect.any(String) } }, hasNext: true });
    expect(parts[0].data.viewer.organizations).toBeUndefined();
    const deferred = parts.flatMap((p) => p.incremental ?? []);
    expect(deferred).toContainEqual(
      expect.objectContaining({ label: "orgs", data: { organizations: { nodes: [{ title: "Acme Docs" }] } } }),
    );
    expect(parts[parts.length - 1].hasNext).toBe(false);
  });

  it("streams a connection's nodes", async () => {
    const { parts } = await multipart(
      t.url,
      admin.token,
      `query($org: String!) { organization(organizationId: $org) { collections(first: 10) { nodes @stream(initialCount: 1) { title } } } }`,
      { org: admin.organization },
    );
    expect(parts[0].data.organization.collections.nodes).toEqual([{ title: "One" }]);
    const streamed = parts.flatMap((p) => p.incremental ?? []).flatMap((i: any) => i.items ?? []);
    expect(streamed).toEqual([{ title: "Two" }, { title: "Three" }]);
  });
});

describe("trusted documents (GRAPHQL_TRUSTED_DOCUMENTS)", () => {
  const post = (body: unknown) =>
    fetch(`${trusted.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${trustedAdmin.token}` },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it("runs a trusted document named by documentId or the persistedQuery extension", async () => {
    for (const body of [
      { documentId: `sha256:${TRUSTED_ID}` },
      { extensions: { persistedQuery: { version: 1, sha256Hash: TRUSTED_ID } } },
    ]) {
      const res = await post(body);
      expect(res.status).toBe(200);
      expect(res.body.data.viewer.organizations.nodes).toEqual([{ title: "Acme Docs" }]);
    }
  });

  it("refuses any other document, and unknown ids, with 400", async () => {
    const text = await post({ query: TRUSTED });
    expect(text.status).toBe(400);
    expect(text.body.errors[0].extensions.code).toBe("PERSISTED_QUERY_ONLY");
    const unknown = await post({ documentId: "sha256:" + "0".repeat(64) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].extensions.code).toBe("PERSISTED_QUERY_NOT_FOUND");
  });

  it("applies on graphql-ws too, operation by operation", async () => {
    const client = wsClient(trusted.url, trustedAdmin.token);
    const run = (payload: any) =>
      new Promise<any>((resolve) => {
        let result: any;
        client.subscribe(payload, { next: (v) => (result = v), error: (errors) => resolve({ errors }), complete: () => resolve(result) });
      });
    const refused = await run({ query: `{ viewer { id } }` });
    expect(refused.errors[0].extensions.code).toBe("PERSISTED_QUERY_ONLY");
    const ok = await run({ query: "", extensions: { persistedQuery: { version: 1, sha256Hash: TRUSTED_ID } } });
    expect(ok.data.viewer.organizations.nodes).toEqual([{ title: "Acme Docs" }]);
    await client.dispose();
  });

  it("refuses to start on a file whose keys are not the documents' hashes", async () => {
    const bad = path.join(dir, "bad.json");
    fs.writeFileSync(bad, JSON.stringify({ ["0".repeat(64)]: TRUSTED }));
    await expect(startGateway({ graphqlTrustedDocuments: bad })).rejects.toThrow(/not the SHA-256 of its document/);
  });
});
