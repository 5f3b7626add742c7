import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getNamedType } from "graphql";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, created, type Admin } from "../helpers/fixtures.js";
import { schema } from "../../src/schema.js";

let t: TestGateway;
let admin: Admin;
let org: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, org } = await acmeDocs(t));
}, 120_000);
afterAll(() => t?.close());

describe("mutations answer payloads on the graph", () => {
  it("no mutation of the graph answers a bare Boolean", () => {
    const bare = Object.values(schema.getMutationType()!.getFields()).filter((f) => getNamedType(f.type).name === "Boolean");
    expect(bare.map((f) => f.name)).toEqual([]);
  });

  it("a deletion answers the deleted id and its parent; REST still answers 204 with an empty body", async () => {
    const space = await createSpace(admin, org, { title: "Payloads" });
    const comment = created(await admin.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "bye" } }));
    const res = await admin.graphql(
      `mutation($s: String!, $c: String!) { spaceCommentDelete(spaceId: $s, commentId: $c) { deletedId space { id commentsCount comments(first: 5) { totalCount } } } }`,
      { s: space.id, c: comment.id },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.spaceCommentDelete).toEqual({
      deletedId: comment.id,
      space: { id: space.id, commentsCount: 0, comments: { totalCount: 0 } },
    });

    const team = created(await admin.put(`/v1/orgs/${org}/teams`, { title: "Writers" }));
    const rest = await fetch(`${t.url}/v1/orgs/${org}/teams/${team.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(rest.status).toBe(204);
    expect(await rest.text()).toBe("");
    const again = await admin.graphql(
      `mutation($o: String!, $t: String!) { teamDelete(organizationId: $o, teamId: $t) { deletedId organization { id } } }`,
      {
        o: org,
        t: team.id,
      },
    );
    expect(again.data.teamDelete).toEqual({ deletedId: team.id, organization: { id: org } });
  });

  it("a change answers the changed object", async () => {
    const team = created(await admin.put(`/v1/orgs/${org}/teams`, { title: "Editors" }));
    const res = await admin.graphql(
      `mutation($o: String!, $t: String!, $u: String!) { teamMemberSet(organizationId: $o, teamId: $t, userId: $u, role: owner) { id membersCount memberships(first: 5) { nodes { role user { id } } } } }`,
      { o: org, t: team.id, u: admin.user },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data.teamMemberSet).toEqual({
      id: team.id,
      membersCount: 1,
      memberships: { nodes: [{ role: "owner", user: { id: admin.user } }] },
    });
    const rest = await fetch(`${t.url}/v1/orgs/${org}/teams/${team.id}/members/${admin.user}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
      body: JSON.stringify({ role: "member" }),
    });
    expect(rest.status).toBe(204);
    expect(await rest.text()).toBe("");
  });
});
