import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import { Worker } from "node:worker_threads";
import { Agent, fetch as undiciFetch } from "undici";
import { freshPostgres } from "../test/helpers/postgres.js";
import { percentile, runWhenMain } from "./common.js";
import { loadConfig, type Config } from "../src/config.js";
import { createGateway, type Gateway } from "../src/server.js";
import { runAdminCommand } from "../src/cli/commands.js";
import { createLogger } from "../src/core/logger.js";

/**
 * The request path against the database itself, measured in one run so that only the ratios
 * between rows mean anything (absolute figures follow the machine's load):
 *
 * - the same Space row read by a raw node:http handler with one driver SELECT, by node:http with
 *   the project's Prisma client (`findUnique`), by GraphQL (the same fields as REST) and by
 *   `GET /v1/spaces/{id}`, as the server runs by default but without the response cache
 *   (RESPONSE_CACHE=off) and, on a second gateway, with nothing shared between requests: no
 *   access cache (ACCESS_CACHE_TTL_MS=0), no request coalescing (REQUEST_COALESCING=off: identical
 *   GETs arriving together share one answer, rest/request-coalescing.ts), no pages or counts kept between writes
 *   (LIST_CACHE=off, core/cache/list-cache.ts); and the REST GET of the list's 50
 *   spaces in turn (requests under way together read different rows, which they read in one
 *   statement: core/graph/loaders.ts `readTogether`);
 * - the same REST GET and GraphQL query on a third gateway with the response cache on
 *   (RESPONSE_CACHE=on): answers served from it, against the rows above;
 * - the REST list of 50 spaces, without and with the response cache and with nothing shared, and the raw handler reading
 *   the same page of rows in one SELECT (the floor of a list, as the raw GET is of a GET); then
 *   the list and the REST GET again in BENCH_LIST_ROUNDS rounds back to back (3), whose median
 *   ratio drifts less with the machine's speed than that of two rows measured apart;
 * - the same list in an organization of BENCH_LONG_LIST spaces (20,000): first pages and pages
 *   from 200 on (after a cursor), ten different ones in turn, against the list of 50 (a page reads
 *   its rows in index order);
 * - the nested organization → spaces → change requests → comments query at N = 5 and 50
 *   (N spaces, each with 3 change requests of 3 comments), with its SQL statements per request,
 *   and at N = 5 with 500 change requests a space (the page of 10 under each reads 11 rows of it);
 * - writes: `POST /v1/orgs/{id}/collections`, `PATCH /v1/spaces/{id}/content/page/{pageId}` and
 *   the same page edited in a change request (`…/change-requests/{number}/content/page/{pageId}`).
 *
 * Load comes from autocannon on a worker thread (BENCH_CONNECTIONS connections, 10 by default,
 * for BENCH_DURATION seconds each, 4 by default). The embedded database (PGlite) by default,
 * PostgreSQL when DATABASE_URL is set (a fresh database is created beside the given one and dropped).
 *
 *   npm run bench                  (every benchmark)
 *   npx tsx bench/http.ts          (this one)
 */
export async function requestPath() {
  const duration = Number(process.env.BENCH_DURATION || 4);
  const connections = Number(process.env.BENCH_CONNECTIONS || 10);
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const main = await startBenchGateway({ responseCache: "off" }, cleanups);
    const uncached = await startBenchGateway(
      { accessCacheTtlMs: 0, responseCache: "off", requestCoalescing: false, listCache: false },
      cleanups,
    );
    const cachedGateway = await startBenchGateway({ responseCache: "on" }, cleanups);
    console.log(
      `database: ${main.gateway.db.kind === "pglite" ? "embedded (PGlite)" : "PostgreSQL"}; ${connections} connections, ${duration} s per row`,
    );

    const a = await seed(main, true);
    const b = await seed(uncached);
    const c = await seed(cachedGateway);
    // The upkeep a running server does within the hour (the embedded database's planner statistics).
    for (const { gateway } of [main, uncached, cachedGateway]) await gateway.maintain?.();

    // Baselines on the main gateway's own database: a raw driver handler and a Prisma handler.
    const raw = await listenRaw(async (id) => (await main.gateway.db.driverQuery('SELECT * FROM "Space" WHERE id = $1', [id]))[0]);
    const orm = await listenRaw((id) => main.gateway.db.prisma.space.findUnique({ where: { id } }));
    // The floor of a list: the same raw handler reading the list's page of rows (one more than
    // shown, as a page does to know whether another follows) in one SELECT.
    const rawList = await listenRaw(async () =>
      (
        await main.gateway.db.driverQuery('SELECT * FROM "Space" WHERE "organizationId" = $1 ORDER BY position, id LIMIT 51', [
          a.organization,
        ])
      ).slice(0, 50),
    );
    cleanups.push(raw.close, orm.close, rawList.close);

    const rows: Row[] = [];
    const measure = async (row: Omit<Row, "rps" | "statements" | "non2xx">, gateway?: Gateway) => {
      const statements = gateway ? await statementsPerRequest(gateway, row) : undefined;
      const result = await load({ ...row, connections, duration });
      const done: Row = { ...row, rps: result.rps, statements, non2xx: result.non2xx + result.errors };
      rows.push(done);
      console.log(format(done));
      return done;
    };
    const gql = (g: Seeded, query: string, variables: Record<string, unknown>) => ({
      url: `${g.url}/graphql`,
      method: "POST",
      headers: g.headers,
      body: JSON.stringify({ query, variables }),
    });

    const rawRow = await measure({ name: "raw node:http + driver, one SELECT", url: `${raw.url}/${a.spaceId}` });
    const ormRow = await measure({ name: "node:http + Prisma findUnique", url: `${orm.url}/${a.spaceId}` });
    const rawListRow = await measure({ name: "raw node:http + driver, list of 50, one SELECT", url: `${rawList.url}/list` });
    const restUn = await measure(
      { name: "REST GET /v1/spaces/{id}, nothing shared", url: `${b.url}/v1/spaces/${b.spaceId}`, headers: b.headers },
      uncached.gateway,
    );
    const gqlUn = await measure(
      { name: "GraphQL same fields, nothing shared", ...gql(b, SPACE_QUERY, { id: b.spaceId }) },
      uncached.gateway,
    );
    const rest = await measure(
      { name: "REST GET /v1/spaces/{id}", url: `${a.url}/v1/spaces/${a.spaceId}`, headers: a.headers },
      main.gateway,
    );
    const restEach = await measure(
      {
        name: "REST GET /v1/spaces/{id}, 50 spaces in turn",
        url: `${a.url}/v1/spaces/${a.listed[0]}`,
        paths: a.listed.map((id) => `/v1/spaces/${id}`),
        headers: a.headers,
      },
      main.gateway,
    );
    const graph = await measure({ name: "GraphQL same fields", ...gql(a, SPACE_QUERY, { id: a.spaceId }) }, main.gateway);
    const restCached = await measure(
      { name: "REST GET /v1/spaces/{id}, response cache", url: `${c.url}/v1/spaces/${c.spaceId}`, headers: c.headers },
      cachedGateway.gateway,
    );
    const graphCached = await measure(
      { name: "GraphQL same fields, response cache", ...gql(c, SPACE_QUERY, { id: c.spaceId }) },
      cachedGateway.gateway,
    );
    const list = await measure(
      { name: "REST list of 50 spaces", url: `${a.url}/v1/orgs/${a.organization}/spaces?limit=50`, headers: a.headers },
      main.gateway,
    );
    const listUn = await measure(
      { name: "REST list of 50 spaces, nothing shared", url: `${b.url}/v1/orgs/${b.organization}/spaces?limit=50`, headers: b.headers },
      uncached.gateway,
    );
    const listCached = await measure(
      { name: "REST list of 50 spaces, response cache", url: `${c.url}/v1/orgs/${c.organization}/spaces?limit=50`, headers: c.headers },
      cachedGateway.gateway,
    );
    // The same two rows again, in turns: this machine's speed drifts between rows a few seconds
    // apart, so the list's ratio to the GET is also read as the median of rounds measured back to back.
    const turns: number[] = [];
    for (let round = 0; round < LIST_ROUNDS; round++) {
      const listRound = await load({ url: list.url, headers: a.headers, connections, duration });
      const getRound = await load({ url: rest.url, headers: a.headers, connections, duration });
      turns.push(getRound.rps ? listRound.rps / getRound.rps : 0);
    }
    const long = a.long!;
    const longFirst = await measure(
      {
        name: `REST list of ${LONG_LIST} spaces, page 1 (${PAGES_IN_TURN} in turn)`,
        url: `${a.url}${long.first[0]}`,
        paths: long.first,
        headers: a.headers,
      },
      main.gateway,
    );
    const longDeep = await measure(
      {
        name: `REST list of ${LONG_LIST} spaces, pages ${long.deepPage}+ (${PAGES_IN_TURN} in turn)`,
        url: `${a.url}${long.deep[0]}`,
        paths: long.deep,
        headers: a.headers,
      },
      main.gateway,
    );
    const n5 = await measure(
      { name: "nested org→spaces→CRs→comments, N=5", ...gql(a, NESTED_QUERY, { org: a.nested5, n: 5 }) },
      main.gateway,
    );
    const n50 = await measure(
      { name: "nested org→spaces→CRs→comments, N=50", ...gql(a, NESTED_QUERY, { org: a.nested50, n: 50 }) },
      main.gateway,
    );
    const deep = await measure(
      { name: `nested N=5, ${NESTED_DEEP} change requests a space`, ...gql(a, NESTED_QUERY, { org: a.nestedDeep, n: 5 }) },
      main.gateway,
    );
    const post = await measure(
      {
        name: "POST /v1/orgs/{id}/collections",
        url: `${a.url}/v1/orgs/${a.organization}/collections`,
        method: "POST",
        headers: a.headers,
        body: JSON.stringify({ title: "Bench" }),
      },
      main.gateway,
    );
    const patch = await measure(
      {
        name: "PATCH /v1/spaces/{id}/content/page/{pageId}",
        url: `${a.url}/v1/spaces/${a.spaceId}/content/page/${a.pageId}`,
        method: "PATCH",
        headers: a.headers,
        body: JSON.stringify({ title: "Bench page" }),
      },
      main.gateway,
    );
    const proposed = await measure(
      {
        name: "PATCH …/change-requests/{n}/content/page/{pageId}",
        url: `${a.url}/v1/spaces/${a.spaceId}/change-requests/${a.changeRequest}/content/page/${a.pageId}`,
        method: "PATCH",
        headers: a.headers,
        body: JSON.stringify({ title: "Proposed page" }),
      },
      main.gateway,
    );

    const ratio = (x: Row, y: Row) => (y.rps ? (x.rps / y.rps).toFixed(2) : "n/a");
    console.log("ratios (same run):");
    console.log(`  REST GET / raw driver          ${ratio(rest, rawRow)}   (nothing shared: ${ratio(restUn, rawRow)})`);
    console.log(`  REST GET / Prisma findUnique   ${ratio(rest, ormRow)}   (nothing shared: ${ratio(restUn, ormRow)})`);
    console.log(`  REST GET / GraphQL same fields ${ratio(rest, graph)}   (nothing shared: ${ratio(restUn, gqlUn)})`);
    console.log(`  GraphQL / raw driver           ${ratio(graph, rawRow)}`);
    console.log(`  REST GET cached / raw driver   ${ratio(restCached, rawRow)}   (cached / uncached: ${ratio(restCached, rest)})`);
    console.log(`  GraphQL cached / raw driver    ${ratio(graphCached, rawRow)}   (cached / uncached: ${ratio(graphCached, graph)})`);
    console.log(`  REST GET / same, nothing shared ${ratio(rest, restUn)}`);
    console.log(`  REST GET, 50 spaces in turn / one space  ${ratio(restEach, rest)}`);
    console.log(
      `  list of 50 / REST GET          ${ratio(list, rest)}   (both from the response cache: ${ratio(listCached, restCached)}; both with nothing shared: ${ratio(listUn, restUn)})`,
    );
    console.log(
      `  list of 50 / REST GET, ${LIST_ROUNDS} rounds back to back  median ${percentile(
        [...turns].sort((x, y) => x - y),
        50,
      ).toFixed(2)}   (rounds: ${turns.map((r) => r.toFixed(2)).join(" ")})`,
    );
    console.log(
      `  list of 50 / raw driver list   ${ratio(list, rawListRow)}   (the raw handler's own list / one row: ${ratio(rawListRow, rawRow)})`,
    );
    console.log(
      `  list of ${LONG_LIST}: page 1 / list of 50  ${ratio(longFirst, list)}   page ${long.deepPage}+ / page 1 ${ratio(longDeep, longFirst)}   (pages and the count are read once, then kept until a write: core/cache/list-cache.ts)`,
    );
    console.log(`  nested N=50 / N=5              ${ratio(n50, n5)}   statements ${n5.statements} → ${n50.statements}`);
    console.log(
      `  nested N=5, ${NESTED_DEEP} / 3 CRs a space ${ratio(deep, n5)}   (a page of 10 under each space reads 11 of its rows: core/db/bounded-pages.ts)`,
    );
    console.log(`  POST collection / REST GET     ${ratio(post, rest)}`);
    console.log(`  PATCH page / REST GET          ${ratio(patch, rest)}`);
    console.log(`  PATCH page in a change request / PATCH page  ${ratio(proposed, patch)}`);
    if (rows.some((r) => r.non2xx)) console.log("  (rows with failed answers are marked: their figures do not count)");
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err) => console.error(err));
  }
}

interface Row {
  name: string;
  url: string;
  /** Paths requested in turn on the url's origin (the url itself is the first). */
  paths?: string[];
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  rps: number;
  statements?: number;
  non2xx: number;
}

function format(row: Row): string {
  const rps = `${row.rps.toFixed(0)} req/s`.padStart(12);
  const statements = row.statements === undefined ? "" : `  ${row.statements} SQL/request`;
  const failed = row.non2xx ? `  (${row.non2xx} failed answers!)` : "";
  return `  ${row.name.padEnd(48)}${rps}${statements}${failed}`;
}

const SPACE_QUERY = /* GraphQL */ `
  query Space($id: String!) {
    space(spaceId: $id) {
      id object title emoji visibility createdAt updatedAt deletedAt editMode
      urls { location app published public icon }
      organization { id } parent { id } gitSync { repoName } visitorAuth { backend } revision defaultLevel
      commentsCount changeRequestsCount openChangeRequestsCount draftChangeRequestsCount
      permissions { view access admin viewInviteLinks edit triggerGitSync comment merge review }
    }
  }
`;

const NESTED_QUERY = /* GraphQL */ `
  query Nested($org: String!, $n: Int!) {
    organization(organizationId: $org) {
      id
      spaces(first: $n) {
        edges {
          node {
            id title commentsCount
            changeRequests(first: 10) {
              edges { node { id number status commentsCount comments(first: 10) { edges { node { id status postedAt postedBy { id } } } } } }
            }
          }
        }
      }
    }
  }
`;

interface Started {
  gateway: Gateway;
  url: string;
}

async function startBenchGateway(overrides: Partial<Config>, cleanups: (() => Promise<unknown>)[]): Promise<Started> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-bench-"));
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  let databaseUrl: string | undefined;
  if (process.env.DATABASE_URL) {
    const database = await freshPostgres(process.env.DATABASE_URL, "bench");
    databaseUrl = database.url;
    cleanups.push(database.drop);
  }
  const config: Config = {
    ...loadConfig({ ...process.env, PORT: "0", LOG_SQL: "" }),
    dataDir,
    databaseUrl,
    host: "127.0.0.1",
    rateLimitPerMinute: 0,
    integrationDispatchPollMs: 60 * 60 * 1000,
    ...overrides,
  };
  const gateway = await createGateway(config, { logger: createLogger({ level: "silent", format: "json" }) });
  cleanups.push(() => gateway.close());
  const port = await gateway.listen(0);
  return { gateway, url: `http://127.0.0.1:${port}` };
}

interface Seeded {
  url: string;
  headers: Record<string, string>;
  organization: string;
  spaceId: string;
  pageId: string;
  /** The number of a change request of the space. */
  changeRequest: number;
  /** The 50 spaces of the list. */
  listed: string[];
  nested5: string;
  nested50: string;
  /** N = 5, each space with NESTED_DEEP change requests (the query shows 10 of each). */
  nestedDeep: string;
  /** The first page and a page deep in the spaces of an organization of LONG_LIST spaces (50 a page). */
  /** Paths of first pages (of 50 to 59 spaces) and of pages from deepPage on (of 50), each read in turn. */
  long?: { first: string[]; deep: string[]; deepPage: number };
}

/** Rounds of the list of 50 and the REST GET measured back to back (BENCH_LIST_ROUNDS). */
const LIST_ROUNDS = Number(process.env.BENCH_LIST_ROUNDS || 3);

/** Spaces of the organization whose long list is read (BENCH_LONG_LIST). */
const LONG_LIST = Number(process.env.BENCH_LONG_LIST || 20_000);
/** Pages of the long list each of its rows reads in turn. */
const PAGES_IN_TURN = 10;

/** Change requests per space and comments per change request in the nested query's organizations. */
const NESTED_CHILDREN = 3;
/** Change requests per space in the third organization: a page of 10 under each of 5 spaces reads 11 of each. */
const NESTED_DEEP = 500;

/** One space with a page, 50 more spaces, and two organizations of N spaces, each with 3 change requests of 3 comments; with `withLongList`, an organization of LONG_LIST spaces. */
async function seed({ gateway, url }: Started, withLongList = false): Promise<Seeded> {
  const prisma = gateway.db.prisma;
  const boot = (await runAdminCommand(prisma, { command: "bootstrap", email: "bench@acme.test", org: "Bench" })) as any;
  const headers = { authorization: `Bearer ${boot.token}`, "content-type": "application/json" };
  const call = async (method: string, route: string, body?: unknown) => {
    const res = await fetchNamed(`${url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const space = await call("POST", `/v1/orgs/${boot.organization}/spaces`, { title: "Bench", emoji: "📚" });
  const page = await call("POST", `/v1/spaces/${space.id}/content/pages`, { title: "Bench page" });
  const changeRequest = await call("POST", `/v1/spaces/${space.id}/change-requests`, { subject: "Bench" });
  await prisma.space.createMany({
    data: Array.from({ length: 50 }, (_, i) => ({
      id: `spc_list_${i}`,
      organizationId: boot.organization,
      title: `List ${i}`,
      position: 10 + i,
    })),
  });
  const nested = async (n: number, requestsPerSpace = NESTED_CHILDREN) => {
    const label = `${n}x${requestsPerSpace}`;
    const org = (await runAdminCommand(prisma, { command: "bootstrap", email: "bench@acme.test", org: `Nested ${label}` })) as any;
    const spaces = Array.from({ length: n }, (_, i) => ({
      id: `spc_n${label}_${i}`,
      organizationId: org.organization,
      title: `Space ${i}`,
      position: i,
    }));
    await prisma.space.createMany({ data: spaces });
    const content = { pages: {}, files: {}, reusableContents: {}, variables: {} };
    await prisma.revision.createMany({ data: spaces.map((s) => ({ id: `rev_${s.id}`, spaceId: s.id, content })) });
    const requests = spaces.flatMap((s) =>
      Array.from({ length: requestsPerSpace }, (_, i) => ({
        id: `${s.id}_cr${i}`,
        spaceId: s.id,
        number: i + 1,
        status: "open" as const,
        createdById: boot.user,
        revisionId: `rev_${s.id}`,
        revisionInitial: `rev_${s.id}`,
      })),
    );
    await prisma.changeRequest.createMany({ data: requests });
    const comments = requests.flatMap((r) =>
      Array.from({ length: NESTED_CHILDREN }, (_, i) => ({
        id: `${r.id}_c${i}`,
        spaceId: r.spaceId,
        changeRequestId: r.id,
        markdown: `comment ${i}`,
        postedById: boot.user,
      })),
    );
    await prisma.comment.createMany({ data: comments });
    return org.organization as string;
  };
  /** An organization of LONG_LIST spaces with their revisions (three created in each second), walked to its page 200. */
  const longList = async () => {
    const org = (await runAdminCommand(prisma, { command: "bootstrap", email: "bench@acme.test", org: "Long list" })) as any;
    const start = Date.UTC(2026, 0, 1);
    for (let i = 0; i < LONG_LIST; i += 5_000) {
      const ids = Array.from({ length: Math.min(5_000, LONG_LIST - i) }, (_, j) => i + j);
      await prisma.space.createMany({
        data: ids.map((k) => ({
          id: `spc_long_${k}`,
          organizationId: org.organization,
          title: `Space ${k}`,
          position: k,
          revisionId: `rev_long_${k}`,
          createdAt: new Date(start + Math.floor(k / 3) * 1000),
        })),
      });
      await prisma.revision.createMany({
        data: ids.map((k) => ({
          id: `rev_long_${k}`,
          spaceId: `spc_long_${k}`,
          parents: [],
          type: "initial" as const,
          content: { pages: {}, files: {}, reusableContents: {}, variables: {} },
        })),
      });
    }
    // Requests under way together for the same page share its reads (core/graph/loaders.ts readOnce):
    // each row goes through PAGES_IN_TURN different pages, so that each request reads its own.
    const list = `/v1/orgs/${org.organization}/spaces`;
    const first = Array.from({ length: PAGES_IN_TURN }, (_, i) => `${list}?limit=${50 + i}`);
    const deepPage = Math.max(2, Math.min(200, Math.ceil(LONG_LIST / 50) - PAGES_IN_TURN));
    const deep: string[] = [];
    let next = `${list}?limit=50`;
    for (let page = 1; page < deepPage + PAGES_IN_TURN - 1; page++) {
      const res = await fetchNamed(`${url}${next}`, { headers });
      const body = (await res.json()) as { next?: { page: string } };
      if (!res.ok) throw new Error(`GET ${next}: ${res.status}`);
      if (!body.next) break; // a short list (BENCH_LONG_LIST): its last pages
      next = `${list}?limit=50&page=${encodeURIComponent(body.next.page)}`;
      if (page + 1 >= deepPage) deep.push(next);
    }
    return { first, deep, deepPage };
  };
  return {
    url,
    headers,
    organization: boot.organization,
    spaceId: space.id,
    pageId: page.id,
    changeRequest: changeRequest.number,
    listed: Array.from({ length: 50 }, (_, i) => `spc_list_${i}`),
    nested5: await nested(5),
    nested50: await nested(50),
    nestedDeep: await nested(5, NESTED_DEEP),
    long: withLongList ? await longList() : undefined,
  };
}

/**
 * The benchmark's own requests (seeding, counting statements) go each on a connection of its own.
 * A kept one may sit idle past the gateway's keep-alive (65 s) while this process seeds the long
 * list (about a minute of the embedded database's statements, in the same event loop as the
 * gateway): the next request was written on it just as the gateway's timer, late, closed it
 * (ECONNRESET).
 */
const ownConnections = new Agent({ pipelining: 0 });

/** fetch, whose failure names the request (fetch's own says "fetch failed" and its cause alone). */
async function fetchNamed(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return (await undiciFetch(url, { ...init, dispatcher: ownConnections } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`${init.method ?? "GET"} ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`, { cause: err });
  }
}

/** A node:http server answering `GET /<id>` with the row `read` returns, as JSON. */
async function listenRaw(read: (id: string) => Promise<unknown>): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    try {
      const row = await read(decodeURIComponent(req.url!.slice(1)));
      const body = JSON.stringify(row ?? null);
      res.writeHead(row ? 200 : 404, { "content-type": "application/json; charset=utf-8" });
      res.end(body);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as any).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** SQL statements one request sends: the fewest of three, after a warm-up (background work may add one). */
async function statementsPerRequest(gateway: Gateway, row: Pick<Row, "url" | "method" | "headers" | "body">): Promise<number> {
  const send = async () => {
    const res = await fetchNamed(row.url, { method: row.method ?? "GET", headers: row.headers, body: row.body });
    const text = await res.text();
    if (!res.ok || text.startsWith('{"errors"')) throw new Error(`${row.method ?? "GET"} ${row.url}: ${res.status} ${text.slice(0, 300)}`);
  };
  await send();
  let fewest = Infinity;
  for (let i = 0; i < 3; i++) {
    const before = gateway.db.stats.statements;
    await send();
    fewest = Math.min(fewest, gateway.db.stats.statements - before);
  }
  return fewest;
}

function load(opts: {
  url: string;
  paths?: string[];
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
}) {
  return new Promise<{ rps: number; non2xx: number; errors: number }>((resolve, reject) => {
    const worker = new Worker(new URL("./load-worker.mjs", import.meta.url), { workerData: opts });
    worker.once("message", (m) => (m.error ? reject(new Error(m.error)) : resolve(m)));
    worker.once("error", reject);
  });
}

runWhenMain(import.meta.url, requestPath);
