import { Prisma, type IntegrationEvent, type PrismaClient } from "../generated/prisma/client.js";
import { groupCommit } from "./group-commit.js";
import type { PubSub } from "../core/messaging/pubsub.js";
import { newId } from "../core/ids.js";
import type { IntegrationEventMessage, IntegrationEventStatus, IntegrationEventType } from "./messages.js";

/** What recording events needs from the gateway. */
export interface EventServices {
  prisma: PrismaClient;
  pubsub: PubSub;
}

type Db = PrismaClient | Prisma.TransactionClient;

export interface EventIntegration {
  id: string;
  ownerId: string;
  devTunnelUrl: string | null;
  devAll: boolean;
}

export interface NewIntegrationEvent {
  /** The event's id when it had to be known before recording (an exchange already made); new otherwise. */
  id?: string;
  integration: EventIntegration;
  installation: { id: string; organizationId: string } | null;
  type: IntegrationEventType;
  /** Payload fields besides eventId, type and installationId. */
  fields?: Record<string, unknown>;
  /**
   * For an exchange the gateway already made with the integration while answering a request
   * (a public-endpoint fetch, a render): its outcome and trace. Such an event is stored with
   * that final status and is never queued for delivery.
   */
  outcome?: { status: "success" | "failed"; logs: { level: string; message: string; timestamp: Date }[] };
}

export interface PreparedEvents {
  rows: Prisma.IntegrationEventCreateManyInput[];
  logs: Prisma.IntegrationEventLogCreateManyInput[];
  messages: IntegrationEventMessage[];
}

/**
 * Whether an event goes to the integration's development tunnel: development mode must be on, and
 * unless it forwards every organization (`all`), the event must come from an installation of the
 * organization that owns the integration.
 */
export function dispatchTarget(
  integration: EventIntegration,
  installationOrganizationId: string | null,
): { url: string } | { skip: string } {
  if (!integration.devTunnelUrl) return { skip: "Not dispatched: development mode is off (no tunnel URL)." };
  if (!integration.devAll && installationOrganizationId !== integration.ownerId) {
    return { skip: "Not dispatched: development mode forwards only the owner organization's events (all = false)." };
  }
  return { url: integration.devTunnelUrl };
}

/** A trace entry of an event: a stored log row, or one its row implies (recordedTrace). */
export interface TraceEntry {
  level: string;
  message: string;
  timestamp: Date;
}

/** What of an event's row its trace is read from. */
type TracedEvent = Pick<IntegrationEvent, "type" | "createdAt" | "skipReason">;

/**
 * The entries of an event's trace that its row implies, stored as no log row: that it was
 * recorded (at createdAt) and, for a skipped event, why it was not dispatched (a millisecond
 * later). A log row per event and entry would cost the write that records the events a foreign
 * key check each (it locks the event just stored), most of a page edit's time with many
 * integrations installed.
 */
function recordedTrace(event: TracedEvent): TraceEntry[] {
  const entries: TraceEntry[] = [{ level: "info", message: `Recorded ${event.type} event.`, timestamp: event.createdAt }];
  if (event.skipReason) entries.push({ level: "info", message: event.skipReason, timestamp: new Date(event.createdAt.getTime() + 1) });
  return entries;
}

/**
 * An event's whole trace, oldest first: the entries its row implies and its stored log rows (each
 * already in order), an implied entry before a stored one of the same time.
 */
export function eventTrace(event: TracedEvent, logs: readonly TraceEntry[]): TraceEntry[] {
  const implied = recordedTrace(event);
  const out: TraceEntry[] = [];
  let i = 0;
  for (const log of logs) {
    while (i < implied.length && implied[i]!.timestamp.getTime() <= log.timestamp.getTime()) out.push(implied[i++]!);
    out.push(log);
  }
  return [...out, ...implied.slice(i)];
}

/** Builds event rows, the trace entries of exchanges already made, and their pub/sub messages. */
export function prepareEvents(events: NewIntegrationEvent[], now = new Date()): PreparedEvents {
  const prepared: PreparedEvents = { rows: [], logs: [], messages: [] };
  for (const e of events) {
    const id = e.id ?? newId("IntegrationEvent");
    const payload = { eventId: id, type: e.type, installationId: e.installation?.id ?? null, ...e.fields };
    const target = e.outcome ? { url: "" } : dispatchTarget(e.integration, e.installation?.organizationId ?? null);
    const status: IntegrationEventStatus = e.outcome?.status ?? ("url" in target ? "pending" : "skipped");
    // The trace's first entries (recorded, and why it was not dispatched) come from the row (recordedTrace): no log row to write and check.
    prepared.rows.push({
      id,
      integrationId: e.integration.id,
      installationId: e.installation?.id ?? null,
      type: e.type,
      status,
      payload: payload as Prisma.InputJsonValue,
      attempts: e.outcome ? 1 : 0,
      nextAttemptAt: status === "pending" ? now : null,
      deliveredAt: e.outcome?.status === "success" ? now : null,
      createdAt: now,
      skipReason: "skip" in target ? target.skip : null,
    });
    for (const log of e.outcome?.logs ?? []) prepared.logs.push({ id: newId("IntegrationEventLog"), eventId: id, ...log });
    prepared.messages.push({
      id,
      integrationId: e.integration.id,
      installationId: e.installation?.id ?? null,
      organizationId: e.installation?.organizationId ?? null,
      type: e.type,
      status,
      createdAt: now.toISOString(),
      payload,
    });
  }
  return prepared;
}

/**
 * Stores prepared events (inside the caller's transaction when given one) in one statement: the
 * INSERT of every event, with the INSERT of the trace entries of exchanges already made as a
 * data-modifying part of it when there are some, each passing its rows as one JSON parameter
 * (the foreign keys of the entries are checked once the statement has stored both). Written as
 * SQL rather than `createMany` because every write of space content records its events here, in
 * its transaction: Prisma's query compiler costs more CPU than the statement itself, and a
 * statement less is a round trip less to PostgreSQL.
 */
export async function writeEvents(db: Db, prepared: PreparedEvents): Promise<void> {
  if (!prepared.rows.length) return;
  if (!prepared.logs.length) await db.$executeRaw`${insertEvents(prepared)}`;
  else await db.$executeRaw`WITH "events" AS (${insertEvents(prepared)}) ${insertEventLogs(prepared)}`;
}

/**
 * Prepared events as data-modifying parts of a caller's WITH statement (`"events" AS (…)`, and
 * `"eventLogs" AS (…)` when there are trace entries to store), each storing its rows only when
 * `onlyWhen` (an SQL condition) holds.
 */
export function eventWrites(prepared: PreparedEvents, onlyWhen: Prisma.Sql): Prisma.Sql {
  const events = Prisma.sql`"events" AS (${insertEvents(prepared, onlyWhen)})`;
  return prepared.logs.length ? Prisma.sql`${events}, "eventLogs" AS (${insertEventLogs(prepared, onlyWhen)})` : events;
}

const whereOf = (onlyWhen?: Prisma.Sql) => (onlyWhen ? Prisma.sql`WHERE ${onlyWhen}` : Prisma.empty);

function insertEvents(prepared: PreparedEvents, onlyWhen?: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "IntegrationEvent" ("id", "integrationId", "installationId", "type", "status", "payload", "attempts", "nextAttemptAt", "deliveredAt", "createdAt", "skipReason")
    SELECT "id", "integrationId", "installationId", "type", "status", "payload", "attempts", "nextAttemptAt", "deliveredAt", "createdAt", "skipReason"
      FROM jsonb_to_recordset(${JSON.stringify(prepared.rows)}::jsonb) AS r("id" text, "integrationId" text, "installationId" text, "type" text,
        "status" text, "payload" jsonb, "attempts" integer, "nextAttemptAt" timestamp(3), "deliveredAt" timestamp(3), "createdAt" timestamp(3), "skipReason" text) ${whereOf(onlyWhen)}`;
}

function insertEventLogs(prepared: PreparedEvents, onlyWhen?: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "IntegrationEventLog" ("id", "eventId", "level", "message", "timestamp")
    SELECT "id", "eventId", "level", "message", "timestamp"
      FROM jsonb_to_recordset(${JSON.stringify(prepared.logs)}::jsonb) AS r("id" text, "eventId" text, "level" text, "message" text, "timestamp" timestamp(3)) ${whereOf(onlyWhen)}`;
}

/**
 * Routing key of the `integration:event` messages that wake the dispatchers of every gateway
 * process sharing the pub/sub (Redis): something is due for delivery.
 */
export const DISPATCH_KEY = "dispatch";

/**
 * Tells live subscribers about stored events, and wakes the dispatchers when some await delivery
 * (the first pending event's message is also theirs): one message each (PubSub.publishTo).
 */
export function announceEvents(services: EventServices, prepared: PreparedEvents): void {
  let wake = true;
  for (const message of prepared.messages) {
    const keys = routingKeys(message);
    if (wake && message.status === "pending") {
      keys.push(DISPATCH_KEY);
      wake = false;
    }
    services.pubsub.publishTo("integration:event", keys, message);
  }
}

export function publishEventMessage(pubsub: PubSub, message: IntegrationEventMessage): void {
  pubsub.publishTo("integration:event", routingKeys(message), message);
}

/** An event's streams: its integration's and its installing organization's. */
function routingKeys(message: IntegrationEventMessage): string[] {
  return message.organizationId ? [message.integrationId, message.organizationId] : [message.integrationId];
}

/**
 * Records events in one transaction, then announces them. Calls made while another call's
 * transaction is under way are written together in the next one (a group commit), so a burst of
 * events from concurrent writes costs a few transactions, not one each; each call resolves once
 * its events are stored, and events are announced in the order they were stored. Should a shared
 * transaction fail, its calls are written again one by one, so that one bad call fails alone.
 */
export async function recordIntegrationEvents(
  services: EventServices,
  events: NewIntegrationEvent[],
  now?: Date,
): Promise<IntegrationEventMessage[]> {
  if (!events.length) return [];
  const prepared = prepareEvents(events, now);
  let commit = commits.get(services.prisma);
  if (!commit) commits.set(services.prisma, (commit = groupCommit(storeEvents(services.prisma))));
  // Calls are resolved in the order their events were stored: each announces its own, in that order.
  await commit(prepared);
  try {
    announceEvents(services, prepared);
  } catch {
    // Stored all the same: the live notification is lost, as with an unreachable pub/sub.
  }
  return prepared.messages;
}

/** One group commit per database (events/group-commit.ts). */
const commits = new WeakMap<PrismaClient, (prepared: PreparedEvents) => Promise<void>>();

/** Stores the events of several calls together: one statement (writeEvents), so all of them or none. */
function storeEvents(prisma: PrismaClient) {
  return async (all: PreparedEvents[]): Promise<void[]> => {
    await writeEvents(prisma, { rows: all.flatMap((p) => p.rows), logs: all.flatMap((p) => p.logs), messages: [] });
    return all.map(() => undefined);
  };
}

/**
 * Removes settled events (success, failed, skipped) older than the retention period, with their
 * traces; pending ones stay until they are delivered or fail. Returns how many were removed.
 */
export async function purgeSettledEvents(prisma: PrismaClient, retentionDays: number, now = new Date()): Promise<number> {
  if (retentionDays <= 0) return 0;
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 60 * 60 * 1000);
  const { count } = await prisma.integrationEvent.deleteMany({ where: { createdAt: { lt: cutoff }, status: { not: "pending" } } });
  return count;
}
