import type { SpaceActivity } from "../core/messaging/topics.js";
import { EVENT_STATUSES, type IntegrationEventMessage, type IntegrationEventStatus } from "../core/messaging/topics.js";

export { EVENT_STATUSES, type IntegrationEventMessage, type IntegrationEventStatus };

/** Every event type the gateway records. */
export const EVENT_TYPES = [
  "installation_setup",
  "installation_deleted",
  "space_installation_setup",
  "space_installation_deleted",
  "site_installation_setup",
  "site_installation_deleted",
  "space_content_updated",
  "change_request_opened",
  "change_request_merged",
  "change_request_status_updated",
  "comment_posted",
  "script_fetch",
  "block_fetch",
] as const;
export type IntegrationEventType = (typeof EVENT_TYPES)[number];

/**
 * The scope an installation's integration must list to receive each kind of space activity.
 * Installations of the space's organization receive it when their space_selection is `all` or
 * the space is installed (PUT …/installations/{installationId}/spaces/{spaceId}).
 */
export const SCOPE_BY_ACTIVITY: Record<SpaceActivity["type"], string> = {
  space_content_updated: "space:content:read",
  change_request_opened: "space:change-requests:read",
  change_request_merged: "space:change-requests:read",
  change_request_status_updated: "space:change-requests:read",
  comment_posted: "space:comments:read",
};

/** Event types whose dispatched requests carry the integration's content security policy. */
export const CSP_EVENT_TYPES: ReadonlySet<string> = new Set(["script_fetch", "block_fetch"]);
