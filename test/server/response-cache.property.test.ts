import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readerGateway, startGateway, testLogger, TWO_PROCESSES, type TestGateway } from "../helpers/gateway.js";
import { createGateway, type Gateway } from "../../src/server.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { purgeDeletedSpaces } from "../../src/domains/spaces/spaces.service.js";
import { processorFor } from "../../src/domains/openapi/openapi.processing.js";
import { sharedReads } from "../../src/core/graph/loaders.js";
import { forgetKept } from "../helpers/fixtures.js";
import { startSources, type Sources } from "../domains/openapi/sources.js";

/**
 * The response cache never serves a stale answer, nor another caller's. Random sequences of REST
 * writes by several roles — spaces created, renamed, deleted and purged (their rows removed by
 * foreign-key cascades), comments and replies posted, comments deleted with their replies (a
 * cascade), change requests created, opened, edited and merged, role changes, tokens revoked and
 * new ones, an OpenAPI spec's source set (its processing writes in the background, after the
 * answer) — are interleaved with REST GETs and GraphQL queries by every token of every member, of
 * every space (a write in one space leaves the others' entries, which are tagged per row: they are
 * read and compared too), counts included; each answer as the cache gives it must equal the same
 * read without the cache: on a gateway without one (two processes), or once every entry was dropped.
 * The reads without the cache are made twice: all at once, each REST read twice (the rows they
 * ask for by key are read together, one statement for the requests under way, and identical lists
 * once: core/graph/loaders.ts; identical GETs arriving together share one answer: rest/request-coalescing.ts), and
 * one after the other.
 *
 * While each write runs, and until the background work it started is over, readers poll the
 * answers it may change: their lookups and stores race the write's commit and its invalidation
 * (an answer read before a write and kept after it, or kept while the write drops its tags).
 *
 * On the embedded database one gateway writes and reads. With DATABASE_URL and REDIS_URL a second
 * gateway process shares the database and Redis: the writes go to the first, the reads to the
 * second, so the entries the second reads must be dropped by the first's writes; a third gateway,
 * without response cache, gives the answers to compare with (an entry the cache lost track of
 * would survive a "drop everything" as well).
 */
const RUNS = Number(process.env.RESPONSE_CACHE_PROPERTY_RUNS || 6);

let t: TestGateway;
let reader: Awaited<ReturnType<typeof readerGateway>>;
/** Answers without the response cache (two processes), else undefined. */
let uncached: Gateway | undefined;
let uncachedUrl = "";
let sources: Sources;

beforeAll(async () => {
  sources = await startSources();
  t = await startGateway({ integrationDispatchPollMs: 60 * 60 * 1000, responseCache: "on" });
  reader = await readerGateway(t);
  if (TWO_PROCESSES) {
    uncached = await createGateway({ ...t.config, port: 0, responseCache: "off" }, { logger: testLogger() });
    uncachedUrl = `http://127.0.0.1:${await uncached.listen(0)}`;
  }
}, 120_000);
afterAll(async () => {
  await uncached?.close();
  await reader?.close();
  await t?.close();
  await sources?.close();
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
  | { kind: "newToken"; target: number }
  | { kind: "spec"; actor: number; source: (typeof SPEC_SOURCES)[number] };

/** Sources of the OpenAPI spec: processed into a version, or into a failure (two kinds). */
const SPEC_SOURCES = ["/petstore.yaml", "/invalid-spec.yaml", "/not-yaml.yaml"] as const;

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
  {
    arbitrary: fc.record({ kind: fc.constant("role" as const), actor: person, target: person, role: fc.constantFrom(...ROLES) }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant("revoke" as const), target: person }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("newToken" as const), target: person }), weight: 1 },
  often(fc.record({ kind: fc.constant("spec" as const), actor: person, source: fc.constantFrom(...SPEC_SOURCES) })),
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
  /** Whether the organization's OpenAPI spec (slug `api`) was created. */
  spec: boolean;
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
    const added = (await runAdminCommand(prisma, {
      command: "member-add",
      org: admin.organization,
      email,
      role: ROLES[i] === null ? "guest" : ROLES[i],
    })) as any;
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
  return {
    org: admin.organization,
    spaces,
    changeRequests: new Map(),
    comments: new Map(),
    replies: new Map(),
    users,
    emails,
    tokens,
    spec: false,
  };
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
      const res = await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/comments/${comment}/replies`, {
        body: { markdown: "A reply" },
      });
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
      if (cr)
        await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/change-requests/${cr}/content/pages`, { title: `Page ${renames++}` });
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
    case "spec": {
      // Answers `pending`; the processing writes `progress`, then `completed` or `failed`, after the answer.
      const source = { url: `${sources.url}${c.source}` };
      if (w.spec) await send(t.url, as(c.actor), "PUT", `/v1/orgs/${w.org}/openapi/api`, { source });
      else w.spec = (await send(t.url, as(c.actor), "POST", `/v1/orgs/${w.org}/openapi`, { slug: "api", source })).status === 201;
      return;
    }
  }
}

/** The REST reads of every token (the GraphQL ones are in `compareReads`). */
function restPaths(w: World): [string | undefined, string][] {
  const paths: [string | undefined, string][] = [
    [undefined, `/v1/orgs/${w.org}`],
    [undefined, `/v1/orgs/${w.org}/spaces`],
    // A page of one: its count is read (or kept), not the page's length.
    [undefined, `/v1/orgs/${w.org}/spaces?limit=1`],
  ];
  if (w.spec) paths.push([undefined, `/v1/orgs/${w.org}/openapi/api`], [undefined, `/v1/orgs/${w.org}/openapi/api/versions`]);
  for (const spaceId of w.spaces) {
    for (const path of [`/v1/spaces/${spaceId}`, `/v1/spaces/${spaceId}/comments`, `/v1/spaces/${spaceId}/change-requests?status=draft`])
      paths.push([spaceId, path]);
    const cr = w.changeRequests.get(spaceId);
    if (cr) paths.push([spaceId, `/v1/spaces/${spaceId}/change-requests/${cr}`]);
    const comment = w.comments.get(spaceId);
    if (comment) {
      paths.push([spaceId, `/v1/spaces/${spaceId}/comments/${comment}`]);
      const reply = w.replies.get(comment);
      if (reply) paths.push([spaceId, `/v1/spaces/${spaceId}/comments/${comment}/replies/${reply}`]);
    }
  }
  return paths;
}

/**
 * Applies a command while readers poll, on both gateways, the answers it may change (those of
 * its space, the organization's lists, the spec) with every person's token, until it answered and
 * the background work it started (the spec's processing, on the writing gateway) is over.
 */
async function applyRacing(w: World, c: Command): Promise<void> {
  const spaceId = "space" in c ? w.spaces[c.space % w.spaces.length] : undefined;
  // A few answers polled often: a store lands between the steps of a write (or of a run of writes) often enough.
  const paths = () =>
    c.kind === "spec"
      ? [`/v1/orgs/${w.org}/openapi/api`]
      : restPaths(w)
          .filter(([space]) => space !== undefined && space === spaceId)
          .map(([, path]) => path)
          .slice(0, 2)
          .concat(spaceId ? [] : [`/v1/orgs/${w.org}/spaces`]);
  let writing = true;
  const poll = async (url: string, token: string) => {
    for (let i = 0; writing; i++) {
      const list = paths();
      await send(url, token, "GET", list[i % list.length]!);
    }
  };
  // On both gateways: entries live in Redis, shared (on the writing one, stores interleave with the write's own invalidation).
  // Two pollers a token: identical GETs under way together share an answer (rest/request-coalescing.ts), which the write must not leave stale either.
  const pollers = [reader.url, ...(TWO_PROCESSES ? [t.url] : [])].flatMap((url) =>
    w.tokens.flatMap((tokens) => [poll(url, tokens.at(-1)!), poll(url, tokens.at(-1)!)]),
  );
  try {
    await apply(w, c);
    await processorFor(t.gateway.services).idle();
  } finally {
    writing = false;
    await Promise.all(pollers);
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
/** Reads of rows shared by several requests under way (the reads all at once). */
let readTogether = 0;
/** GETs answered by an identical GET's answer (the reads all at once, each twice). */
let coalesced = 0;

/**
 * Every token's answers on the reading gateway as the cache gives them after the previous reads
 * and the writes since, then the same reads without the cache (the gateway without one; with one
 * gateway, once every entry was dropped, which fills the cache again for the next step): they must
 * be equal. `written`: the space the previous write was in.
 */
async function compareReads(w: World, step: string, written?: string): Promise<void> {
  /** Every read, one after the other, or all at once (`together`: their rows read together, see core/graph/loaders.ts `readTogether`). */
  const readAll = async (url: string, counting: boolean, together = false) => {
    const reads: (() => Promise<unknown>)[] = [];
    const stats = reader.gateway.responseCache.stats;
    const count = async <T>(spaceId: string | undefined, read: () => Promise<T>) => {
      const hits = stats.hits;
      const answer = await read();
      if (counting && written && spaceId && spaceId !== written) keptElsewhere += stats.hits - hits;
      return answer;
    };
    for (const token of w.tokens.flat()) {
      for (const [spaceId, path] of restPaths(w))
        reads.push(async () => ({ token, path, ...(await count(spaceId, () => send(url, token, "GET", path))) }));
      for (const spaceId of w.spaces) {
        reads.push(async () => ({
          token,
          space: spaceId,
          ...(await count(spaceId, () => graphql(url, token, SPACE_QUERY, { id: spaceId }))),
        }));
        const comment = w.comments.get(spaceId);
        if (comment)
          reads.push(async () => ({
            token,
            comment,
            ...(await count(spaceId, () => graphql(url, token, COMMENT_QUERY, { space: spaceId, id: comment }))),
          }));
      }
      reads.push(async () => ({ token, org: w.org, ...(await graphql(url, token, ORG_QUERY, { id: w.org })) }));
    }
    // All at once, each read twice: identical GETs arriving together share one answer (rest/request-coalescing.ts).
    if (together) return Promise.all(reads.map((read) => Promise.all([read(), read()])));
    const answers: unknown[] = [];
    for (const read of reads) answers.push(await read());
    return answers;
  };
  // With one gateway, "without the cache" is also without the list pages and counts kept between writes (core/cache/list-cache.ts).
  const forget = () => (uncached ? undefined : forgetKept(reader.gateway));
  const cached = await readAll(reader.url, true);
  await forget();
  // Without the cache, all at once: rows asked by several requests under way are read together.
  const joined = sharedReads.joined + sharedReads.identical;
  const coalescedBefore = (uncached ?? reader.gateway).coalesced.joined;
  const together = await readAll(uncached ? uncachedUrl : reader.url, false, true);
  readTogether += sharedReads.joined + sharedReads.identical - joined;
  coalesced += (uncached ?? reader.gateway).coalesced.joined - coalescedBefore;
  await forget();
  const fresh = await readAll(uncached ? uncachedUrl : reader.url, false);
  expect(cached, step).toEqual(fresh);
  expect(
    together.map((pair) => (pair as unknown[])[0]),
    `${step}, read all at once`,
  ).toEqual(fresh);
  expect(
    together.map((pair) => (pair as unknown[])[1]),
    `${step}, read all at once (the second of each)`,
  ).toEqual(fresh);
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
          await applyRacing(w, c);
          await compareReads(w, `after ${i + 1}: ${JSON.stringify(c)}`, written);
        }
      }),
      // A failure may hang on a race: it is reported as found, not shrunk (runs of it would not reproduce it).
      { numRuns: RUNS, endOnFailure: true },
    );
    // The comparison means something only if cached answers were served.
    expect(reader.gateway.responseCache.stats.hits).toBeGreaterThan(hitsBefore);
    // And a write in one space left entries of the others to be served (rows, not tables, dropped).
    expect(keptElsewhere).toBeGreaterThan(0);
    // And reads all at once shared their statements, and identical GETs their answers.
    expect(readTogether).toBeGreaterThan(0);
    expect(coalesced).toBeGreaterThan(0);
  }, 600_000);
});
