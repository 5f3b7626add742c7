import type { Context } from "../core/context.js";

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
 * into integration events for the installations whose scopes cover them.
 */
export async function recordSpaceActivity(ctx: Pick<Context, "pubsub" | "viewer">, activity: SpaceActivity): Promise<void> {
  ctx.pubsub.publish("space:activity", { ...activity, actorId: ctx.viewer.userId, at: new Date().toISOString() });
}
