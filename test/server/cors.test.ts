import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { loadConfig } from "../../src/config.js";

/**
 * CORS_ORIGINS: by default no origin may call the API from a browser (no CORS answer at all), while
 * the public OpenAPI document is readable from any origin without credentials; a named origin gets
 * its answers with credentials; `*` lets any origin read without them.
 */
const APP = "https://app.example.test";
const OTHER = "https://evil.example.test";

async function preflight(t: TestGateway, path: string, origin: string) {
  const res = await fetch(t.url + path, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
  });
  await res.arrayBuffer();
  return res.headers;
}

async function get(t: TestGateway, path: string, origin: string, token?: string) {
  const res = await fetch(t.url + path, { headers: { origin, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
  await res.arrayBuffer();
  return { status: res.status, headers: res.headers };
}

describe("CORS by default (CORS_ORIGINS unset)", () => {
  let t: TestGateway;
  let token: string;
  beforeAll(async () => {
    t = await startGateway({ corsOrigins: [] });
    token = (await t.bootstrap("cors@acme.test", "Cors Org")).token;
  }, 120_000);
  afterAll(() => t?.close());

  it("answers no origin for the API, so browsers on other origins cannot read it", async () => {
    for (const path of ["/v1/orgs", "/graphql"]) {
      const answer = await get(t, path, OTHER, token);
      expect(answer.headers.get("access-control-allow-origin"), path).toBeNull();
      expect(answer.headers.get("access-control-allow-credentials"), path).toBeNull();
      const pre = await preflight(t, path, OTHER);
      expect(pre.get("access-control-allow-origin"), path).toBeNull();
    }
  });

  it("lets any origin read the public OpenAPI document, without credentials", async () => {
    const answer = await get(t, "/openapi.json", OTHER);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe(OTHER);
    expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
  });
});

describe("CORS_ORIGINS naming an origin", () => {
  let t: TestGateway;
  let token: string;
  beforeAll(async () => {
    t = await startGateway({ corsOrigins: [APP] });
    token = (await t.bootstrap("cors2@acme.test", "Cors Org")).token;
  }, 120_000);
  afterAll(() => t?.close());

  it("gives that origin its answers with credentials, and no other origin", async () => {
    const answer = await get(t, "/v1/orgs", APP, token);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBe(APP);
    expect(answer.headers.get("access-control-allow-credentials")).toBe("true");
    const pre = await preflight(t, "/graphql", APP);
    expect(pre.get("access-control-allow-origin")).toBe(APP);
    expect(pre.get("access-control-allow-headers")).toMatch(/authorization/);
    const other = await get(t, "/v1/orgs", OTHER, token);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    expect(other.headers.get("access-control-allow-credentials")).toBeNull();
  });
});

describe("CORS_ORIGINS=*", () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway({ corsOrigins: ["*"] });
  }, 120_000);
  afterAll(() => t?.close());

  it("lets any origin read, never with credentials", async () => {
    const answer = await get(t, "/v1/orgs", OTHER);
    expect(answer.headers.get("access-control-allow-origin")).toBe(OTHER);
    expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
  });
});

describe("CORS_ORIGINS parsing", () => {
  it("takes origins and *, and refuses anything else naming it", () => {
    expect(loadConfig({ CORS_ORIGINS: "https://a.example.com, http://localhost:3000 *" }).corsOrigins).toEqual([
      "https://a.example.com",
      "http://localhost:3000",
      "*",
    ]);
    expect(loadConfig({}).corsOrigins).toEqual([]);
    for (const bad of ["a.example.com", "https://a.example.com/path", "ftp://a.example.com", "https://*.example.com"]) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(`CORS_ORIGINS: "${bad}" is not an origin`);
    }
  });
});
