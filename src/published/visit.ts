import type { SiteSection, SiteSpace } from "../generated/prisma/client.js";
import type { Context } from "../core/context.js";
import { getPages } from "../domains/content/content.service.js";
import type { PageView } from "../domains/content/views.js";
import type { PublishedItemView } from "../domains/sites/published.js";
import type { Viewed } from "../domains/sites/structure.js";
import type { ResolvedUrl } from "../domains/sites/url-lookup.js";

/** A page of a site with its absolute URL. */
export interface SitePage {
  page: PageView;
  url: string;
}

/** What a resolved visit reads and links with. */
export interface Visit {
  resolved: ResolvedUrl;
  /** The content context: anonymous, with the site's grant for this visitor. */
  ctx: Context;
  /** Absolute URL of the site's root, trailing slash (share key segment included). */
  siteBase: string;
  /** Public site: shared caches may keep its answers. */
  shared: boolean;
  noindex: boolean;
  /** Visitor token to keep in a cookie (it came in the query). */
  setToken: string | null;
}

export function encodePath(path: string): string {
  return path
    .split("/")
    .filter(Boolean)
    .map((s) => encodeURIComponent(s))
    .join("/");
}

/** Absolute URL of a site space's root (trailing slash) under the site's base. */
export function siteSpaceBase(visit: Visit, siteSpace: Viewed<SiteSpace>): string {
  const urlPath = (siteSpace.view as PublishedItemView | undefined)?.urlPath ?? "";
  return `${visit.siteBase}${urlPath ? `${encodePath(urlPath)}/` : ""}`;
}

/** Every site space of the visitor's view, with its section. */
export function viewSiteSpaces(visit: Visit): { section: Viewed<SiteSection> | null; siteSpace: Viewed<SiteSpace> }[] {
  const { structure } = visit.resolved.view;
  if (structure.type === "siteSpaces")
    return (structure.structure as Viewed<SiteSpace>[]).map((siteSpace) => ({ section: null, siteSpace }));
  return (structure.structure as Viewed<SiteSection>[]).flatMap((section) =>
    (section.view?.siteSpaces ?? []).map((siteSpace) => ({ section, siteSpace })),
  );
}

/** The pages of a site space's content: its tree as the content services answer it. */
export async function pagesOf(visit: Visit, spaceId: string): Promise<PageView[]> {
  return (await getPages(visit.ctx, spaceId)).pages;
}

/** The document pages of a tree in reading order, with their URLs under `base`. */
export function documentPages(pages: PageView[], base: string, out: SitePage[] = []): SitePage[] {
  for (const page of pages) {
    if (page.type === "document") out.push({ page, url: `${base}${encodePath(page.path)}` });
    documentPages(page.pages, base, out);
  }
  return out;
}
