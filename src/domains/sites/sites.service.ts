import crypto from "node:crypto";
import { slug } from "github-slugger";
import type {
  Organization,
  Prisma as P,
  PrismaClient,
  Site,
  SiteSection,
  SiteSectionGroup,
  SiteShareLink,
  SiteSpace,
  Space,
} from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { byKeys, countsByKeys, defineSharedLoader } from "../../core/graph/loaders.js";
import { organizationById } from "../../core/graph/shared-loaders.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, conflict, notFound } from "../../core/errors.js";
import { checkLength, checkOneOf, checkPattern } from "../../core/validate.js";
import { newId, randomString } from "../../core/ids.js";
import { createSpace } from "../spaces/spaces.service.js";
import { isExpired, spaceById, viewerSpaceRole } from "../spaces/spaces.access.js";
import { checkAdaptiveSchema, defaultAdaptiveSchema, templateConditions, type JsonObject } from "./adaptive.js";
import { requireSiteAdmin, requireSiteEditor, requireSiteReader } from "./sites.policy.js";

// ─── Values and limits ─────────────────────────────────────────────────────────────────────────

export const SITE_TYPES = ["basic", "premium", "ultimate"] as const;
export type SiteType = (typeof SITE_TYPES)[number];
export const SITE_VISIBILITIES = ["public", "unlisted", "share-link", "visitor-auth"] as const;
export type SiteVisibility = (typeof SITE_VISIBILITIES)[number];
export const AGENTS_CONTEXTS = ["excluded", "included"] as const;
export type AgentsContext = (typeof AGENTS_CONTEXTS)[number];
/** The `spaces` value of POST …/sites that creates a new space for the site. */
export const CREATE_SPACE = "create-space";

export const SITE_TITLE = { min: 2, max: 128 };
export const BASENAME = { min: 1, max: 100 };
export const HOSTNAME_MAX = 512;
export const PROXY_MAX = 512;
export const SECTION_TITLE = { min: 2, max: 128 };
export const PATH = { min: 1, max: 100 };
export const DESCRIPTION_MAX = 256;
export const ICON_MAX = 50;
export const GROUP_TITLE = { min: 1, max: 100 };
export const SHARE_LINK_NAME_MAX = 100;

export const HOSTNAME_PATTERN = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?[.]){2,}[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$/;
export const PROXY_PATTERN = /^([\w-]+\.)*[\w-]+\.[a-zA-Z]{2,}(\/[\w-]+)+$/;
/** A path segment: letters and digits first, then letters, digits, `.`, `_`, `~` and `-`. */
export const PATH_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N}._~-]*$/u;
/** One or more path segments joined by `/`. */
export const BASENAME_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N}._~-]*(\/[\p{L}\p{N}][\p{L}\p{N}._~-]*)*$/u;
const SHARE_KEY_PATTERN = /^[A-Za-z0-9_-]{1,256}$/;

// ─── Loaders ───────────────────────────────────────────────────────────────────────────────────

const ORDER = [{ position: "asc" as const }, { createdAt: "asc" as const }, { id: "asc" as const }];

export const siteById = defineSharedLoader<string, Site | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.site.findMany({ where: { id: { in: [...ids] } } }), (s) => s.id),
);

export const sectionById = defineSharedLoader<string, SiteSection | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.siteSection.findMany({ where: { id: { in: [...ids] } } }), (s) => s.id),
);

export const groupById = defineSharedLoader<string, SiteSectionGroup | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.siteSectionGroup.findMany({ where: { id: { in: [...ids] } } }), (g) => g.id),
);

export const siteSpaceById = defineSharedLoader<string, SiteSpace | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.siteSpace.findMany({ where: { id: { in: [...ids] } } }), (s) => s.id),
);

function groupRows<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): V[][] {
  const map = new Map<K, V[]>();
  for (const row of rows) {
    const key = keyOf(row);
    if (!map.has(key)) map.set(key, []);
    map.get(key)!.push(row);
  }
  return keys.map((k) => map.get(k) ?? []);
}

/** Sections of each site, by position (not display order: see displaySections). */
export const sectionsOfSite = defineSharedLoader<string, SiteSection[]>(async (siteIds, prisma) =>
  groupRows(siteIds, await prisma.siteSection.findMany({ where: { siteId: { in: [...siteIds] } }, orderBy: ORDER }), (s) => s.siteId),
);

export const groupsOfSite = defineSharedLoader<string, SiteSectionGroup[]>(async (siteIds, prisma) =>
  groupRows(siteIds, await prisma.siteSectionGroup.findMany({ where: { siteId: { in: [...siteIds] } }, orderBy: ORDER }), (g) => g.siteId),
);

/** Every site space of each site (root and sections), by position. */
export const siteSpacesOfSite = defineSharedLoader<string, SiteSpace[]>(async (siteIds, prisma) =>
  groupRows(siteIds, await prisma.siteSpace.findMany({ where: { siteId: { in: [...siteIds] } }, orderBy: ORDER }), (s) => s.siteId),
);

/** Site spaces of each section, in their order. */
export const siteSpacesOfSection = defineSharedLoader<string, SiteSpace[]>(async (sectionIds, prisma) =>
  groupRows(
    sectionIds,
    await prisma.siteSpace.findMany({ where: { sectionId: { in: [...sectionIds] } }, orderBy: ORDER }),
    (s) => s.sectionId!,
  ),
);

/** Sections of each group, in their order. */
export const sectionsOfGroup = defineSharedLoader<string, SiteSection[]>(async (groupIds, prisma) =>
  groupRows(groupIds, await prisma.siteSection.findMany({ where: { groupId: { in: [...groupIds] } }, orderBy: ORDER }), (s) => s.groupId!),
);

export const siteSpaceCount = defineSharedLoader<string, number>(async (siteIds, prisma) => {
  const rows = await prisma.siteSpace.groupBy({ by: ["siteId"], where: { siteId: { in: [...siteIds] } }, _count: { _all: true } });
  return countsByKeys(
    siteIds,
    rows.map((r) => ({ key: r.siteId, count: r._count._all })),
  );
});

const LOADERS = [
  siteById,
  sectionById,
  groupById,
  siteSpaceById,
  sectionsOfSite,
  groupsOfSite,
  siteSpacesOfSite,
  siteSpacesOfSection,
  sectionsOfGroup,
  siteSpaceCount,
];

/** Forgets what this request read of sites, after it changed them. */
export function resetSiteLoaders(ctx: Context): void {
  for (const loader of LOADERS) loader(ctx).clearAll();
}

// ─── Access ────────────────────────────────────────────────────────────────────────────────────

/** A site of the organization the caller is a member of; 404 otherwise. */
export async function requireSite(ctx: Context, organizationId: string, siteId: string): Promise<Site> {
  await requireSiteReader(ctx, organizationId);
  return loadSite(ctx, organizationId, siteId);
}

/** A site the caller may change (role create); 403 naming the role, 404 when absent. */
export async function requireEditableSite(ctx: Context, organizationId: string, siteId: string, action: string): Promise<Site> {
  await requireSiteEditor(ctx, organizationId, action);
  return loadSite(ctx, organizationId, siteId);
}

async function loadSite(ctx: Context, organizationId: string, siteId: string): Promise<Site> {
  const site = await siteById(ctx).load(siteId);
  if (!site || site.organizationId !== organizationId) throw notFound(`Site "${siteId}"`);
  return site;
}

/**
 * A space that may be linked into a site of `organizationId`, named by the body field `field`:
 * 404 naming it when it does not exist or the caller cannot see it, 400 when it belongs to
 * another organization or is deleted.
 */
export async function requireLinkableSpace(ctx: Context, organizationId: string, spaceId: string, field: string): Promise<Space> {
  const space = await spaceById(ctx).load(spaceId);
  const role = space && !isExpired(ctx, space) ? await viewerSpaceRole(ctx).load(space) : null;
  if (!space || !role) throw notFound(`${field}: space "${spaceId}"`);
  if (space.organizationId !== organizationId) throw badInput(`${field}: space "${spaceId}" belongs to another organization.`);
  if (space.deletedAt) throw badInput(`${field}: space "${spaceId}" is deleted; restore it first.`);
  return space;
}

// ─── Values ────────────────────────────────────────────────────────────────────────────────────

/** The documented visibility value of a stored one. */
export function siteVisibility(site: Pick<Site, "visibility">): SiteVisibility {
  return (SITE_VISIBILITIES as readonly string[]).includes(site.visibility) ? (site.visibility as SiteVisibility) : "public";
}

function notNull<T>(field: string, value: T | null | undefined): T | undefined {
  if (value === null) throw badInput(`${field} cannot be null.`);
  return value;
}

export function checkTitle(field: string, value: string, limits: { min: number; max: number }): string {
  const title = value.trim();
  checkLength(field, title, limits.min, limits.max);
  return title;
}

export function checkPath(field: string, value: string): string {
  checkLength(field, value, PATH.min, PATH.max);
  checkPattern(field, value, PATH_PATTERN, "letters and digits, then letters, digits, '.', '_', '~' or '-' (one path segment)");
  return value;
}

export function checkIcon(field: string, value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  const icon = value.trim();
  checkLength(field, icon, 0, ICON_MAX);
  return icon || null;
}

export function checkShareKey(shareKey: string | null | undefined): string | undefined {
  if (shareKey === undefined || shareKey === null) return undefined;
  checkPattern("shareKey", shareKey, SHARE_KEY_PATTERN, "letters, digits, - and _ (at most 256)");
  return shareKey;
}

/** A path made from a title: lowercase words joined by `-`, at most 100 characters. */
export function pathFrom(title: string, fallback: string): string {
  const made = slug(title)
    .replace(/^[._~-]+/, "")
    .slice(0, PATH.max)
    .replace(/[._~-]+$/, "");
  return made && PATH_PATTERN.test(made) ? made : fallback;
}

/** `base`, or `base-2`, `base-3`… the first one not in `taken`. */
export function uniquePath(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, PATH.max - suffix.length) + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

// ─── URLs ──────────────────────────────────────────────────────────────────────────────────────

/**
 * Where visitors find a site:
 * - `https://<proxy>` when the site is served through a proxy (PATCH `proxy`);
 * - `https://<hostname>` with a custom hostname;
 * - `https://<organization hostname>.<SITES_DOMAIN>[/<basename>]` when SITES_DOMAIN is set and the
 *   organization has a hostname (its subdomain);
 * - otherwise `<PUBLIC_URL>/sites/<organization hostname or id>/<basename or site id>`.
 */
export function sitePublishedUrl(ctx: Context, site: Site, organization: Pick<Organization, "id" | "hostname"> | null): string {
  if (site.proxy) return `https://${site.proxy}`;
  if (site.hostname) return `https://${site.hostname}`;
  const orgHost = organization?.hostname ?? null;
  if (ctx.config.sitesDomain && orgHost) return `https://${orgHost}.${ctx.config.sitesDomain}${site.basename ? `/${site.basename}` : ""}`;
  return `${ctx.config.publicUrl}/sites/${encodeURIComponent(orgHost ?? site.organizationId)}/${site.basename ?? site.id}`;
}

export async function siteUrls(ctx: Context, site: Site) {
  const organization = await organizationById(ctx).load(site.organizationId);
  return {
    location: ctx.urls.api(`/orgs/${site.organizationId}/sites/${site.id}`),
    app: ctx.urls.app(`/o/${site.organizationId}/sites/${site.id}`),
    published: sitePublishedUrl(ctx, site, organization),
  };
}

/**
 * The published URL of something `path` below a site's base `base` (GitBook's form): a share key of a
 * share-link site is the first segment after the base (`<base>/<key>/<path>`), since GitBook's reader
 * drops the query of the URLs it resolves.
 */
export function publishedPathUrl(base: string, site: Site, shareKey: string | null | undefined, path: string): string {
  const key = shareKey && siteVisibility(site) === "share-link" ? `/${encodeURIComponent(shareKey)}` : "";
  return `${base}${key}${path ? `/${path}` : ""}`;
}

// ─── Features ──────────────────────────────────────────────────────────────────────────────────

export interface SiteFeature {
  id: string;
  plan: SiteType;
  frozen: boolean;
  customizations: string[];
}

/**
 * The plan features a site uses, each with the site type (plan) that includes it; `frozen` when
 * the site's type is below that plan (the feature keeps working as configured, but cannot be
 * changed until the site is upgraded). Informational: nothing is refused because of it.
 */
export function siteFeatures(site: Site): SiteFeature[] {
  const used: [boolean, string, SiteType][] = [
    [site.adaptiveEnabled, "sites-adaptive-content", "premium"],
    [siteVisibility(site) === "visitor-auth", "sites-visitor-auth", "premium"],
    [!!site.hostname, "sites-custom-hostname", "basic"],
    [!!site.proxy, "sites-proxy", "ultimate"],
  ];
  const typeRank = SITE_TYPES.indexOf(site.type as SiteType);
  return used.filter(([on]) => on).map(([, id, plan]) => ({ id, plan, frozen: typeRank < SITE_TYPES.indexOf(plan), customizations: [] }));
}

export function hasAdvancedCustomization(site: Site): boolean {
  return site.type === "ultimate";
}

// ─── Sites ─────────────────────────────────────────────────────────────────────────────────────

export interface SiteListArgs extends PageArgs {
  space?: string | null;
  title?: string | null;
  published?: boolean | null;
}

export async function listSites(ctx: Context, organizationId: string, args: SiteListArgs) {
  await requireSiteReader(ctx, organizationId);
  const where: P.SiteWhereInput = { organizationId };
  if (args.space) where.siteSpaces = { some: { spaceId: args.space } };
  if (args.title) where.title = { contains: args.title, mode: "insensitive" };
  if (args.published !== undefined && args.published !== null) where.published = args.published;
  return paginate({
    args,
    where,
    order: [
      ["createdAt", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.site,
  });
}

export async function getSite(ctx: Context, organizationId: string, siteId: string) {
  return requireSite(ctx, organizationId, siteId);
}

export interface SiteInput {
  type?: SiteType | null;
  title: string;
  visibility?: string | null;
  spaces?: string[] | typeof CREATE_SPACE | null;
}

function newSecret(): string {
  return crypto.randomBytes(32).toString("base64url");
}

export async function createSite(ctx: Context, organizationId: string, input: SiteInput) {
  await requireSiteEditor(ctx, organizationId, "create sites");
  const title = checkTitle("title", notNull("title", input.title) ?? "", SITE_TITLE);
  const type = checkOneOf("type", input.type, SITE_TYPES) ?? "basic";
  const visibility = checkOneOf("visibility", input.visibility, SITE_VISIBILITIES) ?? "public";
  let spaces: Space[] = [];
  if (input.spaces === CREATE_SPACE) {
    spaces = [await createSpace(ctx, organizationId, { title: [...title].slice(0, 100).join("") })];
  } else if (Array.isArray(input.spaces)) {
    const ids = [...new Set(input.spaces)];
    spaces = await Promise.all(ids.map((id) => requireLinkableSpace(ctx, organizationId, id, "spaces")));
  } else if (input.spaces !== undefined && input.spaces !== null) {
    throw badInput(`spaces must be an array of space ids or "${CREATE_SPACE}".`);
  }
  const siteId = newId("Site");
  const taken = new Set<string>();
  const rows = spaces.map((space, i) => {
    const path = uniquePath(pathFrom(space.title, "space"), taken);
    taken.add(path);
    return { id: newId("SiteSpace"), siteId, sectionId: null, spaceId: space.id, path, position: i + 1 };
  });
  const [site] = await ctx.prisma.$transaction([
    ctx.prisma.site.create({
      data: {
        id: siteId,
        organizationId,
        type,
        title,
        visibility,
        visitorAuthSecret: newSecret(),
        defaultSiteSpaceId: rows[0]?.id ?? null,
      },
    }),
    ctx.prisma.siteSpace.createMany({ data: rows }),
  ]);
  resetSiteLoaders(ctx);
  return site;
}

export interface SitePatch {
  title?: string | null;
  visibility?: string | null;
  basename?: string | null;
  adaptiveContent?: { enabled: boolean } | null;
  agentsContext?: AgentsContext | null;
  defaultSiteSpace?: string | null;
  defaultSiteSection?: string | null;
  proxy?: string | null;
  hostname?: string | null;
}

export async function updateSite(ctx: Context, organizationId: string, siteId: string, patch: SitePatch) {
  const site = await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const data: P.SiteUncheckedUpdateInput = {};
  if (patch.title !== undefined) data.title = checkTitle("title", notNull("title", patch.title)!, SITE_TITLE);
  if (patch.visibility !== undefined)
    data.visibility = checkOneOf("visibility", notNull("visibility", patch.visibility), SITE_VISIBILITIES);
  if (patch.basename !== undefined) {
    if (patch.basename !== null) {
      checkLength("basename", patch.basename, BASENAME.min, BASENAME.max);
      checkPattern("basename", patch.basename, BASENAME_PATTERN, "path segments of letters, digits, '.', '_', '~' and '-' joined by '/'");
      const taken = await ctx.prisma.site.findFirst({
        where: { organizationId, basename: patch.basename, id: { not: siteId } },
        select: { id: true },
      });
      if (taken) throw conflict(`basename "${patch.basename}" is already used by site "${taken.id}" of this organization.`);
    }
    data.basename = patch.basename;
  }
  if (patch.adaptiveContent !== undefined) {
    const adaptive = notNull("adaptiveContent", patch.adaptiveContent)!;
    if (typeof adaptive.enabled !== "boolean") throw badInput("adaptiveContent.enabled must be true or false.");
    data.adaptiveEnabled = adaptive.enabled;
  }
  if (patch.agentsContext !== undefined)
    data.agentsContext = checkOneOf("agentsContext", notNull("agentsContext", patch.agentsContext), AGENTS_CONTEXTS);
  if (patch.proxy !== undefined) {
    if (patch.proxy !== null) {
      checkLength("proxy", patch.proxy, 1, PROXY_MAX);
      checkPattern(
        "proxy",
        patch.proxy,
        PROXY_PATTERN,
        "a host and a path such as example.com/docs (^([\\w-]+\\.)*[\\w-]+\\.[a-zA-Z]{2,}(\\/[\\w-]+)+$)",
      );
    }
    data.proxy = patch.proxy;
  }
  if (patch.hostname !== undefined) {
    if (patch.hostname !== null) {
      checkLength("hostname", patch.hostname, 1, HOSTNAME_MAX);
      checkPattern("hostname", patch.hostname, HOSTNAME_PATTERN, "a lowercase host name of at least three labels such as docs.example.com");
      const taken = await ctx.prisma.site.findFirst({ where: { hostname: patch.hostname, id: { not: siteId } }, select: { id: true } });
      if (taken) throw conflict(`hostname "${patch.hostname}" is already used by another site.`);
    }
    data.hostname = patch.hostname;
  }
  const [sections, siteSpaces] = await Promise.all([sectionsOfSite(ctx).load(siteId), siteSpacesOfSite(ctx).load(siteId)]);
  let defaultSectionId = site.defaultSectionId;
  if (patch.defaultSiteSection !== undefined) {
    const id = notNull("defaultSiteSection", patch.defaultSiteSection)!;
    if (!sections.some((s) => s.id === id)) throw badInput(`defaultSiteSection: section "${id}" is not a section of site "${siteId}".`);
    data.defaultSectionId = defaultSectionId = id;
  }
  let sectionDefault: { sectionId: string; siteSpaceId: string } | null = null;
  if (patch.defaultSiteSpace !== undefined) {
    const id = notNull("defaultSiteSpace", patch.defaultSiteSpace)!;
    const siteSpace = siteSpaces.find((s) => s.id === id);
    if (!siteSpace) throw badInput(`defaultSiteSpace: site space "${id}" is not a site space of site "${siteId}".`);
    if (sections.length === 0) data.defaultSiteSpaceId = id;
    else if (siteSpace.sectionId !== defaultSectionId) {
      throw badInput(
        `defaultSiteSpace: site space "${id}" is not in the default section ("${defaultSectionId}"); set it with PATCH …/sections/{siteSectionId} defaultSiteSpace, or change defaultSiteSection too.`,
      );
    } else sectionDefault = { sectionId: siteSpace.sectionId!, siteSpaceId: id };
  }
  const [updated] = await ctx.prisma.$transaction([
    ctx.prisma.site.update({ where: { id: siteId }, data }),
    ...(sectionDefault
      ? [
          ctx.prisma.siteSection.update({
            where: { id: sectionDefault.sectionId },
            data: { defaultSiteSpaceId: sectionDefault.siteSpaceId },
          }),
        ]
      : []),
  ]);
  resetSiteLoaders(ctx);
  return updated;
}

export async function deleteSite(ctx: Context, organizationId: string, siteId: string): Promise<boolean> {
  await requireSiteAdmin(ctx, organizationId, "delete sites");
  await ctx.prisma.site.deleteMany({ where: { id: siteId, organizationId } });
  resetSiteLoaders(ctx);
  return true;
}

export async function setPublished(ctx: Context, organizationId: string, siteId: string, published: boolean) {
  await requireEditableSite(ctx, organizationId, siteId, published ? "publish sites" : "unpublish sites");
  const updated = await ctx.prisma.site.update({ where: { id: siteId }, data: { published } });
  resetSiteLoaders(ctx);
  return updated;
}

// ─── Adaptive content ──────────────────────────────────────────────────────────────────────────

export function adaptiveSchemaOf(site: Site): JsonObject {
  const stored = site.adaptiveSchema;
  return stored && typeof stored === "object" && !Array.isArray(stored) ? (stored as JsonObject) : defaultAdaptiveSchema();
}

export interface AdaptiveSchemaView {
  jsonSchema: JsonObject;
  updatedAt: Date;
}

function adaptiveView(site: Site): AdaptiveSchemaView {
  return { jsonSchema: adaptiveSchemaOf(site), updatedAt: site.adaptiveUpdatedAt ?? site.createdAt };
}

export async function getAdaptiveSchema(ctx: Context, organizationId: string, siteId: string): Promise<AdaptiveSchemaView> {
  return adaptiveView(await requireSite(ctx, organizationId, siteId));
}

export async function updateAdaptiveSchema(ctx: Context, organizationId: string, siteId: string, jsonSchema: unknown) {
  await requireEditableSite(ctx, organizationId, siteId, "change the adaptive schema of sites");
  const schema = checkAdaptiveSchema(jsonSchema);
  const updated = await ctx.prisma.site.update({
    where: { id: siteId },
    data: { adaptiveSchema: schema as P.InputJsonValue, adaptiveUpdatedAt: new Date() },
  });
  resetSiteLoaders(ctx);
  return adaptiveView(updated);
}

export async function getTemplateConditions(ctx: Context, organizationId: string, siteId: string) {
  const site = await requireSite(ctx, organizationId, siteId);
  return { items: templateConditions(adaptiveSchemaOf(site)) };
}

// ─── Share links and visitor authentication ───────────────────────────────────────────────────

export async function listShareLinks(ctx: Context, organizationId: string, siteId: string, args: PageArgs) {
  await requireSiteAdmin(ctx, organizationId, "manage share links");
  const site = await loadSite(ctx, organizationId, siteId);
  const page = await paginate({
    args,
    where: { siteId },
    order: [
      ["createdAt", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.siteShareLink,
  });
  return { ...page, items: page.items.map((link) => ({ ...link, site })) };
}

export async function createShareLink(ctx: Context, organizationId: string, siteId: string, input: { name?: string | null }) {
  await requireSiteAdmin(ctx, organizationId, "manage share links");
  const site = await loadSite(ctx, organizationId, siteId);
  let name: string | null = null;
  if (input.name !== undefined && input.name !== null) {
    name = input.name.trim() || null;
    checkLength("name", name, 0, SHARE_LINK_NAME_MAX);
  }
  const link = await ctx.prisma.siteShareLink.create({ data: { id: newId("SiteShareLink"), siteId, key: randomString(32), name } });
  return { ...link, site };
}

export async function revokeShareLink(ctx: Context, organizationId: string, siteId: string, shareLinkId: string): Promise<boolean> {
  await requireSiteAdmin(ctx, organizationId, "manage share links");
  await ctx.prisma.siteShareLink.updateMany({
    where: { id: shareLinkId, siteId, site: { organizationId }, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  return true;
}

/** True when `shareKey` is a share link of the site that has not been revoked. */
export async function isValidShareKey(ctx: Context, siteId: string, shareKey: string): Promise<boolean> {
  const link = await ctx.prisma.siteShareLink.findUnique({ where: { key: shareKey }, select: { siteId: true, revokedAt: true } });
  return !!link && link.siteId === siteId && !link.revokedAt;
}

export type ShareLinkView = SiteShareLink & { site: Site };

/** The site's visitor-auth key (HS256), created when the site was (or now, for older sites). */
export async function ensureVisitorAuthSecret(prisma: PrismaClient, site: Site): Promise<string> {
  if (site.visitorAuthSecret) return site.visitorAuthSecret;
  const secret = newSecret();
  const { count } = await prisma.site.updateMany({ where: { id: site.id, visitorAuthSecret: null }, data: { visitorAuthSecret: secret } });
  if (count) return secret;
  return (await prisma.site.findUniqueOrThrow({ where: { id: site.id }, select: { visitorAuthSecret: true } })).visitorAuthSecret!;
}

export async function getVisitorAuth(ctx: Context, organizationId: string, siteId: string) {
  await requireSiteAdmin(ctx, organizationId, "read the visitor-auth key of sites");
  const site = await loadSite(ctx, organizationId, siteId);
  return { site: site.id, algorithm: "HS256", secret: await ensureVisitorAuthSecret(ctx.prisma, site) };
}

// ─── Subdomain ─────────────────────────────────────────────────────────────────────────────────

export interface SubdomainView {
  subdomain: string;
  organization: string;
  isActive: boolean;
}

/** The organization's platform subdomain (its `hostname`), or null when it has none. */
export function subdomainOf(organization: Pick<Organization, "id" | "hostname">): SubdomainView | null {
  if (!organization.hostname) return null;
  return { subdomain: organization.hostname, organization: organization.id, isActive: true };
}
