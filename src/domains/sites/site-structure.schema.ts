import type { Site, SiteSection, SiteSpace } from "../../generated/prisma/client.js";
import { resolveArrayConnection } from "@pothos/plugin-relay";
import { builder } from "../../core/graph/builder.js";
import type { Context } from "../../core/context.js";
import { GRAPH_ONLY, restOnly } from "../../core/graph/rest-fields.js";
import { SpaceRef } from "../spaces/spaces.schema.js";
import { spaceById } from "../spaces/spaces.access.js";
import * as service from "./sites.service.js";
import type { Viewed } from "./structure.js";
import { storedSiteSpacePath, type PublishedItemView } from "./published.js";
import { PublishedUrls } from "./site-object.schema.js";

/**
 * The structure of a site: its site spaces (spaces it shows), sections (site spaces under one
 * path) and section groups. In a published view (site-published.schema.ts) each carries what the
 * visitor sees (`Viewed`).
 */

// ─── Site space, section, group ───────────────────────────────────────────────────────────────

/** Whether a site's sections, groups and site spaces are drafts: nothing is live until the site is published. */
async function isDraft(ctx: Parameters<typeof service.siteUrls>[0], siteId: string): Promise<boolean> {
  return !(await service.siteById(ctx).load(siteId))?.published;
}

/** The published address of a site, and the site, for the `urls` of what it holds (null when the site is gone). */
async function publishedBase(ctx: Parameters<typeof service.siteUrls>[0], siteId: string): Promise<{ site: Site; url: string } | null> {
  const site = await service.siteById(ctx).load(siteId);
  if (!site) return null;
  return { site, url: (await service.siteUrls(ctx, site)).published };
}

export const SiteSpaceRef = builder.prismaNode("SiteSpace", {
  id: { field: "id" },
  description: "A space shown by a site, at its root or in a section (one of the section's variants).",
  fields: (t) => ({
    object: t.string({ resolve: () => "site-space" }),
    path: t.exposeString("path", {
      description: `${service.PATH.min} to ${service.PATH.max} characters; unique in its section (or the root).`,
    }),
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
    title: t.string({
      description: "The title of its space.",
      resolve: async (s, _a, ctx) => (await spaceById(ctx).load(s.spaceId))?.title ?? "",
    }),
    default: t.boolean({
      description: "True for the default site space of its section (or of the root).",
      resolve: async (s: Viewed<SiteSpace>, _a, ctx) => {
        if (s.view?.default !== undefined) return s.view.default;
        if (s.sectionId) return (await service.sectionById(ctx).load(s.sectionId))?.defaultSiteSpaceId === s.id;
        return (await service.siteById(ctx).load(s.siteId))?.defaultSiteSpaceId === s.id;
      },
    }),
    condition: t.exposeString("condition", {
      nullable: true,
      description: "Expression over visitor.claims deciding whether visitors see it; absent: always shown.",
    }),
    draft: t.boolean({
      description: "True while it is not live: until its site is published.",
      resolve: (s, _a, ctx) => isDraft(ctx, s.siteId),
    }),
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
        let path = (s.view as PublishedItemView | undefined)?.urlPath;
        // Outside a published view: by the stored defaults.
        if (path === undefined) path = await storedSiteSpacePath(ctx, base.site, s);
        return { published: service.publishedPathUrl(base.url, base.site, s.view?.shareKey, path) };
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
    condition: t.exposeString("condition", {
      nullable: true,
      description: "Expression over visitor.claims deciding whether visitors see it; absent: always shown.",
    }),
    sectionGroupId: t.string({
      nullable: true,
      extensions: restOnly("sectionGroup"),
      description: "Id of the group holding it; absent when ungrouped.",
      resolve: (s) => s.groupId,
    }),
    draft: t.boolean({
      description: "True while it is not live: until its site is published.",
      resolve: (s, _a, ctx) => isDraft(ctx, s.siteId),
    }),
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
        if (!base) return {};
        const path = (s.view as PublishedItemView | undefined)?.urlPath ?? (base.site.defaultSectionId === s.id ? "" : s.path);
        return { published: service.publishedPathUrl(base.url, base.site, s.view?.shareKey, path) };
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
      description:
        "What is nested under it, in order: its sections (groups do not nest here, and external links are not part of site structures).",
      resolve: (g, _a, ctx) => service.sectionsOfGroup(ctx).load(g.id),
    }),
    draft: t.boolean({
      description: "True while it is not live: until its site is published.",
      resolve: (g, _a, ctx) => isDraft(ctx, g.siteId),
    }),
    sections: t.relatedConnection("sections", {
      description: "Its sections, in order.",
      cursor: "id",
      totalCount: true,
      query: () => ({ orderBy: [{ position: "asc" }, { createdAt: "asc" }, { id: "asc" }] }),
    }),
    site: t.relation("site", { extensions: GRAPH_ONLY, description: "The site." }),
  }),
});
