import type { Context } from "../core/context.js";
import { SCOPE_BY_ACTIVITY } from "./messages.js";
import { recordIntegrationEvents, type NewIntegrationEvent } from "./record.js";
import { log } from "../core/logger.js";

/** Something that happened in a space, as integrations and live dashboards see it. */
export type SpaceActivity =
  | { type: "space_content_updated"; spaceId: string; revisionId: string; changeRequestId?: string }
  | { type: "change_request_opened"; spaceId: string; changeRequestId: string }
  | { type: "change_request_merged"; spaceId: string; changeRequestId: string; revisionId: string }
  | { type: "change_request_status_updated"; spaceId: string; changeRequestId: string; status: string }
  | { type: "comment_posted"; spaceId: string; commentId: string; changeRequestId?: string; replyTo?: string };

/**
 * Records an activity of a space once its change is stored: every domain that changes space
 * content, change requests or comments calls this, and the integrations area turns activities
 * into integration events for the installations whose scopes cover them (see SCOPE_BY_ACTIVITY
 * in ./messages.ts).
 */
export async function recordSpaceActivity(ctx: Pick<Context, "pubsub" | "viewer" | "prisma">, activity: SpaceActivity): Promise<void> {
  ctx.pubsub.publish("space:activity", { ...activity, actorId: ctx.viewer.userId, at: new Date().toISOString() });
  try {
    await recordActivityEvents(ctx, activity);
  } catch (err) {
    // The change itself is stored; a failure here must not turn the caller's request into an error.
    log.error({ err }, `integration events of ${activity.type} in space ${activity.spaceId} could not be recorded`);
  }
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
 * One event per active installation of the space's organization whose integration lists the
 * activity's scope and that covers the space (space_selection `all`, or the space installed).
 */
export async function recordActivityEvents(ctx: Pick<Context, "pubsub" | "prisma">, activity: SpaceActivity): Promise<number> {
  const scope = SCOPE_BY_ACTIVITY[activity.type];
  const installations = await ctx.prisma.integrationInstallation.findMany({
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
  if (!installations.length) return 0;
  const fields = activityPayload(activity);
  const events: NewIntegrationEvent[] = installations.map((inst) => ({
    integration: inst.integration,
    installation: { id: inst.id, organizationId: inst.organizationId },
    type: activity.type,
    fields,
  }));
  await recordIntegrationEvents(ctx, events);
  return events.length;
}
