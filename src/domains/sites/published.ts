import { errors as joseErrors, jwtVerify } from "jose";
import type { Site, SiteSection, SiteSpace } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership } from "../../core/access/access.js";
import { AppError, notFound } from "../../core/errors.js";
import { isExpired, spaceById } from "../spaces/spaces.access.js";
import { evaluateCondition, type JsonObject } from "./adaptive.js";
import {
  checkShareKey,
  ensureVisitorAuthSecret,
  groupsOfSite,
  isValidShareKey,
  sectionById,
  sectionsOfSite,
  siteById,
  siteSpacesOfSite,
  siteVisibility,
} from "./sites.service.js";
import { byOrder, displaySections, type ItemView, type Viewed } from "./structure.js";
import { verifyMemberVisitorClaims } from "./visitor-claims.js";

/**
 * The published structure of a site, as one visitor sees it (GET …/published).
 *
 * Who gets it:
 * - members of the site's organization with a role (API token; organization-wide SSO applies as
 *   on every member route): always, published or not (a preview), without share key or visitor
 *   token — they can read every space of the organization anyway;
 * - anyone else (no token, a token of someone who is not a member, or a guest, who reaches only
 *   the spaces granted to them): only a published site;
 *   an unpublished one is 404. A `share-link` site also needs the `shareKey` of one of its share
 *   links that is not revoked (404 otherwise). A `visitor-auth` site needs a visitor token (401
 *   otherwise).
 *
 * The visitor token is a JWT signed with HS256 with the site's visitor-auth key (GET
 * …/visitor-auth), or the member visitor claims of ping (visitor-claims.ts), passed as the
 * `visitorToken` query parameter or the `x-visitor-token` header;
 * its payload is the visitor's claims. Unsigned claims may be passed as query parameters
 * `visitor.<name>=<value>` (true, false and numbers are read as such): they are
 * `visitor.claims.unsigned.<name>`. A token that does not verify is a 401, on any site.
 *
 * A site token of the site (core/access/site-token.ts, minted by POST /v1/urls/published) stands
 * for all of this: its share key and claims were checked when it was minted and it is checked on
 * each use. The visitor's credentials may also come from a body (`visitor`, url-lookup.ts).
 *
 * Sections and site spaces whose `condition` is false for the visitor's claims are left out
 * (a visitor without claims does not see items whose condition reads a claim), and so are
 * sections left without site spaces and site spaces of deleted spaces. The default of each level
 * is the stored one if it is visible, else the first visible item.
 */

const TOKEN_MAX = 8192;
const UNSIGNED_MAX = 50;

export interface PublishedView {
  site: Site;
  structure: { type: "sections" | "siteSpaces"; structure: (Viewed<SiteSection> | Viewed<SiteSpace>)[] };
  /** What the visitor was let in with: their claims, the share key, and whether a member (or their token) previews it. */
  access: { claims: JsonObject | null; shareKey: string | null; preview: boolean };
}

async function verifyVisitorToken(ctx: Context, site: Site, token: string): Promise<JsonObject> {
  const fail = (why: string) =>
    new AppError(
      401,
      `visitorToken is not a valid visitor token for site "${site.id}": ${why}. Sign it with HS256 and the site's visitor-auth key, or use the serviceVisitorClaims of POST /v1/orgs/{organizationId}/ping.`,
    );
  if (token.length > TOKEN_MAX) throw fail("it is too long");
  const secret = await ensureVisitorAuthSecret(ctx.prisma, site);
  try {
    try {
      const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"] });
      return payload as JsonObject;
    } catch (err) {
      // Not the site's key: it may be the visitor claims a member got from ping (visitor-claims.ts).
      if (!(err instanceof joseErrors.JWSSignatureVerificationFailed)) throw err;
      const member = await verifyMemberVisitorClaims(ctx.prisma, site.organizationId, token);
      if (!member) throw err;
      return member as JsonObject;
    }
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw fail("it has expired");
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw fail(err.message);
    if (err instanceof joseErrors.JOSEAlgNotAllowed) throw fail("its algorithm must be HS256");
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw fail("its signature does not match");
    throw fail("it is not a well-formed JWT");
  }
}

function claimValue(raw: string): unknown {
  if (raw === "true") return true;
  if (raw === "false") return false;
  if (/^-?\d+(\.\d+)?$/.test(raw) && raw.length < 16) return Number(raw);
  return raw;
}

/** `visitor.<name>=<value>` query parameters of the request: the visitor's unsigned claims. */
function unsignedClaims(ctx: Context): JsonObject | null {
  if (!ctx.request) return null;
  let params: URLSearchParams;
  try {
    params = new URL(ctx.request.url).searchParams;
  } catch {
    return null;
  }
  const out: JsonObject = {};
  let n = 0;
  for (const [key, value] of params) {
    const match = /^visitor\.([A-Za-z_$][A-Za-z0-9_$]*)$/.exec(key);
    if (!match || n >= UNSIGNED_MAX) continue;
    out[match[1]!] = claimValue(value);
    n++;
  }
  return n ? out : null;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The caller's membership when it lets them preview the organization's sites (as on every member
 * route: organization-wide SSO included; guests excluded); null for anyone else, who is a visitor.
 */
async function previewingMember(ctx: Context, organizationId: string) {
  if (ctx.viewer.anonymous) return null;
  try {
    const member = await requireMembership(ctx, organizationId);
    return member.role === null ? null : member;
  } catch (err) {
    if (err instanceof AppError && (err.status === 403 || err.status === 404)) return null;
    throw err;
  }
}

/** A visitor's credentials given in a body (POST /v1/urls/published) instead of the request's query and headers. */
export interface VisitorInput {
  jwtToken?: string | null;
  unsignedClaims?: JsonObject | null;
}

/**
 * Where each item of a published view is, relative to the site's base (GitBook's rules): the
 * default section and the default site space of a level add no segment, so the default site space
 * of the default section is the site's root; another variant of the default section is
 * `<section>/<variant>`, the default variant of another section `<section>`.
 */
export interface PublishedItemView extends ItemView {
  urlPath: string;
}

/** The path of a site space below the site's base, by the rules of PublishedItemView. */
export function siteSpaceUrlPath(
  section: { path: string; isDefault: boolean } | null,
  siteSpace: { path: string; isDefault: boolean },
): string {
  if (!section) return siteSpace.isDefault ? "" : siteSpace.path;
  if (siteSpace.isDefault) return section.isDefault ? "" : section.path;
  return `${section.path}/${siteSpace.path}`;
}

/** The path of a site space under its site's base by the stored defaults (outside a published view). */
export async function storedSiteSpacePath(ctx: Context, site: Site, siteSpace: SiteSpace): Promise<string> {
  const section = siteSpace.sectionId ? await sectionById(ctx).load(siteSpace.sectionId) : null;
  return siteSpaceUrlPath(section && { path: section.path, isDefault: site.defaultSectionId === section.id }, {
    path: siteSpace.path,
    isDefault: (section ? section.defaultSiteSpaceId : site.defaultSiteSpaceId) === siteSpace.id,
  });
}

export async function publishedSite(
  ctx: Context,
  organizationId: string,
  siteId: string,
  args: { shareKey?: string | null; visitorToken?: string | null },
  visitor?: VisitorInput,
): Promise<PublishedView> {
  let shareKey = checkShareKey(args.shareKey);
  const site = await siteById(ctx).load(siteId);
  if (!site || site.organizationId !== organizationId) throw notFound(`Site "${siteId}"`);
  // A site token of this site (core/access/site-token.ts) was checked when it was minted and is
  // checked on each use: it brings its share key and the visitor's claims.
  const content = ctx.viewer.content?.site === siteId ? ctx.viewer.content : null;
  const member = content ? null : await previewingMember(ctx, organizationId);
  const token = content ? null : (visitor ? visitor.jwtToken : args.visitorToken || ctx.request?.headers.get("x-visitor-token")) || null;
  const visibility = siteVisibility(site);
  if (content) shareKey = content.shareKey;
  else if (!member) {
    if (!site.published) throw notFound(`Site "${siteId}"`);
    if (visibility === "share-link" && !(shareKey && (await isValidShareKey(ctx, siteId, shareKey)))) {
      throw notFound(`Site "${siteId}" (a share-link site needs the shareKey of one of its share links)`);
    }
    if (visibility === "visitor-auth" && !token) {
      throw new AppError(
        401,
        `Site "${siteId}" is for authenticated visitors: pass a JWT signed with its visitor-auth key as visitorToken or in the x-visitor-token header.`,
      );
    }
  }
  let claims: JsonObject | null = content ? content.claims : token ? await verifyVisitorToken(ctx, site, token) : null;
  const unsigned = content ? null : visitor ? (visitor.unsignedClaims ?? null) : unsignedClaims(ctx);
  if (unsigned && Object.keys(unsigned).length)
    claims = { ...(claims ?? {}), unsigned: { ...(isObject(claims?.unsigned) ? claims.unsigned : {}), ...unsigned } };
  if (content && !Object.keys(content.claims).length) claims = null;

  const [sections, groups, siteSpaces] = await Promise.all([
    sectionsOfSite(ctx).load(siteId),
    groupsOfSite(ctx).load(siteId),
    siteSpacesOfSite(ctx).load(siteId),
  ]);
  const spaces = await spaceById(ctx).loadMany([...new Set(siteSpaces.map((s) => s.spaceId))]);
  const live = new Set(spaces.flatMap((s) => (s && !(s instanceof Error) && !s.deletedAt && !isExpired(ctx, s) ? [s.id] : [])));
  const visibleSpaces = (sectionId: string | null) =>
    siteSpaces.filter((s) => s.sectionId === sectionId && live.has(s.spaceId) && evaluateCondition(s.condition, claims)).sort(byOrder);
  const chosen = <T extends { id: string }>(items: T[], defaultId: string | null) =>
    items.some((i) => i.id === defaultId) ? defaultId : (items[0]?.id ?? null);
  const viewSpaces = (items: SiteSpace[], defaultId: string | null, section: { path: string; isDefault: boolean } | null) => {
    const pick = chosen(items, defaultId);
    return items.map((item) => {
      const isDefault = item.id === pick;
      const urlPath = siteSpaceUrlPath(section, { path: item.path, isDefault });
      return { ...item, view: { default: isDefault, ...(shareKey ? { shareKey } : {}), urlPath } };
    });
  };
  const access = { claims, shareKey: shareKey ?? null, preview: !!member || !!content?.draft };

  if (sections.length === 0) {
    return { site, access, structure: { type: "siteSpaces", structure: viewSpaces(visibleSpaces(null), site.defaultSiteSpaceId, null) } };
  }
  const visibleSections = displaySections(sections, groups)
    .filter((section) => evaluateCondition(section.condition, claims))
    .map((section) => ({ section, siteSpaces: visibleSpaces(section.id) }))
    .filter((entry) => entry.siteSpaces.length > 0);
  const defaultSection = chosen(
    visibleSections.map((e) => e.section),
    site.defaultSectionId,
  );
  const structure = visibleSections.map(({ section, siteSpaces: rows }) => {
    const isDefault = section.id === defaultSection;
    const children = viewSpaces(rows, section.defaultSiteSpaceId, { path: section.path, isDefault });
    const view: PublishedItemView = {
      default: isDefault,
      ...(shareKey ? { shareKey } : {}),
      siteSpaces: children,
      urlPath: isDefault ? "" : section.path,
    };
    return { ...section, view };
  });
  return { site, access, structure: { type: "sections", structure } };
}
