import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { schema } from "../../src/schema.js";
import { generatedFields, MAX_GENERATED_FIELDS, recursiveVariables } from "../../src/graphql/jit.js";

/**
 * Which documents the /v1 routes run compiled by graphql-jit (src/graphql/jit.ts): compiling a
 * variable of a recursive input type, or a selection whose code multiplies over abstract types,
 * made gigabytes of generated source (the REST fuzz ran a gateway out of memory on
 * PUT …/sites/{siteId}/structure). Those run through graphql's own execution.
 */
describe("compiled execution", () => {
  it("is not attempted for a variable of a recursive input type", () => {
    const sort = parse(`mutation ($o: String!, $s: String!, $structure: [SiteStructureItemInput!]!) {
      siteStructureSort(organizationId: $o, siteId: $s, structure: $structure) { id }
    }`);
    expect(recursiveVariables(schema, sort, undefined)).toBe(true);
    const plain = parse(`query ($o: String!, $s: String!) { site(organizationId: $o, siteId: $s) { id title } }`);
    expect(recursiveVariables(schema, plain, undefined)).toBe(false);
  });

  it("counts the fields of generated code once per object type a selection applies to", () => {
    const plain = parse(`query ($o: String!, $s: String!) { site(organizationId: $o, siteId: $s) { id title } }`);
    expect(generatedFields(schema, plain, undefined)).toBe(3);
    const viaNode = parse(`query ($id: ID!) { node(id: $id) { id } }`);
    // `node` is an interface: its selection is written once for each type that implements it.
    const implementations = schema.getPossibleTypes(schema.getType("Node") as never).length;
    expect(implementations).toBeGreaterThan(5);
    expect(generatedFields(schema, viaNode, undefined)).toBe(1 + implementations);
  });

  it("stops counting past the limit", () => {
    const fields = Array.from({ length: 20 }, (_, i) => `f${i}: node(id: $id) { id ... on Space { title } }`).join(" ");
    const wide = parse(`query ($id: ID!) { ${fields} }`);
    expect(generatedFields(schema, wide, undefined, 100)).toBe(101);
    expect(generatedFields(schema, wide, undefined)).toBeLessThanOrEqual(MAX_GENERATED_FIELDS);
  });
});
