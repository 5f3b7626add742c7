import { builder } from "../../core/graph/builder.js";
import { jsonScalar, stringScalar } from "../../core/graph/scalars.js";
import { viewerMembership } from "../../core/access/access.js";
import { atLeast, type Role } from "../../core/access/roles.js";
import { DefaultLevelEnum, GRAPH_ONLY, permissionsOf, restName, urlsOf } from "../../core/graph/rest-fields.js";
import { organizationById } from "../../core/graph/shared-loaders.js";
import { invalidScalarValue } from "../../core/errors.js";
import { SITE_ADMIN_ROLE, SITE_EDIT_ROLE } from "./sites.policy.js";
import * as service from "./sites.service.js";
import * as structure from "./structure.js";

/**
 * The Site object of the graph, with the scalars, enumerations and small objects it and the rest
 * of the sites domain are built from. The site's structure (site-structure.schema.ts), what
 * visitors see (site-published.schema.ts) and the operations (sites.schema.ts) come after it.
 */

// ─── Scalars: values GraphQL enums cannot spell, and JSON objects ─────────────────────────────

function enumScalar(name: string, field: string, values: readonly string[], description: string) {
  return stringScalar(name, {
    description,
    extensions: { jsonSchema: { type: "string", enum: [...values] } },
    serialize: (value) => String(value),
    parseValue: (value) => {
      if (typeof value !== "string" || !values.includes(value)) {
        throw invalidScalarValue(name, `${field} must be one of ${values.join(", ")} (got ${JSON.stringify(value)})`);
      }
      return value;
    },
  });
}

export const SiteVisibilityScalar = enumScalar(
  "SiteVisibility",
  "visibility",
  service.SITE_VISIBILITIES,
  "Who can reach a published site: public (anyone, indexed by search engines), unlisted (anyone, not indexed), " +
    "share-link (anyone holding the key of one of its share links, as `shareKey`), visitor-auth (anyone with a JWT signed with its visitor-auth key).",
);

export const SiteItemTypeScalar = enumScalar(
  "SiteItemType",
  "type",
  structure.ITEM_TYPES,
  "The kind of an item of a site's structure: site-section, site-section-group or site-space.",
);

export const SiteSpacesInputScalar = jsonScalar("SiteSpacesInput", {
  description: `Space ids of the organization to show in the new site (the first is its default), or "${service.CREATE_SPACE}" to create a new space for it.`,
  extensions: {
    jsonSchema: {
      oneOf: [
        { type: "array", items: { type: "string" }, maxItems: 100 },
        { type: "string", enum: [service.CREATE_SPACE] },
      ],
    },
  },
  serialize: (value) => value,
  parseValue: (value) => {
    if (value === service.CREATE_SPACE) return value;
    if (Array.isArray(value) && value.length <= 100 && value.every((v) => typeof v === "string" && v.length > 0 && v.length <= 100))
      return value;
    throw invalidScalarValue("SiteSpacesInput", `spaces must be an array of at most 100 space ids or "${service.CREATE_SPACE}"`);
  },
});

export const AdaptiveJsonSchemaScalar = jsonScalar("SiteAdaptiveJsonSchema", {
  description:
    "A draft-07 JSON Schema of the claims of a site's visitors: type object, additionalProperties false, properties: " +
    "`unsigned` (type object: the claims visitors bring unsigned) and claims of type boolean, string, number, integer or object, each with a description.",
  extensions: { jsonSchema: { type: "object" } },
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw invalidScalarValue("SiteAdaptiveJsonSchema", "jsonSchema must be a JSON object");
    return value;
  },
});

const SiteIconScalar = jsonScalar("SiteIcon", {
  description: "The site's icon: `{icon: {light: url, dark: url}}`, or the name of an icon.",
  extensions: {
    jsonSchema: {
      oneOf: [
        {
          type: "object",
          required: ["icon"],
          properties: {
            icon: {
              type: "object",
              required: ["light", "dark"],
              properties: { light: { type: "string", format: "uri" }, dark: { type: "string", format: "uri" } },
            },
          },
        },
        { type: "string" },
      ],
    },
  },
  serialize: (value) => value,
  parseValue: (value) => value,
});

// ─── Enumerations ──────────────────────────────────────────────────────────────────────────────

export const SiteTypeEnum = builder.enumType("SiteType", {
  description: "The plan of a site.",
  values: {
    basic: { description: "The default." },
    premium: { description: "Includes adaptive content and visitor authentication (see `features`)." },
    ultimate: { description: "Also includes proxies and advanced customization." },
  } as const,
});

export const AgentsContextEnum = builder.enumType("SiteAgentsContext", {
  values: {
    excluded: { description: "Agents cannot access the site." },
    included: { description: "Agents can access the site." },
  } as const,
});

export const StructureTypeEnum = builder.enumType("SiteStructureType", {
  values: {
    sections: { description: "The site is made of sections: `structure` lists SiteSection objects." },
    siteSpaces: { description: "The site shows site spaces at its root: `structure` lists SiteSpace objects." },
  } as const,
});

// ─── Small objects ─────────────────────────────────────────────────────────────────────────────

const SiteUrls = urlsOf("SiteUrls", ["location", "app", "published", "preview"] as const);
const SITE_PERMISSIONS = [
  "view",
  "access",
  "edit",
  "create",
  "admin",
  "installIntegration",
  "viewAdaptiveSchema",
  "editAdaptiveSchema",
] as const;
const SitePermissions = permissionsOf("SitePermissions", SITE_PERMISSIONS);

/** What the caller may do with a site (sites.policy.ts): members read, `create` edits, `admin` administers. */
function sitePermissions(member: { role: string | null } | null): Record<(typeof SITE_PERMISSIONS)[number], boolean> {
  const role = (member?.role ?? null) as Role | null;
  const edit = atLeast(role, SITE_EDIT_ROLE);
  const admin = atLeast(role, SITE_ADMIN_ROLE);
  return {
    view: !!member,
    access: !!member,
    edit,
    create: edit,
    admin,
    installIntegration: admin,
    viewAdaptiveSchema: !!member,
    editAdaptiveSchema: edit,
  };
}

export const PublishedUrls = urlsOf("SitePublishedUrls", ["published"] as const);

const SiteProxy = builder.objectRef<{ origin: string; target: string }>("SiteProxy").implement({
  description: "The site is served under a subdirectory of another domain.",
  fields: (t) => ({
    origin: t.exposeString("origin", { description: "Where visitors reach the site: host and path, as set (served over https)." }),
    target: t.exposeString("target", { description: "Where the proxy forwards requests: the site's own published address." }),
  }),
});

const AdaptiveContent = builder.objectRef<{ enabled: boolean }>("SiteAdaptiveContent").implement({
  fields: (t) => ({ enabled: t.exposeBoolean("enabled") }),
});

const SiteAds = builder.objectRef<{ status: string; submittable: boolean }>("SiteAds").implement({
  description: "Ads on the site (absent: ads are not offered by this server).",
  fields: (t) => ({ status: t.exposeString("status"), submittable: t.exposeBoolean("submittable") }),
});

const SiteFeatureRef = builder.objectRef<service.SiteFeature>("SiteFeature").implement({
  description: "A plan feature the site uses.",
  fields: (t) => ({
    id: t.exposeString("id"),
    plan: t.field({ type: SiteTypeEnum, description: "The site type that includes the feature.", resolve: (f) => f.plan }),
    frozen: t.exposeBoolean("frozen", {
      description: "The site's type is below the feature's plan: it keeps working but cannot be changed.",
    }),
    customizations: t.exposeStringList("customizations"),
  }),
});

const SubdomainTarget = builder.objectRef<{ organization: string }>("SubdomainOrganizationTarget").implement({
  fields: (t) => ({
    type: t.string({ resolve: () => "organization" }),
    organization: t.exposeString("organization", { description: "Id of the organization." }),
  }),
});

export const SubdomainRef = builder.objectRef<service.SubdomainView>("Subdomain").implement({
  description: "The platform subdomain of an organization: its `hostname`, under which its sites are published.",
  fields: (t) => ({
    object: t.string({ resolve: () => "subdomain" }),
    subdomain: t.exposeString("subdomain", { description: "3 to 32 characters, ^[a-z0-9][a-z0-9-]{1,30}[a-z0-9]$." }),
    target: t.field({ type: SubdomainTarget, resolve: (s) => ({ organization: s.organization }) }),
    isActive: t.exposeBoolean("isActive"),
  }),
});

export const AdaptiveSchemaRef = builder.objectRef<service.AdaptiveSchemaView>("SiteAdaptiveSchema").implement({
  fields: (t) => ({
    object: t.string({ resolve: () => "site-adaptive-schema" }),
    jsonSchema: t.field({ type: AdaptiveJsonSchemaScalar, resolve: (a) => a.jsonSchema }),
    updatedAt: t.expose("updatedAt", {
      type: "DateTime",
      description: "When the schema was last set (the site's creation while it has the default schema).",
    }),
  }),
});

const TemplateCondition = builder.objectRef<{ description: string; condition: string }>("SiteTemplateCondition").implement({
  fields: (t) => ({ description: t.exposeString("description"), condition: t.exposeString("condition") }),
});
export const TemplateConditions = builder
  .objectRef<{ items: { description: string; condition: string }[] }>("SiteTemplateConditions")
  .implement({
    fields: (t) => ({ items: t.field({ type: [TemplateCondition], resolve: (p) => p.items }) }),
  });

// ─── Site ──────────────────────────────────────────────────────────────────────────────────────

export const SiteRef = builder.prismaNode("Site", {
  id: { field: "id" },
  description: "A docs site: the published face of spaces, built from sections, section groups and site spaces.",
  fields: (t) => ({
    object: t.string({ resolve: () => "site" }),
    type: t.field({
      type: SiteTypeEnum,
      resolve: (s) => ((service.SITE_TYPES as readonly string[]).includes(s.type) ? (s.type as service.SiteType) : "basic"),
    }),
    appliedType: t.field({
      type: SiteTypeEnum,
      description: "The type in effect: always its `type` here (no plan downgrades a site).",
      resolve: (s) => ((service.SITE_TYPES as readonly string[]).includes(s.type) ? (s.type as service.SiteType) : "basic"),
    }),
    defaultLevel: t.field({
      type: DefaultLevelEnum,
      description: "A site has no default role of its own: members act on it with their organization role (inherit).",
      resolve: () => "inherit" as const,
    }),
    permissions: t.field({
      type: SitePermissions,
      resolve: async (s, _a, ctx) => sitePermissions(await viewerMembership(ctx, s.organizationId)),
    }),
    title: t.exposeString("title", { description: `${service.SITE_TITLE.min} to ${service.SITE_TITLE.max} characters.` }),
    icon: t.field({ type: SiteIconScalar, nullable: true, resolve: (s) => (s.icon as unknown) ?? null }),
    hostname: t.exposeString("hostname", { nullable: true, description: "Custom hostname of the site; absent when it has none." }),
    basename: t.exposeString("basename", {
      nullable: true,
      description: "Path of the site under its organization's address; absent when it has none.",
    }),
    proxy: t.field({
      type: SiteProxy,
      nullable: true,
      resolve: async (s, _a, ctx) => {
        if (!s.proxy) return null;
        const organization = await organizationById(ctx).load(s.organizationId);
        // `origin` as it was set (host and path, no scheme), the way GitBook's API writes it.
        return { origin: s.proxy, target: service.sitePublishedUrl(ctx, { ...s, proxy: null }, organization) };
      },
    }),
    visibility: t.field({ type: SiteVisibilityScalar, resolve: (s) => service.siteVisibility(s) }),
    published: t.exposeBoolean("published", {
      description: "True when visitors can reach the site (with the audience `visibility` sets).",
    }),
    siteSpacesCount: t.int({
      extensions: restName("siteSpaces"),
      description: "Number of site spaces (at the root or in sections).",
      resolve: (s, _a, ctx) => service.siteSpaceCount(ctx).load(s.id),
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    adaptiveContent: t.field({ type: AdaptiveContent, resolve: (s) => ({ enabled: s.adaptiveEnabled }) }),
    ads: t.field({ type: SiteAds, nullable: true, resolve: () => null }),
    agentsContext: t.field({ type: AgentsContextEnum, resolve: (s) => (s.agentsContext === "excluded" ? "excluded" : "included") }),
    features: t.field({
      type: [SiteFeatureRef],
      resolve: (s) => service.siteFeatures(s),
    }),
    urls: t.field({
      type: SiteUrls,
      description: "`preview` is where the site is served: it has no separate draft version, so it equals `published`.",
      resolve: async (s, _a, ctx) => {
        const urls = await service.siteUrls(ctx, s);
        return { ...urls, preview: urls.published };
      },
    }),
    sections: t.relatedConnection("sections", {
      description: "The site's sections, by position.",
      cursor: "id",
      totalCount: true,
      query: () => ({ orderBy: [{ position: "asc" }, { createdAt: "asc" }, { id: "asc" }] }),
    }),
    sectionGroups: t.relatedConnection("groups", {
      description: "The site's section groups, by position.",
      cursor: "id",
      totalCount: true,
      query: () => ({ orderBy: [{ position: "asc" }, { createdAt: "asc" }, { id: "asc" }] }),
    }),
    siteSpaces: t.relatedConnection("siteSpaces", {
      description: "Every site space of the site (at the root or in sections), by position.",
      cursor: "id",
      totalCount: true,
      query: () => ({ orderBy: [{ position: "asc" }, { createdAt: "asc" }, { id: "asc" }] }),
    }),
    organization: t.relation("organization", { extensions: GRAPH_ONLY, description: "The organization the site belongs to." }),
    subdomain: t.field({
      type: SubdomainRef,
      nullable: true,
      extensions: GRAPH_ONLY,
      description: "The subdomain the site is published under: its organization's (absent when the organization has no hostname).",
      resolve: async (s, _a, ctx) => {
        const organization = await organizationById(ctx).load(s.organizationId);
        return organization ? service.subdomainOf(organization) : null;
      },
    }),
    adaptiveSchema: t.field({
      type: AdaptiveSchemaRef,
      extensions: GRAPH_ONLY,
      description: "The visitor schema of adaptive content.",
      resolve: (s) => ({ jsonSchema: service.adaptiveSchemaOf(s), updatedAt: s.adaptiveUpdatedAt ?? s.createdAt }),
    }),
  }),
});
