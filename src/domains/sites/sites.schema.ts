import type { Site, SiteSection, SiteSpace } from "../../generated/prisma/client.js";
import { resolveArrayConnection } from "@pothos/plugin-relay";
import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload, type PayloadParent } from "../../core/graph/payloads.js";
import { organizationParent } from "../organizations/organizations.schema.js";
import type { Context } from "../../core/context.js";
import { argsWithNulls } from "../../core/context.js";
import { viewerMembership } from "../../core/access/access.js";
import { atLeast, type Role } from "../../core/access/roles.js";
import { DefaultLevelEnum, GRAPH_ONLY, listOf, pageArgs, permissionsOf, restName, restOnly, urlsOf } from "../../core/graph/rest-fields.js";
import { SITE_ADMIN_ROLE, SITE_EDIT_ROLE } from "./sites.policy.js";
import { SpaceRef } from "../spaces/spaces.schema.js";
import { spaceById } from "../spaces/spaces.access.js";
import type { JsonObject } from "./adaptive.js";
import { publishedSite, type PublishedView } from "./published.js";
import * as service from "./sites.service.js";
import { organizationById } from "../../core/graph/shared-loaders.js";
import * as structure from "./structure.js";
import type { Viewed } from "./structure.js";
import { invalidScalarValue } from "../../core/errors.js";

// ─── Scalars: values GraphQL enums cannot spell, and JSON objects ─────────────────────────────

type StringScalarOptions = Parameters<typeof builder.scalarType<"String">>[1];
type StringScalarRef = ReturnType<typeof builder.scalarType<"String">>;
type JsonScalarOptions = Parameters<typeof builder.scalarType<"JSON">>[1];
type JsonScalarRef = ReturnType<typeof builder.scalarType<"JSON">>;
const stringScalar = builder.scalarType.bind(builder) as (name: string, options: StringScalarOptions) => StringScalarRef;
const jsonScalar = builder.scalarType.bind(builder) as (name: string, options: JsonScalarOptions) => JsonScalarRef;

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

const SiteItemTypeScalar = enumScalar(
  "SiteItemType",
  "type",
  structure.ITEM_TYPES,
  "The kind of an item of a site's structure: site-section, site-section-group or site-space.",
);

const SiteSpacesInputScalar = jsonScalar("SiteSpacesInput", {
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
    if (Array.isArray(value) && value.length <= 100 && value.every((v) => typeof v === "string" && v.length > 0 && v.length <= 100)) return value;
    throw invalidScalarValue("SiteSpacesInput", `spaces must be an array of at most 100 space ids or "${service.CREATE_SPACE}"`);
  },
});

const AdaptiveJsonSchemaScalar = jsonScalar("SiteAdaptiveJsonSchema", {
  description:
    "A draft-07 JSON Schema of the claims of a site's visitors: type object, additionalProperties false, properties: " +
    "`unsigned` (type object: the claims visitors bring unsigned) and claims of type boolean, string, number, integer or object, each with a description.",
  extensions: { jsonSchema: { type: "object" } },
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalidScalarValue("SiteAdaptiveJsonSchema", "jsonSchema must be a JSON object");
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

const AgentsContextEnum = builder.enumType("SiteAgentsContext", {
  values: {
    excluded: { description: "Agents cannot access the site." },
    included: { description: "Agents can access the site." },
  } as const,
});

const StructureTypeEnum = builder.enumType("SiteStructureType", {
  values: {
    sections: { description: "The site is made of sections: `structure` lists SiteSection objects." },
    siteSpaces: { description: "The site shows site spaces at its root: `structure` lists SiteSpace objects." },
  } as const,
});

// ─── Small objects ─────────────────────────────────────────────────────────────────────────────

const SiteUrls = urlsOf("SiteUrls", ["location", "app", "published", "preview"] as const);
const SITE_PERMISSIONS = ["view", "access", "edit", "create", "admin", "installIntegration", "viewAdaptiveSchema", "editAdaptiveSchema"] as const;
const SitePermissions = permissionsOf("SitePermissions", SITE_PERMISSIONS);

/** What the caller may do with a site (sites.policy.ts): members read, `create` edits, `admin` administers. */
function sitePermissions(member: { role: string | null } | null): Record<(typeof SITE_PERMISSIONS)[number], boolean> {
  const role = (member?.role ?? null) as Role | null;
  const edit = atLeast(role, SITE_EDIT_ROLE);
  const admin = atLeast(role, SITE_ADMIN_ROLE);
  return { view: !!member, access: !!member, edit, create: edit, admin, installIntegration: admin, viewAdaptiveSchema: !!member, editAdaptiveSchema: edit };
}

/** Whether a site's sections, groups and site spaces are drafts: nothing is live until the site is published. */
async function isDraft(ctx: Parameters<typeof service.siteUrls>[0], siteId: string): Promise<boolean> {
  return !(await service.siteById(ctx).load(siteId))?.published;
}
const PublishedUrls = urlsOf("SitePublishedUrls", ["published"] as const);

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
    frozen: t.exposeBoolean("frozen", { description: "The site's type is below the feature's plan: it keeps working but cannot be changed." }),
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

const AdaptiveSchemaRef = builder.objectRef<service.AdaptiveSchemaView>("SiteAdaptiveSchema").implement({
  fields: (t) => ({
    object: t.string({ resolve: () => "site-adaptive-schema" }),
    jsonSchema: t.field({ type: AdaptiveJsonSchemaScalar, resolve: (a) => a.jsonSchema }),
    updatedAt: t.expose("updatedAt", { type: "DateTime", description: "When the schema was last set (the site's creation while it has the default schema)." }),
  }),
});

const TemplateCondition = builder.objectRef<{ description: string; condition: string }>("SiteTemplateCondition").implement({
  fields: (t) => ({ description: t.exposeString("description"), condition: t.exposeString("condition") }),
});
const TemplateConditions = builder.objectRef<{ items: { description: string; condition: string }[] }>("SiteTemplateConditions").implement({
  fields: (t) => ({ items: t.field({ type: [TemplateCondition], resolve: (p) => p.items }) }),
});

// ─── Site ──────────────────────────────────────────────────────────────────────────────────────

async function publishedBase(ctx: Parameters<typeof service.siteUrls>[0], siteId: string): Promise<{ site: Site; url: string } | null> {
  const site = await service.siteById(ctx).load(siteId);
  if (!site) return null;
  return { site, url: (await service.siteUrls(ctx, site)).published };
}

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
    basename: t.exposeString("basename", { nullable: true, description: "Path of the site under its organization's address; absent when it has none." }),
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
    published: t.exposeBoolean("published", { description: "True when visitors can reach the site (with the audience `visibility` sets)." }),
    siteSpacesCount: t.int({ extensions: restName("siteSpaces"), description: "Number of site spaces (at the root or in sections).", resolve: (s, _a, ctx) => service.siteSpaceCount(ctx).load(s.id) }),
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

// ─── Site space, section, group ───────────────────────────────────────────────────────────────

export const SiteSpaceRef = builder.prismaNode("SiteSpace", {
  id: { field: "id" },
  description: "A space shown by a site, at its root or in a section (one of the section's variants).",
  fields: (t) => ({
    object: t.string({ resolve: () => "site-space" }),
    path: t.exposeString("path", { description: `${service.PATH.min} to ${service.PATH.max} characters; unique in its section (or the root).` }),
    sectionId: t.string({
      nullable: true,
      extensions: restOnly("section"),
      description: "Id of the section holding it; absent at the root.",
      resolve: (s) => s.sectionId,
    }),
    space: t.field({
      type: SpaceRef,
      description: "The space it shows.",
      resolve: async (s, _a, ctx) => (await spaceById(ctx).load(s.spaceId))!,
    }),
    title: t.string({ description: "The title of its space.", resolve: async (s, _a, ctx) => (await spaceById(ctx).load(s.spaceId))?.title ?? "" }),
    default: t.boolean({
      description: "True for the default site space of its section (or of the root).",
      resolve: async (s: Viewed<SiteSpace>, _a, ctx) => {
        if (s.view?.default !== undefined) return s.view.default;
        if (s.sectionId) return (await service.sectionById(ctx).load(s.sectionId))?.defaultSiteSpaceId === s.id;
        return (await service.siteById(ctx).load(s.siteId))?.defaultSiteSpaceId === s.id;
      },
    }),
    condition: t.exposeString("condition", { nullable: true, description: "Expression over visitor.claims deciding whether visitors see it; absent: always shown." }),
    draft: t.boolean({ description: "True while it is not live: until its site is published.", resolve: (s, _a, ctx) => isDraft(ctx, s.siteId) }),
    hasAdvancedCustomizationFeature: t.boolean({
      description: "True on ultimate sites.",
      resolve: async (s, _a, ctx) => {
        const site = await service.siteById(ctx).load(s.siteId);
        return !!site && service.hasAdvancedCustomization(site);
      },
    }),
    urls: t.field({
      type: PublishedUrls,
      resolve: async (s: Viewed<SiteSpace>, _a, ctx) => {
        const base = await publishedBase(ctx, s.siteId);
        if (!base) return {};
        const section = s.sectionId ? await service.sectionById(ctx).load(s.sectionId) : null;
        const url = `${base.url}${section ? `/${section.path}` : ""}/${s.path}`;
        return { published: service.withShareKey(url, base.site, s.view?.shareKey) };
      },
    }),
    site: t.relation("site", { extensions: GRAPH_ONLY, description: "The site." }),
    section: t.relation("section", { nullable: true, extensions: GRAPH_ONLY, description: "The section holding it." }),
  }),
});

/** A section's site spaces in order: those of its published view when it is one, with the view's share key. */
async function sectionSiteSpaces(ctx: Context, s: Viewed<SiteSection>): Promise<Viewed<SiteSpace>[]> {
  if (s.view?.siteSpaces) return s.view.siteSpaces;
  const rows = await service.siteSpacesOfSection(ctx).load(s.id);
  const shareKey = s.view?.shareKey;
  return shareKey ? rows.map((r) => ({ ...r, view: { shareKey } })) : rows;
}

export const SiteSectionRef = builder.prismaNode("SiteSection", {
  id: { field: "id" },
  description: "A section of a site: site spaces (its variants) under one path.",
  fields: (t) => ({
    object: t.string({ resolve: () => "site-section" }),
    title: t.exposeString("title", { description: `${service.SECTION_TITLE.min} to ${service.SECTION_TITLE.max} characters.` }),
    description: t.exposeString("description", { nullable: true, description: `At most ${service.DESCRIPTION_MAX} characters.` }),
    default: t.boolean({
      description: "True for the default section of the site.",
      resolve: async (s: Viewed<SiteSection>, _a, ctx) => {
        if (s.view?.default !== undefined) return s.view.default;
        return (await service.siteById(ctx).load(s.siteId))?.defaultSectionId === s.id;
      },
    }),
    path: t.exposeString("path", { description: `${service.PATH.min} to ${service.PATH.max} characters; unique in the site.` }),
    condition: t.exposeString("condition", { nullable: true, description: "Expression over visitor.claims deciding whether visitors see it; absent: always shown." }),
    sectionGroupId: t.string({
      nullable: true,
      extensions: restOnly("sectionGroup"),
      description: "Id of the group holding it; absent when ungrouped.",
      resolve: (s) => s.groupId,
    }),
    draft: t.boolean({ description: "True while it is not live: until its site is published.", resolve: (s, _a, ctx) => isDraft(ctx, s.siteId) }),
    icon: t.exposeString("icon", { nullable: true, description: `Icon name, at most ${service.ICON_MAX} characters.` }),
    siteSpacesList: t.field({
      type: [SiteSpaceRef],
      extensions: restOnly("siteSpaces"),
      description: "Its site spaces, in order.",
      resolve: (s: Viewed<SiteSection>, _a, ctx) => sectionSiteSpaces(ctx, s),
    }),
    urls: t.field({
      type: PublishedUrls,
      resolve: async (s: Viewed<SiteSection>, _a, ctx) => {
        const base = await publishedBase(ctx, s.siteId);
        return base ? { published: service.withShareKey(`${base.url}/${s.path}`, base.site, s.view?.shareKey) } : {};
      },
    }),
    // From the same list as its REST shape: in a published view, only the variants the visitor sees.
    siteSpaces: t.connection(
      {
        type: SiteSpaceRef,
        description: "Its site spaces, in order (in a published view, those the visitor sees).",
        resolve: async (s: Viewed<SiteSection>, args, ctx) => {
          const all = await sectionSiteSpaces(ctx, s);
          return { ...resolveArrayConnection({ args }, all), totalCount: all.length };
        },
      },
      { fields: (c) => ({ totalCount: c.int({ resolve: (conn) => (conn as unknown as { totalCount: number }).totalCount }) }) },
    ),
    group: t.relation("group", { nullable: true, extensions: GRAPH_ONLY, description: "The group holding it." }),
    site: t.relation("site", { extensions: GRAPH_ONLY, description: "The site." }),
  }),
});

export const SiteSectionGroupRef = builder.prismaNode("SiteSectionGroup", {
  id: { field: "id" },
  description: "A group of sections of a site.",
  fields: (t) => ({
    object: t.string({ resolve: () => "site-section-group" }),
    title: t.exposeString("title", { description: `${service.GROUP_TITLE.min} to ${service.GROUP_TITLE.max} characters.` }),
    icon: t.exposeString("icon", { nullable: true, description: `Icon name, at most ${service.ICON_MAX} characters.` }),
    sectionsList: t.field({
      type: [SiteSectionRef],
      extensions: restOnly("sections"),
      description: "Its sections, in order.",
      resolve: (g, _a, ctx) => service.sectionsOfGroup(ctx).load(g.id),
    }),
    childrenList: t.field({
      type: [SiteSectionRef],
      extensions: restOnly("children"),
      description: "What is nested under it, in order: its sections (groups do not nest here, and external links are not part of site structures).",
      resolve: (g, _a, ctx) => service.sectionsOfGroup(ctx).load(g.id),
    }),
    draft: t.boolean({ description: "True while it is not live: until its site is published.", resolve: (g, _a, ctx) => isDraft(ctx, g.siteId) }),
    sections: t.relatedConnection("sections", {
      description: "Its sections, in order.",
      cursor: "id",
      totalCount: true,
      query: () => ({ orderBy: [{ position: "asc" }, { createdAt: "asc" }, { id: "asc" }] }),
    }),
    site: t.relation("site", { extensions: GRAPH_ONLY, description: "The site." }),
  }),
});

// ─── Published structure, share links, visitor authentication ────────────────────────────────

const StructureItem = builder.unionType("SiteStructureItem", {
  description: "An item of a published structure: a SiteSection (type sections) or a SiteSpace (type siteSpaces).",
  types: [SiteSectionRef, SiteSpaceRef],
  resolveType: (item) => ("spaceId" in item ? "SiteSpace" : "SiteSection"),
});

const PublishedStructure = builder.objectRef<PublishedView["structure"]>("PublishedSiteStructure").implement({
  fields: (t) => ({
    type: t.field({ type: StructureTypeEnum, resolve: (s) => s.type }),
    structure: t.field({
      type: [StructureItem],
      description: "The sections (with their visible site spaces) or the root site spaces the visitor sees, in order.",
      resolve: (s) => s.structure as (SiteSection | SiteSpace)[],
    }),
  }),
});

const SiteIntegrationScript = builder.objectRef<{ script: string; cookies: boolean }>("SiteIntegrationScript").implement({
  description: "A script an integration installed on the site adds to its pages.",
  fields: (t) => ({
    script: t.exposeString("script", { description: "URL of the script." }),
    cookies: t.exposeBoolean("cookies", { description: "Whether the script sets cookies." }),
  }),
});

const PublishedContentSite = builder.objectRef<PublishedView>("PublishedContentSite").implement({
  description: "A site as one visitor sees it.",
  fields: (t) => ({
    object: t.string({ resolve: () => "published-content-site" }),
    site: t.field({ type: SiteRef, resolve: (p) => p.site }),
    structure: t.field({ type: PublishedStructure, resolve: (p) => p.structure }),
    scripts: t.field({
      type: [SiteIntegrationScript],
      description: "Scripts of integrations the site's pages load: none (this server does not inject integration scripts into published sites).",
      resolve: () => [],
    }),
  }),
});

const ShareLinkRef = builder.objectRef<service.ShareLinkView>("SiteShareLink").implement({
  description: "A secret key that opens a share-link site to whoever holds it, until it is revoked.",
  fields: (t) => ({
    object: t.string({ resolve: () => "share-link" }),
    id: t.exposeString("id"),
    key: t.exposeString("key", { description: "The secret: pass it as `shareKey`." }),
    name: t.exposeString("name", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true, description: "When it was revoked; absent while it works." }),
    urls: t.field({
      type: PublishedUrls,
      resolve: async (l, _a, ctx) => ({ published: `${(await service.siteUrls(ctx, l.site)).published}?share=${encodeURIComponent(l.key)}` }),
    }),
  }),
});

const VisitorAuthRef = builder.objectRef<{ site: string; algorithm: string; secret: string }>("SiteVisitorAuth").implement({
  description: "How visitors of a visitor-auth site authenticate: a JWT signed with `secret` using `algorithm`, whose payload holds their claims.",
  fields: (t) => ({
    object: t.string({ resolve: () => "site-visitor-auth" }),
    site: t.exposeString("site", { description: "Id of the site." }),
    algorithm: t.exposeString("algorithm", { description: "HS256." }),
    secret: t.exposeString("secret", { description: "The key visitor tokens are signed with (UTF-8 bytes of this string)." }),
  }),
});

const SiteList = listOf("SiteList", SiteRef);
const SiteSectionList = listOf("SiteSectionList", SiteSectionRef);
const SiteSectionGroupList = listOf("SiteSectionGroupList", SiteSectionGroupRef);
const SiteSpaceList = listOf("SiteSpaceList", SiteSpaceRef);
const ShareLinkList = listOf("SiteShareLinkList", ShareLinkRef);

// ─── Inputs ────────────────────────────────────────────────────────────────────────────────────

const AdaptiveContentInput = builder.inputType("SiteAdaptiveContentInput", {
  fields: (t) => ({ enabled: t.boolean({ required: true }) }),
});

const PositionTargetInput = builder.inputType("SitePositionTargetInput", {
  description:
    "A neighbour of the moved item: `{type: site-section, siteSection: <id>}`, `{type: site-section-group, siteSectionGroup: <id>}`, " +
    "`{type: site-space, siteSpace: <id>}`, or any of these types with `id`.",
  fields: (t) => ({
    type: t.field({ type: SiteItemTypeScalar, required: true }),
    id: t.string({ description: "Id of the neighbour, whatever its type." }),
    siteSection: t.string({ description: "Id of the neighbouring section (type site-section)." }),
    siteSectionGroup: t.string({ description: "Id of the neighbouring group (type site-section-group)." }),
    siteSpace: t.string({ description: "Id of the neighbouring site space (type site-space)." }),
  }),
});

const PositionInput = builder.inputType("SitePositionInput", {
  description: "`before` places the item right before that neighbour, `after` right after it (with both, `after` must come first); without either it goes last.",
  fields: (t) => ({ before: t.field({ type: PositionTargetInput }), after: t.field({ type: PositionTargetInput }) }),
});

const StructureItemInput = builder.inputRef<structure.StructureItemInput>("SiteStructureItemInput").implement({
  description: "An item of the site's structure and, for groups and sections, its children in order.",
  fields: (t) => ({
    type: t.field({ type: SiteItemTypeScalar, required: true }) as any,
    id: t.string({ required: true }),
    children: t.field({ type: [StructureItemInput], description: "A group's sections, or a section's site spaces, in order." }),
  }),
});

// ─── The graph: an organization's sites and subdomain ────────────────────────────────────────

builder.prismaObjectFields("Organization", (t) => ({
  sites: t.relatedConnection("sites", {
    description: "The organization's docs sites, oldest first.",
    cursor: "id",
    totalCount: true,
    query: () => ({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
  }),
  subdomain: t.field({
    type: SubdomainRef,
    nullable: true,
    extensions: GRAPH_ONLY,
    description: "The organization's platform subdomain (its hostname); absent when it has none.",
    resolve: (o) => service.subdomainOf(o),
  }),
}));

// ─── Operations ────────────────────────────────────────────────────────────────────────────────

const siteArgs = builder.args((t) => ({
  organizationId: t.string({ required: true }),
  siteId: t.string({ required: true }),
}));

const conditionDescription = `1 to 1024 characters, or null to remove it; omitted leaves it unchanged. An expression over visitor.claims.* declared by the site's adaptive schema: literals, ===, !==, ==, !=, <, <=, >, >=, &&, ||, ! and parentheses.`;

builder.queryFields((t) => ({
  organizationSites: t.field({
    type: SiteList,
    description: "Sites of an organization, oldest first.",
    args: {
      organizationId: t.arg.string({ required: true }),
      ...pageArgs,
      space: t.arg.string({ description: "Only sites showing this space." }),
      title: t.arg.string({ description: "Only sites whose title contains this, case-insensitively." }),
      published: t.arg.boolean({ description: "Only published (true) or unpublished (false) sites." }),
    },
    resolve: (_r, args, ctx) => service.listSites(ctx, args.organizationId, args),
  }),
  site: t.field({
    type: SiteRef,
    args: { ...siteArgs },
    resolve: (_r, args, ctx) => service.getSite(ctx, args.organizationId, args.siteId),
  }),
  siteAdaptiveSchema: t.field({
    type: AdaptiveSchemaRef,
    description: "The visitor schema of the site's adaptive content (a default with only empty unsigned claims until one is set).",
    args: { ...siteArgs },
    resolve: (_r, args, ctx) => service.getAdaptiveSchema(ctx, args.organizationId, args.siteId),
  }),
  siteAdaptiveTemplateConditions: t.field({
    type: TemplateConditions,
    description: "Condition templates generated from the visitor schema, usable as `condition` of sections and site spaces.",
    args: { ...siteArgs },
    resolve: (_r, args, ctx) => service.getTemplateConditions(ctx, args.organizationId, args.siteId),
  }),
  sitePublished: t.field({
    type: PublishedContentSite,
    description:
      "The site as a visitor sees it. Anonymous callers are served on /v1; members of the organization may preview it unpublished. " +
      "share-link sites need `shareKey`, visitor-auth sites a visitor token (query `visitorToken` or header `x-visitor-token`: a JWT signed with HS256 " +
      "and the site's visitor-auth key). Items whose condition is false for the visitor's claims are left out; unsigned claims may be passed as " +
      "query parameters visitor.<name>=<value>.",
    args: {
      ...siteArgs,
      shareKey: t.arg.string({ description: "Key of a share link of the site (share-link sites)." }),
      visitorToken: t.arg.string({ description: "The visitor's JWT (also accepted in the x-visitor-token header)." }),
    },
    resolve: (_r, args, ctx) => publishedSite(ctx, args.organizationId, args.siteId, args),
  }),
  siteSections: t.field({
    type: SiteSectionList,
    description: "Sections of a site in the order visitors see them (each group's sections in its place).",
    args: { ...siteArgs, shareKey: t.arg.string({ description: "Share key the published URLs of a share-link site carry." }), ...pageArgs },
    resolve: (_r, args, ctx) => structure.listSections(ctx, args.organizationId, args.siteId, args),
  }),
  siteSectionGroups: t.field({
    type: SiteSectionGroupList,
    description: "Section groups of a site, in order.",
    args: { ...siteArgs, ...pageArgs },
    resolve: (_r, args, ctx) => structure.listGroups(ctx, args.organizationId, args.siteId, args),
  }),
  siteSpaces: t.field({
    type: SiteSpaceList,
    description: "Site spaces of a site in the order visitors see them.",
    args: {
      ...siteArgs,
      shareKey: t.arg.string({ description: "Share key the published URLs of a share-link site carry." }),
      ...pageArgs,
      default: t.arg.boolean({ description: "true: only default site spaces (of the root, or of each section); false: only the others; omitted: all." }),
    },
    resolve: (_r, args, ctx) => structure.listSiteSpaces(ctx, args.organizationId, args.siteId, args),
  }),
  siteShareLinks: t.field({
    type: ShareLinkList,
    description: "Share links of a site, revoked ones included (needs admin).",
    args: { ...siteArgs, ...pageArgs },
    resolve: (_r, args, ctx) => service.listShareLinks(ctx, args.organizationId, args.siteId, args),
  }),
  siteVisitorAuth: t.field({
    type: VisitorAuthRef,
    description: "The key visitor tokens of the site are signed with (HS256; needs admin).",
    args: { ...siteArgs },
    resolve: (_r, args, ctx) => service.getVisitorAuth(ctx, args.organizationId, args.siteId),
  }),
}));

const SiteDeletePayload = deletionPayload("SiteDeletePayload", "site", organizationParent);
/** The site a deletion happened in, for deletion payloads. */
const siteParent: PayloadParent = {
  field: "site",
  type: SiteRef,
  description: "The site it was deleted from.",
  load: (ctx, id) => ctx.prisma.site.findUnique({ where: { id } }),
};
const SiteSectionDeletePayload = deletionPayload("SiteSectionDeletePayload", "section", siteParent);
const SiteSectionGroupDeletePayload = deletionPayload("SiteSectionGroupDeletePayload", "section group", siteParent);
const SiteSectionGroupSectionRemovePayload = deletionPayload("SiteSectionGroupSectionRemovePayload", "section from the group (the section stays in the site)", siteParent);
const SiteSpaceDeletePayload = deletionPayload("SiteSpaceDeletePayload", "site space", siteParent);
const SiteShareLinkRevokePayload = deletionPayload("SiteShareLinkRevokePayload", "share link", siteParent);

builder.mutationFields((t) => ({
  siteCreate: t.field({
    type: SiteRef,
    description: "Creates a site (needs the create role): unpublished, with its visitor-auth key.",
    args: {
      organizationId: t.arg.string({ required: true }),
      type: t.arg({ type: SiteTypeEnum, description: "basic (default), premium or ultimate." }),
      title: t.arg.string({ required: true, description: `${service.SITE_TITLE.min} to ${service.SITE_TITLE.max} characters.` }),
      visibility: t.arg({ type: SiteVisibilityScalar, description: "public (default), unlisted, share-link or visitor-auth." }),
      spaces: t.arg({
        type: SiteSpacesInputScalar,
        description: `Ids of spaces of the organization to show at the site's root (the first is the default), or "${service.CREATE_SPACE}" to create a new space for it.`,
      }),
    },
    resolve: (_r, args, ctx) => service.createSite(ctx, args.organizationId, args as service.SiteInput),
  }),
  siteUpdate: t.field({
    type: SiteRef,
    description: "Changes a site (needs the create role). Null clears basename, proxy and hostname.",
    args: {
      ...siteArgs,
      title: t.arg.string({ description: `${service.SITE_TITLE.min} to ${service.SITE_TITLE.max} characters.` }),
      visibility: t.arg({ type: SiteVisibilityScalar }),
      basename: t.arg.string({ description: `${service.BASENAME.min} to ${service.BASENAME.max} characters, unique in the organization; null removes it.` }),
      adaptiveContent: t.arg({ type: AdaptiveContentInput }),
      agentsContext: t.arg({ type: AgentsContextEnum }),
      defaultSiteSpace: t.arg.string({ description: "Site space used as default at the root; in a site with sections, the default of the default section." }),
      defaultSiteSection: t.arg.string({ description: "Section used as the site's default." }),
      proxy: t.arg.string({ description: `At most ${service.PROXY_MAX} characters such as example.com/docs, or null to remove it.` }),
      hostname: t.arg.string({ description: `Custom hostname, at most ${service.HOSTNAME_MAX} characters, unique; null removes it.` }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, siteId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateSite(ctx, organizationId, siteId, patch as service.SitePatch);
    },
  }),
  siteDelete: t.field({
    type: SiteDeletePayload,
    description: "Deletes a site with its structure (needs admin); succeeds also when it did not exist.",
    args: { ...siteArgs },
    resolve: async (_r, args, ctx) => deleted(service.deleteSite(ctx, args.organizationId, args.siteId), args.siteId, args.organizationId),
  }),
  sitePublish: t.field({
    type: SiteRef,
    description: "Publishes a site: visitors of its visibility can reach it (needs the create role).",
    args: { ...siteArgs },
    resolve: (_r, args, ctx) => service.setPublished(ctx, args.organizationId, args.siteId, true),
  }),
  siteUnpublish: t.field({
    type: SiteRef,
    description: "Unpublishes a site: only members of its organization can preview it (needs the create role).",
    args: { ...siteArgs },
    resolve: (_r, args, ctx) => service.setPublished(ctx, args.organizationId, args.siteId, false),
  }),
  siteAdaptiveSchemaUpdate: t.field({
    type: AdaptiveSchemaRef,
    description: "Sets the visitor schema of the site's adaptive content (needs the create role).",
    args: { ...siteArgs, jsonSchema: t.arg({ type: AdaptiveJsonSchemaScalar, required: true }) },
    resolve: (_r, args, ctx) => service.updateAdaptiveSchema(ctx, args.organizationId, args.siteId, args.jsonSchema as JsonObject),
  }),
  siteStructureSort: t.field({
    type: SiteRef,
    description:
      "sortSiteStructure: sets the order of the whole structure in one call. `structure` lists the top level in order (the root site spaces, " +
      "or groups and ungrouped sections), with each group's sections and each section's site spaces as `children`; every item exactly once.",
    args: { ...siteArgs, structure: t.arg({ type: [StructureItemInput], required: true }) },
    resolve: (_r, args, ctx) => structure.sortStructure(ctx, args.organizationId, args.siteId, args.structure as structure.StructureItemInput[]),
  }),

  siteSectionCreate: t.field({
    type: SiteSectionRef,
    description:
      "Adds a section, last, with a site space for `spaceId`. The first section of a site whose site spaces are at its root takes them in (first, keeping their default).",
    args: {
      ...siteArgs,
      spaceId: t.arg.string({ required: true, description: "The space its first site space shows." }),
      title: t.arg.string({ description: `${service.SECTION_TITLE.min} to ${service.SECTION_TITLE.max} characters; null or omitted: the space's title.` }),
      icon: t.arg.string({ description: `At most ${service.ICON_MAX} characters, or null.` }),
    },
    resolve: (_r, args, ctx) => structure.addSection(ctx, args.organizationId, args.siteId, args),
  }),
  siteSectionUpdate: t.field({
    type: SiteSectionRef,
    args: {
      ...siteArgs,
      siteSectionId: t.arg.string({ required: true }),
      title: t.arg.string({ description: `${service.SECTION_TITLE.min} to ${service.SECTION_TITLE.max} characters.` }),
      path: t.arg.string({ description: `${service.PATH.min} to ${service.PATH.max} characters, unique in the site (409 otherwise).` }),
      defaultSiteSpace: t.arg.string({ description: "A site space of the section to use as its default." }),
      condition: t.arg.string({ description: conditionDescription }),
      icon: t.arg.string({ description: `At most ${service.ICON_MAX} characters, or null to remove it.` }),
      description: t.arg.string({ description: `At most ${service.DESCRIPTION_MAX} characters, or null to remove it.` }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, siteId, siteSectionId, ...patch } = argsWithNulls(ctx, rawArgs);
      return structure.updateSection(ctx, organizationId, siteId, siteSectionId, patch);
    },
  }),
  siteSectionDelete: t.field({
    type: SiteSectionDeletePayload,
    description: "Deletes a section and its site spaces; succeeds also when it did not exist.",
    args: { ...siteArgs, siteSectionId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(structure.deleteSection(ctx, args.organizationId, args.siteId, args.siteSectionId), args.siteSectionId, args.siteId),
  }),
  siteSectionMove: t.field({
    type: SiteSectionRef,
    deprecationReason: "Use siteStructureSort (PUT /orgs/{organizationId}/sites/{siteId}/structure).",
    description: "Moves a section next to a section or group; it joins the group of its neighbour (or the top level).",
    args: { ...siteArgs, siteSectionId: t.arg.string({ required: true }), position: t.arg({ type: PositionInput }) },
    resolve: (_r, args, ctx) => structure.moveSection(ctx, args.organizationId, args.siteId, args.siteSectionId, args.position as structure.PositionInput),
  }),

  siteSectionGroupCreate: t.field({
    type: SiteSectionGroupRef,
    description: "Creates a section group holding `sections` in that order; it takes the place of the first of them (else goes last).",
    args: {
      ...siteArgs,
      title: t.arg.string({ required: true, description: `${service.GROUP_TITLE.min} to ${service.GROUP_TITLE.max} characters.` }),
      icon: t.arg.string({ description: `At most ${service.ICON_MAX} characters, or null.` }),
      sections: t.arg.stringList({ description: "Ids of sections of the site to put in the group." }),
    },
    resolve: (_r, args, ctx) => structure.createGroup(ctx, args.organizationId, args.siteId, args),
  }),
  siteSectionGroupUpdate: t.field({
    type: SiteSectionGroupRef,
    args: {
      ...siteArgs,
      siteSectionGroupId: t.arg.string({ required: true }),
      title: t.arg.string({ description: `${service.GROUP_TITLE.min} to ${service.GROUP_TITLE.max} characters.` }),
      icon: t.arg.string({ description: `At most ${service.ICON_MAX} characters, or null to remove it.` }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, siteId, siteSectionGroupId, ...patch } = argsWithNulls(ctx, rawArgs);
      return structure.updateGroup(ctx, organizationId, siteId, siteSectionGroupId, patch);
    },
  }),
  siteSectionGroupDelete: t.field({
    type: SiteSectionGroupDeletePayload,
    description: "Deletes a group; its sections stay, ungrouped, where it was. Succeeds also when it did not exist.",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(structure.deleteGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId), args.siteSectionGroupId, args.siteId),
  }),
  siteSectionGroupSectionAdd: t.field({
    type: SiteSectionGroupRef,
    description: "Puts a section last in the group (out of its previous group).",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }), sectionId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => structure.addSectionToGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId, args.sectionId),
  }),
  siteSectionGroupSectionRemove: t.field({
    type: SiteSectionGroupSectionRemovePayload,
    description: "Takes a section out of the group, right after it at the top level; succeeds also when it was not part of the group.",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }), siteSectionId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(structure.removeSectionFromGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId, args.siteSectionId), args.siteSectionId, args.siteId),
  }),
  siteSectionGroupMove: t.field({
    type: SiteSectionGroupRef,
    deprecationReason: "Use siteStructureSort (PUT /orgs/{organizationId}/sites/{siteId}/structure).",
    description: "Moves a group among the top-level groups and ungrouped sections.",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }), position: t.arg({ type: PositionInput }) },
    resolve: (_r, args, ctx) => structure.moveGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId, args.position as structure.PositionInput),
  }),

  siteSpaceCreate: t.field({
    type: SiteSpaceRef,
    description: "Adds a site space, last in a section or at the root; the first of its level becomes the default.",
    args: {
      ...siteArgs,
      spaceId: t.arg.string({ required: true }),
      sectionId: t.arg.string({ description: "Section to add it to; omitted: the default section, or the root of a site without sections." }),
    },
    resolve: (_r, args, ctx) => structure.addSiteSpace(ctx, args.organizationId, args.siteId, args),
  }),
  siteSpaceUpdate: t.field({
    type: SiteSpaceRef,
    args: {
      ...siteArgs,
      siteSpaceId: t.arg.string({ required: true }),
      path: t.arg.string({ description: `${service.PATH.min} to ${service.PATH.max} characters, unique in its section or the root (409 otherwise).` }),
      condition: t.arg.string({ description: conditionDescription }),
      spaceId: t.arg.string({ description: "The space it shows instead; omitted leaves it unchanged." }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, siteId, siteSpaceId, ...patch } = argsWithNulls(ctx, rawArgs);
      return structure.updateSiteSpace(ctx, organizationId, siteId, siteSpaceId, patch);
    },
  }),
  siteSpaceDelete: t.field({
    type: SiteSpaceDeletePayload,
    description: "Deletes a site space (not its space); succeeds also when it did not exist.",
    args: { ...siteArgs, siteSpaceId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(structure.deleteSiteSpace(ctx, args.organizationId, args.siteId, args.siteSpaceId), args.siteSpaceId, args.siteId),
  }),
  siteSpaceMove: t.field({
    type: SiteSpaceRef,
    deprecationReason: "Use siteStructureSort (PUT /orgs/{organizationId}/sites/{siteId}/structure).",
    description: "Moves a site space among the site spaces of its section (or of the root).",
    args: { ...siteArgs, siteSpaceId: t.arg.string({ required: true }), position: t.arg({ type: PositionInput }) },
    resolve: (_r, args, ctx) => structure.moveSiteSpace(ctx, args.organizationId, args.siteId, args.siteSpaceId, args.position as structure.PositionInput),
  }),

  siteShareLinkCreate: t.field({
    type: ShareLinkRef,
    description: "Creates a share link with a random key (needs admin).",
    args: { ...siteArgs, name: t.arg.string({ description: `A label, at most ${service.SHARE_LINK_NAME_MAX} characters.` }) },
    resolve: (_r, args, ctx) => service.createShareLink(ctx, args.organizationId, args.siteId, args),
  }),
  siteShareLinkRevoke: t.field({
    type: SiteShareLinkRevokePayload,
    description: "Revokes a share link: its key stops working (needs admin). Succeeds also when it did not exist or was revoked already.",
    args: { ...siteArgs, shareLinkId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(service.revokeShareLink(ctx, args.organizationId, args.siteId, args.shareLinkId), args.shareLinkId, args.siteId),
  }),
}));
