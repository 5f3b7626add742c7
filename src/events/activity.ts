import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import type { Context } from "../core/context.js";
import { SCOPE_BY_ACTIVITY } from "./messages.js";
import { announceEvents, prepareEvents, writeEvents, type NewIntegrationEvent, type PreparedEvents } from "./record.js";

type Db = PrismaClient | Prisma.TransactionClient;

/** Something that happened in a space, as integrations and live dashboards see it. */
export type SpaceActivity =
  | { type: "space_content_updated"; spaceId: string; revisionId: string; changeRequestId?: string }
  | { type: "change_request_opened"; spaceId: string; changeRequestId: string }
  | { type: "change_request_merged"; spaceId: string; changeRequestId: string; revisionId: string }
  | { type: "change_request_status_updated"; spaceId: string; changeRequestId: string; status: string }
  | { type: "comment_posted"; spaceId: string; commentId: string; changeRequestId?: string; replyTo?: string };

/** What to tell listeners once the transaction that recorded an activity has committed. */
export type Announcement = () => void;

/**
 * Records an activity of a space inside the transaction `tx` of the write that caused it: every
 * domain that changes space content, change requests or comments calls this in its transaction,
 * and the integration events of the installations whose scopes cover the activity (see
 * SCOPE_BY_ACTIVITY in ./messages.ts) are stored there too — so an event exists exactly when its
 * change does, and a failure to record rolls the change back. Returns the announcement (live
 * dashboards, `space:activity`, the dispatchers) to make after the commit, never before.
 */
export async function recordSpaceActivity(
  tx: Db,
  ctx: Pick<Context, "pubsub" | "viewer" | "prisma">,
  activity: SpaceActivity,
): Promise<Announcement> {
  const prepared = await prepareActivityEvents(tx, activity);
  await writeEvents(tx, prepared);
  const message = { ...activity, actorId: ctx.viewer.userId, at: new Date().toISOString() };
  return () => {
    ctx.pubsub.publish("space:activity", message);
    announceEvents(ctx, prepared);
  };
}

/**
 * Runs `write` in one transaction with a `record` function that records space activities in it
 * (recordSpaceActivity); once it committed, announces them. A write that fails records nothing.
 */
export async function inTransactionWithActivity<T>(
  ctx: Pick<Context, "pubsub" | "viewer" | "prisma">,
  write: (tx: Prisma.TransactionClient, record: (activity: SpaceActivity) => Promise<void>) => Promise<T>,
  options?: { maxWait?: number; timeout?: number },
): Promise<T> {
  let announcements: Announcement[] = [];
  const result = await ctx.prisma.$transaction(async (tx) => {
    announcements = []; // a transaction the client replays starts over
    return write(tx, async (activity) => void announcements.push(await recordSpaceActivity(tx, ctx, activity)));
  }, options);
  for (const announce of announcements) announce();
  return result;
}

/** Payload fields of an activity's event: the activity without its type; a change request's new status is `changeRequestStatus`. */
export function activityPayload(activity: SpaceActivity): Record<string, unknown> {
  const { type: _type, ...rest } = activity as SpaceActivity & { status?: string };
  if ("status" in rest) {
    const { status, ...others } = rest;
    return { ...others, changeRequestStatus: status };
  }
  return rest;
}

/**
 * The events of an activity: one per active installation of the space's organization whose
 * integration lists the activity's scope and that covers the space (space_selection `all`, or
 * the space installed), read with `db` (the write's transaction).
 */
export async function prepareActivityEvents(db: Db, activity: SpaceActivity): Promise<PreparedEvents> {
  const scope = SCOPE_BY_ACTIVITY[activity.type];
  const installations = await db.integrationInstallation.findMany({
    where: {
      status: "active",
      organization: { spaces: { some: { id: activity.spaceId } } },
      integration: { scopes: { has: scope } },
      OR: [{ spaceSelection: "all" }, { spaces: { some: { spaceId: activity.spaceId, status: "active" } } }],
    },
    select: {
      id: true,
      organizationId: true,
      integration: { select: { id: true, ownerId: true, devTunnelUrl: true, devAll: true } },
    },
  });
  const fields = activityPayload(activity);
  const events: NewIntegrationEvent[] = installations.map((inst) => ({
    integration: inst.integration,
    installation: { id: inst.id, organizationId: inst.organizationId },
    type: activity.type,
    fields,
  }));
  return prepareEvents(events);
}
