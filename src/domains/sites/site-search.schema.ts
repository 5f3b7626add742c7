import { builder } from "../../core/graph/builder.js";
import { invalidScalarValue } from "../../core/errors.js";
import { jsonScalar, stringScalar } from "../../core/graph/scalars.js";
import { listOf, pageArgs } from "../../core/graph/rest-fields.js";
import { SEARCH_QUERY_MAX } from "../content/search.js";
import * as search from "./site-search.js";

/** Site search on the graph and on /v1, in GitBook's shapes (see site-search.ts). */

const UrlsApp = builder.objectRef<{ app: string }>("SiteSearchUrls").implement({
  fields: (t) => ({ app: t.exposeString("app", { description: "Where it is in the application." }) }),
});

const SiteSearchSection = builder.objectRef<search.SiteSearchSection>("SiteSearchSectionResult").implement({
  description: "A section (the text under a heading) of a matching page.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "The heading's anchor (the page's id for the text before its first heading)." }),
    title: t.exposeString("title"),
    path: t.exposeString("path", { description: "Path of the page in its space, with `#anchor`." }),
    score: t.exposeFloat("score"),
    body: t.exposeString("body", { description: "The start of its text." }),
    urls: t.field({ type: UrlsApp, resolve: (s) => s.urls }),
  }),
});

const AncestorRef = builder.objectRef<{ title: string }>("SiteSearchAncestor").implement({
  fields: (t) => ({ title: t.exposeString("title") }),
});

const SiteSearchPage = builder.objectRef<search.SiteSearchPage>("SiteSearchPageResult").implement({
  description: "A matching page of a space of the site.",
  fields: (t) => ({
    id: t.exposeString("id"),
    title: t.exposeString("title"),
    description: t.exposeString("description"),
    path: t.exposeString("path", { description: "Path of the page in its space." }),
    score: t.exposeFloat("score"),
    rank: t.exposeInt("rank", { description: "One-based position among all matching pages, best first." }),
    ancestors: t.field({
      type: [AncestorRef],
      description: "The pages above it, from the top level to its parent.",
      resolve: (p) => p.ancestors,
    }),
    sections: t.field({ type: [SiteSearchSection], description: "Its matching sections, best first.", resolve: (p) => p.sections }),
    urls: t.field({ type: UrlsApp, resolve: (p) => p.urls }),
  }),
});

const SiteSearchSpace = builder.objectRef<search.SiteSearchSpace>("SiteSearchSpaceResult").implement({
  description: "A space of the site with its matching pages.",
  fields: (t) => ({
    type: t.string({ resolve: () => "space" }),
    id: t.exposeString("id", { description: "Id of the space." }),
    title: t.exposeString("title"),
    score: t.exposeFloat("score", { description: "The score of its best page." }),
    pages: t.field({ type: [SiteSearchPage], resolve: (s) => s.pages }),
  }),
});

const SiteSearchResultList = listOf("SiteSearchResultList", SiteSearchSpace);

const SiteSearchScopeScalar = jsonScalar("SiteSearchScope", {
  description:
    "What to search: `{mode: default, currentSiteSpace?, restrictTo?: currentSiteSpace|otherSiteSpaces}` (the current site space and each section's default), " +
    "`{mode: specific, siteSpaceIds}` or `{mode: all}`.",
  extensions: {
    jsonSchema: {
      type: "object",
      properties: {
        mode: { type: "string", enum: [...search.SCOPE_MODES] },
        currentSiteSpace: { type: "string" },
        restrictTo: { type: "string", enum: [...search.RESTRICT_TO] },
        siteSpaceIds: { type: "array", items: { type: "string" } },
      },
      required: ["mode"],
      additionalProperties: false,
    },
  },
  serialize: (value) => value,
  parseValue: (value) => {
    if (!value || typeof value !== "object" || Array.isArray(value))
      throw invalidScalarValue("SiteSearchScope", "scope must be an object with a `mode`");
    return value;
  },
});

const SiteSearchModeScalar = stringScalar("SiteSearchMode", {
  description: "Deprecated (use scope): specific (with siteSpaceIds), current (with siteSpaceId) or all.",
  extensions: { jsonSchema: { type: "string", enum: [...search.LEGACY_MODES] } },
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value !== "string" || !search.LEGACY_MODES.includes(value as never))
      throw invalidScalarValue("SiteSearchMode", `mode must be one of ${search.LEGACY_MODES.join(", ")}`);
    return value;
  },
});

builder.queryFields((t) => ({
  siteSearch: t.field({
    type: SiteSearchResultList,
    description:
      `Full-text search of the spaces a site shows this caller (as GET …/published would), narrowed by scope; ` +
      `one item per space with its matching pages, best first. query: at most ${SEARCH_QUERY_MAX} characters.`,
    args: {
      organizationId: t.arg.string({ required: true }),
      siteId: t.arg.string({ required: true }),
      query: t.arg.string({ required: true }),
      scope: t.arg({ type: SiteSearchScopeScalar }),
      mode: t.arg({ type: SiteSearchModeScalar }),
      siteSpaceId: t.arg.string({ description: 'The current site space (deprecated mode "current").' }),
      siteSpaceIds: t.arg.stringList({ description: 'Site spaces to search (deprecated mode "specific").' }),
      shareKey: t.arg.string({ description: "Key of a share link of the site (share-link sites)." }),
      ...pageArgs,
    },
    resolve: (_r, args, ctx) => search.searchSite(ctx, args.organizationId, args.siteId, args),
  }),
}));
