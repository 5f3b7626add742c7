import type { Site, SiteSection, SiteSpace } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { badInput, notFound } from "../../core/errors.js";
import type { JsonObject } from "./adaptive.js";
import { publishedSite, type PublishedItemView, type PublishedView, type VisitorInput } from "./published.js";
import type { Viewed } from "./structure.js";

/**
 * One published URL → what it shows (GitBook's `POST /v1/urls/published`, and any reader face).
 *
 * A site is found by host and path, the way sites.service.ts `sitePublishedUrl` writes its URL:
 * - a custom `hostname` (`https://docs.acme.test/…`), or the host of a `proxy` and its path;
 * - `https://<organization hostname>.<SITES_DOMAIN>/<basename>/…` (the basename may be absent);
 * - `<PUBLIC_URL>/sites/<organization hostname or id>/<basename or site id>/…`.
 * The scheme and port are ignored (GitBook's reader asks for `https://` and refuses ports).
 * Then, below the site's base: a live share key of the site as the first segment (or `?share=`),
 * a section, a site space, and everything left is the page's path (never checked here). Who may
 * see what is decided by published.ts `publishedSite`, the same door as GET …/published: an
 * unpublished site is 404 but to a previewing member, a share-link site needs a live share key,
 * a visitor-auth site a valid visitor token (401).
 *
 * Which site answers a host and path is kept in the access cache (core/access/access-cache.ts
 * `siteEntry`), "none" included, dropped by every write of sites, their structure and share links
 * and of organization hostnames, in every gateway: a URL that names no site costs no statement.
 */

export interface ResolvedUrl {
  site: Site;
  organizationId: string;
  /** The published structure as this visitor sees it. */
  view: PublishedView;
  section: Viewed<SiteSection> | null;
  siteSpace: Viewed<SiteSpace>;
  /** Id of the site space's space. */
  space: string;
  /** The rest of the path after the section and site space segments, without leading slash ("" at the root). */
  pathname: string;
  /** Path of the site space's root: leading and trailing slash. */
  basePath: string;
  /** Path of the site's root (with the share key segment): leading and trailing slash. */
  siteBasePath: string;
  canonicalUrl: string;
  /** False only when the URL ended at a level with several visible items and the default was chosen. */
  complete: boolean;
  shareKey: string | null;
  claims: JsonObject | null;
  /** A member (or their token) previews the site: it may be unpublished. */
  preview: boolean;
}

const URL_MAX = 4096;

interface SiteRoute {
  id: string;
  organizationId: string;
  basename: string | null;
  /** Published on a host of its own (custom hostname or proxy): not under its organization's subdomain. */
  ownHost: boolean;
}

/** The path segments of a URL: empty ones dropped, each percent-decoded. */
function segmentsOf(pathname: string): string[] {
  return pathname
    .split("/")
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

function startsWith(segments: string[], prefix: string[]): boolean {
  return prefix.length <= segments.length && prefix.every((p, i) => segments[i] === p);
}

/** The sites of an organization named by its hostname (or also its id), in creation order; null when none has it. */
function organizationSites(ctx: Context, key: string, byId: boolean): Promise<SiteRoute[] | null> {
  return ctx.accessCache.siteEntry(`org\u0000${byId ? "any" : "host"}\u0000${key}`, async () => {
    const org = await ctx.prisma.organization.findFirst({
      where: byId ? { OR: [{ hostname: key }, { id: key }] } : { hostname: key },
      orderBy: { hostname: { sort: "asc", nulls: "last" } },
      select: { id: true },
    });
    if (!org) return null;
    const sites = await ctx.prisma.site.findMany({
      where: { organizationId: org.id },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { id: true, organizationId: true, basename: true, hostname: true, proxy: true },
    });
    return sites.map((s) => ({ id: s.id, organizationId: s.organizationId, basename: s.basename, ownHost: !!(s.hostname || s.proxy) }));
  });
}

/** The site a custom hostname or a proxy host names, with the segments of its base. */
function hostSites(ctx: Context, host: string): Promise<(SiteRoute & { base: string[] })[]> {
  return ctx.accessCache.siteEntry(`host\u0000${host}`, async () => {
    const rows = await ctx.prisma.site.findMany({
      where: { OR: [{ hostname: host }, { proxy: { startsWith: `${host}/` } }] },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { id: true, organizationId: true, basename: true, hostname: true, proxy: true },
    });
    return rows.map((r) => ({
      id: r.id,
      organizationId: r.organizationId,
      basename: r.basename,
      ownHost: true,
      base: r.hostname === host ? [] : segmentsOf(r.proxy!.slice(host.length)),
    }));
  });
}

/** The live share keys of a site. */
function shareKeysOf(ctx: Context, siteId: string): Promise<string[]> {
  return ctx.accessCache.siteEntry(`share-keys\u0000${siteId}`, async () =>
    (await ctx.prisma.siteShareLink.findMany({ where: { siteId, revokedAt: null }, select: { key: true } })).map((l) => l.key),
  );
}

/** Of `sites`, the one whose basename (or id, when `byId`) starts `segments`, the longest first; with the segments it took. */
function bySegments(sites: SiteRoute[], segments: string[], byId: boolean): { site: SiteRoute; taken: number } | null {
  let best: { site: SiteRoute; taken: number } | null = null;
  for (const site of sites) {
    const base = site.basename ? site.basename.split("/") : null;
    if (base && startsWith(segments, base) && (!best || base.length > best.taken)) best = { site, taken: base.length };
  }
  if (best) return best;
  if (byId) {
    const site = segments[0] ? sites.find((s) => s.id === segments[0]) : undefined;
    return site ? { site, taken: 1 } : null;
  }
  // A subdomain's site without basename sits at its root.
  const root = sites.find((s) => !s.basename);
  return root ? { site: root, taken: 0 } : null;
}

/** The site a host and path name, and how many segments its base takes. */
async function findSite(ctx: Context, host: string, segments: string[]): Promise<{ site: SiteRoute; taken: number } | null> {
  for (const site of await hostSites(ctx, host)) {
    if (startsWith(segments, site.base)) return { site, taken: site.base.length };
  }
  const domain = ctx.config.sitesDomain?.toLowerCase();
  if (domain && host.endsWith(`.${domain}`)) {
    const orgHost = host.slice(0, -domain.length - 1);
    if (orgHost && !orgHost.includes(".")) {
      const sites = await organizationSites(ctx, orgHost, false);
      // Under the subdomain: the sites published there (sites.service.ts sitePublishedUrl).
      const found =
        sites &&
        bySegments(
          sites.filter((s) => !s.ownHost),
          segments,
          false,
        );
      if (found) return found;
    }
  }
  const publicUrl = new URL(ctx.config.publicUrl);
  if (publicUrl.hostname.toLowerCase() === host) {
    const prefix = [...segmentsOf(publicUrl.pathname), "sites"];
    if (startsWith(segments, prefix) && segments.length >= prefix.length + 2) {
      const sites = await organizationSites(ctx, segments[prefix.length]!, true);
      const found = sites && bySegments(sites, segments.slice(prefix.length + 1), true);
      if (found) return { site: found.site, taken: prefix.length + 1 + found.taken };
    }
  }
  return null;
}

function pathOf(segments: string[]): string {
  return segments.length ? `/${segments.map(encodeURIComponent).join("/")}/` : "/";
}

/**
 * Resolves a published URL for a visitor (their visitor token and unsigned claims, when given):
 * 400 when it is not an absolute http(s) URL, 404 when it names no site the caller may see (or a
 * site showing them nothing), 401 for a visitor-auth site without a valid visitor token.
 */
export async function resolvePublishedUrl(ctx: Context, rawUrl: string, visitor?: VisitorInput): Promise<ResolvedUrl> {
  let url: URL;
  try {
    if (rawUrl.length > URL_MAX) throw new Error("too long");
    url = new URL(rawUrl);
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("scheme");
  } catch {
    throw badInput(`url must be an absolute http or https URL of at most ${URL_MAX} characters.`);
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const segments = segmentsOf(url.pathname);
  const found = await findSite(ctx, host, segments);
  if (!found) throw notFound(`No published site at "${url.origin}${url.pathname}"`);
  const { site: route } = found;
  let rest = segments.slice(found.taken);
  const siteBase = segments.slice(0, found.taken);

  let shareKey = url.searchParams.get("share");
  if (rest[0] && (await shareKeysOf(ctx, route.id)).includes(rest[0])) {
    shareKey = rest[0];
    siteBase.push(rest[0]);
    rest = rest.slice(1);
  }
  const view = await publishedSite(ctx, route.organizationId, route.id, { shareKey }, visitor ?? {});
  const items = view.structure.structure;
  if (items.length === 0) throw notFound(`Site "${route.id}" shows no content to this visitor`);

  const taken: string[] = [];
  let complete = true;
  let section: Viewed<SiteSection> | null = null;
  let variants: Viewed<SiteSpace>[];
  if (view.structure.type === "sections") {
    const sections = items as Viewed<SiteSection>[];
    const named = rest[0] ? sections.find((s) => s.path === rest[0]) : undefined;
    section = named ?? sections.find((s) => s.view?.default) ?? sections[0]!;
    if (named) taken.push(rest.shift()!);
    else if (!rest.length && sections.length > 1) complete = false;
    variants = section.view?.siteSpaces ?? [];
  } else {
    variants = items as Viewed<SiteSpace>[];
  }
  // Without a section segment, the rest is a page of the default variant of the default section.
  const canNameVariant = view.structure.type === "siteSpaces" || taken.length > 0;
  const variant = canNameVariant && rest[0] ? variants.find((s) => s.path === rest[0]) : undefined;
  const siteSpace = variant ?? variants.find((s) => s.view?.default) ?? variants[0];
  if (!siteSpace) throw notFound(`Site "${route.id}" shows no content to this visitor`);
  if (variant) taken.push(rest.shift()!);
  else if (!rest.length && variants.length > 1) complete = false;

  const siteBasePath = pathOf(siteBase);
  const basePath = pathOf([...siteBase, ...taken]);
  const pathname = rest.join("/");
  const canonical = `${url.protocol}//${url.host}${basePath}${rest.map(encodeURIComponent).join("/")}`;
  return {
    site: view.site,
    organizationId: route.organizationId,
    view,
    section,
    siteSpace,
    space: siteSpace.spaceId,
    pathname,
    basePath,
    siteBasePath,
    canonicalUrl: canonical.length > `${url.protocol}//${url.host}/`.length ? canonical.replace(/\/$/, "") : canonical,
    complete,
    shareKey: view.access.shareKey,
    claims: view.access.claims,
    preview: view.access.preview,
  };
}

/** The spaces a resolved visitor sees on the site (what their site token may read). */
export function visibleSpaces(view: PublishedView): string[] {
  const out = new Set<string>();
  for (const item of view.structure.structure) {
    if ("spaceId" in item) out.add(item.spaceId);
    else for (const s of (item.view as PublishedItemView | undefined)?.siteSpaces ?? []) out.add(s.spaceId);
  }
  return [...out];
}
