/** The payloads the pub/sub topics carry, shared by the publishers (events/) and the subscribers (graphql/). */

/** Something that happened in a space, as integrations and live dashboards see it. */
export type SpaceActivity =
  | { type: "space_content_updated"; spaceId: string; revisionId: string; changeRequestId?: string }
  | { type: "change_request_opened"; spaceId: string; changeRequestId: string }
  | { type: "change_request_merged"; spaceId: string; changeRequestId: string; revisionId: string }
  | { type: "change_request_status_updated"; spaceId: string; changeRequestId: string; status: string }
  | { type: "comment_posted"; spaceId: string; commentId: string; changeRequestId?: string; replyTo?: string };

/** What an integration event's pub/sub message carries: the whole event record, so subscribers read no database. */
export interface IntegrationEventMessage {
  id: string;
  integrationId: string;
  installationId: string | null;
  /** The organization of the installation the event belongs to (absent once the installation was removed). */
  organizationId: string | null;
  type: string;
  status: IntegrationEventStatus;
  createdAt: string;
  payload: Record<string, unknown>;
}

/**
 * Event statuses: `pending` (waiting for delivery, or between retries), `success` (the integration
 * answered 2xx), `failed` (every attempt failed), `skipped` (nothing to deliver to: development
 * mode is off, or it forwards only the owner organization's events).
 */
export const EVENT_STATUSES = ["pending", "success", "failed", "skipped"] as const;
export type IntegrationEventStatus = (typeof EVENT_STATUSES)[number];
