import fs from "node:fs";
import path from "node:path";
import { inject } from "vitest";
import { loadConfig, type Config } from "../../src/config.js";
import { createGateway, type Gateway } from "../../src/server.js";
import { runAdminCommand } from "../../src/cli/commands.js";
import { OpenApiChecker } from "./openapi.js";
import { FAILED, READY } from "./global-setup.js";
import { testTmpDir } from "./tmp.js";
import { freshPostgres } from "./postgres.js";
import { createLogger, type Logger } from "../../src/core/logger.js";

let quiet: Logger | undefined;
/** The tests' logger: silent unless TEST_LOG_LEVEL asks for more. */
export function testLogger(): Logger {
  return (quiet ??= createLogger({
    level: (process.env.TEST_LOG_LEVEL as Logger["level"] & Config["logLevel"]) || "silent",
    format: "json",
  }));
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Caller {
  token: string;
  get<T = any>(path: string, query?: Record<string, string | number | boolean | undefined>): Promise<Answer<T>>;
  post<T = any>(path: string, body?: unknown): Promise<Answer<T>>;
  put<T = any>(path: string, body?: unknown): Promise<Answer<T>>;
  patch<T = any>(path: string, body?: unknown): Promise<Answer<T>>;
  delete<T = any>(path: string): Promise<Answer<T>>;
  /** Sends a raw body (for malformed JSON tests). */
  raw(method: string, path: string, body: string): Promise<Answer>;
  graphql<T = any>(
    query: string,
    variables?: Record<string, unknown>,
    operationName?: string,
  ): Promise<{ status: number; data?: T; errors?: any; extensions?: any }>;
}

export interface TestGateway {
  gateway: Gateway;
  url: string;
  config: Config;
  openapi: OpenApiChecker;
  /** Creates (or reuses) a user and organization with the admin command, returns an API caller. */
  bootstrap(email: string, org: string): Promise<Caller & { user: string; organization: string }>;
  /** Adds a member with a role and returns a caller for them. */
  member(org: string, email: string, role: string | null): Promise<Caller & { user: string }>;
  caller(token: string): Caller;
  /** A counter or gauge of its /metrics, without labels (NaN when it has none). */
  metric(name: string): Promise<number>;
  close(): Promise<void>;
}

export { freshPostgres };

/**
 * The folder of the migrated embedded database that the global setup builds for this run
 * (test/helpers/global-setup.ts), once it is ready; undefined when there is none.
 */
async function pgliteTemplate(): Promise<string | undefined> {
  let dir: string | undefined;
  try {
    dir = inject("pgliteTemplate") || undefined;
  } catch {
    return undefined; // not under vitest, or a configuration without the global setup
  }
  if (!dir) return undefined;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (fs.existsSync(path.join(dir, READY))) return dir;
    if (fs.existsSync(path.join(dir, FAILED))) {
      throw new Error(`The global setup could not build the database template:\n${fs.readFileSync(path.join(dir, FAILED), "utf8")}`);
    }
    if (Date.now() > deadline) throw new Error(`The database template in ${dir} was not ready within 120 s.`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts a gateway on a fresh database (an embedded one in a temporary folder, or a new
 * PostgreSQL database when DATABASE_URL is set) listening on a free port.
 */
export async function startGateway(overrides: Partial<Config> = {}, opts: { logger?: Logger } = {}): Promise<TestGateway> {
  const dataDir = fs.mkdtempSync(path.join(testTmpDir(), "docs-api-test-"));
  const pgdb = process.env.DATABASE_URL ? await freshPostgres(process.env.DATABASE_URL) : null;
  const config: Config = {
    ...loadConfig({ ...process.env, PORT: "0" }),
    dataDir,
    databaseUrl: pgdb?.url,
    redisUrl: process.env.REDIS_URL || undefined,
    host: "127.0.0.1",
    ...overrides,
  };
  let gateway: Gateway;
  try {
    // A fresh embedded database starts as a copy of the migrated template: copying is much
    // faster than PGlite's initdb, and the server still applies any migration it lacks.
    const template = config.databaseUrl ? undefined : await pgliteTemplate();
    if (template && !fs.existsSync(path.join(config.dataDir, "pglite"))) {
      fs.cpSync(path.join(template, "pglite"), path.join(config.dataDir, "pglite"), { recursive: true });
    }
    // Request log lines are left out of the test output (TEST_LOG_LEVEL=info shows them);
    // test/server/request-log.test.ts reads them.
    gateway = await createGateway(config, { logger: opts.logger ?? testLogger() });
  } catch (err) {
    // Nothing left behind by a start that failed (the data folder may be in memory, /dev/shm).
    await pgdb?.drop().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const port = await gateway.listen(0);
  const url = `http://127.0.0.1:${port}`;
  // Links are built from PUBLIC_URL; point it at this instance unless a test chose one.
  if (!overrides.publicUrl) {
    config.publicUrl = url;
    config.appUrl = `${url}/app`;
  }
  const doc = await (await fetch(`${url}/openapi.json`)).json();
  const openapi = new OpenApiChecker(doc);

  const caller = (token: string): Caller => {
    async function send(method: string, p: string, body?: unknown, raw?: string): Promise<Answer> {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined || raw !== undefined) headers["content-type"] = "application/json";
      const res = await fetch(url + p, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
      const text = await res.text();
      const parsed = text ? JSON.parse(text) : undefined;
      openapi.check(method, p.split("?")[0]!, res.status, parsed, text);
      return { status: res.status, body: parsed, headers: res.headers };
    }
    return {
      token,
      get: (p, query) => {
        const qs = query
          ? "?" +
            new URLSearchParams(
              Object.entries(query)
                .filter(([, v]) => v !== undefined)
                .map(([k, v]) => [k, String(v)]),
            ).toString()
          : "";
        return send("GET", p + qs);
      },
      post: (p, body) => send("POST", p, body ?? {}),
      put: (p, body) => send("PUT", p, body ?? {}),
      patch: (p, body) => send("PATCH", p, body ?? {}),
      delete: (p) => send("DELETE", p),
      raw: (method, p, body) => send(method, p, undefined, body),
      graphql: async (query, variables, operationName) => {
        const res = await fetch(`${url}/graphql`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify({ query, variables, operationName }),
        });
        return { status: res.status, ...(await res.json()) };
      },
    };
  };

  return {
    gateway,
    url,
    config,
    openapi,
    caller,
    async metric(name) {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? NaN);
    },
    async bootstrap(email, org) {
      const r = (await runAdminCommand(gateway.db.prisma, { command: "bootstrap", email, org })) as any;
      return Object.assign(caller(r.token), { user: r.user, organization: r.organization });
    },
    async member(org, email, role) {
      const added = (await runAdminCommand(gateway.db.prisma, { command: "member-add", org, email, role })) as any;
      const t = (await runAdminCommand(gateway.db.prisma, { command: "token-create", email })) as any;
      return Object.assign(caller(t.token), { user: added.user });
    },
    async close() {
      await gateway.close();
      await pgdb?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Whether the suite runs on PostgreSQL with Redis, where several gateway processes can share the data. */
export const TWO_PROCESSES = !!(process.env.DATABASE_URL && process.env.REDIS_URL);

/**
 * The gateway a test reads from: a second gateway on `t`'s database and Redis when TWO_PROCESSES
 * (a write on `t`, the read on the other), else `t` itself. `close` stops only what it started.
 */
export async function readerGateway(t: TestGateway): Promise<{ gateway: Gateway; url: string; close: () => Promise<void> }> {
  if (!TWO_PROCESSES) return { gateway: t.gateway, url: t.url, close: async () => undefined };
  const second = await createGateway({ ...t.config, port: 0 }, { logger: testLogger() });
  const port = await second.listen(0);
  return { gateway: second, url: `http://127.0.0.1:${port}`, close: () => second.close() };
}
