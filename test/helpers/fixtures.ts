import { afterAll, beforeAll, expect } from "vitest";
import type { Config } from "../../src/config.js";
import type { Gateway } from "../../src/server.js";
import { startGateway, type Answer, type Caller, type TestGateway } from "./gateway.js";

/** A caller made by `bootstrap`: the admin of an organization. */
export type Admin = Awaited<ReturnType<TestGateway["bootstrap"]>>;
/** A caller made by `member`: a member of an organization, with a role or as a guest. */
export type Member = Awaited<ReturnType<TestGateway["member"]>>;

type People = Record<string, readonly [email: string, role: string | null]>;

/**
 * The organizations most domain tests start from: Ada (ada@acme.test) administers "Acme Docs"
 * (`admin`, `org`), Oscar (oscar@other.test) administers "Other Org" (`other`), and each of
 * `members`, `name: [email, role]` (a null role: a guest), joins Acme, in the order given.
 */
export async function acmeDocs<const M extends People = {}>(
  t: TestGateway,
  members: M = {} as M,
): Promise<{ admin: Admin; other: Admin; org: string } & { [K in keyof M]: Member }> {
  const admin = await t.bootstrap("ada@acme.test", "Acme Docs");
  const other = await t.bootstrap("oscar@other.test", "Other Org");
  const org = admin.organization;
  const joined: Record<string, Member> = {};
  for (const [name, [email, role]] of Object.entries(members)) joined[name] = await t.member(org, email, role);
  return { admin, other, org, ...(joined as { [K in keyof M]: Member }) };
}

/**
 * In the enclosing describe (or file): a gateway (with `overrides`) started before its tests with
 * acmeDocs' people, and closed after them; the returned function gives them once started.
 */
export function acmeGateway(overrides: Partial<Config> = {}): () => { t: TestGateway; admin: Admin; other: Admin; org: string } {
  let t: TestGateway;
  let people: Awaited<ReturnType<typeof acmeDocs>>;
  beforeAll(async () => {
    t = await startGateway(overrides);
    people = await acmeDocs(t);
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });
  return () => ({ t, ...people });
}

/**
 * In the enclosing describe (or file): a gateway (with `overrides`) started before its tests, with
 * acmeDocs' admin, a member with the `read` role (`readerEmail`) and a space of the admin's titled
 * `title`, and closed after them. The returned object is filled in once they are made.
 */
export function acmeSpaceGateway(overrides: Partial<Config>, readerEmail: string, title: string) {
  const made = {} as { t: TestGateway; admin: Admin; reader: Member; org: string; spaceId: string };
  beforeAll(async () => {
    made.t = await startGateway(overrides);
    const { admin, org, reader } = await acmeDocs(made.t, { reader: [readerEmail, "read"] });
    Object.assign(made, { admin, org, reader, spaceId: (await createSpace(admin, org, { title })).id as string });
  }, 180_000);
  afterAll(async () => {
    await made.t?.close();
  });
  return made;
}

/** Expects a 201 answer (showing its body when it is not one) and returns its body. */
export function created<T = any>(res: Answer<T>): T {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Expects the documented error body with `status`, and each of `texts` in its message. */
export function expectError(res: { status: number; body: any }, status: number, ...texts: string[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(status);
  for (const text of texts) expect(res.body.error.message).toContain(text);
}

/** Expects an ISO 8601 timestamp string, as the API writes them (2024-01-02T03:04:05.000Z). */
export function expectIsoDate(value: unknown) {
  expect(typeof value).toBe("string");
  expect(new Date(value as string).toISOString()).toBe(value);
}

/** Creates a space in organization `org` and returns it. */
export async function createSpace(by: Caller, org: string, body: Record<string, unknown>): Promise<any> {
  return created(await by.post(`/v1/orgs/${org}/spaces`, body));
}

/** Creates a collection in organization `org` and returns it. */
export async function createCollection(by: Caller, org: string, body: Record<string, unknown>): Promise<any> {
  return created(await by.post(`/v1/orgs/${org}/collections`, body));
}

/**
 * Forgets what the gateway keeps between requests — the response cache's answers and the list
 * pages and counts kept between writes (core/cache/list-cache.ts) — so that the next request is answered
 * from the database.
 */
export async function forgetKept(gateway: Gateway): Promise<void> {
  await gateway.responseCache.forget();
  gateway.listCache?.clear();
}

/**
 * SQL statements that `call` sends, with its result: the fewest of `runs` runs, since
 * background work of the gateway (event delivery, maintenance) may add statements to the
 * shared counter while a call runs, never take any away. Each run starts with nothing kept
 * (forgetKept): what is counted is the work of answering.
 */
export async function fewestStatements<T>(t: TestGateway, call: () => Promise<T>, runs = 3): Promise<{ count: number; result: T }> {
  let best: { count: number; result: T } | undefined;
  for (let i = 0; i < runs; i++) {
    await forgetKept(t.gateway);
    const before = t.gateway.db.stats.statements;
    const result = await call();
    const count = t.gateway.db.stats.statements - before;
    if (!best || count < best.count) best = { count, result };
  }
  return best!;
}

/** The SQL statements `call` costs: the fewest of `runs` runs (see fewestStatements). */
export async function statementsOf(t: TestGateway, call: () => Promise<unknown>, runs = 3): Promise<number> {
  return (await fewestStatements(t, call, runs)).count;
}

/** A 2×3 PNG, base64. */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGNgYGD4z8DAwMAAAA0AAf8w7ZQAAAAASUVORK5CYII=";
