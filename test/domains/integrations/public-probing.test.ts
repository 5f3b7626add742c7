import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, createSpace, type Admin } from "../../helpers/fixtures.js";

/**
 * Public endpoints are reached without a token: a private integration must not be told apart
 * from a missing one there (same status, same body but for the name asked for), whatever
 * follows its name; a public one says why it cannot answer (503).
 */

let t: TestGateway;
let admin: Admin;
let installationId: string;
let spaceId: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  const org = admin.organization;
  created(await admin.post("/v1/integrations/secret-tool", { title: "Secret", organization: org, visibility: "private" }));
  created(await admin.post("/v1/integrations/open-tool", { title: "Open", organization: org, visibility: "public" }));
  installationId = created(await admin.post("/v1/integrations/secret-tool/installations", { organization: org })).id;
  spaceId = (await createSpace(admin, org, { title: "Handbook" })).id;
  await admin.put(`/v1/integrations/secret-tool/installations/${installationId}/spaces/${spaceId}`, {});
}, 120_000);
afterAll(() => t?.close());

async function answer(path: string, method = "GET") {
  const res = await fetch(t.url + path, { method, body: method === "GET" ? undefined : "{}" });
  return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
}

describe("public endpoints without a token", () => {
  it("answer for an existing private integration exactly as for a missing one", async () => {
    for (const [rest, method] of [
      ["/public", "GET"],
      ["/public/webhook", "POST"],
      [`/installations/${installationId}/public/x`, "GET"],
      ["/installations/inst_nope/public/x", "GET"],
      [`/installations/${installationId}/spaces/${spaceId}/public`, "PUT"],
      [`/installations/${installationId}/sites/site_nope/public`, "GET"],
    ] as const) {
      const secret = await answer(`/integrations/secret-tool${rest}`, method);
      const missing = await answer(`/integrations/no-such-tool${rest}`, method);
      expect(secret.status, rest).toBe(404);
      expect({ ...secret, body: secret.body.replace("secret-tool", "NAME") }, rest).toEqual({
        ...missing,
        body: missing.body.replace("no-such-tool", "NAME"),
      });
    }
  });

  it("a public integration without a reachable endpoint says so (503)", async () => {
    const res = await answer("/integrations/open-tool/public/x");
    expect(res.status).toBe(503);
    expect(res.body).toContain("development mode");
  });
});
