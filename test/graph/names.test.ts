import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSchema, getNamedType, isInputObjectType, isInterfaceType, isObjectType, isUnionType, type GraphQLSchema } from "graphql";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, type Admin } from "../helpers/fixtures.js";

/** The graph as clients see it: the committed schema.graphql (a test keeps it in step with the server's). */
const printed = buildSchema(fs.readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8"));

/** camelCase, acronyms allowed (`photoURL`, `openAPISpecs`); introspection's `__` names are not the graph's. */
const CAMEL = /^[a-z][a-zA-Z0-9]*$/;

/** Every field, input field and argument: where (`Type.field(arg)`) and its own name. */
function namesOf(schema: GraphQLSchema): { where: string; name: string }[] {
  const names: { where: string; name: string }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__")) continue;
    if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) continue;
    for (const field of Object.values<{ name: string; args?: readonly { name: string }[] }>(type.getFields())) {
      names.push({ where: `${type.name}.${field.name}`, name: field.name });
      for (const arg of field.args ?? []) names.push({ where: `${type.name}.${field.name}(${arg.name})`, name: arg.name });
    }
  }
  return names;
}

describe("the graph's names", () => {
  it("are camelCase: every field, input field and argument", () => {
    const names = namesOf(printed);
    expect(names.length).toBeGreaterThan(1000);
    expect(names.filter(({ name }) => !CAMEL.test(name)).map(({ where }) => where)).toEqual([]);
    const places = names.map(({ where }) => where);
    expect(places).toContain("Organization.internalIsOnNewTrial");
    expect(places).toContain("Mutation.integrationInstallationUpdate(spaceSelection)");
    expect(places).toContain("Mutation.integrationInstallationUpdate(siteSelection)");
    // The rule catches what it is for.
    expect(CAMEL.test("internal_isOnNewTrial")).toBe(false);
    expect(CAMEL.test("space_selection")).toBe(false);
  });

  it("schema.graphql holds no type that nothing references", () => {
    const referenced = new Set<string>();
    for (const type of Object.values(printed.getTypeMap())) {
      if (isObjectType(type) || isInterfaceType(type)) {
        for (const i of type.getInterfaces()) referenced.add(i.name);
        for (const field of Object.values(type.getFields())) {
          referenced.add(getNamedType(field.type).name);
          for (const arg of field.args) referenced.add(getNamedType(arg.type).name);
        }
      } else if (isUnionType(type)) {
        for (const member of type.getTypes()) referenced.add(member.name);
      } else if (isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) referenced.add(getNamedType(field.type).name);
      }
    }
    const roots = [printed.getQueryType(), printed.getMutationType(), printed.getSubscriptionType()].map((t) => t?.name);
    const unreferenced = Object.keys(printed.getTypeMap()).filter((n) => !n.startsWith("__") && !roots.includes(n) && !referenced.has(n));
    expect(unreferenced).toEqual([]);
    expect(printed.getType("PageTreeJSON")).toBeUndefined();
    expect(printed.getType("ChangeRequestContentChangesJSON")).toBeUndefined();
  });
});

describe("renamed for the graph, GitBook's names on /v1", () => {
  let t: TestGateway;
  let admin: Admin;

  beforeAll(async () => {
    t = await startGateway();
    ({ admin } = await acmeDocs(t));
  }, 120_000);
  afterAll(() => t?.close());

  it("Organization.internalIsOnNewTrial is internal_isOnNewTrial on /v1", async () => {
    const rest = await admin.get(`/v1/orgs/${admin.organization}`);
    expect(rest.status).toBe(200);
    expect(rest.body.internal_isOnNewTrial).toBe(true);
    expect(rest.body).not.toHaveProperty("internalIsOnNewTrial");
    const graph = await admin.graphql(`query($id: String!) { organization(organizationId: $id) { internalIsOnNewTrial } }`, {
      id: admin.organization,
    });
    expect(graph.errors).toBeUndefined();
    expect(graph.data.organization.internalIsOnNewTrial).toBe(true);
    const old = await admin.graphql(`query($id: String!) { organization(organizationId: $id) { internal_isOnNewTrial } }`, {
      id: admin.organization,
    });
    expect(old.errors?.[0]?.message).toContain("internal_isOnNewTrial");
  });

  it("an installation's spaceSelection and siteSelection are space_selection and site_selection on /v1", async () => {
    created(
      await admin.post(`/v1/integrations/names`, { title: "Names", organization: admin.organization, scopes: ["space:content:read"] }),
    );
    const installation = created(await admin.post(`/v1/integrations/names/installations`, { organization: admin.organization }));
    const path = `/v1/integrations/names/installations/${installation.id}`;

    const rest = await admin.patch(path, { space_selection: "all", site_selection: "all" });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ space_selection: "all", site_selection: "all" });
    const refused = await admin.patch(path, { space_selection: null });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("space_selection");
    const wrong = await admin.patch(path, { space_selection: "some" });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("space_selection");

    const graph = await admin.graphql(
      `mutation($id: String!) {
        integrationInstallationUpdate(integrationName: "names", installationId: $id, spaceSelection: selected, siteSelection: selected) {
          spaceSelection siteSelection
        }
      }`,
      { id: installation.id },
    );
    expect(graph.errors, JSON.stringify(graph.errors)).toBeUndefined();
    expect(graph.data.integrationInstallationUpdate).toEqual({ spaceSelection: "selected", siteSelection: "selected" });
    expect((await admin.get(path)).body).toMatchObject({ space_selection: "selected", site_selection: "selected" });
  });
});
