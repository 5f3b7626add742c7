import type { Prisma, Site, SiteRedirect } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { badInput, conflict, notFound } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { checkLength, checkUri } from "../../core/validate.js";
import { paginate, type OrderSpec, type PageArgs } from "../../core/graph/pagination.js";
import { spaceById } from "../spaces/spaces.access.js";
import { revisionById, contentOf } from "../content/revisions.js";
import { flattenTree, pageTree, type PageTreeNode } from "../content/model.js";
import { publishedSite, storedSiteSpacePath } from "./published.js";
import { byOrder } from "./structure.js";
import { requireSiteAdmin } from "./sites.policy.js";
import { publishedPathUrl, requireSite, sectionById, siteById, siteSpaceById, siteSpacesOfSite, siteUrls } from "./sites.service.js";

/**
 * Redirects of a site (GitBook's site redirects): a `source` path under the site sends visitors
 * to a `destination` — a section, a site space, a page of a site space, or an external URL.
 *
 * - Members of the organization list them; admins create, change and delete them.
 * - Anyone who may read the site as a visitor (published.ts: share key, visitor token, member
 *   preview) resolves a source with GET …/redirect?source=: the live (not draft) redirect whose
 *   source is the path itself, else the one with the longest wildcard prefix (`/docs/*`,
 *   `/docs*`), and the absolute URL it leads to. GitBook's reader calls it for unknown paths and
 *   sends the visitor to `target`, so a destination that no longer exists is a 404 like no redirect.
 */

/** GitBook's SITE_REDIRECT_SOURCE_PATH_PATTERN: `/a/b`, each segment unreserved or %-encoded characters, `/*` or `*` at the end. */
export const SOURCE_PATTERN =
  /^\/(?!\*)(?!.*\*.+)(?:[A-Za-z0-9\-._~+]|%[0-9A-Fa-f]{2})+(?:\/(?:[A-Za-z0-9\-._~+]|%[0-9A-Fa-f]{2})+)*(?:\/\*|\*)?$/;
export const SOURCE_MAX = 512;
const URL_MAX = 2048;

export type RedirectDestination =
  | { kind: "site-section"; siteSectionId: string }
  | { kind: "site-space"; siteSpaceId: string }
  | { kind: "site-page"; siteSpaceId: string; pageId: string }
  | { kind: "external"; url: string };

/** What a client may send: a stored destination, or a page of a space of the site by its path. */
export type RedirectDestinationInput = RedirectDestination | { kind: "path"; spaceId: string; path: string };

export const DESTINATION_KINDS = ["site-section", "site-space", "site-page", "external"] as const;
export const ORDER_BY = ["createdAt", "updatedAt", "source"] as const;
export type RedirectOrderBy = (typeof ORDER_BY)[number];

export type RedirectView = SiteRedirect & { destination: RedirectDestination };

export function checkSource(field: string, source: string): string {
  checkLength(field, source, 1, SOURCE_MAX);
  if (!SOURCE_PATTERN.test(source)) {
    throw badInput(
      `${field} must be a path starting with "/", made of letters, digits, "-._~+" or %-encoded characters, optionally ending with "*" or "/*" (got ${JSON.stringify(source.slice(0, 100))}).`,
    );
  }
  return source;
}

function stringField(destination: Record<string, unknown>, name: string): string {
  const value = destination[name];
  if (typeof value !== "string" || !value.trim()) throw badInput(`destination.${name} is required (a non-empty string).`);
  return value;
}

/** The current page tree of a space, flattened (empty when the space has no content). */
async function pagesOfSpace(ctx: Context, spaceId: string): Promise<PageTreeNode[]> {
  const space = await spaceById(ctx).load(spaceId);
  if (!space?.revisionId || space.deletedAt) return [];
  return flattenTree(pageTree(contentOf(await revisionById(ctx).load(space.revisionId))));
}

/** Checks a destination against the site and stores a `path` destination as the page it names. */
async function checkDestination(ctx: Context, site: Site, raw: unknown): Promise<RedirectDestination> {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw badInput("destination must be an object with a `kind`.");
  const input = raw as Record<string, unknown>;
  const kind = input.kind;
  const siteSpaceOf = async (field: string, id: string) => {
    const siteSpace = await siteSpaceById(ctx).load(id);
    if (!siteSpace || siteSpace.siteId !== site.id) throw badInput(`destination.${field}: no site space "${id}" in this site.`);
    return siteSpace;
  };
  switch (kind) {
    case "site-section": {
      const id = stringField(input, "siteSectionId");
      const section = await sectionById(ctx).load(id);
      if (!section || section.siteId !== site.id) throw badInput(`destination.siteSectionId: no section "${id}" in this site.`);
      return { kind, siteSectionId: id };
    }
    case "site-space": {
      const id = stringField(input, "siteSpaceId");
      await siteSpaceOf("siteSpaceId", id);
      return { kind, siteSpaceId: id };
    }
    case "site-page": {
      const siteSpace = await siteSpaceOf("siteSpaceId", stringField(input, "siteSpaceId"));
      const pageId = stringField(input, "pageId");
      if (!(await pagesOfSpace(ctx, siteSpace.spaceId)).some((p) => p.id === pageId)) {
        throw badInput(`destination.pageId: no page "${pageId}" in the space of site space "${siteSpace.id}".`);
      }
      return { kind, siteSpaceId: siteSpace.id, pageId };
    }
    case "external": {
      const url = stringField(input, "url");
      checkUri("destination.url", url, URL_MAX);
      return { kind, url };
    }
    case "path": {
      const spaceId = stringField(input, "spaceId");
      const path = stringField(input, "path")
        .replace(/^\/+|\/+$/g, "")
        .toLowerCase();
      const siteSpaces = (await siteSpacesOfSite(ctx).load(site.id)).filter((s) => s.spaceId === spaceId).sort(byOrder);
      if (!siteSpaces.length) throw badInput(`destination.spaceId: space "${spaceId}" is not shown by this site.`);
      const page = (await pagesOfSpace(ctx, spaceId)).find((p) => p.path.toLowerCase() === path && p.type !== "link");
      if (!page) throw badInput(`destination.path: no page at "${path}" in space "${spaceId}".`);
      return { kind: "site-page", siteSpaceId: siteSpaces[0]!.id, pageId: page.id };
    }
    default:
      throw badInput(`destination.kind must be one of ${[...DESTINATION_KINDS, "path"].join(", ")} (got ${JSON.stringify(kind)}).`);
  }
}

function view(row: SiteRedirect): RedirectView {
  return row as RedirectView;
}

/** A unique-constraint violation, as Prisma reports it (P2002) or as the driver adapter does (23505). */
function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | null;
  return e?.code === "P2002" || e?.cause?.code === "23505" || /unique constraint/i.test(String((err as Error)?.message));
}

const duplicate = (source: string) => conflict(`source: the site already has a redirect from "${source}".`);

async function requireRedirect(ctx: Context, siteId: string, redirectId: string): Promise<SiteRedirect> {
  const row = await ctx.prisma.siteRedirect.findUnique({ where: { id: redirectId } });
  if (!row || row.siteId !== siteId) throw notFound(`Site redirect "${redirectId}"`);
  return row;
}

export interface RedirectListArgs extends PageArgs {
  search?: string | null;
  draft?: boolean | null;
  orderBy?: string | null;
}

export async function listRedirects(ctx: Context, organizationId: string, siteId: string, args: RedirectListArgs) {
  await requireSite(ctx, organizationId, siteId);
  const orderBy = (args.orderBy ?? "createdAt") as RedirectOrderBy;
  if (!ORDER_BY.includes(orderBy)) throw badInput(`orderBy must be one of ${ORDER_BY.join(", ")} (got "${args.orderBy}").`);
  const search = args.search?.trim();
  const where: Prisma.SiteRedirectWhereInput = {
    siteId,
    // As GitBook: the filter defaults to live redirects.
    draft: args.draft ?? false,
    ...(search ? { source: { contains: search, mode: "insensitive" } } : {}),
  };
  const order: OrderSpec =
    orderBy === "source"
      ? [["source", "asc"]]
      : [
          [orderBy, "desc"],
          ["id", "desc"],
        ];
  const page = await paginate({ args, where, order, from: ctx.prisma.siteRedirect });
  return { ...page, items: page.items.map(view) };
}

export interface RedirectInput {
  source?: string | null;
  destination?: unknown;
  captureWildcard?: boolean | null;
  draft?: boolean | null;
  permanent?: boolean | null;
}

export async function createRedirect(ctx: Context, organizationId: string, siteId: string, input: RedirectInput) {
  await requireSiteAdmin(ctx, organizationId, "manage site redirects");
  const site = await requireSite(ctx, organizationId, siteId);
  const source = checkSource("source", input.source ?? "");
  const destination = await checkDestination(ctx, site, input.destination);
  try {
    const row = await ctx.prisma.siteRedirect.create({
      data: {
        id: newId("SiteRedirect"),
        siteId,
        source,
        destination,
        captureWildcard: input.captureWildcard ?? false,
        draft: input.draft ?? false,
        permanent: input.permanent ?? false,
      },
    });
    return view(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate(source);
    throw err;
  }
}

export async function updateRedirect(ctx: Context, organizationId: string, siteId: string, redirectId: string, patch: RedirectInput) {
  await requireSiteAdmin(ctx, organizationId, "manage site redirects");
  const site = await requireSite(ctx, organizationId, siteId);
  await requireRedirect(ctx, siteId, redirectId);
  const data: Prisma.SiteRedirectUpdateInput = {};
  if (patch.source !== undefined && patch.source !== null) data.source = checkSource("source", patch.source);
  if (patch.destination !== undefined && patch.destination !== null)
    data.destination = await checkDestination(ctx, site, patch.destination);
  for (const flag of ["captureWildcard", "draft", "permanent"] as const) {
    if (typeof patch[flag] === "boolean") data[flag] = patch[flag];
  }
  try {
    return view(await ctx.prisma.siteRedirect.update({ where: { id: redirectId }, data }));
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate(String(data.source));
    throw err;
  }
}

export async function deleteRedirect(ctx: Context, organizationId: string, siteId: string, redirectId: string): Promise<boolean> {
  await requireSiteAdmin(ctx, organizationId, "manage site redirects");
  await requireSite(ctx, organizationId, siteId);
  await ctx.prisma.siteRedirect.deleteMany({ where: { id: redirectId, siteId } });
  return true;
}

// ─── Resolving a source (GitBook's reader, for paths it does not know) ───────────────────────

/** The live redirect for `source`: the exact one, else the wildcard one with the longest prefix; and the suffix its wildcard matched. */
function matchRedirect(rows: SiteRedirect[], source: string): { row: SiteRedirect; rest: string } | null {
  const exact = rows.find((r) => r.source === source);
  if (exact) return { row: exact, rest: "" };
  let best: { row: SiteRedirect; rest: string; length: number } | null = null;
  for (const row of rows) {
    if (!row.source.endsWith("*")) continue;
    const prefix = row.source.slice(0, -1);
    // `/docs/*` also stands for `/docs` itself.
    const matches = source.startsWith(prefix) || (prefix.endsWith("/") && source === prefix.slice(0, -1));
    if (matches && (!best || prefix.length > best.length)) best = { row, rest: source.slice(prefix.length), length: prefix.length };
  }
  return best && { row: best.row, rest: best.rest };
}

/** The published URL of a site space, as SiteSpace.urls.published has it (with a share key, as a path segment). */
async function siteSpaceUrl(ctx: Context, site: Site, siteSpaceId: string, shareKey: string | null): Promise<string | null> {
  const siteSpace = await siteSpaceById(ctx).load(siteSpaceId);
  if (!siteSpace || siteSpace.siteId !== site.id) return null;
  return publishedPathUrl((await siteUrls(ctx, site)).published, site, shareKey, await storedSiteSpacePath(ctx, site, siteSpace));
}

async function destinationUrl(ctx: Context, site: Site, destination: RedirectDestination, shareKey: string | null): Promise<string | null> {
  switch (destination.kind) {
    case "external":
      return destination.url;
    case "site-section": {
      const section = await sectionById(ctx).load(destination.siteSectionId);
      if (!section || section.siteId !== site.id) return null;
      const path = site.defaultSectionId === section.id ? "" : section.path;
      return publishedPathUrl((await siteUrls(ctx, site)).published, site, shareKey, path);
    }
    case "site-space":
      return siteSpaceUrl(ctx, site, destination.siteSpaceId, shareKey);
    case "site-page": {
      const base = await siteSpaceUrl(ctx, site, destination.siteSpaceId, shareKey);
      const siteSpace = base ? await siteSpaceById(ctx).load(destination.siteSpaceId) : null;
      const page = siteSpace && (await pagesOfSpace(ctx, siteSpace.spaceId)).find((p) => p.id === destination.pageId);
      if (!base || !page) return null;
      return page.path ? `${base}/${page.path}` : base;
    }
    default:
      return null;
  }
}

/** `url` with `rest` (what a wildcard matched) appended to its path, before its query and fragment. */
function appendPath(url: string, rest: string): string {
  if (!rest) return url;
  const cut = url.search(/[?#]/);
  const [head, tail] = cut < 0 ? [url, ""] : [url.slice(0, cut), url.slice(cut)];
  return `${head.replace(/\/+$/, "")}/${rest.replace(/^\/+/, "")}${tail}`;
}

export async function resolveRedirect(
  ctx: Context,
  organizationId: string,
  siteId: string,
  args: { source: string; shareKey?: string | null },
): Promise<{ redirect: RedirectView; target: string }> {
  const source = checkSource("source", args.source ?? "");
  if (source.endsWith("*")) throw badInput('source is a path to resolve: it cannot end with "*".');
  // Whoever may read the site as a visitor may resolve its redirects (404 otherwise, as the site).
  await publishedSite(ctx, organizationId, siteId, { shareKey: args.shareKey });
  const site = (await siteById(ctx).load(siteId))!;
  const rows = await ctx.prisma.siteRedirect.findMany({ where: { siteId, draft: false } });
  const match = matchRedirect(rows, source);
  const none = () => notFound(`Redirect from "${source}" in site "${siteId}"`);
  if (!match) throw none();
  const destination = match.row.destination as RedirectDestination;
  const url = await destinationUrl(ctx, site, destination, args.shareKey ?? null);
  if (!url) throw none();
  const target = match.row.captureWildcard ? appendPath(url, match.rest) : url;
  return { redirect: view(match.row), target };
}
