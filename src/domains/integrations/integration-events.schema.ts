import { filter, pipe } from "graphql-yoga";
import type { IntegrationEvent } from "../../generated/prisma/client.js";
import { builder } from "../../core/graph/builder.js";
import type { Context } from "../../core/context.js";
import { viewerMembership } from "../../core/access/access.js";
import type { IntegrationEventMessage } from "../../events/messages.js";
import * as service from "./integrations.service.js";
import { EventStatusEnum, NAME_ARG } from "./integration-object.schema.js";

/**
 * The events of an integration (what is delivered to it, with the trace of each delivery), and
 * the subscriptions that stream them as they are recorded and as their status changes.
 */

// ─── Events ────────────────────────────────────────────────────────────────────────────────────

type Payload = Record<string, unknown>;
const EventPrevious = builder.objectRef<{ status?: string | null; configuration?: unknown }>("IntegrationEventPrevious").implement({
  description: "The installation's (or space installation's) state before the change.",
  fields: (t) => ({
    status: t.string({ nullable: true, resolve: (p) => p.status ?? null }),
    configuration: t.field({ type: "JSON", nullable: true, resolve: (p) => p.configuration ?? null }),
  }),
});

const str = (key: string, description?: string) => (t: any) =>
  t.string({ nullable: true, description, resolve: (p: Payload) => (typeof p[key] === "string" ? p[key] : null) });

const EventPayload = builder.objectRef<Payload>("IntegrationEventPayload").implement({
  description:
    "What is delivered to the integration. Every event has eventId, type and installationId; installation_setup, space_installation_setup " +
    "and site_installation_setup add status (and spaceId or siteId) and, on a change, previous; space activities add spaceId and revisionId, changeRequestId, changeRequestStatus, commentId or replyTo; " +
    "script_fetch (a request to a public endpoint) adds method, path and spaceId or siteId; block_fetch (a render) adds componentId.",
  fields: (t) => ({
    eventId: t.string({ resolve: (p) => String(p.eventId) }),
    type: t.string({ resolve: (p) => String(p.type) }),
    installationId: str("installationId")(t),
    status: str("status", "Status of the installation (or space installation) the event is about.")(t),
    previous: t.field({ type: EventPrevious, nullable: true, resolve: (p) => (p.previous as any) ?? null }),
    organizationId: str("organizationId", "Organization of a removed installation.")(t),
    spaceId: str("spaceId")(t),
    siteId: str("siteId", "The site of site_installation_setup and site_installation_deleted.")(t),
    revisionId: str("revisionId")(t),
    changeRequestId: str("changeRequestId")(t),
    changeRequestStatus: str("changeRequestStatus")(t),
    commentId: str("commentId")(t),
    replyTo: str("replyTo")(t),
    method: str("method", "script_fetch: the method of the request made to the public endpoint.")(t),
    path: str("path", "script_fetch: the path after /public of the request made to the public endpoint.")(t),
    componentId: str("componentId", "block_fetch: the component asked to render.")(t),
  }),
});

export const EventRef = builder.prismaObject("IntegrationEvent", {
  description: "An event of an integration, delivered to its development tunnel while development mode is on.",
  fields: (t) => ({
    id: t.exposeString("id"),
    integrationId: t.exposeString("integrationId"),
    installationId: t.exposeString("installationId", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    status: t.field({ type: EventStatusEnum, resolve: (e) => e.status as any }),
    payload: t.field({ type: EventPayload, resolve: (e) => (e.payload as Payload) ?? {} }),
  }),
});

const LogEntry = builder.objectRef<{ message: string; timestamp: Date; level: string }>("IntegrationEventLogEntry").implement({
  fields: (t) => ({
    message: t.exposeString("message"),
    timestamp: t.field({ type: "DateTime", resolve: (l) => l.timestamp }),
    level: t.exposeString("level", { description: "debug, info, warning or error." }),
  }),
});
const Trace = builder.objectRef<{ logs: { message: string; timestamp: Date; level: string }[] }>("IntegrationEventTrace").implement({
  fields: (t) => ({ logs: t.field({ type: [LogEntry], resolve: (tr) => tr.logs }) }),
});
export const EventWithTrace = builder
  .objectRef<{ event: IntegrationEvent; trace: { logs: any[] } }>("IntegrationEventWithTrace")
  .implement({
    fields: (t) => ({
      event: t.field({ type: EventRef, resolve: (e) => e.event }),
      trace: t.field({ type: Trace, resolve: (e) => e.trace }),
    }),
  });

// ─── Subscriptions ─────────────────────────────────────────────────────────────────────────────

const asEvent = (m: IntegrationEventMessage) => m as unknown as IntegrationEvent;

builder.subscriptionFields((t) => ({
  integrationEvents: t.field({
    type: EventRef,
    description: "Events of an integration as they are recorded and as their status changes (members of the owner organization).",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      types: t.arg.stringList({ description: "Only these event types." }),
      statuses: t.arg({ type: [EventStatusEnum], description: "Only events in these statuses." }),
    },
    // Members with the same role in the owner organization share one stream (graphql/streams/grouping.ts).
    extensions: {
      streamAccess: async (args: { integrationName: string }, ctx: Context) => {
        const integration = await service.requireIntegrationEventsSubscriber(ctx, args.integrationName);
        return `organization role ${(await viewerMembership(ctx, integration.ownerId))?.role ?? "none"}`;
      },
    },
    subscribe: async (_root, args, ctx) => {
      const integration = await service.requireIntegrationEventsSubscriber(ctx, args.integrationName);
      const types = args.types?.length ? new Set(args.types) : null;
      const statuses = args.statuses?.length ? new Set<string>(args.statuses) : null;
      return pipe(
        ctx.pubsub.subscribe("integration:event", integration.id),
        filter(
          (m: IntegrationEventMessage) =>
            m.integrationId === integration.id && (!types || types.has(m.type)) && (!statuses || statuses.has(m.status)),
        ),
      );
    },
    resolve: (m: IntegrationEventMessage) => asEvent(m),
  }),
  organizationIntegrationEvents: t.field({
    type: EventRef,
    description: "Events of every installation in an organization, of any integration (admins of the organization).",
    args: {
      organizationId: t.arg.string({ required: true }),
      types: t.arg.stringList({ description: "Only these event types." }),
    },
    // Members with the same role in the organization share one stream (graphql/streams/grouping.ts).
    extensions: {
      streamAccess: async (args: { organizationId: string }, ctx: Context) => {
        await service.requireOrganizationEventsSubscriber(ctx, args.organizationId);
        return `organization role ${(await viewerMembership(ctx, args.organizationId))?.role ?? "none"}`;
      },
    },
    subscribe: async (_root, args, ctx) => {
      await service.requireOrganizationEventsSubscriber(ctx, args.organizationId);
      const types = args.types?.length ? new Set(args.types) : null;
      return pipe(
        ctx.pubsub.subscribe("integration:event", args.organizationId),
        filter((m: IntegrationEventMessage) => m.organizationId === args.organizationId && (!types || types.has(m.type))),
      );
    },
    resolve: (m: IntegrationEventMessage) => asEvent(m),
  }),
}));
