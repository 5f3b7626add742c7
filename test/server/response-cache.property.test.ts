import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readerGateway, startGateway, TWO_PROCESSES, type TestGateway } from "../helpers/gateway.js";
import { runAdminCommand } from "../../src/cli/commands.js";

/**
 * The response cache never serves a stale answer, nor another caller's. Random sequences of REST
 * writes by several roles — spaces created, renamed and deleted, comments, change requests
 * created, opened, edited and merged, role changes, tokens revoked and new ones — are interleaved
 * with REST GETs and GraphQL queries by every token of every member; each answer as the cache
 * gives it must equal the same read once every entry was dropped.
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
  const created = await send(t.url, admin.token, "POST", `/v1/orgs/${admin.organization}/spaces`, { title: "First" });
  expect(created.status).toBe(201);
  return { org: admin.organization, spaces: [created.body.id], changeRequests: new Map(), users, emails, tokens };
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
    case "comment":
      await send(t.url, as(c.actor), "POST", `/v1/spaces/${spaceId}/comments`, { body: { markdown: "A remark" } });
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
const ORG_QUERY = `query($id: String!) {
  organization(organizationId: $id) { id title spaces(first: 20) { edges { node { id title commentsCount } } } }
}`;

/**
 * Every token's answers on the reading gateway as the cache gives them after the previous reads
 * and the writes since, then the same reads once every entry was dropped (which fills the cache
 * again for the next step): they must be equal.
 */
async function compareReads(w: World, step: string): Promise<void> {
  const readAll = async () => {
    const answers: unknown[] = [];
    for (const token of w.tokens.flat()) {
      const paths = [`/v1/orgs/${w.org}`, `/v1/orgs/${w.org}/spaces`];
      for (const spaceId of w.spaces) {
        paths.push(`/v1/spaces/${spaceId}`, `/v1/spaces/${spaceId}/comments`, `/v1/spaces/${spaceId}/change-requests?status=draft`);
        const cr = w.changeRequests.get(spaceId);
        if (cr) paths.push(`/v1/spaces/${spaceId}/change-requests/${cr}`);
      }
      for (const path of paths) answers.push({ token, path, ...(await send(reader.url, token, "GET", path)) });
      for (const spaceId of w.spaces) answers.push({ token, space: spaceId, ...(await graphql(reader.url, token, SPACE_QUERY, { id: spaceId })) });
      answers.push({ token, org: w.org, ...(await graphql(reader.url, token, ORG_QUERY, { id: w.org })) });
    }
    return answers;
  };
  const cached = await readAll();
  await reader.gateway.responseCache.forget();
  const fresh = await readAll();
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
          await apply(w, c);
          await compareReads(w, `after ${i + 1}: ${JSON.stringify(c)}`);
        }
      }),
      { numRuns: RUNS },
    );
    // The comparison means something only if cached answers were served.
    expect(reader.gateway.responseCache.stats.hits).toBeGreaterThan(hitsBefore);
  }, 600_000);
});
