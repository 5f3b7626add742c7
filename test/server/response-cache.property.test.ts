import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readerGateway, startGateway, TWO_PROCESSES, type TestGateway } from "../helpers/gateway.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { purgeDeletedSpaces } from "../../src/domains/spaces/spaces.service.js";

/**
 * The response cache never serves a stale answer, nor another caller's. Random sequences of REST
 * writes by several roles — spaces created, renamed, deleted and purged (their rows removed by
 * foreign-key cascades), comments and replies posted, comments deleted with their replies (a
 * cascade), change requests created, opened, edited and merged, role changes, tokens revoked and
 * new ones — are interleaved with REST GETs and GraphQL queries by every token of every member, of
 * every space (a write in one space leaves the others' entries, which are tagged per row: they are
 * read and compared too), counts included; each answer as the cache gives it must equal the same
 * read once every entry was dropped.
 *
 * On the embedded database one gateway writes and reads. With DATABASE_URL and REDIS_URL a second
 * gateway process shares the database and Redis: the writes go to the first, the reads to the
 * second, so the entries the second reads must be dropped by the first's writes.
 */
const RUNS = Number(process.env.RESPONSE_CACHE_PROPERTY_RUNS || 6);

let t: TestGateway;
let reader: Awaited<ReturnType<typeof readerGateway>>;

beforeAll(async () => {
  t = await startGateway({ integrationDispatchPollMs: 60 * 60 * 1000, responseCache: "on" });
  reader = await readerGateway(t);
}, 120_000);
afterAll(async () => {
  await reader?.close();
  await t?.close();
});

type Role = "admin" | "edit" | "read" | null;
const ROLES: Role[] = ["admin", "edit", "read", null];
const PEOPLE = 4; // person 0 starts as the admin

type Command =
  | { kind: "spaceCreate"; actor: number }
  | { kind: "spaceRename"; actor: number; space: number }
  | { kind: "spaceDelete"; actor: number; space: number }
  | { kind: "comment"; actor: number; space: number }
  | { kind: "reply"; actor: number; space: number }
  | { kind: "commentDelete"; actor: number; space: number }
  | { kind: "purge" }
  | { kind: "crCreate"; actor: number; space: number }
  | { kind: "crOpen"; actor: number; space: number }
  | { kind: "crPage"; actor: number; space: number }
  | { kind: "crMerge"; actor: number; space: number }
  | { kind: "role"; actor: number; target: number; role: Role }
  | { kind: "revoke"; target: number }
  | { kind: "newToken"; target: number };

const person = fc.integer({ min: 0, max: PEOPLE - 1 });
const space = fc.integer({ min: 0, max: 2 });
const onSpace = <K extends Command["kind"]>(kind: K) => fc.record({ kind: fc.constant(kind), actor: person, space });
// Writes of data come more often than those of access, which drop every entry.
const often = <T>(arbitrary: fc.Arbitrary<T>) => ({ arbitrary, weight: 3 });
const command = fc.oneof(
  often(fc.record({ kind: fc.constant("spaceCreate" as const), actor: person })),
  often(onSpace("spaceRename" as const)),
  { arbitrary: onSpace("spaceDelete" as const), weight: 1 },
  often(onSpace("comment" as const)),
  often(onSpace("reply" as const)),
  { arbitrary: onSpace("commentDelete" as const), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("purge" as const) }), weight: 1 },
  often(onSpace("crCreate" as const)),
  often(onSpace("crOpen" as const)),
  often(onSpace("crPage" as const)),
  often(onSpace("crMerge" as const)),
  { arbitrary: fc.record({ kind: fc.constant("role" as const), actor: person, target: person, role: fc.constantFrom(...ROLES) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("revoke" as const), target: person }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("newToken" as const), target: person }), weight: 1 },
) as fc.Arbitrary<Command>;

interface World {
  org: string;
  spaces: string[];
  /** The last change request created in each space. */
  changeRequests: Map<string, string>;
  /** The last comment posted in each space, and the last reply to each comment. */
  comments: Map<string, string>;
  replies: Map<string, string>;
  users: string[];
  emails: string[];
  /** Every token of each person, the revoked ones included (their answers are compared too). */
  tokens: string[][];
}

let runs = 0;

async function world(): Promise<World> {
  const prisma = t.gateway.db.prisma;
  const n = runs++;
  const admin = (await runAdminCommand(prisma, { command: "bootstrap", email: `rc0.${n}@acme.test`, org: `Cache ${n}` })) as any;
  const users = [admin.user as string];
  const emails = [`rc0.${n}@acme.test`];
  const tokens = [[admin.token as string]];
  for (let i = 1; i < PEOPLE; i++) {
    const email = `rc${i}.${n}@acme.test`;
    const added = (await runAdminCommand(prisma, { command: "member-add", org: admin.organization, email, role: ROLES[i] === null ? "guest" : ROLES[i] })) as any;
    const token = (await runAdminCommand(prisma, { command: "token-create", email })) as any;
    users.push(added.user);
    emails.push(email);
    tokens.push([token.token]);
  }
  // Two spaces from the start: a write in one is read beside the other's kept entries.
  const spaces: string[] = [];
  for (const title of ["First", "Second"]) {
    const created = await send(t.url, admin.token, "POST", `/v1/orgs/${admin.organization}/spaces`, { title });
    expect(created.status).toBe(201);
    spaces.push(created.body.id);
  }
  return { org: admin.organization, spaces, changeRequests: new Map(), comments: new Map(), replies: new Map(), users, emails, tokens };
}

async function send(url: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function graphql(url: string, token: string, query: string, variables: Record<string, unknown>) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await res.json() };
}

let renames = 0;

/** Applies a command on the writing gateway (the first one); refusals are part of the run. */
async function apply(w: World, c: Command): Promise<void> {
  const prisma = t.gateway.db.prisma;
  const as = (i: number) => w.tokens[i]!.at(-1)!;
  const spaceId = "space" in c ? w.spaces[c.space % w.spaces.length]! : "";
  const cr = w.changeRequests.get(spaceId);
  switch (c.kind) {
    case "spaceCreate": {
      const res = await send(t.url, as(c.actor), "POST", `/v1/orgs/${w.org}/spaces`, { title: `Space ${w.spaces.length}` });
      if (res.status === 201) w.spaces.push(res.body.id);
      return;
    }
    case "spaceRename":
      await send(t.url, as(c.actor), "PATCH", `/v1/spaces/${spaceId}`, { title: `Renamed ${renames++}` });
      return;
    case "spaceDelete":
      await send(t.url, as(c.actor), "DELETE", `/v1/spaces/${spaceId}`);
      return;
    case "comment": {
      const res = await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/comments`, { body: { markdown: "A remark" } });
      if (res.status === 201) w.comments.set(spaceId, res.body.id);
      return;
    }
    case "reply": {
      const comment = w.comments.get(spaceId);
      if (!comment) return;
      const res = await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/comments/${comment}/replies`, { body: { markdown: "A reply" } });
      if (res.status === 201) w.replies.set(comment, res.body.id);
      return;
    }
    case "commentDelete": {
      const comment = w.comments.get(spaceId);
      // Its replies go with it (a foreign key's cascade); both stay in the reads (404 once gone).
      if (comment) await send(t.url, as(c.actor), "DELETE", `/v1/spaces/${spaceId}/comments/${comment}`);
      return;
    }
    case "purge":
      // The deleted spaces' rows removed for good: their comments, change requests… by cascades.
      await purgeDeletedSpaces(prisma, 0, new Date(Date.now() + 60_000));
      return;
    case "crCreate": {
      const res = await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/change-requests`, { subject: "Proposal" });
      if (res.status === 201) w.changeRequests.set(spaceId, res.body.id);
      return;
    }
    case "crOpen":
      if (cr) await send(t.url, as(c.actor), "PATCH", `/v1/spaces/${spaceId}/change-requests/${cr}`, { status: "open" });
      return;
    case "crPage":
      if (cr) await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/change-requests/${cr}/content/pages`, { title: `Page ${renames++}` });
      return;
    case "crMerge":
      if (cr) await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/change-requests/${cr}/merge`);
      return;
    case "role":
      await send(t.url, as(c.actor), "PATCH", `/v1/orgs/${w.org}/members/${w.users[c.target]}`, { role: c.role });
      return;
    case "revoke":
      await runAdminCommand(prisma, { command: "token-revoke", token: as(c.target) });
      return;
    case "newToken":
      w.tokens[c.target]!.push(((await runAdminCommand(prisma, { command: "token-create", email: w.emails[c.target] })) as any).token);
      return;
  }
}

const SPACE_QUERY = `query($id: String!) {
  space(spaceId: $id) { id title revision commentsCount openChangeRequestsCount draftChangeRequestsCount permissions { edit admin comment merge } }
}`;
const COMMENT_QUERY = `query($space: String!, $id: String!) {
  spaceComment(spaceId: $space, commentId: $id) { id repliesCount replies(first: 10) { edges { node { id } } } }
}`;
const ORG_QUERY = `query($id: String!) {
  organization(organizationId: $id) { id title spaces(first: 20) { edges { node { id title commentsCount } } } }
}`;

/** Answers the cache gave for a space other than the one the previous write was in (kept per row). */
let keptElsewhere = 0;

/**
 * Every token's answers on the reading gateway as the cache gives them after the previous reads
 * and the writes since, then the same reads once every entry was dropped (which fills the cache
 * again for the next step): they must be equal. `written`: the space the previous write was in.
 */
async function compareReads(w: World, step: string, written?: string): Promise<void> {
  const readAll = async (counting: boolean) => {
    const answers: unknown[] = [];
    const stats = reader.gateway.responseCache.stats;
    const count = async <T>(spaceId: string | undefined, read: () => Promise<T>) => {
      const hits = stats.hits;
      const answer = await read();
      if (counting && written && spaceId && spaceId !== written) keptElsewhere += stats.hits - hits;
      return answer;
    };
    for (const token of w.tokens.flat()) {
      const paths: [string | undefined, string][] = [
        [undefined, `/v1/orgs/${w.org}`],
        [undefined, `/v1/orgs/${w.org}/spaces`],
      ];
      for (const spaceId of w.spaces) {
        for (const path of [`/v1/spaces/${spaceId}`, `/v1/spaces/${spaceId}/comments`, `/v1/spaces/${spaceId}/change-requests?status=draft`]) paths.push([spaceId, path]);
        const cr = w.changeRequests.get(spaceId);
        if (cr) paths.push([spaceId, `/v1/spaces/${spaceId}/change-requests/${cr}`]);
        const comment = w.comments.get(spaceId);
        if (comment) {
          paths.push([spaceId, `/v1/spaces/${spaceId}/comments/${comment}`]);
          const reply = w.replies.get(comment);
          if (reply) paths.push([spaceId, `/v1/spaces/${spaceId}/comments/${comment}/replies/${reply}`]);
        }
      }
      for (const [spaceId, path] of paths) answers.push({ token, path, ...(await count(spaceId, () => send(reader.url, token, "GET", path))) });
      for (const spaceId of w.spaces) {
        answers.push({ token, space: spaceId, ...(await count(spaceId, () => graphql(reader.url, token, SPACE_QUERY, { id: spaceId }))) });
        const comment = w.comments.get(spaceId);
        if (comment) answers.push({ token, comment, ...(await count(spaceId, () => graphql(reader.url, token, COMMENT_QUERY, { space: spaceId, id: comment }))) });
      }
      answers.push({ token, org: w.org, ...(await graphql(reader.url, token, ORG_QUERY, { id: w.org })) });
    }
    return answers;
  };
  const cached = await readAll(true);
  await reader.gateway.responseCache.forget();
  const fresh = await readAll(false);
  expect(cached, step).toEqual(fresh);
}

describe(`the response cache answers what the database answers (${TWO_PROCESSES ? "two gateway processes, PostgreSQL and Redis" : "one gateway"})`, () => {
  it("under random REST writes by several roles, for every caller, on REST and GraphQL", async () => {
    const hitsBefore = reader.gateway.responseCache.stats.hits;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 5 }), async (commands) => {
        const w = await world();
        await compareReads(w, "start");
        for (const [i, c] of commands.entries()) {
          const written = "space" in c && c.kind !== "spaceDelete" ? w.spaces[c.space % w.spaces.length] : undefined;
          await apply(w, c);
          await compareReads(w, `after ${i + 1}: ${JSON.stringify(c)}`, written);
        }
      }),
      { numRuns: RUNS },
    );
    // The comparison means something only if cached answers were served.
    expect(reader.gateway.responseCache.stats.hits).toBeGreaterThan(hitsBefore);
    // And a write in one space left entries of the others to be served (rows, not tables, dropped).
    expect(keptElsewhere).toBeGreaterThan(0);
  }, 600_000);
});
