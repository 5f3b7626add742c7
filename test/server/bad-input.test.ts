import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, type Admin } from "../helpers/fixtures.js";

vi.setConfig({ testTimeout: 600_000, hookTimeout: 120_000 });

/**
 * Every documented operation, called with bad input of every kind (wrong types, oversized values,
 * malformed JSON, bad path segments, bad query values) on real objects: each answer is a 4xx
 * naming a problem, never a 500. Deletes are left out (they would remove the objects the other
 * calls need); their bad path segments are covered by the same calls on other methods.
 */
let t: TestGateway;
let admin: Admin;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  ids.organizationId = admin.organization;
  ids.spaceId = created(await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Fuzz" })).id;
  ids.collectionId = created(await admin.post(`/v1/orgs/${admin.organization}/collections`, { title: "Fuzz" })).id;
  ids.siteId = created(await admin.post(`/v1/orgs/${admin.organization}/sites`, { title: "Fuzz site" })).id;
  ids.pageId = created(await admin.post(`/v1/spaces/${ids.spaceId}/content/pages`, { title: "Page", markdown: "Hello" })).id;
  ids.changeRequestId = created(await admin.post(`/v1/spaces/${ids.spaceId}/change-requests`, { subject: "Fuzz" })).id;
  ids.integrationName = "fuzz";
  created(await admin.post("/v1/integrations/fuzz", { title: "Fuzz", organization: admin.organization }));
  ids.userId = admin.user;
});
afterAll(() => t?.close());

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; $ref?: string; items?: Schema; oneOf?: Schema[]; anyOf?: Schema[] };

function wrongValue(schema: Schema | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema!.type[0] : schema?.type;
  switch (type) {
    case "string":
      return 12345;
    case "integer":
    case "number":
      return "not a number";
    case "boolean":
      return "yes";
    case "array":
      return { not: "an array" };
    case "object":
      return "not an object";
    default:
      return [[["nested"]]];
  }
}

describe("bad input on every documented operation", () => {
  it("is answered 4xx with an error naming the problem, never 500", async () => {
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    const resolve = (s: Schema | undefined): Schema | undefined =>
      s?.$ref ? resolve(s.$ref.split("/").slice(1).reduce((o: any, k) => o[k], doc)) : s;
    const failures: string[] = [];
    let calls = 0;
    const statuses: Record<number, number> = {};
    const call = async (method: string, path: string, body?: string) => {
      calls++;
      const res = await fetch(t.url + path, {
        method,
        headers: { authorization: `Bearer ${admin.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body,
      });
      const text = await res.text();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status >= 500) failures.push(`${method} ${path} ${body?.slice(0, 120) ?? ""} → ${res.status} ${text.slice(0, 200)}`);
      else if (res.status >= 400) {
        let message = "";
        try {
          message = JSON.parse(text).error.message;
        } catch {
          /* not the error body */
        }
        if (!message) failures.push(`${method} ${path} → ${res.status} without an error message: ${text.slice(0, 200)}`);
      }
    };

    for (const [template, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const verb = method.toUpperCase();
        if (verb === "DELETE") continue;
        const fill = (junk?: string) => template.replace(/\{([^}]+)\}/g, (_m, name) => junk ?? ids[name] ?? "nope");
        const path = fill();
        // Bad path segments.
        for (const junk of ["%E0%A4%A", "x".repeat(2000), "..%2F..%2Fetc"]) await call(verb, fill(junk), verb === "GET" ? undefined : "{}");
        // Bad query values.
        for (const p of (op.parameters ?? []).filter((p: any) => p.in === "query")) {
          for (const value of ["", "%%", "-1", "x".repeat(5000), "[object Object]"]) {
            await call(verb, `${path}?${encodeURIComponent(p.name)}=${encodeURIComponent(value)}`, verb === "GET" ? undefined : "{}");
          }
        }
        if (verb === "GET") continue;
        // Malformed bodies.
        for (const raw of ["{", "[]", "null", '"text"', "42"]) await call(verb, path, raw);
        // Each property with a wrong type, then oversized, then null.
        const schema = resolve(op.requestBody?.content?.["application/json"]?.schema);
        for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
          await call(verb, path, JSON.stringify({ [name]: wrongValue(resolve(prop)) }));
          await call(verb, path, JSON.stringify({ [name]: "x".repeat(100_000) }));
          await call(verb, path, JSON.stringify({ [name]: null }));
        }
      }
    }
    console.log(`[bad-input] ${calls} calls, ${failures.length} failures; answers by status: ${JSON.stringify(statuses)}`);
    expect(failures).toEqual([]);
  });
});
