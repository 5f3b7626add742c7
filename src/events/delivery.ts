import type { Integration, IntegrationEvent, PrismaClient } from "../generated/prisma/client.js";
import type { Config } from "../config.js";
import type { PubSub } from "../core/messaging/pubsub.js";
import { newId } from "../core/ids.js";
import { groupCommit } from "./group-commit.js";
import type { IntegrationEventMessage, IntegrationEventStatus } from "./messages.js";
import { DISPATCH_KEY, dispatchTarget, publishEventMessage } from "./record.js";
import { integrationRequestHeaders } from "./exchange.js";
import { OUTBOUND_REFUSED, outboundFetch, outboundRefusal } from "../core/support/outbound.js";
import { log as logger } from "../core/logger.js";

export interface DispatcherOptions {
  prisma: PrismaClient;
  pubsub: PubSub;
  config: Pick<
    Config,
    | "integrationDeliveryTimeoutMs"
    | "integrationRetryBaseMs"
    | "integrationRetryMaxMs"
    | "integrationMaxAttempts"
    | "integrationDispatchPollMs"
    | "integrationClaimLeaseMs"
    | "outboundAllowedNetworks"
  >;
  /**
   * True when no other process can share the database (the embedded one): at start, deliveries
   * claimed by a previous run of this server are released at once instead of after their lease,
   * and there is no periodic poll (nothing can become due without this process knowing).
   */
  exclusive?: boolean;
  /** Deliveries in flight at once. */
  concurrency?: number;
  /** Told each settled attempt's outcome (the gateway's metrics). */
  onOutcome?: (outcome: "delivered" | "retry" | "failed" | "skipped") => void;
}

export interface Dispatcher {
  start(): Promise<void>;
  /** Looks for due deliveries now (called when an event is recorded in this process). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Longest a claim for less than half the dispatcher's room waits for more while deliveries are
 * under way, in ms: gathering halves the statements of a burst (see docs/performance.md).
 */
const CLAIM_GATHER_MS = 20;

/** Delay before a claim that failed (the database away for a moment) is tried again, in ms. */
const CLAIM_RETRY_MS = 1_000;

/** Delay before retry number `attempt` + 1: base × 2^(attempt − 1), at most the configured maximum. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

interface Claim {
  id: string;
  attempts: number;
}

/** A claimed event with what delivering it needs. */
interface Loaded extends Pick<IntegrationEvent, "id" | "integrationId" | "installationId" | "type" | "payload" | "createdAt"> {
  integration: Pick<Integration, "id" | "ownerId" | "devTunnelUrl" | "devAll" | "signingSecret" | "contentSecurityPolicy">;
  installation: { organizationId: string } | null;
}

/** A claim, and its event unless its integration is gone. */
interface ClaimedEvent {
  claim: Claim;
  event?: Loaded;
}

/**
 * A row of the claim statement: the claimed event's columns, its integration's (null when it is
 * gone) and its installation's organization.
 */
type ClaimedRow = Pick<IntegrationEvent, "id" | "integrationId" | "installationId" | "type" | "payload" | "attempts"> & {
  [K in "ownerId" | "devTunnelUrl" | "devAll" | "signingSecret" | "contentSecurityPolicy"]: Integration[K] | null;
} & { createdAtMs: number; integrationFound: string | null; installationOrganizationId: string | null };

/** How an attempt ended: its trace entry, and the event's status and times to set. */
interface Outcome {
  claim: Claim;
  entry: { level: string; message: string };
  status: IntegrationEventStatus;
  data: { nextAttemptAt?: Date | null; deliveredAt?: Date | null };
}

/**
 * The event dispatcher: a durable outbox over the IntegrationEvent table.
 *
 * - An event is stored as `pending` with `nextAttemptAt` = now in the same transaction as the
 *   change it reports (or right after it), so a recorded event is never lost.
 * - Work is claimed with one statement, `UPDATE … WHERE id IN (SELECT … WHERE status = 'pending'
 *   AND nextAttemptAt <= now() … FOR UPDATE SKIP LOCKED) RETURNING`, which adds one to `attempts`
 *   and pushes `nextAttemptAt` one lease ahead: processes sharing PostgreSQL never take the same
 *   event twice, and an event whose process died mid-delivery becomes due again when the lease
 *   runs out (at once after a restart on the embedded database). Delivery is therefore at least once.
 * - Each attempt is a signed POST of the payload to the development tunnel URL with a timeout; its
 *   outcome is written to the event's trace. A failure (non-2xx, timeout, network error) schedules
 *   the next attempt after an exponential backoff; after the last attempt the event is `failed`.
 *   Outcomes are written only while the claim is still ours (same `attempts`, still pending).
 * - Status changes are published on the `integration:event` topic, like new events.
 * - Recording an event publishes a wake-up (routing key `dispatch` of the same topic, so through
 *   Redis every process hears it); retries wake their process with a timer at their due time. On a
 *   shared database a slow poll (INTEGRATION_DISPATCH_POLL_MS, default 30 s) also picks up what
 *   another process left behind when it died (expired leases); on the embedded database nothing
 *   polls.
 */
export function createDispatcher(opts: DispatcherOptions): Dispatcher {
  const { prisma, pubsub, config } = opts;
  const concurrency = opts.concurrency ?? 16;
  const inflight = new Map<string, AbortController>();
  const timers = new Set<NodeJS.Timeout>();
  let poll: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  let due = true;
  let stopped = true;
  let loop: Promise<void> = Promise.resolve();
  const deliveries = new Set<Promise<void>>();
  /** A claim waiting for more room (CLAIM_GATHER_MS), and whether its wait is over. */
  let gathering: NodeJS.Timeout | undefined;
  let gathered = false;
  /** The one retry of failed claims (CLAIM_RETRY_MS): however many wake-ups fail meanwhile, one timer. */
  let retrying: NodeJS.Timeout | undefined;

  /**
   * Claims up to `limit` due events, and reads with them what delivering them needs (their
   * integration's delivery settings, their installation's organization): one statement. The time
   * an event was recorded comes as milliseconds since the epoch: a raw `timestamp` column read
   * through the embedded database's adapter is taken as the process's local time.
   */
  async function claim(limit: number): Promise<ClaimedEvent[]> {
    const rows = await prisma.$queryRawUnsafe<ClaimedRow[]>(
      `WITH "claimed" AS (
         UPDATE "IntegrationEvent"
            SET "attempts" = "attempts" + 1,
                "nextAttemptAt" = (now() AT TIME ZONE 'UTC') + make_interval(secs => $1::float8 / 1000)
          WHERE "id" IN (
            SELECT "id" FROM "IntegrationEvent"
             WHERE "status" = 'pending' AND "nextAttemptAt" <= (now() AT TIME ZONE 'UTC')
             ORDER BY "nextAttemptAt", "id"
             LIMIT $2::int
             FOR UPDATE SKIP LOCKED)
        RETURNING "id", "integrationId", "installationId", "type", "payload", "attempts", "createdAt")
       SELECT c."id", c."integrationId", c."installationId", c."type", c."payload", c."attempts",
              (extract(epoch FROM c."createdAt") * 1000)::float8 AS "createdAtMs",
              i."id" AS "integrationFound", i."ownerId", i."devTunnelUrl", i."devAll", i."signingSecret", i."contentSecurityPolicy",
              n."organizationId" AS "installationOrganizationId"
         FROM "claimed" AS c
         LEFT JOIN "Integration" AS i ON i."id" = c."integrationId"
         LEFT JOIN "IntegrationInstallation" AS n ON n."id" = c."installationId"`,
      config.integrationClaimLeaseMs,
      limit,
    );
    return rows.map((r) => {
      const c: Claim = { id: r.id, attempts: Number(r.attempts) };
      if (r.integrationFound === null) return { claim: c };
      const event: Loaded = {
        id: r.id,
        integrationId: r.integrationId,
        installationId: r.installationId,
        type: r.type,
        payload: r.payload,
        createdAt: new Date(Math.round(r.createdAtMs)),
        integration: {
          id: r.integrationId,
          ownerId: r.ownerId!,
          devTunnelUrl: r.devTunnelUrl,
          devAll: r.devAll!,
          signingSecret: r.signingSecret!,
          contentSecurityPolicy: r.contentSecurityPolicy,
        },
        installation: r.installationOrganizationId === null ? null : { organizationId: r.installationOrganizationId },
      };
      return { claim: c, event };
    });
  }

  /**
   * Claims what is due and starts delivering it, while there is room. `due` tells whether
   * something may be due that no claim has looked at since: set by every wake-up (an event
   * recorded here or announced by another process, a retry's timer, the poll) and when a claim
   * came back full; cleared by a claim that came back short. A delivery that ends frees room, and
   * claims again only when something may be due (not once more after every event of a quiet
   * stream, which found nothing).
   */
  async function runOnce(): Promise<void> {
    while (!stopped && due) {
      const room = concurrency - inflight.size;
      if (room <= 0) return;
      // While deliveries are under way, a claim for less than half the room waits for more room, at
      // most CLAIM_GATHER_MS: a burst of events is claimed (and read) a few at a time, not once for
      // each delivery that ends; and deliveries held by a slow receiver delay the others that long
      // at most.
      if (inflight.size > 0 && room < concurrency / 2 && !gathered) {
        if (!gathering) {
          gathering = setTimeout(() => {
            timers.delete(gathering!);
            gathering = undefined;
            gathered = true;
            run();
          }, CLAIM_GATHER_MS);
          gathering.unref();
          timers.add(gathering);
        }
        return;
      }
      gathered = false;
      if (gathering) {
        clearTimeout(gathering);
        timers.delete(gathering);
        gathering = undefined;
      }
      due = false;
      const claimed = await claim(room);
      if (claimed.length === room) due = true;
      if (!claimed.length) return;
      for (const { claim: c, event } of claimed) {
        const controller = new AbortController();
        inflight.set(c.id, controller);
        const p = deliver(c, event, controller.signal)
          .catch((err) => {
            logger.error({ err }, `integration event ${c.id}: delivery failed unexpectedly`);
            wakeAt(new Date(Date.now() + config.integrationClaimLeaseMs)); // its lease will have run out
          })
          .finally(() => {
            inflight.delete(c.id);
            deliveries.delete(p);
            if (due) run(); // room for what may be due
          });
        deliveries.add(p);
      }
    }
  }

  /** Something may be due: claims it. */
  function wake(): void {
    due = true;
    run();
  }

  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    loop = (async () => {
      do {
        again = false;
        try {
          await runOnce();
        } catch (err) {
          if (!stopped) logger.error({ err }, "integration event dispatcher failed");
          // Whatever the failed claim was to take is still due (a failed statement claimed nothing):
          // claimed again at the next wake-up or freed room, and after CLAIM_RETRY_MS at the latest
          // (on the embedded database nothing polls).
          due = true;
          if (!stopped && !retrying) {
            retrying = setTimeout(() => {
              timers.delete(retrying!);
              retrying = undefined;
              wake();
            }, CLAIM_RETRY_MS);
            retrying.unref();
            timers.add(retrying);
          }
        }
      } while (again && !stopped);
      running = false;
    })();
  }

  function wakeAt(date: Date): void {
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        wake();
      },
      Math.max(0, date.getTime() - Date.now()) + 5,
    );
    timer.unref();
    timers.add(timer);
  }

  async function log(eventId: string, level: string, message: string): Promise<void> {
    await prisma.integrationEventLog.create({ data: { id: newId("IntegrationEventLog"), eventId, level, message } });
  }

  /** Wakes up whenever any process announces a recorded event. */
  let wakeups: AsyncIterator<unknown> | undefined;
  async function listen(): Promise<void> {
    wakeups = pubsub.subscribe("integration:event", DISPATCH_KEY)[Symbol.asyncIterator]();
    for (;;) {
      const { done } = await wakeups.next();
      if (done || stopped) return;
      wake();
    }
  }

  /**
   * Writes attempts' trace entries and outcomes: those of the attempts that end while an earlier
   * write is under way go together in the next one (events/group-commit.ts), one statement that
   * stores every trace entry and sets each outcome only while its claim is still ours (same
   * `attempts`, still pending). Answers, for each, whether its outcome was set.
   */
  const writeOutcomes = groupCommit(async (outcomes: Outcome[]): Promise<boolean[]> => {
    const at = new Date().toISOString();
    const rows = outcomes.map(({ claim: c, entry, status, data }) => ({
      id: c.id,
      attempts: c.attempts,
      status,
      setNext: data.nextAttemptAt !== undefined,
      next: data.nextAttemptAt?.toISOString() ?? null,
      setDelivered: data.deliveredAt !== undefined,
      delivered: data.deliveredAt?.toISOString() ?? null,
      logId: newId("IntegrationEventLog"),
      level: entry.level,
      message: entry.message,
      at,
    }));
    const set = await prisma.$queryRaw<{ id: string; attempts: number }[]>`
      WITH "outcomes" AS (
        SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r("id" text, "attempts" integer, "status" text, "setNext" boolean,
          "next" timestamp(3), "setDelivered" boolean, "delivered" timestamp(3), "logId" text, "level" text, "message" text, "at" timestamp(3))),
      "logs" AS (
        INSERT INTO "IntegrationEventLog" ("id", "eventId", "level", "message", "timestamp")
        SELECT "logId", "id", "level", "message", "at" FROM "outcomes")
      UPDATE "IntegrationEvent" AS e
         SET "status" = o."status",
             "nextAttemptAt" = CASE WHEN o."setNext" THEN o."next" ELSE e."nextAttemptAt" END,
             "deliveredAt" = CASE WHEN o."setDelivered" THEN o."delivered" ELSE e."deliveredAt" END
        FROM "outcomes" AS o
       WHERE e."id" = o."id" AND e."status" = 'pending' AND e."attempts" = o."attempts"
      RETURNING e."id", e."attempts"`;
    const ours = new Set(set.map((r) => `${r.id}\u0000${Number(r.attempts)}`));
    return outcomes.map(({ claim: c }) => ours.has(`${c.id}\u0000${c.attempts}`));
  });

  /** Writes an attempt's trace entry and outcome (the outcome only while the claim is still ours); publishes a final status. */
  async function settle(
    c: Claim,
    event: Loaded,
    entry: Outcome["entry"],
    status: IntegrationEventStatus,
    data: Outcome["data"],
  ): Promise<boolean> {
    const set = await writeOutcomes({ claim: c, entry, status, data });
    if (set && status !== "pending") publishEventMessage(pubsub, messageOf({ ...event, status }));
    if (set) opts.onOutcome?.(status === "success" ? "delivered" : status === "pending" ? "retry" : (status as "failed" | "skipped"));
    return set;
  }

  async function deliver(c: Claim, event: Loaded | undefined, signal: AbortSignal): Promise<void> {
    // A claimed event is pending; one whose integration is gone (deleted with its events) has nothing to deliver.
    if (!event) return;
    const target = dispatchTarget(event.integration, event.installation?.organizationId ?? (event.payload as any)?.organizationId ?? null);
    if ("skip" in target) {
      await settle(c, event, { level: "info", message: target.skip }, "skipped", { nextAttemptAt: null });
      return;
    }
    const max = config.integrationMaxAttempts;
    const body = JSON.stringify(event.payload);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "docs-api-gateway/integration-events",
      "x-integration-event-attempt": String(c.attempts),
      ...integrationRequestHeaders(event.integration, event, body),
    };
    const started = Date.now();
    let failure: string | null = null;
    let status = 0;
    const timeout = AbortSignal.timeout(config.integrationDeliveryTimeoutMs);
    try {
      const res = await outboundFetch(config, target.url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.any([signal, timeout]),
        redirect: "manual",
      });
      status = res.status;
      const text = await res.text().catch(() => "");
      if (res.status < 200 || res.status >= 300) failure = `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`;
    } catch (err) {
      if (signal.aborted) {
        // The server is stopping: give the delivery back so the next start (or another process) retries it now.
        await log(c.id, "warning", `Attempt ${c.attempts} to ${target.url} interrupted: the server stopped; it will be retried.`).catch(
          () => undefined,
        );
        await prisma.integrationEvent
          .updateMany({ where: { id: c.id, status: "pending", attempts: c.attempts }, data: { nextAttemptAt: new Date() } })
          .catch(() => undefined);
        return;
      }
      failure = timeout.aborted ? `timed out after ${config.integrationDeliveryTimeoutMs} ms` : describeFetchError(err);
    }
    const ms = Date.now() - started;
    if (!failure) {
      const message = `Attempt ${c.attempts} of ${max}: delivered to ${target.url} (HTTP ${status}) in ${ms} ms.`;
      await settle(c, event, { level: "info", message }, "success", { nextAttemptAt: null, deliveredAt: new Date() });
      return;
    }
    if (c.attempts >= max) {
      const message = `Attempt ${c.attempts} of ${max} to ${target.url} failed after ${ms} ms: ${failure}. Giving up.`;
      await settle(c, event, { level: "error", message }, "failed", { nextAttemptAt: null });
      return;
    }
    const delay = backoffMs(c.attempts, config.integrationRetryBaseMs, config.integrationRetryMaxMs);
    const next = new Date(Date.now() + delay);
    const message = `Attempt ${c.attempts} of ${max} to ${target.url} failed after ${ms} ms: ${failure}. Next attempt in ${delay} ms.`;
    if (await settle(c, event, { level: "warning", message }, "pending", { nextAttemptAt: next })) wakeAt(next);
  }

  return {
    async start() {
      if (!stopped) return;
      stopped = false;
      void listen().catch((err) => logger.error({ err }, "integration event dispatcher: wake-ups stopped"));
      if (opts.exclusive) {
        // Nobody else can hold a claim on this database: what a previous run left in flight is due now.
        await prisma.integrationEvent.updateMany({
          where: { status: "pending", nextAttemptAt: { gt: new Date() } },
          data: { nextAttemptAt: new Date() },
        });
      }
      if (!opts.exclusive) {
        poll = setInterval(wake, config.integrationDispatchPollMs);
        poll.unref();
      }
      wake();
    },
    wake,
    async stop() {
      if (stopped) return;
      stopped = true;
      await wakeups?.return?.();
      if (poll) clearInterval(poll);
      for (const t of timers) clearTimeout(t);
      timers.clear();
      gathering = undefined;
      gathered = false;
      retrying = undefined;
      for (const controller of inflight.values()) controller.abort();
      await loop.catch(() => undefined);
      await Promise.allSettled([...deliveries]);
    },
  };
}

function describeFetchError(err: unknown): string {
  const refusal = outboundRefusal(err);
  if (refusal) return `${OUTBOUND_REFUSED} (${refusal})`;
  const cause = (err as any)?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ""}`;
  return (err as Error)?.message ?? String(err);
}

export function messageOf(event: {
  id: string;
  integrationId: string;
  installationId: string | null;
  type: string;
  status: string;
  createdAt: Date;
  payload: unknown;
  installation?: { organizationId: string } | null;
}): IntegrationEventMessage {
  return {
    id: event.id,
    integrationId: event.integrationId,
    installationId: event.installationId,
    organizationId: event.installation?.organizationId ?? (((event.payload ?? {}) as any).organizationId as string | undefined) ?? null,
    type: event.type,
    status: event.status as IntegrationEventStatus,
    createdAt: event.createdAt.toISOString(),
    payload: (event.payload ?? {}) as Record<string, unknown>,
  };
}
