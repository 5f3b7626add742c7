import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createCollection, created, createSpace, fewestStatements, type Admin, type Member } from "../helpers/fixtures.js";

/**
 * The statement budget of the request path: in the steady state (token and membership in the
 * access cache), a single-object GET sends one SELECT, a list its page and its count, whatever
 * the number of items. A page edit with an integration installed sends the space (for access),
 * then one statement without a transaction: the space's row lock (not waited for), the head's
 * compare-and-set, the new revision, its search rows and the integration's event with its
 * trace. The base revision, the space's organization and the organization's installations are
 * not read again.
 */
let t: TestGateway;
let admin: Admin;
let editor: Member;
let guest: Member;
let org: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, org, editor, guest } = await acmeDocs(t, { editor: ["eve@acme.test", "edit"], guest: ["gus@acme.test", null] }));
}, 180_000);
afterAll(() => t?.close());

/** A space with a page, and an integration of content events installed on every space of the organization. */
async function spaceWithIntegration(title: string, integration: string) {
  const space = await createSpace(admin, org, { title });
  const page = created(await admin.post(`/v1/spaces/${space.id}/content/pages`, { title: "Draft" }));
  created(await admin.post(`/v1/integrations/${integration}`, { title: integration, organization: org, scopes: ["space:content:read"] }));
  const installation = created(await admin.post(`/v1/integrations/${integration}/installations`, { organization: org }));
  expect((await admin.patch(`/v1/integrations/${integration}/installations/${installation.id}`, { space_selection: "all" })).status).toBe(
    200,
  );
  return { space, page, installation };
}

describe("statements per request", () => {
  it("GET of a space: one SELECT, for an admin, a member and a guest with a grant", async () => {
    const collection = await createCollection(admin, org, { title: "Guides" });
    const space = await createSpace(admin, org, { title: "Budget", parent: collection.id });
    await admin.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "counted with the row" } });
    const cr = (await admin.post(`/v1/spaces/${space.id}/change-requests`, { subject: "also counted" })).body;
    await t.gateway.db.prisma.spaceAccess.create({ data: { id: "sac_budget_guest", spaceId: space.id, userId: guest.user, role: "read" } });

    const admins = await fewestStatements(t, () => admin.get(`/v1/spaces/${space.id}`));
    expect(admins.result.status).toBe(200);
    expect(admins.result.body).toMatchObject({ comments: 1, changeRequests: 1, changeRequestsDraft: 1 });
    expect(admins.count).toBe(1);
    // A member who is not an admin: the space, then its collection and their grants, together.
    const members = await fewestStatements(t, () => editor.get(`/v1/spaces/${space.id}`));
    expect(members.result.status).toBe(200);
    expect(members.count).toBeLessThanOrEqual(3);
    const guests = await fewestStatements(t, () => guest.get(`/v1/spaces/${space.id}`));
    expect(guests.result.status).toBe(200);
    expect(guests.count).toBeLessThanOrEqual(3);
    const crs = await fewestStatements(t, () => admin.get(`/v1/spaces/${space.id}/change-requests/${cr.id}`));
    expect(crs.result.status).toBe(200);
    expect(crs.result.body.comments).toBe(0);
  });

  it("GraphQL on a space's fields: one SELECT; a related object asked only for its id is the row's foreign key", async () => {
    const collection = await createCollection(admin, org, { title: "Keys" });
    const space = await createSpace(admin, org, { title: "Keys", parent: collection.id });
    const query = `query Space($id: String!) { space(spaceId: $id) { id title commentsCount organization { id __typename } parent { id } } }`;
    const ids = await fewestStatements(t, () => admin.graphql(query, { id: space.id }));
    expect(ids.result.errors).toBeUndefined();
    expect(ids.result.data.space).toMatchObject({
      id: space.id,
      organization: { id: org, __typename: "Organization" },
      parent: { id: collection.id },
    });
    // The space and its collection (whose visibility decides whether `parent` is shown).
    expect(ids.count).toBeLessThanOrEqual(2);
    const top = await createSpace(admin, org, { title: "Top" });
    const topIds = await fewestStatements(t, () => admin.graphql(query, { id: top.id }));
    expect(topIds.result.data.space).toMatchObject({ organization: { id: org }, parent: null });
    expect(topIds.count).toBe(1);
    // Any other field of the related object loads it.
    const titled = await fewestStatements(t, () =>
      admin.graphql(`query Space($id: String!) { space(spaceId: $id) { organization { id title } } }`, { id: top.id }),
    );
    expect(titled.result.data.space.organization).toEqual({ id: org, title: expect.any(String) });
    expect(titled.count).toBeGreaterThan(1);
    // A collection's own relations (parent, organization) follow the same rule.
    const child = (await admin.post(`/v1/orgs/${org}/collections`, { title: "Child", parent: collection.id })).body;
    const collections = await fewestStatements(t, () =>
      admin.graphql(`query C($id: String!) { collection(collectionId: $id) { parent { id } organization { id } } }`, { id: child.id }),
    );
    expect(collections.result.data.collection).toEqual({ parent: { id: collection.id }, organization: { id: org } });
    expect(collections.count).toBe(1);
  });

  it("GraphQL on an organization and relations under it: its row is read once, with them", async () => {
    const ola = await t.bootstrap("ola@acme.test", "Nested");
    for (const title of ["One", "Two"]) created(await ola.post(`/v1/orgs/${ola.organization}/spaces`, { title }));
    const query = `query O($id: String!) { organization(organizationId: $id) { id title spaces(first: 5) { edges { node { id title } } } } }`;
    const nested = await fewestStatements(t, () => ola.graphql(query, { id: ola.organization }));
    expect(nested.result.errors).toBeUndefined();
    expect(nested.result.data.organization.spaces.edges.map((e: any) => e.node.title)).toEqual(["One", "Two"]);
    // The organization and its spaces: not the organization again to load them.
    expect(nested.count).toBe(2);
    const scalars = await fewestStatements(t, () => ola.get(`/v1/orgs/${ola.organization}`));
    expect(scalars.result.body).toMatchObject({ id: ola.organization, title: "Nested" });
    expect(scalars.count).toBe(1);
  });

  it("the list of an organization's spaces: its page (which is the count when it holds them all), for 5 spaces as for 50", async () => {
    const lou = await t.bootstrap("lou@acme.test", "Lists");
    const organization = lou.organization;
    const costs: number[] = [];
    for (const n of [5, 50]) {
      const have = (await lou.get(`/v1/orgs/${organization}/spaces`, { limit: 100 })).body.count;
      await t.gateway.db.prisma.space.createMany({
        data: Array.from({ length: n - have }, (_, i) => ({ id: `spc_budget_${n}_${i}`, organizationId: organization, title: `S${i}` })),
      });
      const list = await fewestStatements(t, () => lou.get(`/v1/orgs/${organization}/spaces`, { limit: 100 }));
      expect(list.result.body.items).toHaveLength(n);
      costs.push(list.count);
    }
    expect(costs).toEqual([1, 1]);
    // A full page (or a later one) does not hold them all: its count is a second statement.
    const full = await fewestStatements(t, () => lou.get(`/v1/orgs/${organization}/spaces`, { limit: 10 }));
    expect(full.result.body).toMatchObject({ count: 50, next: { page: expect.any(String) } });
    expect(full.result.body.items).toHaveLength(10);
    expect(full.count).toBe(2);
    const second = await fewestStatements(t, () =>
      lou.get(`/v1/orgs/${organization}/spaces`, { limit: 45, page: full.result.body.next.page }),
    );
    expect(second.result.body).toMatchObject({ count: 50 });
    expect(second.result.body.items).toHaveLength(40);
    expect(second.result.body.next).toBeUndefined();
    expect(second.count).toBe(2);
    // On the embedded database the list's page and count are kept until a write to the spaces:
    // the same page again is no statement, until a space is created (then both are read again).
    if (t.gateway.listCache) {
      // (Each answer made anew, not the response cache's.)
      const page = async () => (await t.gateway.responseCache.forget(), lou.get(`/v1/orgs/${organization}/spaces`, { limit: 10 }));
      const counting = t.gateway.db.stats.statements;
      expect((await page()).body.count).toBe(50);
      expect(t.gateway.db.stats.statements - counting).toBeLessThanOrEqual(2);
      const kept = t.gateway.db.stats.statements;
      expect((await page()).body.count).toBe(50);
      expect(t.gateway.db.stats.statements - kept).toBe(0);
      await lou.post(`/v1/orgs/${organization}/spaces`, { title: "One more" });
      const after = t.gateway.db.stats.statements;
      expect((await page()).body.count).toBe(51);
      expect(t.gateway.db.stats.statements - after).toBe(2);
      await t.gateway.db.prisma.space.deleteMany({ where: { title: "One more", organizationId: organization } });
      expect((await page()).body.count).toBe(50);
    }
    // A guest sees only the spaces granted to them: the page (their one space: it is the count),
    // and their grants on the page's spaces (for each space's permissions), one statement for all of them.
    const { id } = (await lou.get(`/v1/orgs/${organization}/spaces`, { limit: 1 })).body.items[0];
    const invited = await t.member(organization, "gia@acme.test", null);
    await t.gateway.db.prisma.spaceAccess.create({ data: { id: "sac_budget", spaceId: id, userId: invited.user, role: "read" } });
    const guests = await fewestStatements(t, () => invited.get(`/v1/orgs/${organization}/spaces`));
    expect(guests.result.body.items.map((s: { id: string }) => s.id)).toEqual([id]);
    expect(guests.result.body.count).toBe(1);
    expect(guests.count).toBe(2);
  });

  it("PATCH of a page with an integration installed: the space, then one statement (the head's compare-and-set, the revision, the search index, the events with their traces)", async () => {
    const { space, page, installation } = await spaceWithIntegration("Edited", "counted");
    const events = () =>
      t.gateway.db.prisma.integrationEvent.count({ where: { installationId: installation.id, type: "space_content_updated" } });
    const before = await events();
    let n = 0;
    const edit = await fewestStatements(t, () => admin.patch(`/v1/spaces/${space.id}/content/page/${page.id}`, { title: `Edited ${++n}` }));
    expect(edit.result.status).toBe(200);
    expect(await events()).toBe(before + 3);
    // No transaction: no COMMIT either, on PostgreSQL.
    expect(edit.count).toBe(2);
    // The first edit of a space after its integrations changed reads them again (installations,
    // their integrations and spaces: three statements), but not the space's organization: the
    // access check read it with the space.
    expect(
      (await admin.patch(`/v1/integrations/counted/installations/${installation.id}`, { configuration: { changed: true } })).status,
    ).toBe(200);
    const first = await fewestStatements(t, () => admin.patch(`/v1/spaces/${space.id}/content/page/${page.id}`, { title: "Changed" }), 1);
    expect(first.count).toBe(edit.count + 3);
  });

  it("POST of a collection in a collection: the parent, the last position under it (collections and spaces in one statement), then the insert; it goes after both", async () => {
    const parent = await createCollection(admin, org, { title: "Shelf" });
    await createSpace(admin, org, { title: "On the shelf", parent: parent.id });
    let n = 0;
    const posted = await fewestStatements(t, () => admin.post(`/v1/orgs/${org}/collections`, { title: `Box ${++n}`, parent: parent.id }));
    expect(posted.result.status).toBe(201);
    expect(posted.count).toBe(3);
    const items = await t.gateway.db.prisma.collection.findMany({ where: { parentId: parent.id }, orderBy: { position: "asc" } });
    const space = await t.gateway.db.prisma.space.findFirstOrThrow({ where: { parentId: parent.id } });
    expect(items.map((c) => c.title)).toEqual(["Box 1", "Box 2", "Box 3"]);
    expect(items[0]!.position).toBeGreaterThan(space.position);
  });

  it("POST of a comment: the space, the comment, its author; its reactions and replies are known to be none", async () => {
    const space = await createSpace(admin, org, { title: "Discussed" });
    const posted = await fewestStatements(t, () => admin.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "First" } }));
    expect(posted.result.status).toBe(201);
    expect(posted.result.body).toMatchObject({ reactions: [], replies: 0, postedBy: { id: admin.user } });
    // The comment and its activity are stored in one transaction, whose COMMIT is a statement on PostgreSQL.
    const commit = t.gateway.db.kind === "postgres" ? 1 : 0;
    expect(posted.count).toBe(3 + commit);
    // A reply: the comment it answers is read too. The comment's answer then counts it.
    const comment = posted.result.body.id;
    const reply = await fewestStatements(t, () =>
      admin.post(`/v1/spaces/${space.id}/comments/${comment}/replies`, { body: { markdown: "Noted" } }),
    );
    expect(reply.result.status).toBe(201);
    expect(reply.result.body).toMatchObject({ reactions: [], postedBy: { id: admin.user } });
    expect(reply.count).toBe(4 + commit);
    expect((await admin.get(`/v1/spaces/${space.id}/comments/${comment}`)).body).toMatchObject({
      replies: 3,
      repliers: [{ user: { id: admin.user }, count: 3 }],
    });
  });

  it("PATCH of a page in a change request with an integration installed: the space, the change request, then one statement (its compare-and-set, the revision, the contributor, the events)", async () => {
    const { space, page, installation } = await spaceWithIntegration("Proposed", "proposals");
    const cr = created(await admin.post(`/v1/spaces/${space.id}/change-requests`, {}));
    const route = `/v1/spaces/${space.id}/change-requests/${cr.number}/content/page/${page.id}`;
    const events = () =>
      t.gateway.db.prisma.integrationEvent.count({ where: { installationId: installation.id, type: "space_content_updated" } });
    const before = await events();
    const revision = (await admin.get(`/v1/spaces/${space.id}/change-requests/${cr.number}`)).body.revision;
    let n = 0;
    const edit = await fewestStatements(t, () => admin.patch(route, { title: `Proposed ${++n}` }));
    expect(edit.result.status).toBe(200);
    expect(edit.count).toBe(3);
    expect(await events()).toBe(before + 3);
    // The change request moved to the last edit, one revision after the other; the space's own content did not move.
    expect((await admin.get(route)).body.title).toBe("Proposed 3");
    expect((await admin.get(`/v1/spaces/${space.id}/content/page/${page.id}`)).body.title).toBe("Draft");
    const history = await t.gateway.db.prisma.revision.findMany({ where: { changeRequestId: cr.id }, orderBy: { createdAt: "asc" } });
    expect(history.map((r) => r.parents[0])).toEqual([revision, history[0]!.id, history[1]!.id]);
    expect((await t.gateway.db.prisma.changeRequest.findUniqueOrThrow({ where: { id: cr.id } })).revisionId).toBe(history[2]!.id);
    // Another editor becomes a contributor; their next edit moves their time of last edit.
    const contributors = () =>
      t.gateway.db.prisma.changeRequestContributor.findMany({ where: { changeRequestId: cr.id }, orderBy: { userId: "asc" } });
    expect((await editor.patch(route, { title: "Edited by Eve" })).status).toBe(200);
    const eve = (await contributors()).find((c) => c.userId === editor.user)!;
    expect((await contributors()).map((c) => c.userId).sort()).toEqual([admin.user, editor.user].sort());
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await editor.patch(route, { title: "Edited by Eve again" })).status).toBe(200);
    expect((await contributors()).find((c) => c.userId === editor.user)!.lastEditAt.getTime()).toBeGreaterThan(eve.lastEditAt.getTime());
    // A comment (its count kept on the space by a trigger) does not make the next edit read the installations again.
    created(await editor.post(`/v1/spaces/${space.id}/comments`, { body: { markdown: "Looks good" } }));
    expect((await fewestStatements(t, () => admin.patch(route, { title: "After the comment" }), 1)).count).toBe(3);
    // Once merged, the change request takes no more edits, and nothing is written.
    expect((await admin.post(`/v1/spaces/${space.id}/change-requests/${cr.number}/merge`)).status).toBe(200);
    const revisions = await t.gateway.db.prisma.revision.count({ where: { changeRequestId: cr.id } });
    expect((await admin.patch(route, { title: "Too late" })).status).toBe(409);
    expect(await t.gateway.db.prisma.revision.count({ where: { changeRequestId: cr.id } })).toBe(revisions);
  });
});
