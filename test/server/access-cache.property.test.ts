import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readerGateway, startGateway, TWO_PROCESSES, type TestGateway } from "../helpers/gateway.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { createApiToken } from "../../src/core/access/auth.js";
import { ssoTokenLabel } from "../../src/core/access/sso-enforce.js";

/**
 * The access cache answers exactly what the database answers. Random sequences of writes that
 * change access — role changes, removals and re-additions, token revokes and new tokens, members
 * disabled and enabled, the organization's SSO flag and members marked SSO, each tried by a random
 * member (an admin's succeed, the others' are refused or not) — are interleaved with reads by every
 * token of every member; each read answered with the cache as it is must equal the same read once
 * the reading process has forgotten every entry.
 *
 * On the embedded database one gateway writes and reads. With DATABASE_URL and REDIS_URL a second
 * gateway process shares the database and Redis: the writes go to the first, the reads to the
 * second, so what the second has cached must be dropped by the first's writes through Redis.
 */
const RUNS = Number(process.env.ACCESS_PROPERTY_RUNS || 8);

let t: TestGateway;
let reader: Awaited<ReturnType<typeof readerGateway>>;

beforeAll(async () => {
  t = await startGateway({ integrationDispatchPollMs: 60 * 60 * 1000 });
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
  | { kind: "role"; actor: number; target: number; role: Role }
  | { kind: "remove"; actor: number; target: number }
  | { kind: "readd"; target: number; role: Role }
  | { kind: "revoke"; target: number }
  | { kind: "newToken"; target: number }
  | { kind: "disable"; target: number; disabled: boolean }
  | { kind: "orgSso"; actor: number; on: boolean }
  | { kind: "markSso"; actor: number; target: number };

const person = fc.integer({ min: 0, max: PEOPLE - 1 });
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant("role" as const), actor: person, target: person, role: fc.constantFrom(...ROLES) }),
  fc.record({ kind: fc.constant("remove" as const), actor: person, target: person }),
  fc.record({ kind: fc.constant("readd" as const), target: person, role: fc.constantFrom(...ROLES) }),
  fc.record({ kind: fc.constant("revoke" as const), target: person }),
  fc.record({ kind: fc.constant("newToken" as const), target: person }),
  fc.record({ kind: fc.constant("disable" as const), target: person, disabled: fc.boolean() }),
  fc.record({ kind: fc.constant("orgSso" as const), actor: person, on: fc.boolean() }),
  fc.record({ kind: fc.constant("markSso" as const), actor: person, target: person }),
);

interface World {
  org: string;
  spaceId: string;
  users: string[];
  /** Every token of each person, the revoked ones included (their answers are compared too). */
  tokens: string[][];
}

let runs = 0;

/** A fresh organization: four people (an admin, an editor, a reader, a guest), a space, a SAML provider and an SSO-issued token for person 1. */
async function world(): Promise<World> {
  const prisma = t.gateway.db.prisma;
  const n = runs++;
  const admin = (await runAdminCommand(prisma, { command: "bootstrap", email: `p0.${n}@acme.test`, org: `Property ${n}` })) as any;
  const users = [admin.user as string];
  const tokens = [[admin.token as string]];
  for (let i = 1; i < PEOPLE; i++) {
    const email = `p${i}.${n}@acme.test`;
    const added = (await runAdminCommand(prisma, {
      command: "member-add",
      org: admin.organization,
      email,
      role: ROLES[i] === null ? "guest" : ROLES[i],
    })) as any;
    const token = (await runAdminCommand(prisma, { command: "token-create", email })) as any;
    users.push(added.user);
    tokens.push([token.token]);
  }
  const provider = await prisma.samlProvider.create({ data: { id: `saml_prop${n}`, organizationId: admin.organization, label: "IdP" } });
  tokens[1]!.push((await createApiToken(prisma, users[1]!, ssoTokenLabel(provider.id))).token);
  const space = await send(t.url, admin.token, "POST", `/v1/orgs/${admin.organization}/spaces`, { title: "Shared" });
  expect(space.status).toBe(201);
  return { org: admin.organization, spaceId: space.body.id, users, tokens };
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

/** Applies a command on the writing gateway (the first one). */
async function apply(w: World, c: Command): Promise<void> {
  const prisma = t.gateway.db.prisma;
  const current = (i: number) => w.tokens[i]!.at(-1)!;
  const member = (i: number) => `/v1/orgs/${w.org}/members/${w.users[i]}`;
  switch (c.kind) {
    case "role":
      await send(t.url, current(c.actor), "PATCH", member(c.target), { role: c.role });
      return;
    case "remove":
      await send(t.url, current(c.actor), "DELETE", member(c.target));
      return;
    case "readd":
      await prisma.member.upsert({
        where: { organizationId_userId: { organizationId: w.org, userId: w.users[c.target]! } },
        update: {},
        create: { organizationId: w.org, userId: w.users[c.target]!, role: c.role },
      });
      return;
    case "revoke":
      await runAdminCommand(prisma, { command: "token-revoke", token: current(c.target) });
      return;
    case "newToken":
      w.tokens[c.target]!.push((await createApiToken(prisma, w.users[c.target]!, "property")).token);
      return;
    case "disable":
      await prisma.member.updateMany({ where: { organizationId: w.org, userId: w.users[c.target]! }, data: { disabled: c.disabled } });
      return;
    case "orgSso":
      await send(t.url, current(c.actor), "PATCH", `/v1/orgs/${w.org}`, { sso: c.on });
      return;
    case "markSso":
      await send(t.url, current(c.actor), "POST", `${member(c.target)}/sso`);
      return;
  }
}

/**
 * Every token's answers on the reading gateway with its cache as the previous reads and the writes
 * since left it, then the same reads once that process has forgotten every entry (which warms the
 * cache again for the next step): they must be equal.
 */
async function compareReads(w: World, step: string): Promise<void> {
  const paths = [`/v1/spaces/${w.spaceId}`, `/v1/orgs/${w.org}`, `/v1/orgs/${w.org}/members/${w.users[0]}`];
  const reads = w.tokens.flat().flatMap((token) => paths.map((path) => ({ token, path })));
  const readAll = async () => {
    const answers = [];
    for (const { token, path } of reads) answers.push({ path, ...(await send(reader.url, token, "GET", path)) });
    return answers;
  };
  const cached = await readAll();
  reader.gateway.services.accessCache.forget();
  const fresh = await readAll();
  expect(cached, step).toEqual(fresh);
}

describe(`the access cache answers what the database answers (${TWO_PROCESSES ? "two gateway processes, PostgreSQL and Redis" : "one gateway"})`, () => {
  it("under random writes that change access, by several roles", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 6 }), async (commands) => {
        const w = await world();
        await compareReads(w, "start");
        for (const [i, c] of commands.entries()) {
          await apply(w, c);
          await compareReads(w, `after ${i + 1}: ${JSON.stringify(c)}`);
        }
      }),
      { numRuns: RUNS },
    );
  }, 600_000);
});
