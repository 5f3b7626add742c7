import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { log } from "../../src/core/logger.js";

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme");
});
afterAll(() => t?.close());

describe("GraphQL requests are bounded before execution", () => {
  // Depth, aliases, directives, tokens and cost: test/graph/limits.test.ts.
  it("caps connection page sizes", async () => {
    const res = await admin.graphql(`query($id: String!) { organization(organizationId: $id) { spaces(first: 5000) { totalCount } } }`, {
      id: admin.organization,
    });
    expect(res.errors[0].message).toBe("first on spaces must be between 0 and 100 (got 5000).");
    expect(res.errors[0].extensions.code).toBe(400);
  });

  it("does not suggest field names to strangers of the schema", async () => {
    const res = await admin.graphql(`{ organizatio { count } }`);
    expect(JSON.stringify(res.errors)).not.toMatch(/Did you mean/);
  });
});

describe("unexpected errors are masked", () => {
  it("hides the cause from REST and GraphQL clients alike", async () => {
    const prisma = t.gateway.db.prisma as any;
    const spy = vi
      .spyOn(prisma.organization, "findMany")
      .mockRejectedValue(new Error('relation "Organization" does not exist at SELECT internal'));
    const quiet = vi.spyOn(log, "error").mockImplementation(() => undefined);
    try {
      const rest = await admin.get("/v1/orgs");
      expect(rest.status).toBe(500);
      expect(rest.body).toEqual({ error: { code: 500, message: "Unexpected error." } });
      const gql = await admin.graphql(`{ organizations { count } }`);
      expect(gql.errors).toHaveLength(1);
      expect(gql.errors[0].message).toBe("Unexpected error.");
      expect(JSON.stringify(gql)).not.toMatch(/relation|SELECT|stack|at /);
    } finally {
      spy.mockRestore();
      quiet.mockRestore();
    }
  });
});

describe("values a custom scalar refuses", () => {
  it("are the caller's mistake on both faces: a 400 naming the value and the type, nothing logged as a fault", async () => {
    const errors = vi.spyOn(log, "error");
    try {
      const space = await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Scalars" });
      expect(space.status).toBe(201);
      const links = await admin.get(`/v1/spaces/${space.body.id}/links`, { status: "bogus" });
      expect(links.status).toBe(400);
      expect(links.body.error.message).toBe(
        'Parameter "status" got invalid value "bogus"; Expected type "LinkStatus". status must be one of ok, broken, in-app (got "bogus")',
      );
      const gql = await admin.graphql(`query($id: String!, $s: LinkStatus) { spaceLinks(spaceId: $id, status: $s) { count } }`, {
        id: space.body.id,
        s: "bogus",
      });
      expect(gql.errors[0].message).toMatch(/^Variable "\$s" got invalid value "bogus"; Expected type "LinkStatus"\./);
      const literal = await admin.graphql(`query($id: String!) { spaceLinks(spaceId: $id, status: "bogus") { count } }`, {
        id: space.body.id,
      });
      expect(literal.errors.map((e: any) => e.message)).toContain(
        'Expected type "LinkStatus". status must be one of ok, broken, in-app (got "bogus")',
      );
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });
});

describe("REST edge cases", () => {
  it("answers unknown routes and sofa's own endpoints with a documented 404", async () => {
    for (const p of ["/v1/nothing-here", "/v1/webhook"]) {
      const res = await fetch(`${t.url}${p}`, { method: "POST", headers: { authorization: `Bearer ${admin.token}` } });
      expect(res.status).toBe(404);
      expect((await res.json()).error.code).toBe(404);
    }
  });

  it("rejects a body that is not a JSON object and unknown body fields", async () => {
    const arr = await admin.raw("PATCH", `/v1/orgs/${admin.organization}`, "[1,2]");
    expect(arr.status).toBe(400);
    expect(arr.body.error.message).toMatch(/object/);
    const unknown = await admin.patch(`/v1/orgs/${admin.organization}`, { titel: "Typo" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("titel");
  });

  it("rejects a query parameter of the wrong type", async () => {
    const res = await admin.get("/v1/orgs", { limit: "ten" });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("limit");
  });
});

describe("API reference", () => {
  it("publishes an OpenAPI document of every /v1 route with bearer auth", async () => {
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    const { routeTable } = await import("../../src/rest/table.js");
    for (const r of routeTable) {
      const op = doc.paths[`/v1${r.path}`]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
      expect(Object.keys(op.responses)).toContain(String(r.status ?? 200));
    }
    expect(Object.keys(doc.paths).some((p) => p.includes("webhook"))).toBe(false);
  });

  it("serves a browsable reference page with its assets from this server", async () => {
    const page = await fetch(`${t.url}/docs`);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("/openapi.json");
    for (const asset of html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)) {
      expect((await fetch(`${t.url}${asset[1]}`)).status).toBe(200);
    }
  });
});
