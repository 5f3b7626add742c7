import type { Redis } from "ioredis";
import type { PrismaClient } from "../generated/prisma/client.js";
import { migrationsDir, migrationsOnDisk } from "../core/db/migrate.js";
import { rawRoute, type RawRoute } from "../rest/raw-routes.js";
import { sharedWhileRunning } from "../core/graph/loaders.js";

/**
 * Health endpoints, JSON, no token (for load balancers and orchestrators):
 *
 *   GET /healthz   200 while the process is up and serving HTTP.
 *   GET /readyz    200 when this process can answer: the database answers, every migration in
 *                  prisma/migrations is applied, Redis answers (when REDIS_URL is set); else 503
 *                  naming what failed. 503 too once the server is shutting down. Probes that
 *                  arrive while the checks run share their result.
 *
 * `/health` (the old undocumented check) redirects to `/healthz`.
 */
export interface HealthOptions {
  prisma: PrismaClient;
  redis?: Redis;
  /** True once shutdown began: not ready for new work. */
  stopping: () => boolean;
  /** Longest wait for each check (ms). */
  timeoutMs?: number;
}

interface Check {
  ok: boolean;
  ms: number;
  error?: string;
}

async function timed(run: () => Promise<string | undefined>, timeoutMs: number): Promise<Check> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const error = await Promise.race([
      run(),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
      }),
    ]);
    return { ok: error === undefined, ms: Math.round(performance.now() - start), ...(error ? { error } : {}) };
  } catch (err) {
    return { ok: false, ms: Math.round(performance.now() - start), error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** The migrations of prisma/migrations that the database has not recorded as applied. */
export async function pendingMigrations(prisma: PrismaClient, dir = migrationsDir): Promise<string[]> {
  const rows = await prisma.$queryRawUnsafe<{ name: string }[]>(`SELECT name FROM "_migrations"`);
  const applied = new Set(rows.map((r) => r.name));
  return migrationsIn(dir).filter((name) => !applied.has(name));
}

/** The migrations a folder holds, read once per folder: they do not change while the process runs. */
const onDisk = new Map<string, string[]>();
function migrationsIn(dir: string): string[] {
  let names = onDisk.get(dir);
  if (!names) onDisk.set(dir, (names = migrationsOnDisk(dir)));
  return names;
}

export function healthRoutes(opts: HealthOptions): RawRoute[] {
  const timeoutMs = opts.timeoutMs ?? 2000;
  // Probes that arrive while the checks run share them (no token needed to send any number).
  const checksNow = sharedWhileRunning(async (): Promise<Record<string, Check>> => {
    const [database, migrations, redis] = await Promise.all([
      timed(async () => {
        await opts.prisma.$queryRawUnsafe("SELECT 1");
        return undefined;
      }, timeoutMs),
      timed(async () => {
        const pending = await pendingMigrations(opts.prisma);
        return pending.length ? `pending: ${pending.join(", ")}` : undefined;
      }, timeoutMs),
      opts.redis
        ? timed(async () => {
            const answer = await opts.redis!.ping();
            return answer === "PONG" ? undefined : `PING answered ${answer}`;
          }, timeoutMs)
        : undefined,
    ]);
    const checks: Record<string, Check> = {
      database,
      migrations: migrations.ok || database.ok ? migrations : { ...migrations, error: "database unreachable" },
    };
    if (redis) checks.redis = redis;
    return checks;
  });
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
    });
  return [
    rawRoute({ methods: ["GET"], path: "/healthz", auth: "none", handler: () => json(200, { status: "ok" }) }),
    rawRoute({
      methods: ["GET"],
      path: "/health",
      auth: "none",
      handler: () => new Response(null, { status: 308, headers: { location: "/healthz" } }),
    }),
    rawRoute({
      methods: ["GET"],
      path: "/readyz",
      auth: "none",
      async handler() {
        const checks = await checksNow();
        const stopping = opts.stopping();
        const ready = !stopping && Object.values(checks).every((c) => c.ok);
        return json(ready ? 200 : 503, { status: stopping ? "stopping" : ready ? "ready" : "unavailable", checks });
      },
    }),
  ];
}
