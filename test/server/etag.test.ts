import crypto from "node:crypto";
import { describe, expect, it } from "vitest";
import { acmeSpaceGateway, createSpace } from "../helpers/fixtures.js";

/** REST GETs answer an ETag computed from their body, and 304 without a body to a matching If-None-Match. */
const s = acmeSpaceGateway({}, "rory@acme.test", "Tagged");

/** A GET with extra headers, its answer checked against the OpenAPI document like every other. */
async function get(token: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(s.t.url + path, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  s.t.openapi.check("GET", path.split("?")[0]!, res.status, body, text);
  return { status: res.status, etag: res.headers.get("etag"), body, text };
}

describe("ETag and If-None-Match on REST GETs", () => {
  it("answers 304 with no body while the answer is the same, 200 with a new ETag once it changed", async () => {
    const path = `/v1/spaces/${s.spaceId}`;
    const first = await get(s.admin.token, path);
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^"[\w-]+"$/);
    expect((await get(s.admin.token, path)).etag).toBe(first.etag);

    const same = await get(s.admin.token, path, { "if-none-match": first.etag! });
    expect(same).toMatchObject({ status: 304, etag: first.etag, text: "" });
    expect((await get(s.admin.token, path, { "if-none-match": `"other", W/${first.etag}` })).status).toBe(304);
    expect((await get(s.admin.token, path, { "if-none-match": "*" })).status).toBe(304);
    expect((await get(s.admin.token, path, { "if-none-match": `"other"` })).status).toBe(200);

    expect((await s.admin.patch(path, { title: "Retitled" })).status).toBe(200);
    const changed = await get(s.admin.token, path, { "if-none-match": first.etag! });
    expect(changed.status).toBe(200);
    expect(changed.body.title).toBe("Retitled");
    expect(changed.etag).not.toBe(first.etag);
  });

  it("differs between callers whose answers differ, and tags lists too", async () => {
    const path = `/v1/spaces/${s.spaceId}`;
    const asAdmin = await get(s.admin.token, path);
    const asReader = await get(s.reader.token, path);
    expect(asReader.body.permissions.admin).toBe(false);
    expect(asReader.etag).not.toBe(asAdmin.etag);
    expect((await get(s.reader.token, path, { "if-none-match": asAdmin.etag! })).status).toBe(200);

    const list = await get(s.admin.token, `/v1/orgs/${s.org}/spaces`);
    expect(list.etag).toBeTruthy();
    expect((await get(s.admin.token, `/v1/orgs/${s.org}/spaces`, { "if-none-match": list.etag! })).status).toBe(304);
    await createSpace(s.admin, s.org, { title: "Another" });
    expect((await get(s.admin.token, `/v1/orgs/${s.org}/spaces`, { "if-none-match": list.etag! })).status).toBe(200);
  });

  it("is the hash of the very bytes sent, whatever characters the body holds", async () => {
    const titled = await createSpace(s.admin, s.org, { title: 'Ünïcödé 📚 \u2028 "quoted"', emoji: "📚" });
    for (const path of [`/v1/spaces/${titled.id}`, `/v1/orgs/${s.org}/spaces`]) {
      // As sent, not compressed (test/server/compression.test.ts: the same ETag either way).
      const res = await fetch(s.t.url + path, { headers: { authorization: `Bearer ${s.admin.token}`, "accept-encoding": "identity" } });
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
      expect(res.headers.get("etag")).toBe(`"${crypto.createHash("sha1").update(bytes).digest("base64url")}"`);
      expect(JSON.stringify(JSON.parse(bytes.toString("utf8")))).toContain("Ünïcödé 📚");
    }
  });

  it("tags no error and no write", async () => {
    const missing = await get(s.admin.token, `/v1/spaces/spc_missing`, { "if-none-match": "*" });
    expect(missing.status).toBe(404);
    expect(missing.etag).toBeNull();
    const res = await fetch(`${s.t.url}/v1/spaces/${s.spaceId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${s.admin.token}`, "content-type": "application/json", "if-none-match": "*" },
      body: JSON.stringify({ title: "Written" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBeNull();
  });
});
