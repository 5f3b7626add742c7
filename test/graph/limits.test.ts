import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createCollection, createSpace, created, type Admin } from "../helpers/fixtures.js";
import { GRAPH_LIMITS } from "../../src/graphql/limits.js";
import { GRAPHIQL_DEFAULT_QUERY } from "../../src/graphql/graphiql.js";

/** GraphiQL's default query as Apollo Client or urql send it: `__typename` on every object, `id`s for their caches. */
export const GRAPHIQL_QUERY_AS_CACHES_SEND_IT = /* GraphQL */ `
  query Nested {
    __typename
    viewer {
      __typename
      id
      displayName
      organizations(first: 1) {
        __typename
        nodes {
          __typename
          id
          title
          collections(first: 10) {
            __typename
            nodes {
              __typename
              id
              title
              spaces(first: 10) {
                __typename
                nodes {
                  __typename
                  id
                  title
                  changeRequests(first: 10) {
                    __typename
                    nodes {
                      __typename
                      id
                      number
                      subject
                      comments(first: 10) {
                        __typename
                        nodes {
                          __typename
                          id
                          body { __typename markdown }
                          postedBy { __typename id displayName }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }`;

/** A dashboard: every organization of the caller, 50 spaces each, their change requests and comments. */
export const DASHBOARD_QUERY = /* GraphQL */ `
  query Dashboard {
    __typename
    viewer {
      __typename
      id
      organizations(first: 10) {
        __typename
        pageInfo { __typename hasNextPage endCursor }
        nodes {
          __typename
          id
          title
          spaces(first: 50) {
            __typename
            totalCount
            edges {
              __typename
              cursor
              node {
                __typename
                id
                title
                changeRequests(first: 10) {
                  __typename
                  nodes {
                    __typename
                    id
                    number
                    subject
                    comments(first: 10) {
                      __typename
                      nodes {
                        __typename
                        id
                        body { __typename markdown }
                        postedBy { __typename id displayName }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }`;

/** The nested query of the product's description: five real levels under the organization. */
export const NESTED_QUERY = /* GraphQL */ `
  query Nested($org: String!) {
    organization(organizationId: $org) {
      title
      collections(first: 10) { edges { node {
        title
        spaces(first: 10) { edges { node {
          title
          changeRequests(first: 10) { edges { node {
            number subject
            comments(first: 10) { edges { node { body { markdown } postedBy { displayName } } } }
          } } }
        } } }
      } } }
    }
  }`;

let t: TestGateway;
let admin: Admin;
let other: Admin;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other } = await acmeDocs(t));
  const collection = await createCollection(admin, admin.organization, { title: "Guides" });
  const space = await createSpace(admin, admin.organization, { title: "Handbook", parent: collection.id });
  const cr = created(await admin.post(`/v1/spaces/${space.id}/change-requests`, { subject: "Typos" }));
  created(await admin.post(`/v1/spaces/${space.id}/change-requests/${cr.id}/comments`, { body: { markdown: "Looks good" } }));
}, 120_000);
afterAll(() => t?.close());

/** Sends a document and expects it refused before execution by `limit`, with 400. */
async function expectRefused(query: string, limit: string, variables?: Record<string, unknown>) {
  const res = await admin.graphql(query, variables);
  expect(res.status, JSON.stringify(res)).toBe(400);
  expect(res.data).toBeUndefined();
  const error = res.errors.find((e: any) => e.extensions?.limit === limit);
  expect(error, JSON.stringify(res.errors)).toBeDefined();
  expect(error.extensions.code).toBe("GRAPHQL_VALIDATION_FAILED");
  expect(error.extensions.found).toBeGreaterThan(error.extensions.max);
  expect(error.message).toContain(`the ${limit} limit`);
  expect(error.message).toContain(`the limit is ${error.extensions.max}`);
  expect(error.message).toContain(`${error.extensions.found - error.extensions.max} over`);
  expect(error.message).not.toMatch(/Syntax Error/);
  return error;
}

describe("depth counts the graph's real levels", () => {
  it("runs the nested organization → collections → spaces → change requests → comments query", async () => {
    const res = await admin.graphql(NESTED_QUERY, { org: admin.organization });
    expect(res.errors).toBeUndefined();
    const space = res.data.organization.collections.edges[0].node.spaces.edges[0].node;
    const comment = space.changeRequests.edges[0].node.comments.edges[0].node;
    expect(comment.body.markdown).toBe("Looks good");
  });

  it("answers nothing of another organization", async () => {
    const res = await other.graphql(NESTED_QUERY, { org: admin.organization });
    expect(res.data?.organization ?? null).toBeNull();
    expect(res.errors[0].extensions.code).toBe(404);
  });

  it("admits the nested query with room to spare: wrappers are not levels", async () => {
    // The nested query is 7 levels deep counting its leaves; the limit leaves 5 more.
    expect(GRAPH_LIMITS.depth).toBeGreaterThanOrEqual(12);
    let tree = "title";
    for (let i = 0; i < 9; i++) tree = `title children(first: 2) { edges { node { ${tree} } } }`;
    // organization, collections, then children nine times deep, then title: 12 levels.
    const ok = await admin.graphql(
      `query($org: String!) { organization(organizationId: $org) { collections(first: 1) { nodes { ${tree} } } } }`,
      {
        org: admin.organization,
      },
    );
    expect(ok.errors?.find((e: any) => e.extensions?.limit === "depth")).toBeUndefined();
    const deeper = `title children(first: 1) { nodes { ${tree} } }`;
    const error = await expectRefused(
      `query($org: String!) { organization(organizationId: $org) { collections(first: 1) { nodes { ${deeper} } } } }`,
      "depth",
      {
        org: admin.organization,
      },
    );
    expect(error.extensions).toMatchObject({ max: 12, found: 13 });
  });

  it("counts fragments and inline fragments where they are spread", async () => {
    let q = "name";
    for (let i = 0; i < 14; i++) q = `ofType { ${q} }`;
    await expectRefused(`{ __type(name: "Organization") { ...F } } fragment F on __Type { fields { type { ${q} } } }`, "depth");
    await expectRefused(`{ __type(name: "Organization") { ... on __Type { fields { type { ${q} } } } } }`, "depth");
  });

  it("does not count introspection's __schema (GraphiQL's introspection query runs)", async () => {
    let q = "name";
    for (let i = 0; i < 14; i++) q = `ofType { ${q} }`;
    const res = await admin.graphql(`{ __schema { types { fields { type { ${q} } } } } }`);
    expect(res.errors).toBeUndefined();
  });
});

describe("the cost counts the nodes a query may fetch", () => {
  it("answers GraphiQL's default query with `id`s and `__typename` everywhere, and says its cost", async () => {
    const res = await admin.graphql(GRAPHIQL_QUERY_AS_CACHES_SEND_IT);
    expect(res.status).toBe(200);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const org = res.data.viewer.organizations.nodes[0];
    expect(org.__typename).toBe("Organization");
    const comment = org.collections.nodes[0].spaces.nodes[0].changeRequests.nodes[0].comments.nodes[0];
    expect(comment).toMatchObject({ __typename: "Comment", body: { __typename: "CommentBody", markdown: "Looks good" } });
    // viewer, 1 organization, 10 collections, 10 spaces each, 10 change requests each, 10 comments
    // each with their body and author: 2 + 10 × (1 + 10 × (1 + 10 × (1 + 10 × 3))) nodes.
    expect(res.extensions.cost).toEqual({ requested: 31_112, limit: GRAPH_LIMITS.cost });
    // GraphiQL's own default query (without `__typename`) costs the same.
    const plain = await admin.graphql(GRAPHIQL_DEFAULT_QUERY);
    expect(plain.errors, JSON.stringify(plain.errors)).toBeUndefined();
    expect(plain.extensions.cost).toEqual({ requested: 31_112, limit: GRAPH_LIMITS.cost });
  });

  it("answers the dashboard query: viewer → organizations(10) → spaces(50) → change requests(10) → comments(10)", async () => {
    const res = await admin.graphql(DASHBOARD_QUERY);
    expect(res.status).toBe(200);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const org = res.data.viewer.organizations.nodes.find((o: any) => o.id === admin.organization);
    const space = org.spaces.edges.find((e: any) => e.node.title === "Handbook").node;
    expect(space.changeRequests.nodes[0].comments.nodes[0].body.markdown).toBe("Looks good");
    // 1 + 10 × (1 + 50 × (1 + 10 × (1 + 10 × 3))) nodes, about a third of the limit.
    expect(res.extensions.cost).toEqual({ requested: 155_511, limit: 500_000 });
  });

  it("counts neither `__typename`, scalars nor introspection", async () => {
    const cost = async (query: string) => {
      const res = await admin.graphql(query);
      expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
      return res.extensions.cost.requested;
    };
    expect(await cost("{ __typename }")).toBe(0);
    expect(await cost("{ viewer { id } }")).toBe(1);
    expect(await cost("{ __typename viewer { __typename id displayName email __typename } }")).toBe(1);
    expect(await cost('{ __schema { types { name fields { name type { name ofType { name } } } } } __type(name: "Space") { name } }')).toBe(
      0,
    );
    // A connection counts its page: `first`, else the default page of 20.
    expect(await cost("{ viewer { organizations(first: 3) { totalCount pageInfo { hasNextPage } nodes { id } } } }")).toBe(4);
    expect(await cost("{ viewer { organizations { edges { cursor node { id } } } } }")).toBe(21);
  });

  it("refuses a query that would fetch millions of nodes, naming the limit and the figure", async () => {
    const query = /* GraphQL */ `
      query Everything {
        viewer {
          organizations(first: 100) {
            nodes {
              spaces(first: 100) {
                nodes { changeRequests(first: 100) { nodes { id comments(first: 100) { nodes { id } } } } }
              }
            }
          }
        }
      }`;
    const error = await expectRefused(query, "cost");
    // 1 + 100 + 100² + 100³ + 100⁴ nodes.
    expect(error.extensions).toMatchObject({ max: 500_000, found: 101_010_101, cost: { requested: 101_010_101, limit: 500_000 } });
    expect(error.message).toBe(
      "The query exceeds the cost limit: it may fetch 101010101 nodes, the limit is 500000 nodes (100510101 over).",
    );
    const res = await admin.graphql(query);
    expect(res.extensions.cost).toEqual({ requested: 101_010_101, limit: 500_000 });
  });

  it("refuses a page over 100 naming the argument", async () => {
    const res = await admin.graphql("{ viewer { organizations(first: 101) { nodes { id } } } }");
    expect(res.data).toBeUndefined();
    expect(res.errors[0].message).toBe("first on organizations must be between 0 and 100 (got 101).");
  });

  it("leaves /v1 alone: REST lists go up to their own limit and say nothing of a cost", async () => {
    const res = await fetch(`${t.url}/v1/orgs?limit=1000`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.items.length).toBeGreaterThan(0);
    expect(body.extensions).toBeUndefined();
  });
});

describe("the other limits name themselves and by how much", () => {
  it("aliases", async () => {
    const fields = Array.from({ length: GRAPH_LIMITS.aliases + 5 }, (_, i) => `a${i}: organizations { count }`).join(" ");
    const error = await expectRefused(`{ ${fields} }`, "aliases");
    expect(error.extensions).toMatchObject({ max: GRAPH_LIMITS.aliases, found: GRAPH_LIMITS.aliases + 5 });
    expect(error.message).toContain("5 over");
  });

  it("directives", async () => {
    const fields = Array.from({ length: GRAPH_LIMITS.directives + 1 }, () => "__typename @include(if: true)").join(" ");
    await expectRefused(`{ ${fields} }`, "directives");
  });

  it("breadth, reported even when GraphQL's own validation gives up on the document", async () => {
    const fields = (n: number) => Array.from({ length: n }, () => "__typename").join(" ");
    await expectRefused(`{ ${fields(GRAPH_LIMITS.breadth + 1)} }`, "breadth");
    await expectRefused(`{ ${fields(2500)} }`, "breadth");
    await expectRefused(`{ organizations { count } ...F } fragment F on Query { ${fields(GRAPH_LIMITS.breadth)} }`, "breadth");
  });

  it("measures a fragment once however often it is spread", async () => {
    // Each fragment spreads the next one twice: 2^25 spreads if walked naively.
    const defs = Array.from({ length: 25 }, (_, i) => `fragment F${i} on Query { __typename ...F${i + 1} ...F${i + 1} }`).join(" ");
    const res = await admin.graphql(`{ ...F0 } ${defs} fragment F25 on Query { __typename }`);
    expect(res.status).toBeLessThan(500);
  });

  it("tokens", async () => {
    const fields = Array.from({ length: GRAPH_LIMITS.tokens + 100 }, () => "__typename").join(" ");
    const error = await expectRefused(`{ ${fields} }`, "tokens");
    expect(error.extensions.found).toBe(GRAPH_LIMITS.tokens + 102);
  });

  it("cost, with literal sizes and variables alike", async () => {
    const query = (size: string) => `query($id: String!${size === "$n" ? ", $n: Int" : ""}) { organization(organizationId: $id) {
      collections(first: ${size}) { nodes { title spaces(first: ${size}) { nodes { id title changeRequests(first: ${size}) { nodes { id } } } } } } } }`;
    const cheap = await admin.graphql(query("10"), { id: admin.organization });
    expect(cheap.errors).toBeUndefined();
    await expectRefused(query("100"), "cost", { id: admin.organization });
    const error = await expectRefused(query("$n"), "cost", { id: admin.organization, n: 100 });
    expect(error.extensions.max).toBe(GRAPH_LIMITS.cost);
    // The same document with other variables is measured again: a refusal is not remembered for it.
    const fine = await admin.graphql(query("$n"), { id: admin.organization, n: 10 });
    expect(fine.errors, JSON.stringify(fine.errors)).toBeUndefined();
    await expectRefused(query("$n"), "cost", { id: admin.organization, n: 100 });
  });

  it("one request's operation name or variables never decide another's validation", async () => {
    const document = `query Mine($id: String!) { organization(organizationId: $id) { id } }`;
    const unknown = await admin.graphql(document, { id: admin.organization }, "Nope");
    expect(unknown.errors?.[0]?.message).toMatch(/operation/);
    const missing = await admin.graphql(document, {});
    expect(missing.errors?.[0]?.message).toContain("$id");
    const good = await admin.graphql(document, { id: admin.organization }, "Mine");
    expect(good.errors, JSON.stringify(good.errors)).toBeUndefined();
    expect(good.data.organization.id).toBe(admin.organization);
    expect((await other.graphql(document, { id: other.organization })).data.organization.id).toBe(other.organization);
  });
});
