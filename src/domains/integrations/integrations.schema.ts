import { execute, parse, getNamedType, type DocumentNode, isObjectType, type GraphQLObjectType, type GraphQLResolveInfo, type GraphQLSchema } from "graphql";
import { filter, pipe } from "graphql-yoga";
import type { Integration, IntegrationEvent, IntegrationInstallation } from "../../generated/prisma/client.js";
import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import type { Context } from "../../core/context.js";
import { argsWithNulls } from "../../core/context.js";
import { organizationById } from "../../core/graph/shared-loaders.js";
import { listOf, pageArgs, permissionsOf, restName, urlsOf } from "../../core/graph/rest-fields.js";
import { isGraphOnly } from "../../rest/schema-projection.js";
import { shapeForRest } from "../../rest/shape.js";
import { OrganizationRef } from "../organizations/organizations.schema.js";
import { EVENT_STATUSES, type IntegrationEventMessage } from "../../events/messages.js";
import { INTEGRATION_PERMISSIONS, integrationPermissions } from "./integrations.policy.js";
import { CONFIGURATION_PROPERTY_TYPES } from "./integrations.validate.js";
import * as service from "./integrations.service.js";
import * as rendering from "./integrations.render.js";
import { integrationUrls, installationUrls, scopedInstallationUrls } from "./integrations.urls.js";
import { viewerMembership, viewerMemberWhere } from "../../core/access/access.js";

// ─── Scalars and enumerations ──────────────────────────────────────────────────────────────────

type ScalarOptions = Parameters<typeof builder.scalarType<"JSON">>[1];
type ScalarRef = ReturnType<typeof builder.scalarType<"JSON">>;
/** A JSON-valued scalar with its own JSON schema (the builder's scalar map names only DateTime and JSON). */
const jsonScalar = (name: string, options: ScalarOptions) => (builder.scalarType as (n: string, o: ScalarOptions) => ScalarRef)(name, options);

const CONFIGURATION_PROPERTY_SCHEMA = {
  type: "object",
  required: ["type"],
  additionalProperties: false,
  properties: {
    title: { type: "string" },
    description: { type: "string" },
    type: { type: "string", enum: [...CONFIGURATION_PROPERTY_TYPES] },
    default: { type: ["string", "number", "boolean"] },
    completion_url: { type: "string" },
    enum: { type: "array", items: { type: "string" } },
  },
};

const ConfigurationProperties = jsonScalar("IntegrationConfigurationProperties", {
  description:
    "Map of configuration property names to `{title, description, type, default, completion_url, enum}`; " +
    `type is one of ${CONFIGURATION_PROPERTY_TYPES.join(", ")}.`,
  extensions: { jsonSchema: { type: "object", additionalProperties: CONFIGURATION_PROPERTY_SCHEMA } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

const Secrets = jsonScalar("IntegrationSecrets", {
  description: "Map of secret names to string values. Stored for the integration; never returned.",
  extensions: { jsonSchema: { type: "object", additionalProperties: { type: "string" } } },
  // No output field has this type; sofa-api passes REST inputs through serialize, hence the identity.
  serialize: (value) => value,
  parseValue: (value) => value,
});

const JsonObject = jsonScalar("JSONObject", {
  description: "A JSON object.",
  extensions: { jsonSchema: { type: "object" } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

const SpaceIdOrSpace = jsonScalar("SpaceIdOrSpace", {
  description:
    "The installed space: its id (a string), or with `expand=true` the Space object. A space the caller cannot see is always given by its id.",
  extensions: { jsonSchema: { oneOf: [{ type: "string" }, { $ref: "#/components/schemas/Space" }] } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

const SiteIdOrSite = jsonScalar("SiteIdOrSite", {
  description: "The installed site: its id (a string), or with `expand=true` the Site object. A site the caller cannot read is always given by its id.",
  extensions: { jsonSchema: { oneOf: [{ type: "string" }, { $ref: "#/components/schemas/Site" }] } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

const VisibilityEnum = builder.enumType("IntegrationVisibility", {
  values: {
    public: { description: "Listed and installable by every organization." },
    private: { description: "Only the owner organization sees and installs it." },
    unlisted: { description: "Reachable by name by everyone, listed only to the owner organization." },
  } as const,
});
const TargetEnum = builder.enumType("IntegrationTarget", {
  values: {
    all: { description: "Installable at every target (the default)." },
    organization: { description: "Installable in organizations only." },
    space: { description: "Installable in organizations and their spaces." },
    site: { description: "Installable in organizations and their sites." },
  } as const,
});
const RuntimeEnum = builder.enumType("IntegrationRuntime", { values: { v1: { description: "The default runtime." } } as const });
const SelectionEnum = builder.enumType("IntegrationInstallationSelection", {
  values: { all: { description: "Every space (site) of the organization." }, selected: { description: "Only the spaces (sites) it was installed in." } } as const,
});
const EventStatusEnum = builder.enumType("IntegrationEventStatus", {
  values: {
    pending: { description: "Waiting for delivery or for its next attempt." },
    success: { description: "Delivered: the integration answered 2xx." },
    failed: { description: "Every delivery attempt failed." },
    skipped: { description: "Not delivered: development mode is off, or forwards only the owner organization's events." },
  } as const,
});

// ─── Integration ───────────────────────────────────────────────────────────────────────────────

interface Block {
  id: string;
  title: string;
  description?: string;
  icon?: string;
  urlUnfurl?: string[];
  markdown?: { codeblock: string; body: string };
}
interface ContentSource {
  id: string;
  title: string;
  description?: string;
  icon?: string;
  configuration: { componentId: string };
}
interface ConfigurationSchema {
  properties: Record<string, unknown>;
  required: string[];
}

const BlockMarkdown = builder.objectRef<{ codeblock: string; body: string }>("IntegrationBlockMarkdown").implement({
  fields: (t) => ({ codeblock: t.exposeString("codeblock"), body: t.exposeString("body") }),
});
const Block = builder.objectRef<Block>("IntegrationBlock").implement({
  fields: (t) => ({
    id: t.exposeString("id"),
    title: t.exposeString("title"),
    description: t.string({ nullable: true, resolve: (b) => b.description ?? null }),
    icon: t.string({ nullable: true, resolve: (b) => b.icon ?? null }),
    urlUnfurl: t.stringList({ resolve: (b) => b.urlUnfurl ?? [] }),
    markdown: t.field({ type: BlockMarkdown, nullable: true, resolve: (b) => b.markdown ?? null }),
  }),
});
const ContentSourceConfiguration = builder.objectRef<{ componentId: string }>("IntegrationContentSourceConfiguration").implement({
  fields: (t) => ({ componentId: t.exposeString("componentId") }),
});
const ContentSource = builder.objectRef<ContentSource>("IntegrationContentSource").implement({
  fields: (t) => ({
    id: t.exposeString("id"),
    title: t.exposeString("title"),
    description: t.string({ nullable: true, resolve: (s) => s.description ?? null }),
    icon: t.string({ nullable: true, resolve: (s) => s.icon ?? null }),
    configuration: t.field({ type: ContentSourceConfiguration, resolve: (s) => s.configuration }),
  }),
});
const ConfigurationSchemaRef = builder.objectRef<ConfigurationSchema>("IntegrationConfigurationSchema").implement({
  fields: (t) => ({
    properties: t.field({ type: ConfigurationProperties, resolve: (c) => c.properties ?? {} }),
    required: t.stringList({ resolve: (c) => c.required ?? [] }),
  }),
});
const Configurations = builder.objectRef<Record<string, ConfigurationSchema | undefined>>("IntegrationConfigurations").implement({
  description: "Configuration schemas of the integration's installations (account), space installations (space) and site installations (site).",
  fields: (t) => ({
    account: t.field({ type: ConfigurationSchemaRef, nullable: true, resolve: (c) => c.account ?? null }),
    space: t.field({ type: ConfigurationSchemaRef, nullable: true, resolve: (c) => c.space ?? null }),
    site: t.field({ type: ConfigurationSchemaRef, nullable: true, resolve: (c) => c.site ?? null }),
  }),
});
const ExternalLink = builder.objectRef<{ url: string; label: string }>("IntegrationExternalLink").implement({
  fields: (t) => ({ url: t.exposeString("url"), label: t.exposeString("label") }),
});
const IntegrationUrls = urlsOf("IntegrationUrls", ["location", "icon", "app", "assets", "publicEndpoint", "publicContentEndpoint"] as const, ["icon"]);
const IntegrationPermissions = permissionsOf("IntegrationPermissions", INTEGRATION_PERMISSIONS);

export const IntegrationRef = builder.prismaObject("Integration", {
  description: "An integration: published by an organization, installed in organizations and their spaces.",
  fields: (t) => ({
    object: t.string({ resolve: () => "integration" }),
    name: t.exposeString("name", { description: "Unique name, pattern ^[a-zA-Z0-9-_.]+$." }),
    version: t.exposeInt("version", { description: "Published version: 1, then one more at each publish." }),
    title: t.exposeString("title"),
    description: t.exposeString("description"),
    summary: t.exposeString("summary", { nullable: true, description: "Long-form markdown." }),
    previewImages: t.stringList({
      description: "Links to the preview images published as base64 content.",
      resolve: (i, _a, ctx) => integrationUrls(ctx, i).previewImages,
    }),
    target: t.field({ type: TargetEnum, resolve: (i) => i.target as any }),
    verified: t.exposeBoolean("verified"),
    visibility: t.field({ type: VisibilityEnum, resolve: (i) => i.visibility as any }),
    scopes: t.exposeStringList("scopes"),
    categories: t.exposeStringList("categories"),
    blocks: t.field({ type: [Block], resolve: (i) => (i.blocks as unknown as Block[]) ?? [] }),
    contentSources: t.field({ type: [ContentSource], resolve: (i) => (i.contentSources as unknown as ContentSource[]) ?? [] }),
    configurations: t.field({ type: Configurations, resolve: (i) => (i.configurations as any) ?? {} }),
    externalLinks: t.field({ type: [ExternalLink], resolve: (i) => (i.externalLinks as any) ?? [] }),
    owner: t.field({
      type: OrganizationRef,
      description: "The organization that publishes the integration.",
      resolve: async (i, _a, ctx) => (await organizationById(ctx).load(i.ownerId))!,
    }),
    urls: t.field({ type: IntegrationUrls, resolve: (i, _a, ctx) => integrationUrls(ctx, i).urls }),
    permissions: t.field({ type: IntegrationPermissions, resolve: (i, _a, ctx) => integrationPermissions(ctx, i) }),
    contentSecurityPolicy: t.exposeString("contentSecurityPolicy", {
      nullable: true,
      description: "Policy validating the integration's scripts and block content; sent as the content-security-policy header of render requests and of script-fetch and block-fetch events.",
    }),
    events: t.relatedConnection("events", {
      description: "Events of the integration, newest first (members of the owner organization; empty for anyone else).",
      cursor: "id",
      totalCount: true,
      query: (_args, ctx) => ({
        where: { integration: { owner: { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } } } },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      }),
    }),
    installations: t.relatedConnection("installations", {
      description: "Installations the caller sees: all of them for admins of the owner, else those of the caller's organizations.",
      cursor: "id",
      totalCount: true,
      query: (_args, ctx) => ({
        where: {
          OR: [
            { organization: { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } } },
            { integration: { owner: { members: { some: { ...viewerMemberWhere(ctx), role: "admin" } } } } },
          ],
        },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      }),
    }),
  }),
});

// ─── Installations ─────────────────────────────────────────────────────────────────────────────

const InstallationUrls = urlsOf("IntegrationInstallationUrls", ["location", "app", "publicEndpoint", "publicContentEndpoint"] as const);
const InstallationTarget = builder.objectRef<{ organization: string }>("IntegrationInstallationTarget").implement({
  fields: (t) => ({ organization: t.exposeString("organization", { description: "Id of the organization the integration is installed in." }) }),
});

async function nameOf(ctx: Context, installation: IntegrationInstallation & { integration?: { name: string } }): Promise<string> {
  return installation.integration?.name ?? (await service.integrationById(ctx).load(installation.integrationId))!.name;
}

export const InstallationRef = builder.prismaObject("IntegrationInstallation", {
  description: "An integration installed in an organization.",
  fields: (t) => ({
    id: t.exposeString("id"),
    status: t.exposeString("status", { description: "active." }),
    spaceSelection: t.field({ type: SelectionEnum, extensions: restName("space_selection"), resolve: (i) => i.spaceSelection as any }),
    siteSelection: t.field({ type: SelectionEnum, extensions: restName("site_selection"), resolve: (i) => i.siteSelection as any }),
    spacesCount: t.int({
      extensions: restName("spaces"),
      description: "Number of spaces the installation covers (every live space of the organization when space_selection is all).",
      resolve: (i, _a, ctx) => service.installationSpaceCount(ctx).load(i),
    }),
    configuration: t.field({ type: JsonObject, resolve: (i) => i.configuration ?? {} }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    urls: t.field({ type: InstallationUrls, resolve: async (i, _a, ctx) => installationUrls(ctx, await nameOf(ctx, i), i) }),
    externalIds: t.exposeStringList("externalIds"),
    target: t.field({ type: InstallationTarget, resolve: (i) => ({ organization: i.organizationId }) }),
    integration: t.field({
      type: IntegrationRef,
      extensions: { graphOnly: true },
      resolve: async (i, _a, ctx) => (await service.integrationById(ctx).load(i.integrationId))!,
    }),
    organization: t.field({
      type: OrganizationRef,
      extensions: { graphOnly: true },
      resolve: async (i, _a, ctx) => (await organizationById(ctx).load(i.organizationId))!,
    }),
  }),
});

builder.prismaObjectFields("Organization", (t) => ({
  integrations: t.relatedConnection("integrations", {
    description: "Integrations the organization publishes, by name.",
    cursor: "id",
    totalCount: true,
    query: { orderBy: [{ name: "asc" }, { id: "asc" }] },
  }),
  installations: t.relatedConnection("installations", {
    description: "Integrations installed in the organization, oldest first.",
    cursor: "id",
    totalCount: true,
    query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
  }),
}));

// ─── Space and site installations ──────────────────────────────────────────────────────────────

const ScopedInstallationUrls = urlsOf("IntegrationInstallationItemUrls", ["location", "publicEndpoint", "publicContentEndpoint"] as const);

const restQueries = new WeakMap<GraphQLSchema, Map<string, DocumentNode | null>>();

/** The selection of every field a REST client gets of a type (graph-only fields left out). */
function restSelection(type: GraphQLObjectType, depth = 0): string {
  const parts: string[] = [];
  for (const field of Object.values(type.getFields())) {
    if (isGraphOnly(field as any)) continue;
    const named = getNamedType(field.type);
    if (isObjectType(named)) {
      if (depth >= 3) continue;
      parts.push(`${field.name} { ${restSelection(named, depth + 1)} }`);
    } else parts.push(field.name);
  }
  return parts.join(" ");
}

/**
 * An object exactly as its REST read answers it (`Query.space` for GET /v1/spaces/{spaceId},
 * `Query.site` for GET /v1/orgs/{organizationId}/sites/{siteId}), read through the graph with the
 * caller's rights; null when the caller cannot read it.
 */
async function restObject(ctx: Context, info: GraphQLResolveInfo, fieldName: string, args: Record<string, string>): Promise<unknown> {
  const schema = info.schema;
  let queries = restQueries.get(schema);
  if (!queries) restQueries.set(schema, (queries = new Map()));
  let query = queries.get(fieldName);
  if (query === undefined) {
    const field = schema.getQueryType()?.getFields()[fieldName];
    const type = field && getNamedType(field.type);
    const names = Object.keys(args);
    query =
      field && isObjectType(type) && names.every((n) => field.args.some((a) => a.name === n))
        ? parse(`query (${names.map((n) => `$${n}: String!`).join(", ")}) { object: ${fieldName}(${names.map((n) => `${n}: $${n}`).join(", ")}) { ${restSelection(type)} } }`)
        : null;
    queries.set(fieldName, query);
  }
  if (!query) return null;
  const result = await execute({ schema, document: query, contextValue: ctx, variableValues: args });
  const object = (result.data as any)?.object;
  if (result.errors?.length || !object) return null;
  return shapeForRest(object, schema.getQueryType()!.getFields()[fieldName]!.type);
}

/** The installed space or site: its id, or with expand the object as its REST read answers it (its id when the caller cannot read it). */
async function installedTarget(item: service.ScopedInstallationItem, ctx: Context, info: GraphQLResolveInfo): Promise<unknown> {
  const id = item.row.targetId;
  if (!item.expand) return id;
  const object =
    item.scope === "space"
      ? await restObject(ctx, info, "space", { spaceId: id })
      : await restObject(ctx, info, "site", { organizationId: item.organizationId, siteId: id });
  return object ?? id;
}

function scopedInstallationType(name: string, scope: service.InstallationScope, target: typeof SpaceIdOrSpace) {
  return builder.objectRef<service.ScopedInstallationItem>(name).implement({
    description: `An integration installed in a ${scope}.`,
    fields: (t) => ({
      integration: t.string({ description: "Name of the integration.", resolve: (s) => s.integrationName }),
      installation: t.string({ description: "Id of the installation.", resolve: (s) => s.row.installationId }),
      status: t.string({ description: "active.", resolve: (s) => s.row.status }),
      configuration: t.field({ type: JsonObject, resolve: (s) => s.row.configuration ?? {} }),
      externalIds: t.stringList({ resolve: (s) => s.row.externalIds }),
      urls: t.field({ type: ScopedInstallationUrls, resolve: (s, _a, ctx) => scopedInstallationUrls(ctx, s.integrationName, s.row.installationId, scope, s.row.targetId) }),
      [scope]: t.field({
        type: target,
        description: `The ${scope}'s id, or the ${scope === "space" ? "Space" : "Site"} object when read with expand=true (and the caller can read the ${scope}).`,
        resolve: (s, _a, ctx, info) => installedTarget(s, ctx, info),
      }),
    }),
  });
}

const SpaceInstallation = scopedInstallationType("IntegrationSpaceInstallation", "space", SpaceIdOrSpace);
const SiteInstallation = scopedInstallationType("IntegrationSiteInstallation", "site", SiteIdOrSite);

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
const EventWithTrace = builder.objectRef<{ event: IntegrationEvent; trace: { logs: any[] } }>("IntegrationEventWithTrace").implement({
  fields: (t) => ({
    event: t.field({ type: EventRef, resolve: (e) => e.event }),
    trace: t.field({ type: Trace, resolve: (e) => e.trace }),
  }),
});

// ─── ContentKit ────────────────────────────────────────────────────────────────────────────────

const Confirm = builder.objectRef<rendering.ContentKitConfirm>("ContentKitConfirm").implement({
  fields: (t) => ({
    title: t.exposeString("title"),
    text: t.exposeString("text"),
    confirm: t.exposeString("confirm"),
    style: t.string({ nullable: true, resolve: (c) => c.style ?? null }),
  }),
});
const Button = builder.objectRef<rendering.ContentKitButton>("ContentKitButton").implement({
  fields: (t) => ({
    type: t.string({ resolve: () => "button" }),
    style: t.string({ nullable: true, resolve: (b) => b.style ?? null }),
    onPress: t.field({ type: JsonObject, description: "The action dispatched when pressed.", resolve: (b) => b.onPress }),
    icon: t.string({ nullable: true, resolve: (b) => b.icon ?? null }),
    trailingIcon: t.string({ nullable: true, resolve: (b) => b.trailingIcon ?? null }),
    label: t.string({ nullable: true, resolve: (b) => b.label ?? null }),
    tooltip: t.string({ nullable: true, resolve: (b) => b.tooltip ?? null }),
    confirm: t.field({ type: Confirm, nullable: true, resolve: (b) => b.confirm ?? null }),
    disabled: t.boolean({ nullable: true, resolve: (b) => b.disabled ?? null }),
  }),
});
const Control = builder.objectRef<rendering.ContentKitControl>("ContentKitControl").implement({
  fields: (t) => ({
    icon: t.string({ nullable: true, resolve: (c) => c.icon ?? null }),
    label: t.exposeString("label"),
    onPress: t.field({ type: JsonObject, resolve: (c) => c.onPress }),
    confirm: t.field({ type: Confirm, nullable: true, resolve: (c) => c.confirm ?? null }),
  }),
});
const BlockElement = builder.objectRef<rendering.ContentKitOutput["element"]>("ContentKitBlock").implement({
  fields: (t) => ({
    type: t.string({ resolve: () => "block" }),
    children: t.field({ type: [Button], resolve: (b) => b.children }),
    controls: t.field({ type: [Control], nullable: true, resolve: (b) => b.controls ?? null }),
  }),
});
const RenderOutput = builder.objectRef<rendering.ContentKitOutput>("ContentKitRenderOutput").implement({
  description: "ContentKit render output of an integration component.",
  fields: (t) => ({
    type: t.string({ resolve: () => "element" }),
    element: t.field({ type: BlockElement, resolve: (o) => o.element }),
    state: t.field({ type: JsonObject, resolve: (o) => o.state }),
    props: t.field({ type: JsonObject, resolve: (o) => o.props }),
  }),
});

const SigningSecret = builder.objectRef<{ signingSecret: string }>("IntegrationSigningSecret").implement({
  description:
    "The secret that signs requests sent to the integration: x-signature = sha256=<hex HMAC-SHA256 of \"<x-signature-timestamp>.<raw body>\">.",
  fields: (t) => ({ signingSecret: t.exposeString("signingSecret") }),
});

// ─── Lists and inputs ──────────────────────────────────────────────────────────────────────────

const IntegrationList = listOf("IntegrationList", IntegrationRef);
const InstallationList = listOf("IntegrationInstallationList", InstallationRef);
const EventList = listOf("IntegrationEventList", EventRef);
const SpaceInstallationList = listOf("IntegrationSpaceInstallationList", SpaceInstallation);
const SiteInstallationList = listOf("IntegrationSiteInstallationList", SiteInstallation);

const BlockMarkdownInput = builder.inputType("IntegrationBlockMarkdownInput", {
  fields: (t) => ({ codeblock: t.string({ required: true }), body: t.string({ required: true }) }),
});
const BlockInput = builder.inputType("IntegrationBlockInput", {
  fields: (t) => ({
    id: t.string({ required: true }),
    title: t.string({ required: true }),
    description: t.string(),
    icon: t.string(),
    urlUnfurl: t.stringList({ description: "URLs (or domains) whose links the block unfurls." }),
    markdown: t.field({ type: BlockMarkdownInput }),
  }),
});
const ContentSourceInput = builder.inputType("IntegrationContentSourceInput", {
  fields: (t) => ({
    id: t.string({ required: true }),
    title: t.string({ required: true }),
    description: t.string(),
    icon: t.string(),
    configuration: t.field({
      type: builder.inputType("IntegrationContentSourceConfigurationInput", { fields: (f) => ({ componentId: f.string({ required: true }) }) }),
      required: true,
    }),
  }),
});
const ExternalLinkInput = builder.inputType("IntegrationExternalLinkInput", {
  fields: (t) => ({ url: t.string({ required: true }), label: t.string({ required: true }) }),
});
const ConfigurationSchemaInput = builder.inputType("IntegrationConfigurationSchemaInput", {
  fields: (t) => ({ properties: t.field({ type: ConfigurationProperties }), required: t.stringList() }),
});
const ConfigurationsInput = builder.inputType("IntegrationConfigurationsInput", {
  fields: (t) => ({
    account: t.field({ type: ConfigurationSchemaInput }),
    space: t.field({ type: ConfigurationSchemaInput }),
    site: t.field({ type: ConfigurationSchemaInput }),
  }),
});

const NAME_ARG = { required: true, description: "Integration name, ^[a-zA-Z0-9-_.]+$." } as const;
const installationListArgs = (t: any) => ({
  integrationName: t.arg.string(NAME_ARG),
  ...pageArgs,
  externalId: t.arg.string({ description: "Only items whose externalIds contain this value." }),
});

// ─── Operations ────────────────────────────────────────────────────────────────────────────────

builder.queryFields((t) => ({
  integrations: t.field({
    type: IntegrationList,
    description:
      "Integrations: public ones, and every one of the caller's organizations (unlisted ones of others are reached by name only), by name. " +
      "Filters: search (text in the name or title), category, blockDomain (integrations with a block unfurling links of that domain or its subdomains), " +
      "hasBlocks, hasContentSources, owner (id or subdomain of the owning organization), scope, target (installable there: that target or all).",
    args: {
      ...pageArgs,
      search: t.arg.string({ description: "Text searched in the name (and title), case-insensitive." }),
      category: t.arg.string(),
      blockDomain: t.arg.string({ description: "A domain, ^[a-zA-Z0-9-_.]+$." }),
      hasBlocks: t.arg.boolean(),
      hasContentSources: t.arg.boolean(),
      owner: t.arg.string({ description: "Id or subdomain of the owning organization." }),
      scope: t.arg.string(),
      target: t.arg({ type: TargetEnum }),
    },
    resolve: (_r, args, ctx) => service.listIntegrations(ctx, args as service.IntegrationFilters),
  }),
  integration: t.field({
    type: IntegrationRef,
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: (_r, args, ctx) => service.getIntegration(ctx, args.integrationName),
  }),
  integrationInstallations: t.field({
    type: InstallationList,
    description: "Installations of an integration: all of them for admins of the owner organization, else those of the caller's organizations.",
    args: installationListArgs(t),
    resolve: (_r, args: any, ctx) => service.listInstallations(ctx, args.integrationName, args),
  }),
  integrationInstallation: t.field({
    type: InstallationRef,
    args: { integrationName: t.arg.string(NAME_ARG), installationId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getInstallation(ctx, args.integrationName, args.installationId),
  }),
  integrationEvents: t.field({
    type: EventList,
    description: "Events of an integration, newest first (members of the owner organization).",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      ...pageArgs,
      type: t.arg.string({ description: "Only events of this type (installation_setup, space_content_updated, …)." }),
      status: t.arg({ type: EventStatusEnum, description: "Only events with this status." }),
      installationId: t.arg.string({ description: "Only events of this installation." }),
    },
    resolve: (_r, args, ctx) => service.listEvents(ctx, args.integrationName, args),
  }),
  integrationEvent: t.field({
    type: EventWithTrace,
    description: "An event with the trace of its delivery (members of the owner organization).",
    args: { integrationName: t.arg.string(NAME_ARG), eventId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getEvent(ctx, args.integrationName, args.eventId),
  }),
  integrationRender: t.field({
    type: RenderOutput,
    description: "Renders a component: like POST …/render, with the request as LZ-string compressed JSON (compressToEncodedURIComponent) in `request`.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      request: t.arg.string({ required: true, description: "LZ-string compressToEncodedURIComponent of the JSON {componentId, props, state, context, action}." }),
    },
    resolve: (_r, args, ctx) => rendering.render(ctx, args.integrationName, rendering.decodeRenderRequest(args.request), "request."),
  }),
  integrationSigningSecret: t.field({
    type: SigningSecret,
    description: "The secret signing the requests sent to the integration (admins of the owner organization).",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: (_r, args, ctx) => service.signingSecret(ctx, args.integrationName),
  }),
}));

const IntegrationSpaceUninstallPayload = deletionPayload("IntegrationSpaceUninstallPayload", "space installation (the space's id)");
const IntegrationSiteUninstallPayload = deletionPayload("IntegrationSiteUninstallPayload", "site installation (the site's id)");
const IntegrationDeletePayload = deletionPayload("IntegrationDeletePayload", "integration");
const IntegrationUninstallPayload = deletionPayload("IntegrationUninstallPayload", "installation");

builder.mutationFields((t) => ({
  integrationPublish: t.field({
    type: IntegrationRef,
    description:
      "Publishes an integration: the first publish creates it (201, version 1) for `organization`; later ones add a version (200). " +
      "Omitted fields keep their value; null resets one to its default. Admins of the owning organization only.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      runtime: t.arg({ type: RuntimeEnum, description: "v1 (the default runtime when omitted)." }),
      icon: t.arg.string({ description: "Icon image, base64 content." }),
      title: t.arg.string({ description: "Required on the first publish, at most 100 characters." }),
      description: t.arg.string(),
      summary: t.arg.string({ description: "Long-form markdown." }),
      previewImages: t.arg.stringList({ description: "Preview images, base64 content each." }),
      visibility: t.arg({ type: VisibilityEnum, description: "private when omitted on the first publish." }),
      target: t.arg({ type: TargetEnum, description: "Omitted: installable at all targets." }),
      scopes: t.arg.stringList(),
      categories: t.arg.stringList(),
      blocks: t.arg({ type: [BlockInput] }),
      contentSources: t.arg({ type: [ContentSourceInput] }),
      externalLinks: t.arg({ type: [ExternalLinkInput] }),
      configurations: t.arg({ type: ConfigurationsInput }),
      script: t.arg.string({ description: "Script content." }),
      organization: t.arg.string({ description: "Id or subdomain of the publishing organization; required on the first publish." }),
      secrets: t.arg({ type: Secrets }),
      contentSecurityPolicy: t.arg.string({ description: "Sent as the content-security-policy header of render requests and script-fetch and block-fetch events." }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { integrationName, ...input } = argsWithNulls(ctx, rawArgs);
      return service.publishIntegration(ctx, integrationName, input as service.PublishInput);
    },
  }),
  integrationDelete: t.field({
    type: IntegrationDeletePayload,
    description: "Deletes an integration with its installations and events (admins of the owner). Succeeds also when it did not exist.",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: async (_r, args, ctx) => deleted(service.deleteIntegration(ctx, args.integrationName), args.integrationName),
  }),
  integrationInstall: t.field({
    type: InstallationRef,
    description: "Installs an integration in an organization (its admins). Records an installation_setup event.",
    args: { integrationName: t.arg.string(NAME_ARG), organization: t.arg.string({ required: true, description: "Id or subdomain of the organization." }) },
    resolve: (_r, args, ctx) => service.installIntegration(ctx, args.integrationName, args.organization),
  }),
  integrationInstallationUpdate: t.field({
    type: InstallationRef,
    description: "Changes an installation (admins of its organization). A new configuration, space selection or site selection records an installation_setup event with `previous`.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      installationId: t.arg.string({ required: true }),
      configuration: t.arg({ type: JsonObject, description: "The whole configuration (checked against the integration's account configuration schema)." }),
      space_selection: t.arg({ type: SelectionEnum, description: "all: every space of the organization; selected: the spaces it was installed in." }),
      site_selection: t.arg({ type: SelectionEnum, description: "all: every site of the organization; selected: the sites it was installed in." }),
      externalIds: t.arg.stringList(),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { integrationName, installationId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateInstallation(ctx, integrationName, installationId, patch as service.InstallationPatch);
    },
  }),
  integrationUninstall: t.field({
    type: IntegrationUninstallPayload,
    description: "Removes an installation and its space and site installations (admins of its organization); records installation_deleted. Succeeds also when it did not exist.",
    args: { integrationName: t.arg.string(NAME_ARG), installationId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(service.uninstall(ctx, args.integrationName, args.installationId), args.installationId),
  }),
  integrationDevSet: t.field({
    type: IntegrationRef,
    nullable: true,
    description: "Turns development mode on: events are dispatched to tunnelUrl (signed POSTs). all: forward every organization's events, not only the owner's.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      tunnelUrl: t.arg.string({ required: true, description: "http(s) URL receiving the integration's events and render requests." }),
      all: t.arg.boolean({ description: "Default false: only events of the owner organization's installations are forwarded." }),
    },
    resolve: async (_r, args, ctx) => {
      await service.setDevelopmentMode(ctx, args.integrationName, args.tunnelUrl, args.all);
      return ctx.prisma.integration.findUnique({ where: { name: args.integrationName } });
    },
  }),
  integrationDevDelete: t.field({
    type: IntegrationRef,
    nullable: true,
    description: "Turns development mode off; answers the integration (null when it did not exist).",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: async (_r, args, ctx) => {
      await service.disableDevelopmentMode(ctx, args.integrationName);
      return ctx.prisma.integration.findUnique({ where: { name: args.integrationName } });
    },
  }),
  integrationRenderPost: t.field({
    type: RenderOutput,
    description:
      "Renders a component of the integration: a signed POST {type: ui_render, componentId, props, state, context, action} to its endpoint (the development tunnel), " +
      "whose answer must be ContentKit render output (else 502). No endpoint: 409.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      componentId: t.arg.string({ required: true, description: "Id of the component to render." }),
      props: t.arg({ type: JsonObject, description: "Properties of the component." }),
      state: t.arg({ type: JsonObject, description: "Current local UI state." }),
      context: t.arg({ type: JsonObject, description: "Rendering context." }),
      action: t.arg({ type: JsonObject, description: "The action being handled (a button's onPress), if any." }),
    },
    resolve: (_r, args, ctx) => rendering.render(ctx, args.integrationName, args as rendering.RenderRequest),
  }),
  integrationSigningSecretRotate: t.field({
    type: SigningSecret,
    description: "Replaces the signing secret (admins of the owner organization); requests are signed with the new one at once.",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: (_r, args, ctx) => service.rotateSigningSecret(ctx, args.integrationName),
  }),
}));

// ─── Space and site installation operations ────────────────────────────────────────────────────

/**
 * The same four operations for space and site installations: list (GET …/spaces, …/sites), read,
 * install or change (PUT …/installations/{installationId}/spaces/{spaceId}), remove (DELETE).
 */
function scopedInstallationOperations(scope: service.InstallationScope, item: typeof SpaceInstallation, list: typeof SpaceInstallationList) {
  const Noun = scope === "space" ? "Space" : "Site";
  const idArg = `${scope}Id`;
  const expandDescription = `true: \`${scope}\` is the ${Noun} object; false (default): its id.`;
  builder.queryFields((t) => ({
    [`integration${Noun}Installations`]: t.field({
      type: list,
      description: `${Noun}s the integration is installed in (among the installations the caller sees), oldest first.`,
      args: { ...installationListArgs(t), expand: t.arg.boolean({ description: expandDescription }) },
      resolve: (_r, args: any, ctx) => service.listScopedInstallations(ctx, scope, args.integrationName, args),
    }),
    [`integration${Noun}Installation`]: t.field({
      type: item,
      args: {
        integrationName: t.arg.string(NAME_ARG),
        installationId: t.arg.string({ required: true }),
        [idArg]: t.arg.string({ required: true }),
        expand: t.arg.boolean({ description: expandDescription }),
      },
      resolve: (_r, args: any, ctx) => service.getScopedInstallation(ctx, scope, args.integrationName, args.installationId, args[idArg], !!args.expand),
    }),
  }));
  builder.mutationFields((t) => ({
    [`integration${Noun}Install`]: t.field({
      type: item,
      description: `Installs the integration in a ${scope} of the installation's organization, or changes that ${scope} installation; records ${scope}_installation_setup.`,
      args: {
        integrationName: t.arg.string(NAME_ARG),
        installationId: t.arg.string({ required: true }),
        [idArg]: t.arg.string({ required: true }),
        configuration: t.arg({ type: JsonObject, description: `Checked against the integration's ${scope} configuration schema; omitted: kept ({} at first).` }),
        externalIds: t.arg.stringList({ description: "Omitted: kept ([] at first)." }),
      },
      resolve: (_r, args: any, ctx) => service.installScoped(ctx, scope, args.integrationName, args.installationId, args[idArg], args),
    }),
    [`integration${Noun}Uninstall`]: t.field({
      type: scope === "space" ? IntegrationSpaceUninstallPayload : IntegrationSiteUninstallPayload,
      description: `Removes the integration from a ${scope}; records ${scope}_installation_deleted. Succeeds also when it was not installed there.`,
      args: { integrationName: t.arg.string(NAME_ARG), installationId: t.arg.string({ required: true }), [idArg]: t.arg.string({ required: true }) },
      resolve: (_r, args: any, ctx) => deleted(service.uninstallScoped(ctx, scope, args.integrationName, args.installationId, args[idArg]), args[idArg]),
    }),
  }));
}

scopedInstallationOperations("space", SpaceInstallation, SpaceInstallationList);
scopedInstallationOperations("site", SiteInstallation, SiteInstallationList);

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
    // Members with the same role in the owner organization share one stream (graphql/streams.ts).
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
        filter((m: IntegrationEventMessage) => m.integrationId === integration.id && (!types || types.has(m.type)) && (!statuses || statuses.has(m.status))),
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
    // Members with the same role in the organization share one stream (graphql/streams.ts).
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

export { EVENT_STATUSES };
export type { Integration };
