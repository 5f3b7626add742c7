import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, createSpace, expectError, type Admin, type Member } from "../helpers/fixtures.js";

/**
 * Guests (members without a role) reach only the spaces shared with them. What belongs to the
 * organization as a whole — previews of unpublished sites, private OpenAPI specs, integration
 * installations and events — is for members with a role; a guest sees of it what a visitor or a
 * stranger would, and a reader (the weakest role) sees all of it.
 */

let t: TestGateway;
let admin: Admin;
let guest: Member;
let reader: Member;
let org: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, guest, reader, org } = await acmeDocs(t, { guest: ["gus@acme.test", null], reader: ["rita@acme.test", "read"] }));
}, 120_000);
afterAll(() => t?.close());

describe("guests", () => {
  it("see an unpublished site's structure as visitors do (404), not the members' preview", async () => {
    const _space = await createSpace(admin, org, { title: "Secret roadmap" });
    const site = created(await admin.post(`/v1/orgs/${org}/sites`, { title: "Docs" }));
    const path = `/v1/orgs/${org}/sites/${site.id}/published`;
    expect((await reader.get(path)).status).toBe(200);
    expectError(await guest.get(path), 404);
    expect(JSON.stringify((await guest.get(path)).body)).not.toContain("Secret roadmap");
  });

  it("list and read only the public OpenAPI specs", async () => {
    const prisma = t.gateway.db.prisma;
    await prisma.openApiSpec.create({ data: { id: "oas_private1", organizationId: org, slug: "internal", visibility: "private" } });
    await prisma.openApiSpec.create({ data: { id: "oas_public1", organizationId: org, slug: "petstore", visibility: "public" } });
    const slugs = async (who: Member) => (await who.get(`/v1/orgs/${org}/openapi`)).body.items.map((s: any) => s.slug);
    expect(await slugs(reader)).toEqual(["internal", "petstore"]);
    expect(await slugs(guest)).toEqual(["petstore"]);
    expectError(await guest.get(`/v1/orgs/${org}/openapi/internal`), 404);
    expect((await guest.get(`/v1/orgs/${org}/openapi/petstore`)).body.permissions).toEqual({ view: true, edit: false });
    const gql = await guest.graphql(
      `query($id: String!) { organization(organizationId: $id) { openAPISpecs { edges { node { slug } } } } }`,
      { id: org },
    );
    expect(JSON.stringify(gql)).not.toContain("internal");
  });

  it("see none of the organization's integration installations and cannot read its integration events", async () => {
    created(await admin.post("/v1/integrations/acme-tool", { title: "Acme tool", organization: org }));
    const installation = created(await admin.post("/v1/integrations/acme-tool/installations", { organization: org }));
    expect((await reader.get("/v1/integrations/acme-tool/installations")).body.items.map((i: any) => i.id)).toEqual([installation.id]);
    expect((await guest.get("/v1/integrations/acme-tool/installations")).body.items).toEqual([]);
    expectError(await guest.get(`/v1/integrations/acme-tool/installations/${installation.id}`), 404);
    expect((await reader.get("/v1/integrations/acme-tool/events")).status).toBe(200);
    expectError(await guest.get("/v1/integrations/acme-tool/events"), 403, "Guests");
  });
});
