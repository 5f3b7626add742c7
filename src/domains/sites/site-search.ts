import type { SiteSection, SiteSpace } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { badInput } from "../../core/errors.js";
import { paginateArray, type PageArgs } from "../../core/graph/pagination.js";
import { checkQuery, pageResult, searchPages, type SearchRow } from "../content/search.js";
import { publishedSite, type PublishedView } from "./published.js";
import type { Viewed } from "./structure.js";

/**
 * Full-text search of a site (GitBook's POST …/sites/{siteId}/search, which its reader's search
 * box calls): the content search of the spaces the caller sees through the site — its published
 * structure as published.ts gives it to this caller (share key, visitor token, claims, member
 * preview) — narrowed by the scope asked for:
 * - `default` (also the deprecated `current`): the current site space, if given, and the default
 *   site space of each section (of the root, without sections); `restrictTo` keeps only the
 *   current one (`currentSiteSpace`) or all but it (`otherSiteSpaces`);
 * - `specific`: the site spaces listed (those the caller does not see are ignored);
 * - `all`: every site space the caller sees.
 * Without a scope or mode: `default`.
 *
 * Results are GitBook's: one item per space (`id` is the space's id; the reader finds its site
 * space in the structure), its matching pages best first, each with its one-based `rank` among
 * all matching pages, `ancestors` (titles of the pages above it), `description` and sections.
 */

export const SCOPE_MODES = ["default", "specific", "all"] as const;
export const LEGACY_MODES = ["specific", "current", "all"] as const;
export const RESTRICT_TO = ["currentSiteSpace", "otherSiteSpaces"] as const;

export interface SiteSearchArgs extends PageArgs {
  query?: string | null;
  scope?: unknown;
  mode?: string | null;
  siteSpaceId?: string | null;
  siteSpaceIds?: string[] | null;
  shareKey?: string | null;
}

type Scope =
  | { mode: "default"; currentSiteSpace?: string; restrictTo?: (typeof RESTRICT_TO)[number] }
  | { mode: "specific"; siteSpaceIds: string[] }
  | { mode: "all" };

export interface SiteSearchSection {
  id: string;
  title: string;
  path: string;
  score: number;
  body: string;
  urls: { app: string };
}
export interface SiteSearchPage {
  id: string;
  title: string;
  description: string;
  path: string;
  score: number;
  rank: number;
  ancestors: { title: string }[];
  sections: SiteSearchSection[];
  urls: { app: string };
}
export interface SiteSearchSpace {
  type: "space";
  id: string;
  title: string;
  score: number;
  pages: SiteSearchPage[];
}

function stringList(field: string, value: unknown): string[] {
  if (!Array.isArray(value) || !value.length || !value.every((v) => typeof v === "string" && v.length > 0 && v.length <= 100)) {
    throw badInput(`${field} must be a non-empty array of site space ids.`);
  }
  return value;
}

function optionalString(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !value) throw badInput(`${field} must be a site space id.`);
  return value;
}

/** The scope asked for, from `scope` or the deprecated `mode` with `siteSpaceId(s)`. */
function scopeOf(args: SiteSearchArgs): Scope {
  if (args.scope !== undefined && args.scope !== null) {
    if (args.mode) throw badInput("mode: give either scope or the deprecated mode, not both.");
    const scope = args.scope as Record<string, unknown>;
    if (typeof scope !== "object" || Array.isArray(scope)) throw badInput("scope must be an object with a `mode`.");
    switch (scope.mode) {
      case "default": {
        const currentSiteSpace = optionalString("scope.currentSiteSpace", scope.currentSiteSpace);
        const restrictTo = scope.restrictTo;
        if (restrictTo !== undefined && !RESTRICT_TO.includes(restrictTo as never))
          throw badInput(`scope.restrictTo must be one of ${RESTRICT_TO.join(", ")}.`);
        if (restrictTo && !currentSiteSpace) throw badInput("scope.currentSiteSpace is required with scope.restrictTo.");
        return { mode: "default", currentSiteSpace, restrictTo: restrictTo as (typeof RESTRICT_TO)[number] | undefined };
      }
      case "specific":
        return { mode: "specific", siteSpaceIds: stringList("scope.siteSpaceIds", scope.siteSpaceIds) };
      case "all":
        return { mode: "all" };
      default:
        throw badInput(`scope.mode must be one of ${SCOPE_MODES.join(", ")} (got ${JSON.stringify(scope.mode)}).`);
    }
  }
  switch (args.mode) {
    case undefined:
    case null:
      if (args.siteSpaceIds) return { mode: "specific", siteSpaceIds: stringList("siteSpaceIds", args.siteSpaceIds) };
      return { mode: "default", currentSiteSpace: optionalString("siteSpaceId", args.siteSpaceId) };
    case "specific":
      return { mode: "specific", siteSpaceIds: stringList("siteSpaceIds", args.siteSpaceIds) };
    case "current": {
      const current = optionalString("siteSpaceId", args.siteSpaceId);
      if (!current) throw badInput('siteSpaceId is required with mode "current".');
      return { mode: "default", currentSiteSpace: current };
    }
    case "all":
      return { mode: "all" };
    default:
      throw badInput(`mode must be one of ${LEGACY_MODES.join(", ")} (got ${JSON.stringify(args.mode)}).`);
  }
}

/** The site spaces of a published view, each with whether it is the default of its level. */
function visibleSiteSpaces(view: PublishedView): { siteSpace: SiteSpace; isDefault: boolean }[] {
  const items = view.structure.structure;
  const siteSpaces =
    view.structure.type === "siteSpaces"
      ? (items as Viewed<SiteSpace>[])
      : (items as Viewed<SiteSection>[]).flatMap((section) => section.view?.siteSpaces ?? []);
  return siteSpaces.map((s) => ({ siteSpace: s, isDefault: !!s.view?.default }));
}

function inScope(scope: Scope, visible: { siteSpace: SiteSpace; isDefault: boolean }[]): SiteSpace[] {
  if (scope.mode === "all") return visible.map((v) => v.siteSpace);
  if (scope.mode === "specific") {
    const wanted = new Set(scope.siteSpaceIds);
    return visible.filter((v) => wanted.has(v.siteSpace.id)).map((v) => v.siteSpace);
  }
  const current = scope.currentSiteSpace;
  if (scope.restrictTo === "currentSiteSpace") return visible.filter((v) => v.siteSpace.id === current).map((v) => v.siteSpace);
  const defaults = visible.filter((v) => v.isDefault || v.siteSpace.id === current);
  return (scope.restrictTo === "otherSiteSpaces" ? defaults.filter((v) => v.siteSpace.id !== current) : defaults).map((v) => v.siteSpace);
}

interface OutlinePage {
  title: string;
  parentId: string | null;
  description: string | null;
}
/** Each space's title and the outline of its active revision's pages (no markdown), by space id then page id. */
type Outlines = Map<string, { title: string; pages: Map<string, OutlinePage> }>;

/**
 * The outlines of the spaces results come from, in one statement: only titles, parents and
 * descriptions are read out of the revisions' content, not the pages' markdown (a search runs
 * at each pause in the visitor's typing).
 */
async function outlinesOf(ctx: Context, spaceIds: string[]): Promise<Outlines> {
  const rows = await ctx.prisma.$queryRaw<{ spaceId: string; spaceTitle: string; id: string | null; page: OutlinePage | null }[]>`
    SELECT s.id AS "spaceId", s.title AS "spaceTitle", p.key AS id,
      jsonb_build_object('title', p.value->>'title', 'parentId', p.value->>'parentId', 'description', p.value->>'description') AS page
    FROM "Space" s
      LEFT JOIN "Revision" r ON r.id = s."revisionId"
      LEFT JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(r.content->'pages') = 'object' THEN r.content->'pages' ELSE '{}'::jsonb END) p ON true
    WHERE s.id = ANY(${spaceIds})`;
  const out: Outlines = new Map();
  for (const row of rows) {
    let space = out.get(row.spaceId);
    if (!space) out.set(row.spaceId, (space = { title: row.spaceTitle, pages: new Map() }));
    if (row.id && row.page) space.pages.set(row.id, row.page);
  }
  return out;
}

/** Titles of the pages above `pageId`, from the top level down to its parent. */
function ancestorsOf(pages: Map<string, OutlinePage>, pageId: string): { title: string }[] {
  const out: { title: string }[] = [];
  const seen = new Set<string>();
  for (let id = pages.get(pageId)?.parentId ?? null; id && !seen.has(id); id = pages.get(id)?.parentId ?? null) {
    seen.add(id);
    const page = pages.get(id);
    if (!page) break;
    out.unshift({ title: page.title ?? "" });
  }
  return out;
}

function toPage(ctx: Context, row: SearchRow, rank: number, pages: Map<string, OutlinePage>): SiteSearchPage {
  const base = pageResult(ctx, row);
  const scores = new Map(row.sections.map((s) => [s.id, s.score]));
  return {
    id: base.id,
    title: base.title,
    description: pages.get(row.pageId)?.description || "",
    path: base.path,
    score: row.rank,
    rank,
    ancestors: ancestorsOf(pages, row.pageId),
    sections: base.sections.map((s) => ({
      id: s.id,
      title: s.title,
      path: s.path,
      score: scores.get(s.id) ?? 0,
      body: s.body,
      urls: s.urls,
    })),
    urls: base.urls,
  };
}

export async function searchSite(ctx: Context, organizationId: string, siteId: string, args: SiteSearchArgs) {
  const text = checkQuery(args.query);
  const scope = scopeOf(args);
  const view = await publishedSite(ctx, organizationId, siteId, { shareKey: args.shareKey });
  const spaceIds = [...new Set(inScope(scope, visibleSiteSpaces(view)).map((s) => s.spaceId))];
  const rows = await searchPages(ctx, spaceIds, text);
  if (!rows.length) return paginateArray<SiteSearchSpace>([], args);

  const outlines = await outlinesOf(ctx, [...new Set(rows.map((r) => r.spaceId))]);
  const bySpace = new Map<string, SiteSearchSpace>();
  rows.forEach((row, i) => {
    let item = bySpace.get(row.spaceId);
    if (!item) {
      item = { type: "space", id: row.spaceId, title: outlines.get(row.spaceId)?.title ?? "", score: row.rank, pages: [] };
      bySpace.set(row.spaceId, item);
    }
    item.pages.push(toPage(ctx, row, i + 1, outlines.get(row.spaceId)?.pages ?? new Map()));
  });
  return paginateArray([...bySpace.values()], args);
}
