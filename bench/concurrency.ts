import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freshPostgres } from "../test/helpers/postgres.js";
import { runWhenMain } from "./common.js";
import { loadConfig } from "../src/config.js";
import { createGateway } from "../src/server.js";
import { runAdminCommand } from "../src/cli/commands.js";
import { configureLogging } from "../src/core/logger.js";

/**
 * Concurrent writes through the REST face of one gateway, and lost PostgreSQL connections under
 * load. Prints, for each case, how the answers were spread over statuses (e.g. `201×50`): the
 * target is that compatible concurrent writes all succeed, and that nothing answers 500 or a
 * wrong 404. On the embedded database by default, on PostgreSQL when DATABASE_URL is set (a fresh
 * database is created and dropped).
 *
 *   npx tsx bench/concurrency.ts     (env BENCH_KILL_SECONDS: length of the lost-connection phase, default 8,
 *                                      0 to skip it; BENCH_ONLY_LOST=1: that phase alone)
 */
export async function concurrencyFigures() {
  const baseUrl = process.env.DATABASE_URL;
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  if (baseUrl) {
    const database = await freshPostgres(baseUrl, "bench");
    databaseUrl = database.url;
    dropDatabase = database.drop;
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-bench-"));
  const config = {
    ...loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || "silent", PORT: "0" }),
    dataDir,
    databaseUrl,
    redisUrl: undefined,
    host: "127.0.0.1",
  };
  configureLogging(config);
  const gateway = await createGateway(config);
  const port = await gateway.listen(0);
  const base = `http://127.0.0.1:${port}/v1`;
  console.log(`database: ${gateway.db.kind}`);
  try {
    const boot = (await runAdminCommand(gateway.db.prisma, { command: "bootstrap", email: "bench@acme.test", org: "Bench" })) as any;
    const member = (await runAdminCommand(gateway.db.prisma, {
      command: "member-add",
      org: boot.organization,
      email: "m@acme.test",
      role: "edit",
    })) as any;
    const org = boot.organization as string;
    // An answer that takes longer than 30 s counts as status 0 (no answer).
    const call = async (method: string, p: string, body?: unknown) => {
      let res: Response;
      let text: string;
      try {
        res = await fetch(base + p, {
          method,
          headers: { authorization: `Bearer ${boot.token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        text = await res.text();
      } catch {
        return { status: 0, body: undefined, retryAfter: null };
      }
      return { status: res.status, body: text ? JSON.parse(text) : undefined, retryAfter: res.headers.get("retry-after") };
    };
    const spread = (statuses: number[]) => {
      const counts = new Map<number, number>();
      for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
      return [...counts]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(" ");
    };
    const all = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));

    if (process.env.BENCH_ONLY_LOST && gateway.db.kind === "postgres") return await lostConnections(config.databaseUrl!, call, org, spread);

    // Idempotent PUTs: 5 rounds of 10 identical requests at once.
    const team = (await call("PUT", `/orgs/${org}/teams`, { title: "Crew" })).body.id;
    const statuses: number[] = [];
    for (let round = 0; round < 5; round++) {
      const user =
        round === 0
          ? member.user
          : ((await runAdminCommand(gateway.db.prisma, { command: "member-add", org, email: `r${round}@acme.test`, role: "read" })) as any)
              .user;
      // Rounds alternate between a body naming the role and an empty one (role kept or member).
      const body = round % 2 ? {} : { role: "member" };
      statuses.push(...(await all(10, () => call("PUT", `/orgs/${org}/teams/${team}/members/${user}`, body))).map((r) => r.status));
    }
    console.log(`PUT team member, 5 rounds × 10 identical at once: ${spread(statuses)}`);
    const bulkUser = (
      (await runAdminCommand(gateway.db.prisma, { command: "member-add", org, email: "bulk@acme.test", role: "read" })) as any
    ).user;
    const bulk = await all(10, () =>
      call("PUT", `/orgs/${org}/teams/${team}/members`, { add: [bulkUser], memberships: { [bulkUser]: { role: "owner" } } }),
    );
    console.log(`PUT team members (add + memberships), 10 identical at once: ${spread(bulk.map((r) => r.status))}`);

    await call("POST", "/integrations/benchint", { title: "Bench", organization: org, visibility: "private", target: "all" });
    const installation = (await call("POST", "/integrations/benchint/installations", { organization: org })).body.id;
    const space = (await call("POST", `/orgs/${org}/spaces`, { title: "Install" })).body.id;
    const site = (await call("POST", `/orgs/${org}/sites`, { title: "Install" })).body.id;
    const spaceInstalls = await all(10, () =>
      call("PUT", `/integrations/benchint/installations/${installation}/spaces/${space}`, { configuration: {} }),
    );
    console.log(`PUT space installation, 10 identical at once: ${spread(spaceInstalls.map((r) => r.status))}`);
    const siteInstalls = await all(10, () =>
      call("PUT", `/integrations/benchint/installations/${installation}/sites/${site}`, { configuration: {} }),
    );
    console.log(`PUT site installation, 10 identical at once: ${spread(siteInstalls.map((r) => r.status))}`);
    const comment = (await call("POST", `/spaces/${space}/comments`, { body: { markdown: "React" } })).body.id;
    const reactions = await all(10, () => call("PUT", `/spaces/${space}/comments/${comment}`, { addedReactions: ["👍"] }));
    console.log(`PUT comment reaction, 10 identical at once: ${spread(reactions.map((r) => r.status))}`);

    if (process.env.BENCH_ONLY_IDEMPOTENT) return;
    // Change requests in one space.
    const crSpace = (await call("POST", `/orgs/${org}/spaces`, { title: "Change requests" })).body.id;
    const crs = await all(50, (i) => call("POST", `/spaces/${crSpace}/change-requests`, { subject: `CR ${i}` }));
    const numbers = crs
      .filter((r) => r.status === 201)
      .map((r) => r.body.number as number)
      .sort((a, b) => a - b);
    const contiguous = numbers.every((n, i) => n === i + 1);
    console.log(
      `POST change request, 50 at once in one space: ${spread(crs.map((r) => r.status))}; numbers ${contiguous ? `1..${numbers.length} contiguous` : numbers.join(",")}`,
    );

    // Pages in one space.
    const pageSpace = (await call("POST", `/orgs/${org}/spaces`, { title: "Pages" })).body.id;
    const created = await all(20, (i) => call("POST", `/spaces/${pageSpace}/content/pages`, { title: `Page ${i}` }));
    const pages = (await call("GET", `/spaces/${pageSpace}/content/pages`)).body.pages.length;
    console.log(`POST page, 20 at once in one space: ${spread(created.map((r) => r.status))}; ${pages} pages stored`);
    const ids = created.filter((r) => r.status < 300).map((r) => r.body.id as string);
    const edits = await all(ids.length, (i) => call("PATCH", `/spaces/${pageSpace}/content/page/${ids[i]}`, { markdown: `Edited ${i}` }));
    const landed = (await all(ids.length, (i) => call("GET", `/spaces/${pageSpace}/content/page/${ids[i]}`))).filter(
      (r, i) => r.body?.markdown?.trim() === `Edited ${i}`,
    ).length;
    console.log(`PATCH page, ${ids.length} different pages at once: ${spread(edits.map((r) => r.status))}; ${landed} edits landed`);

    // Merges of change requests that touch different pages.
    const mergeSpace = (await call("POST", `/orgs/${org}/spaces`, { title: "Merges" })).body.id;
    const toMerge: number[] = [];
    for (let i = 0; i < 20; i++) {
      const cr = (await call("POST", `/spaces/${mergeSpace}/change-requests`, { subject: `M ${i}` })).body;
      await call("POST", `/spaces/${mergeSpace}/change-requests/${cr.number}/content/pages`, { title: `Merged page ${i}` });
      toMerge.push(cr.number);
    }
    const merges = await all(toMerge.length, (i) => call("POST", `/spaces/${mergeSpace}/change-requests/${toMerge[i]}/merge`));
    const merged = (await call("GET", `/spaces/${mergeSpace}/content/pages`)).body.pages.length;
    console.log(
      `POST merge, 20 non-conflicting change requests at once: ${spread(merges.map((r) => r.status))}; ${merged} pages in the space`,
    );

    if (process.env.BENCH_ONLY_IDEMPOTENT) return;
    if (gateway.db.kind === "postgres" && process.env.BENCH_KILL_SECONDS !== "0")
      await lostConnections(config.databaseUrl!, call, org, spread);
  } finally {
    await gateway.close();
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Reads and writes run while another client terminates the server's connections every 150 ms.
 */
async function lostConnections(
  databaseUrl: string,
  call: (method: string, p: string, body?: unknown) => Promise<{ status: number; body: any; retryAfter: string | null }>,
  org: string,
  spread: (s: number[]) => string,
) {
  const seconds = Number(process.env.BENCH_KILL_SECONDS || 8);
  const space = (await call("POST", `/orgs/${org}/spaces`, { title: "Lost connections" })).body.id;
  const page = (await call("POST", `/spaces/${space}/content/pages`, { title: "Target" })).body.id;
  const killer = new pg.Client({ connectionString: databaseUrl });
  await killer.connect();
  const until = Date.now() + seconds * 1000;
  let killed = 0;
  const kill = (async () => {
    while (Date.now() < until) {
      const r = await killer.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
      );
      killed += r.rowCount ?? 0;
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  const reads: number[] = [];
  const writes: number[] = [];
  let retryAfter = 0;
  const worker = async (write: boolean, i: number) => {
    let n = 0;
    while (Date.now() < until) {
      const r = write
        ? await call("PATCH", `/spaces/${space}/content/page/${page}`, { markdown: `w${i}-${n++}` })
        : await call("GET", `/spaces/${space}`);
      (write ? writes : reads).push(r.status);
      if (r.status === 503 && r.retryAfter) retryAfter++;
    }
  };
  await Promise.all([
    kill,
    ...Array.from({ length: 4 }, (_, i) => worker(false, i)),
    ...Array.from({ length: 2 }, (_, i) => worker(true, i)),
  ]);
  await killer.end();
  console.log(
    `lost connections (${killed} backends terminated in ${seconds} s): GET space ${spread(reads)}; PATCH page ${spread(writes)}; ${retryAfter} answers 503 with Retry-After`,
  );
}

runWhenMain(import.meta.url, concurrencyFigures);
