import type { Context } from "../../core/context.js";
import { badInput } from "../../core/errors.js";
import { checkLength, codePointLength, sliceCodePoints } from "../../core/validate.js";
import { requireMembership } from "../../core/access/access.js";
import { paginateArray, type PageArgs } from "../../core/graph/pagination.js";
import { requireSpace, visibleSpaceWhereIn } from "../spaces/spaces.access.js";
import { pageAppUrl } from "./views.js";
import type { IndexedSection } from "./revisions.js";

/**
 * Full-text search over the pages of spaces' active revisions (the PageSearch rows kept by
 * revisions.ts): PostgreSQL text search (english configuration) over each page's title and
 * text, ranked with title matches first, then by ts_rank with the title weighted A and the
 * text D. A page also matches when its title contains the query as typed (partial words).
 * Each result lists the page's sections (split at headings) that match, best first.
 */

export const SEARCH_QUERY_MAX = 512;
const SECTION_BODY_MAX = 300;

export interface SearchSectionView {
  id: string;
  title: string;
  path: string;
  body: string;
  urls: { app: string };
}
export interface SearchPageView {
  id: string;
  title: string;
  path: string;
  sections: SearchSectionView[];
  urls: { app: string };
}
export interface SearchSpaceView {
  id: string;
  title: string;
  pages: SearchPageView[];
}

export function checkQuery(query: string | null | undefined): string {
  const text = (query ?? "").trim();
  if (!text) throw badInput("query is required: the text to search for.");
  checkLength("query", text, 1, SEARCH_QUERY_MAX);
  return text;
}

export interface SearchRow {
  spaceId: string;
  pageId: string;
  title: string;
  path: string;
  /** Matching sections, best first, each with its own text-search score. */
  sections: (IndexedSection & { score: number })[];
  rank: number;
}
type Row = SearchRow;

const RESULT_CAP = 1000;

/** Indexed pages of `spaceIds` matching `query`, best first (at most RESULT_CAP); the caller checks access. */
export async function searchPages(ctx: Context, spaceIds: string[], query: string): Promise<Row[]> {
  if (!spaceIds.length) return [];
  const like = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return ctx.prisma.$queryRaw<Row[]>`
    WITH q AS (SELECT websearch_to_tsquery('english', ${query}) AS query)
    SELECT ps."spaceId", ps."pageId", ps.title, ps.path,
      COALESCE((
        SELECT jsonb_agg(s.value || jsonb_build_object('score', ts_rank(d.doc, q.query)) ORDER BY ts_rank(d.doc, q.query) DESC, s.ordinality)
        FROM jsonb_array_elements(ps.sections) WITH ORDINALITY AS s(value, ordinality),
          LATERAL (SELECT to_tsvector('english', coalesce(s.value->>'title', '') || ' ' || coalesce(s.value->>'body', '')) AS doc) d
        WHERE d.doc @@ q.query OR coalesce(s.value->>'title', '') ILIKE ${like}
      ), '[]'::jsonb) AS sections,
      (CASE WHEN to_tsvector('english', ps.title) @@ q.query OR ps.title ILIKE ${like} THEN 1 ELSE 0 END
        + ts_rank(setweight(to_tsvector('english', ps.title), 'A') || setweight(to_tsvector('english', ps.body), 'D'), q.query))::float8 AS rank
    FROM "PageSearch" ps, q
    WHERE ps."spaceId" = ANY(${spaceIds})
      AND ((to_tsvector('english', ps.title) || to_tsvector('english', ps.body)) @@ q.query OR ps.title ILIKE ${like})
    ORDER BY rank DESC, ps.path ASC, ps."pageId" ASC
    LIMIT ${RESULT_CAP}`;
}

function truncate(text: string, max: number): string {
  return codePointLength(text, max) <= max ? text : `${sliceCodePoints(text, max - 1).trimEnd()}…`;
}

/** A matching page as the search answers show it (sections cut to their first characters). */
export function pageResult(ctx: Context, row: Row): SearchPageView {
  const ref = { spaceId: row.spaceId, changeRequestNumber: null };
  const app = pageAppUrl(ctx, ref, row.path);
  return {
    id: row.pageId,
    title: row.title,
    path: row.path,
    urls: { app },
    sections: (row.sections ?? []).map((s) => {
      const anchor = s.path.includes("#") ? s.path.slice(s.path.indexOf("#")) : "";
      return { id: s.id, title: s.title, path: s.path, body: truncate(s.body, SECTION_BODY_MAX), urls: { app: app + anchor } };
    }),
  };
}

/** Pages of a space matching a query, best first. */
export async function searchSpace(ctx: Context, spaceId: string, query: string | null | undefined, args: PageArgs) {
  const text = checkQuery(query);
  await requireSpace(ctx, spaceId);
  const rows = await searchPages(ctx, [spaceId], text);
  return paginateArray(
    rows.map((r) => pageResult(ctx, r)),
    args,
  );
}

/** Spaces of an organization (those the caller can read) with their matching pages, best match first. */
export async function searchOrganization(ctx: Context, organizationId: string, query: string | null | undefined, args: PageArgs) {
  const text = checkQuery(query);
  const member = await requireMembership(ctx, organizationId);
  const spaces = await ctx.prisma.space.findMany({
    where: visibleSpaceWhereIn(ctx, organizationId, member),
    select: { id: true, title: true },
  });
  const titles = new Map(spaces.map((s) => [s.id, s.title]));
  const rows = await searchPages(ctx, [...titles.keys()], text);
  const bySpace = new Map<string, SearchSpaceView>();
  for (const row of rows) {
    let item = bySpace.get(row.spaceId);
    if (!item) {
      item = { id: row.spaceId, title: titles.get(row.spaceId) ?? "", pages: [] };
      bySpace.set(row.spaceId, item);
    }
    item.pages.push(pageResult(ctx, row));
  }
  return paginateArray([...bySpace.values()], args);
}
