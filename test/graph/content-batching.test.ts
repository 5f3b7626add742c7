import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { createSpace, fewestStatements, type Admin, type Member } from "../helpers/fixtures.js";

let t: TestGateway;
let admin: Admin;
let editor: Member;
let reader: Member;
let spaceId: string;

const QUERY = `query($s: String!, $n: Int!) {
  space(spaceId: $s) {
    id
    changeRequests(first: $n) {
      totalCount
      edges { node {
        id number status subject outdated commentsCount revision revisionInitial
        urls { app location }
        createdBy { id displayName email urls { location } }
        content { id type pages { id title path } files { id } }
      } }
    }
  }
}`;

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme Docs");
  editor = await t.member(admin.organization, "eddie@acme.test", "edit");
  reader = await t.member(admin.organization, "rita@acme.test", "read");
  spaceId = (await createSpace(admin, admin.organization, { title: "Batched" })).id;
  // Two change requests through the API (one with its own revision), the others stored directly.
  const first = (await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Change 0" })).body;
  await admin.post(`/v1/spaces/${spaceId}/change-requests/${first.id}/content/pages`, { title: "Page 0" });
  await editor.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Change 1" });
  const revision = (await admin.get(`/v1/spaces/${spaceId}/content`)).body.id;
  await t.gateway.db.prisma.changeRequest.createMany({
    data: Array.from({ length: 18 }, (_, i) => ({
      id: `cr_batch${i}`,
      spaceId,
      number: i + 3,
      subject: `Change ${i + 2}`,
      createdById: i % 2 ? admin.user : editor.user,
      revisionId: revision,
      revisionInitial: revision,
    })),
  });
  // Move the space's content so that `outdated` has something to say.
  await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "Main page" });
}, 180_000);
afterAll(() => t?.close());

async function statementsFor(first: number) {
  const { count, result: res } = await fewestStatements(t, () => reader.graphql(QUERY, { s: spaceId, n: first }));
  expect(res.errors).toBeUndefined();
  expect(res.data.space.changeRequests.edges).toHaveLength(first);
  return { count, data: res.data };
}

describe("GraphQL Space → change requests", () => {
  it("loads 20 change requests with their authors, counts and content in as many statements as 5", async () => {
    await statementsFor(1); // warm-up: the token's last-use stamp is written on its first call
    const five = await statementsFor(5);
    const twenty = await statementsFor(20);
    const nodes = twenty.data.space.changeRequests.edges.map((e: any) => e.node);
    expect(twenty.data.space.changeRequests.totalCount).toBe(20);
    expect(nodes.map((n: any) => n.number)).toEqual(Array.from({ length: 20 }, (_, i) => 20 - i));
    expect(new Set(nodes.map((n: any) => n.createdBy.email))).toEqual(new Set(["ada@acme.test", "eddie@acme.test"]));
    expect(nodes.every((n: any) => n.outdated === true && n.commentsCount === 0 && n.status === "draft")).toBe(true);
    expect(nodes.find((n: any) => n.number === 1).content.pages.map((p: any) => p.title)).toEqual(["Page 0"]);
    console.log(`statements: first 5 → ${five.count}, first 20 → ${twenty.count}`);
    expect(twenty.count).toBe(five.count);
  });

  it("lists change requests on /v1 in a bounded number of statements", async () => {
    const two = await fewestStatements(t, () => reader.get(`/v1/spaces/${spaceId}/change-requests`, { status: "draft", limit: 2 }));
    // 19 of them: a page that held every one would be its own count (one statement fewer).
    const nineteen = await fewestStatements(t, () => reader.get(`/v1/spaces/${spaceId}/change-requests`, { status: "draft", limit: 19 }));
    expect(nineteen.result.body.items).toHaveLength(19);
    expect(nineteen.result.body.next).toBeDefined();
    console.log(`statements: /v1 list of 2 → ${two.count}, of 19 → ${nineteen.count}`);
    expect(nineteen.count).toBe(two.count);
  });
});
