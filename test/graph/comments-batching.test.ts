import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { createSpace, statementsOf, type Admin } from "../helpers/fixtures.js";

/**
 * Nested comment reads run a bounded number of SQL statements: the same for 5 rows as for 20
 * (postedBy, reactions and their users, reply counts, permissions and target pages load in
 * batches, replies ride along with their comments).
 */

let t: TestGateway;
let admin: Admin;
let spaceId: string;

const CHANGE_REQUESTS = 20;
const COMMENTS = 20;
const REPLIES = 2;

beforeAll(async () => {
  // The integration event dispatcher polls the database every second by default: keep it quiet while counting.
  t = await startGateway({ integrationDispatchPollMs: 60 * 60 * 1000 });
  admin = await t.bootstrap("ada@acme.test", "Acme Docs");
  const member = await t.member(admin.organization, "cora@acme.test", "comment");
  const prisma = t.gateway.db.prisma;
  spaceId = (await createSpace(admin, admin.organization, { title: "Busy" })).id;
  const page = (id: string, title: string, parentId: string | null = null) => ({
    id,
    title,
    type: "document",
    parentId,
    position: 0,
    slug: title.toLowerCase(),
    markdown: `# ${title}`,
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-01T00:00:00.000Z",
  });
  const content = {
    pages: { page_b1: page("page_b1", "Guide"), page_b2: page("page_b2", "Child", "page_b1") },
    files: {},
    reusableContents: {},
    variables: {},
  };
  await prisma.revision.create({ data: { id: "rev_busy", spaceId, content } });
  await prisma.space.update({ where: { id: spaceId }, data: { revisionId: "rev_busy" } });
  await prisma.changeRequest.createMany({
    data: Array.from({ length: CHANGE_REQUESTS }, (_, i) => ({
      id: `cr_busy${i}`,
      spaceId,
      number: i + 1,
      status: "open" as const,
      createdById: admin.user,
      revisionId: "rev_busy",
      revisionInitial: "rev_busy",
    })),
  });

  const users = [admin.user, member.user];
  const comments: any[] = [];
  const base = Date.UTC(2024, 0, 1);
  const thread = (id: string, changeRequestId: string | null, n: number) => {
    comments.push({
      id,
      spaceId,
      changeRequestId,
      pageId: n % 2 ? "page_b2" : "page_b1",
      nodeId: `node_${n}`,
      revisionId: "rev_busy",
      markdown: `comment ${n}`,
      postedById: users[n % 2]!,
      postedAt: new Date(base + n * 60_000),
      ...(n % 3 === 0 ? { status: "resolved" as const, resolvedAt: new Date(base + n * 60_000 + 1000), resolvedById: admin.user } : {}),
    });
    for (let r = 0; r < REPLIES; r++) {
      comments.push({
        id: `${id.replace("cmt_", "rpl_")}_${r}`,
        spaceId,
        changeRequestId,
        parentId: id,
        revisionId: "rev_busy",
        markdown: `reply ${r}`,
        postedById: users[r % 2]!,
        postedAt: new Date(base + n * 60_000 + (r + 1) * 1000),
      });
    }
  };
  for (let n = 0; n < COMMENTS; n++) thread(`cmt_space${n}`, null, n);
  for (let c = 0; c < CHANGE_REQUESTS; c++) for (let n = 0; n < COMMENTS; n++) thread(`cmt_cr${c}_${n}`, `cr_busy${c}`, n);
  // Parents first: replies reference them.
  await prisma.comment.createMany({ data: comments.filter((c) => !c.parentId) });
  await prisma.comment.createMany({ data: comments.filter((c) => c.parentId) });
  await prisma.commentReaction.createMany({
    data: comments.flatMap((c, i) => users.map((userId, u) => ({ commentId: c.id, userId, emoji: u === 0 || i % 2 ? "👍" : "🎉" }))),
  });
}, 180_000);
afterAll(() => t?.close());

// One query asks for 20 comments with 20 replies each.
const graphQuery = `query($space: String!, $n: Int!) {
  space(spaceId: $space) {
    comments(first: $n) {
      totalCount
      edges { node {
        id object repliesCount status postedAt
        postedBy { id displayName }
        resolvedBy { id }
        reactions { emoji count users { user { id } reactedAt } }
        body { markdown }
        permissions { edit delete }
        target { page { id path outdated } }
        replies(first: $n) { totalCount edges { node { id postedBy { id } reactions { emoji count } permissions { delete } } } }
      } }
    }
  }
}`;

describe("statements per nested comment read", () => {
  it("Space → comments → replies → postedBy, reactions: the same for 5 and 20 rows", async () => {
    // Warm up: the token's first use is recorded once, off the request's path.
    await admin.graphql(graphQuery, { space: spaceId, n: 1 });
    await new Promise((r) => setTimeout(r, 200));
    const counts: Record<number, number> = {};
    for (const n of [5, 20]) {
      let data: any;
      counts[n] = await statementsOf(t, async () => {
        const res = await admin.graphql(graphQuery, { space: spaceId, n });
        expect(res.errors).toBeUndefined();
        data = res.data;
      });
      const conn = data.space.comments;
      expect(conn.totalCount).toBe(COMMENTS);
      expect(conn.edges).toHaveLength(n);
      for (const { node } of conn.edges) {
        expect(node.replies.totalCount).toBe(REPLIES);
        expect(node.replies.edges).toHaveLength(REPLIES);
        expect(node.repliesCount).toBe(REPLIES);
        expect(node.reactions.reduce((sum: number, r: any) => sum + r.count, 0)).toBe(2);
        expect(node.postedBy.displayName).toEqual(expect.any(String));
        expect(node.target.page.path).toMatch(/^guide/);
      }
    }
    console.log(`GraphQL Space → comments → replies: ${counts[5]} statements for 5 rows, ${counts[20]} for 20`);
    expect(counts[20]).toBe(counts[5]);
  });

  it("Space → changeRequests → comments → replies: the same for 5 and 20 rows", async () => {
    // Replies are asked two per comment here.
    const query = `query($space: String!, $n: Int!) {
      space(spaceId: $space) {
        changeRequests(first: $n) { edges { node { id number
          comments(first: $n) { totalCount edges { node {
            id repliesCount postedBy { id } reactions { emoji count }
            target { changeRequest page { id outdated } } permissions { edit }
            replies(first: ${REPLIES}) { totalCount edges { node { id postedBy { id } } } }
          } } }
        } } }
      }
    }`;
    await admin.graphql(query, { space: spaceId, n: 1 });
    const counts: Record<number, number> = {};
    for (const n of [5, 20]) {
      let data: any;
      counts[n] = await statementsOf(t, async () => {
        const res = await admin.graphql(query, { space: spaceId, n });
        expect(res.errors).toBeUndefined();
        data = res.data;
      });
      const crs = data.space.changeRequests.edges;
      expect(crs).toHaveLength(n);
      for (const { node: cr } of crs) {
        expect(cr.comments.totalCount).toBe(COMMENTS);
        expect(cr.comments.edges).toHaveLength(n);
        for (const { node } of cr.comments.edges) {
          expect(node.target.changeRequest).toBe(cr.id);
          expect(node.replies.edges).toHaveLength(REPLIES);
          expect(node.reactions.reduce((sum: number, r: any) => sum + r.count, 0)).toBe(2);
        }
      }
    }
    console.log(`GraphQL Space → change requests → comments → replies: ${counts[5]} statements for 5×5 rows, ${counts[20]} for 20×20`);
    expect(counts[20]).toBe(counts[5]);
  });

  it("REST lists of space and change request comments: the same for limit 5 and 19 (pages that do not hold them all)", async () => {
    await admin.get(`/v1/spaces/${spaceId}/comments`, { limit: 1 });
    const measure = async (path: string) => {
      const counts: number[] = [];
      // A page of 20 would hold every comment (20): its count would be the page, one statement fewer.
      for (const limit of [5, 19]) {
        counts.push(
          await statementsOf(t, async () => {
            const res = await admin.get(path, { limit });
            expect(res.status).toBe(200);
            expect(res.body.items).toHaveLength(limit);
            expect(res.body.items.every((c: any) => c.replies === REPLIES && c.reactions.length > 0 && c.target.page)).toBe(true);
          }),
        );
      }
      return counts;
    };
    const space = await measure(`/v1/spaces/${spaceId}/comments`);
    const byNumber = await measure(`/v1/spaces/${spaceId}/change-requests/7/comments`);
    const replies = await statementsOf(t, async () => {
      const res = await admin.get(`/v1/spaces/${spaceId}/change-requests/cr_busy3/comments/cmt_cr3_4/replies`);
      expect(res.body.count).toBe(REPLIES);
    });
    console.log(
      `REST comment lists: space ${space.join("/")}, change request ${byNumber.join("/")} statements for limit 5/19; replies list ${replies}`,
    );
    expect(space[1]).toBe(space[0]);
    expect(byNumber[1]).toBe(byNumber[0]);
  });
});
