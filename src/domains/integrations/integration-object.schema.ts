import { builder } from "../../core/graph/builder.js";
import { jsonScalar } from "../../core/graph/scalars.js";
import { organizationById } from "../../core/graph/shared-loaders.js";
import { permissionsOf, urlsOf } from "../../core/graph/rest-fields.js";
import { viewerMemberWhere } from "../../core/access/access.js";
import { OrganizationRef } from "../organizations/organizations.schema.js";
import { INTEGRATION_PERMISSIONS, integrationPermissions } from "./integrations.policy.js";
import { CONFIGURATION_PROPERTY_TYPES } from "./integrations.validate.js";
import { integrationUrls } from "./integrations.urls.js";

/**
 * The Integration object of the graph, with the scalars and enumerations the integrations domain
 * is built from. Its installations (integration-installations.schema.ts), its events
 * (integration-events.schema.ts) and the operations (integrations.schema.ts) come after it.
 */

// ─── Scalars and enumerations ──────────────────────────────────────────────────────────────────

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

export const ConfigurationProperties = jsonScalar("IntegrationConfigurationProperties", {
  description:
    "Map of configuration property names to `{title, description, type, default, completion_url, enum}`; " +
    `type is one of ${CONFIGURATION_PROPERTY_TYPES.join(", ")}.`,
  extensions: { jsonSchema: { type: "object", additionalProperties: CONFIGURATION_PROPERTY_SCHEMA } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const Secrets = jsonScalar("IntegrationSecrets", {
  description: "Map of secret names to string values. Stored for the integration; never returned.",
  extensions: { jsonSchema: { type: "object", additionalProperties: { type: "string" } } },
  // No output field has this type; sofa-api passes REST inputs through serialize, hence the identity.
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const JsonObject = jsonScalar("JSONObject", {
  description: "A JSON object.",
  extensions: { jsonSchema: { type: "object" } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const SpaceIdOrSpace = jsonScalar("SpaceIdOrSpace", {
  description:
    "The installed space: its id (a string), or with `expand=true` the Space object. A space the caller cannot see is always given by its id.",
  extensions: { jsonSchema: { oneOf: [{ type: "string" }, { $ref: "#/components/schemas/Space" }] } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const SiteIdOrSite = jsonScalar("SiteIdOrSite", {
  description:
    "The installed site: its id (a string), or with `expand=true` the Site object. A site the caller cannot read is always given by its id.",
  extensions: { jsonSchema: { oneOf: [{ type: "string" }, { $ref: "#/components/schemas/Site" }] } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const VisibilityEnum = builder.enumType("IntegrationVisibility", {
  values: {
    public: { description: "Listed and installable by every organization." },
    private: { description: "Only the owner organization sees and installs it." },
    unlisted: { description: "Reachable by name by everyone, listed only to the owner organization." },
  } as const,
});
export const TargetEnum = builder.enumType("IntegrationTarget", {
  values: {
    all: { description: "Installable at every target (the default)." },
    organization: { description: "Installable in organizations only." },
    space: { description: "Installable in organizations and their spaces." },
    site: { description: "Installable in organizations and their sites." },
  } as const,
});
export const RuntimeEnum = builder.enumType("IntegrationRuntime", { values: { v1: { description: "The default runtime." } } as const });
export const SelectionEnum = builder.enumType("IntegrationInstallationSelection", {
  values: {
    all: { description: "Every space (site) of the organization." },
    selected: { description: "Only the spaces (sites) it was installed in." },
  } as const,
});
export const EventStatusEnum = builder.enumType("IntegrationEventStatus", {
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
  description:
    "Configuration schemas of the integration's installations (account), space installations (space) and site installations (site).",
  fields: (t) => ({
    account: t.field({ type: ConfigurationSchemaRef, nullable: true, resolve: (c) => c.account ?? null }),
    space: t.field({ type: ConfigurationSchemaRef, nullable: true, resolve: (c) => c.space ?? null }),
    site: t.field({ type: ConfigurationSchemaRef, nullable: true, resolve: (c) => c.site ?? null }),
  }),
});
const ExternalLink = builder.objectRef<{ url: string; label: string }>("IntegrationExternalLink").implement({
  fields: (t) => ({ url: t.exposeString("url"), label: t.exposeString("label") }),
});
const IntegrationUrls = urlsOf(
  "IntegrationUrls",
  ["location", "icon", "app", "assets", "publicEndpoint", "publicContentEndpoint"] as const,
  ["icon"],
);
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
      description:
        "Policy validating the integration's scripts and block content; sent as the content-security-policy header of render requests and of script-fetch and block-fetch events.",
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

/** The `integrationName` argument of every operation on one integration. */
export const NAME_ARG = { required: true, description: "Integration name, ^[a-zA-Z0-9-_.]+$." } as const;
