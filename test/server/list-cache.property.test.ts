import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../helpers/gateway.js";
import { purgeDeletedSpaces } from "../../src/domains/spaces/spaces.service.js";
import { ListCache, sizeOf, tablesOf, tablesOfRead } from "../../src/core/cache/list-cache.js";
import { newId } from "../../src/core/ids.js";
import { loadConfig } from "../../src/config.js";

/**
 * Kept lists (core/cache/list-cache.ts): every list page holds the rows its read selects now, and its
 * `count` the number of rows its filter selects now, whoever asks, however the rows changed since
 * they were last read. Random
 * writes — spaces created, deleted, restored and purged (rows removed by foreign-key cascades),
 * members' roles changed (a guest sees only the spaces granted to them or to one of their teams),
 * grants made and removed straight through Prisma (no REST route, no resolver to remember
 * anything), teams created and their members changed, comments posted and deleted, collections
 * created — are interleaved with list reads by every member (first pages and later pages, whose
 * counts are read, never taken from the rows shown), while pollers keep reading the same lists
 * during each write (a page or count read while a write lands must not be kept past it). Every
 * answer must equal the same read once every kept page and count was forgotten (a fresh SELECT and
 * COUNT); the comparison means something only if kept pages and counts were served.
 *
 * The response cache is off on this gateway, so that every answer is made, and its page and count
 * kept or read. On PostgreSQL nothing is kept (other processes write the same database).
 */
const RUNS = Number(process.env.KEPT_LISTS_PROPERTY_RUNS || process.env.KEPT_COUNTS_PROPERTY_RUNS || 6);
const EMBEDDED = !process.env.DATABASE_URL;

let t: TestGateway;

beforeAll(async () => {
  t = await startGateway({ responseCache: "off", integrationDispatchPollMs: 60 * 60 * 1000 });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

type Role = "admin" | "edit" | "read" | "guest";
const PEOPLE = 4; // person 0 is the admin who starts the organization
const ROLES: Role[] = ["admin", "edit", "read", "guest"];

type Command =
  | { kind: "spaceCreate"; actor: number }
  | { kind: "spaceDelete"; space: number }
  | { kind: "spaceRestore"; space: number }
  | { kind: "purge" }
  | { kind: "role"; target: number; role: Role }
  | { kind: "grantUser"; space: number; target: number }
  | { kind: "grantTeam"; space: number; team: number }
  | { kind: "ungrant"; space: number }
  | { kind: "teamCreate" }
  | { kind: "teamJoin"; team: number; target: number }
  | { kind: "teamLeave"; team: number; target: number }
  | { kind: "comment"; space: number }
  | { kind: "commentDelete"; space: number }
  | { kind: "collectionCreate" };

const person = fc.integer({ min: 0, max: PEOPLE - 1 });
const space = fc.integer({ min: 0, max: 5 });
const team = fc.integer({ min: 0, max: 2 });
// Writes that change who sees which spaces (a guest's grants, a member's role) come thrice as often:
// a page kept past one of them is wrong for one viewer only.
const command = fc.oneof(
  fc.record({ kind: fc.constant("spaceCreate" as const), actor: person }),
  fc.record({ kind: fc.constant("spaceDelete" as const), space }),
  fc.record({ kind: fc.constant("spaceRestore" as const), space }),
  fc.record({ kind: fc.constant("purge" as const) }),
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("role" as const),
      target: fc.integer({ min: 1, max: PEOPLE - 1 }),
      role: fc.constantFrom(...ROLES),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("grantUser" as const), space, target: person }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("grantTeam" as const), space, team }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("ungrant" as const), space }) },
  fc.record({ kind: fc.constant("teamCreate" as const) }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("teamJoin" as const), team, target: person }) },
  fc.record({ kind: fc.constant("teamLeave" as const), team, target: person }),
  fc.record({ kind: fc.constant("comment" as const), space }),
  fc.record({ kind: fc.constant("commentDelete" as const), space }),
  fc.record({ kind: fc.constant("collectionCreate" as const) }),
) as fc.Arbitrary<Command>;

interface World {
  org: string;
  people: (Caller & { user: string })[];
  spaces: string[];
  teams: string[];
  comments: Map<string, string>;
}

let runs = 0;

async function world(): Promise<World> {
  const n = runs++;
  const admin = await t.bootstrap(`kc0.${n}@acme.test`, `Counts ${n}`);
  const people: (Caller & { user: string })[] = [admin];
  for (let i = 1; i < PEOPLE; i++)
    people.push(await t.member(admin.organization, `kc${i}.${n}@acme.test`, ROLES[i] === "guest" ? null : ROLES[i]!));
  const spaces: string[] = [];
  // More spaces than a page of one: every first page counts its list.
  for (const title of ["First", "Second", "Third"]) {
    const created = await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title });
    expect(created.status).toBe(201);
    spaces.push(created.body.id);
  }
  // The guest (person 3) is granted two of them: their first page of one counts too.
  await t.gateway.db.prisma.spaceAccess.createMany({
    data: spaces.slice(0, 2).map((spaceId) => ({ id: newId("SpaceAccess"), spaceId, userId: people[3]!.user, role: "read" as const })),
  });
  return { org: admin.organization, people, spaces, teams: [], comments: new Map() };
}

/** Applies a command; refusals are part of the run. */
async function apply(w: World, c: Command): Promise<void> {
  const admin = w.people[0]!;
  const prisma = t.gateway.db.prisma;
  const spaceId = "space" in c ? w.spaces[c.space % w.spaces.length]! : "";
  const teamId = "team" in c && w.teams.length ? w.teams[c.team % w.teams.length]! : undefined;
  switch (c.kind) {
    case "spaceCreate": {
      const res = await w.people[c.actor]!.post(`/v1/orgs/${w.org}/spaces`, { title: `Space ${w.spaces.length}` });
      if (res.status === 201) w.spaces.push(res.body.id);
      return;
    }
    case "spaceDelete":
      await admin.delete(`/v1/spaces/${spaceId}`);
      return;
    case "spaceRestore":
      await admin.post(`/v1/spaces/${spaceId}/restore`);
      return;
    case "purge":
      await purgeDeletedSpaces(prisma, 0, new Date(Date.now() + 60_000));
      return;
    case "role":
      await admin.patch(`/v1/orgs/${w.org}/members/${w.people[c.target]!.user}`, { role: c.role === "guest" ? null : c.role });
      return;
    case "grantUser":
      // A space an earlier command purged has no row left to grant on.
      if (!(await prisma.space.count({ where: { id: spaceId } }))) return;
      await prisma.spaceAccess.createMany({
        data: [{ id: newId("SpaceAccess"), spaceId, userId: w.people[c.target]!.user, role: "read" }],
        skipDuplicates: true,
      });
      return;
    case "grantTeam":
      if (!(await prisma.space.count({ where: { id: spaceId } }))) return;
      if (teamId)
        await prisma.spaceAccess.createMany({ data: [{ id: newId("SpaceAccess"), spaceId, teamId, role: "read" }], skipDuplicates: true });
      return;
    case "ungrant":
      await prisma.spaceAccess.deleteMany({ where: { spaceId } });
      return;
    case "teamCreate": {
      const res = await admin.put(`/v1/orgs/${w.org}/teams`, { title: `Team ${w.teams.length}` });
      if (res.status === 201) w.teams.push(res.body.id);
      return;
    }
    case "teamJoin":
      if (teamId) await admin.put(`/v1/orgs/${w.org}/teams/${teamId}/members/${w.people[c.target]!.user}`, {});
      return;
    case "teamLeave":
      if (teamId) await admin.delete(`/v1/orgs/${w.org}/teams/${teamId}/members/${w.people[c.target]!.user}`);
      return;
    case "comment": {
      const res = await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "A remark" } });
      if (res.status === 201) w.comments.set(spaceId, res.body.id);
      return;
    }
    case "commentDelete": {
      const comment = w.comments.get(spaceId);
      if (comment) await admin.delete(`/v1/spaces/${spaceId}/comments/${comment}`);
      return;
    }
    case "collectionCreate":
      await admin.post(`/v1/orgs/${w.org}/collections`, { title: "Shelf" });
      return;
  }
}

/**
 * The lists whose pages and counts a write may change: first pages of one item (the count is read),
 * the organization's spaces from their second page, and whole first pages of them.
 */
function listPaths(w: World): string[] {
  return [
    `/v1/orgs/${w.org}/spaces?limit=1`,
    `/v1/orgs/${w.org}/spaces?limit=4`,
    `/v1/orgs/${w.org}/collections?limit=1`,
    `/v1/orgs/${w.org}/members?limit=1`,
    `/v1/orgs/${w.org}/teams?limit=1`,
    ...w.people.map((p) => `/v1/orgs/${w.org}/members/${p.user}/spaces?limit=1`),
    ...w.spaces.slice(0, 3).map((s) => `/v1/spaces/${s}/comments?limit=1`),
  ];
}

/** Every person's answer to every list, in order; the organization's spaces also from the page after the first. */
async function readAll(w: World): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const p of w.people) {
    for (const path of listPaths(w)) {
      const res = await p.get(path);
      answers.push({ who: p.user, path, status: res.status, body: res.body });
      if (path.includes("/spaces?limit=1") && res.status === 200 && res.body.next) {
        const next = await p.get(`/v1/orgs/${w.org}/spaces`, { limit: 1, page: res.body.next.page });
        answers.push({ who: p.user, path: "second page", status: next.status, body: next.body });
      }
    }
  }
  return answers;
}

/** Applies a command while every person keeps reading the lists: their counts are read, and kept, as the write lands. */
async function applyRacing(w: World, c: Command): Promise<void> {
  let writing = true;
  const poll = async (p: Caller) => {
    for (let i = 0; writing; i++) {
      const paths = listPaths(w);
      await p.get(paths[i % paths.length]!);
    }
  };
  const pollers = w.people.map(poll);
  try {
    await apply(w, c);
  } finally {
    writing = false;
    await Promise.all(pollers);
  }
}

describe.runIf(EMBEDDED)("kept pages and counts answer what a fresh SELECT and COUNT answer (embedded database)", () => {
  it("under random writes to spaces, roles, grants, teams, comments and collections, for every member", async () => {
    const kept = t.gateway.listCache!;
    expect(kept).toBeInstanceOf(ListCache);
    const before = structuredClone(kept.stats);
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 8 }), async (commands) => {
        const w = await world();
        for (const [i, c] of commands.entries()) {
          await applyRacing(w, c);
          const answered = await readAll(w);
          kept.clear();
          const fresh = await readAll(w);
          expect(answered, `after ${i + 1}: ${JSON.stringify(c)}`).toEqual(fresh);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    // The comparison means something only if kept pages and counts were served.
    expect(kept.stats.count.hits).toBeGreaterThan(before.count.hits);
    expect(kept.stats.page.hits).toBeGreaterThan(before.page.hits);
  }, 600_000);
});

describe("which pages and counts are kept", () => {
  it("a filter reads its model's table and those of the relations it filters on", () => {
    expect(tablesOf("Space", { organizationId: "org_1", deletedAt: null })).toEqual(["Space"]);
    const guest = {
      organizationId: "org_1",
      deletedAt: null,
      access: { some: { OR: [{ userId: "u" }, { team: { members: { some: { userId: "u" } } } }] } },
    };
    expect(tablesOf("Space", guest)).toEqual(["Space", "SpaceAccess", "Team", "TeamMember"]);
    expect(tablesOf("Comment", { AND: [{ spaceId: "s" }, { space: { is: { deletedAt: null } } }] })).toEqual(["Comment", "Space"]);
    expect(tablesOf("Space", { parent: null })).toEqual(["Collection", "Space"]);
  });

  it("a page reads the tables of its filter and of the relations it includes; an order by a relation is not kept", () => {
    const withName = { integration: { select: { name: true } } };
    expect(
      tablesOfRead("IntegrationInstallation", {
        where: { organizationId: "o" },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: 11,
        include: withName,
      }),
    ).toEqual(["Integration", "IntegrationInstallation"]);
    expect(
      tablesOfRead("IntegrationEvent", { where: { integrationId: "i" }, include: { installation: { select: { organizationId: true } } } }),
    ).toEqual(["IntegrationEvent", "IntegrationInstallation"]);
    expect(
      tablesOfRead("Space", { where: { organizationId: "o" }, include: { changeRequests: { where: { comments: { some: {} } } } } }),
    ).toEqual(["ChangeRequest", "Comment", "Space"]);
    expect(tablesOfRead("Space", { where: {}, orderBy: { organization: { title: "asc" } } })).toBeNull();
    expect(tablesOfRead("Space", { where: {}, orderBy: { title: "sideways" } })).toBeNull();
    expect(tablesOfRead("Space", { where: {}, include: { _count: true } })).toBeNull();
    expect(tablesOfRead("Space", { where: {}, include: { organization: { cursor: { id: "x" } } } })).toBeNull();
    expect(tablesOfRead("Space", { where: {}, include: { organization: { select: { nope: true } } } })).toBeNull();
  });

  it("a kept page is handed out as a copy: a reader changing its rows changes no one else's", async () => {
    const db = { kind: "pglite" as const, prisma: {} as never, onCommittedWrite: () => undefined };
    const kept = ListCache.attach(db)!;
    const rows = [{ id: "a", title: "A", payload: { nested: ["x"] }, createdAt: new Date(0) }];
    const read = { where: { organizationId: "o" }, take: 2 };
    const first = await kept.page("Space", read, async () => rows);
    first[0]!.title = "changed";
    (first[0]!.payload.nested as string[]).push("y");
    const second = await kept.page("Space", read, async () => [] as typeof rows);
    expect(second).toEqual([{ id: "a", title: "A", payload: { nested: ["x"] }, createdAt: new Date(0) }]);
    expect(kept.stats.page).toEqual({ hits: 1, misses: 1 });
  });

  it("a page read and not kept is its reader's own (no copy); one kept is copied for every reader", async () => {
    const writes: ((tables: Map<string, string[]>) => void)[] = [];
    const db = {
      kind: "pglite" as const,
      prisma: {} as never,
      onCommittedWrite: (l: any) => void writes.push((tables) => l(tables, new Map())),
    };
    const kept = ListCache.attach(db)!;
    const rows = [{ id: "a" }];
    // Its table written while it was read: not kept, handed back as read.
    expect(await kept.page("Space", { where: { id: "w" } }, async () => (writes[0]!(new Map([["Space", []]])), rows))).toBe(rows);
    // A read naming what the schema does not tell: never kept.
    expect(await kept.page("Space", { where: { nope: 1 } }, async () => rows)).toBe(rows);
    const first = await kept.page("Space", { where: { id: "k" } }, async () => rows);
    expect(first).not.toBe(rows);
    expect(first).toEqual(rows);
  });

  it("LIST_CACHE turns it off, COUNT_CACHE (its former name) too when LIST_CACHE is unset", () => {
    expect(loadConfig({}).listCache).toBe(true);
    expect(loadConfig({ LIST_CACHE: "off" }).listCache).toBe(false);
    expect(loadConfig({ COUNT_CACHE: "off" }).listCache).toBe(false);
    expect(loadConfig({ LIST_CACHE: "on", COUNT_CACHE: "off" }).listCache).toBe(true);
    expect(() => loadConfig({ LIST_CACHE: "sometimes" })).toThrow(/LIST_CACHE/);
    expect(() => loadConfig({ COUNT_CACHE: "sometimes" })).toThrow(/COUNT_CACHE/);
  });

  it("pages past the memory bound are not kept; the least recently used go first", async () => {
    const db = { kind: "pglite" as const, prisma: {} as never, onCommittedWrite: () => undefined };
    const kept = ListCache.attach(db)!;
    const big = [{ text: "x".repeat(1_100_000) }];
    expect(sizeOf(big)).toBeGreaterThan(2 * 1024 * 1024);
    let reads = 0;
    const reading = (rows: unknown[]) => async () => (reads++, rows);
    await kept.page("Space", { where: { id: "big" } }, reading(big));
    await kept.page("Space", { where: { id: "big" } }, reading(big));
    expect(reads).toBe(2);
    // 1.5 MB pages: 21 of them pass the 32 MB bound, and the first ones read go.
    const page = [{ text: "y".repeat(750_000) }];
    for (let i = 0; i < 25; i++) await kept.page("Space", { where: { id: `p${i}` } }, reading(page));
    reads = 0;
    await kept.page("Space", { where: { id: "p24" } }, reading(page));
    expect(reads).toBe(0);
    await kept.page("Space", { where: { id: "p0" } }, reading(page));
    expect(reads).toBe(1);
  });

  it("tables are named as their models, so the tables writes are reported by are those a filter names", () => {
    // The database layer names the tables of a write from its SQL; a filter names models. A model
    // mapped to a table of another name (@@map) would keep its counts past the writes to it.
    const schema = fs.readFileSync(path.join(import.meta.dirname, "../../prisma/schema.prisma"), "utf8");
    expect(schema).not.toMatch(/@@map\s*\(/);
  });

  it("a filter naming what the schema does not tell is never kept", () => {
    expect(tablesOf("Space", { nope: 1 })).toBeNull();
    expect(tablesOf("Nope", {})).toBeNull();
    expect(tablesOf("Space", { access: { some: { userId: "u" }, extra: 1 } })).toBeNull();
    expect(tablesOf("Space", { access: "u" })).toBeNull();
  });

  it("a count read while a table it reads is written is not kept; one read before the write is not answered after it", async () => {
    const writes: ((tables: Map<string, string[]>) => void)[] = [];
    const db = {
      kind: "pglite" as const,
      prisma: {} as never,
      onCommittedWrite: (l: any) => void writes.push((tables) => l(tables, new Map())),
    };
    const kept = ListCache.attach(db)!;
    let reads = 0;
    const read = (value: number, during?: () => void) => async () => {
      reads++;
      during?.();
      return value;
    };
    expect(await kept.count("Space", { organizationId: "o" }, read(1))).toBe(1);
    expect(await kept.count("Space", { organizationId: "o" }, read(99))).toBe(1);
    expect(reads).toBe(1);
    // A write to a table the filter does not read keeps it.
    writes[0]!(new Map([["Comment", []]]));
    expect(await kept.count("Space", { organizationId: "o" }, read(99))).toBe(1);
    // One to its table drops it.
    writes[0]!(new Map([["Space", []]]));
    expect(
      await kept.count(
        "Space",
        { organizationId: "o" },
        read(2, () => writes[0]!(new Map([["Space", []]]))),
      ),
    ).toBe(2);
    // That count landed after a write it may not have seen: read again.
    expect(await kept.count("Space", { organizationId: "o" }, read(3))).toBe(3);
    expect(await kept.count("Space", { organizationId: "o" }, read(99))).toBe(3);
    expect(reads).toBe(3);
  });

  it("a read that fails keeps nothing; a key over 4,096 characters and a value past its time are read again", async () => {
    const db = { kind: "pglite" as const, prisma: {} as never, onCommittedWrite: () => undefined };
    const kept = ListCache.attach(db)!;
    let reads = 0;
    const read = (value: number) => async () => (reads++, value);
    // A failure reaches its caller and stores nothing: the next read goes to the database.
    await expect(kept.count("Space", { organizationId: "f" }, () => Promise.reject(new Error("database went away")))).rejects.toThrow(
      "database went away",
    );
    expect(await kept.count("Space", { organizationId: "f" }, read(4))).toBe(4);
    expect(await kept.count("Space", { organizationId: "f" }, read(99))).toBe(4);
    expect(reads).toBe(1);
    // A filter whose key is too long to keep (a long cursor) is read each time.
    const long = { organizationId: "x".repeat(5_000) };
    expect(await kept.count("Space", long, read(5))).toBe(5);
    expect(await kept.count("Space", long, read(6))).toBe(6);
    expect(reads).toBe(3);
    // Past LIST_CACHE_TTL_MS (here 0) a kept value is read again, written or not.
    const expiring = ListCache.attach(db, 0)!;
    expect(await expiring.count("Space", { organizationId: "t" }, read(7))).toBe(7);
    expect(await expiring.count("Space", { organizationId: "t" }, read(8))).toBe(8);
    expect(reads).toBe(5);
    expect(expiring.stats.count).toEqual({ hits: 0, misses: 2 });
  });

  it("on PostgreSQL nothing is kept (other processes write the same database)", () => {
    if (EMBEDDED) expect(t.gateway.listCache).toBeInstanceOf(ListCache);
    else expect(t.gateway.listCache).toBeNull();
    expect(ListCache.attach({ kind: "postgres", prisma: {} as never, onCommittedWrite: () => undefined })).toBeNull();
  });
});
