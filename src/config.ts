import path from "node:path";

/** Every environment variable the server reads, parsed once, with its default. */
export interface Config {
  port: number;
  host: string;
  /** Base of every absolute link in `urls` objects (no trailing slash). */
  publicUrl: string;
  /** Base of the links to the web app (`urls.app`). */
  appUrl: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** Largest `limit` a list accepts. */
  maxPageSize: number;
  defaultPageSize: number;
  /** Days a deleted space can be restored before it is removed for good. */
  spaceRetentionDays: number;
}

function intFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${value}"`);
  return n;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFrom(env.PORT, 4000, "PORT");
  const host = env.HOST || "0.0.0.0";
  const publicUrl = trimSlash(env.PUBLIC_URL || `http://localhost:${port}`);
  return {
    port,
    host,
    publicUrl,
    appUrl: trimSlash(env.APP_URL || `${publicUrl}/app`),
    dataDir: path.resolve(env.DATA_DIR || "data"),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    maxPageSize: 1000,
    defaultPageSize: intFrom(env.DEFAULT_PAGE_SIZE, 100, "DEFAULT_PAGE_SIZE"),
    spaceRetentionDays: 7,
  };
}
