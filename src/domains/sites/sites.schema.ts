import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload, type PayloadParent } from "../../core/graph/payloads.js";
import { organizationParent } from "../organizations/organizations.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { GRAPH_ONLY, listOf, pageArgs } from "../../core/graph/rest-fields.js";
import type { JsonObject } from "./adaptive.js";
import { publishedSite } from "./published.js";
import * as service from "./sites.service.js";
import * as structure from "./structure.js";
import * as groups from "./structure-groups.js";
import {
  AdaptiveJsonSchemaScalar,
  AdaptiveSchemaRef,
  AgentsContextEnum,
  SiteItemTypeScalar,
  SiteRef,
  SiteSpacesInputScalar,
  SiteTypeEnum,
  SiteVisibilityScalar,
  SubdomainRef,
  TemplateConditions,
} from "./site-object.schema.js";
import { SiteSectionGroupRef, SiteSectionRef, SiteSpaceRef } from "./site-structure.schema.js";
import { PublishedContentSite, ShareLinkRef, VisitorAuthRef } from "./site-published.schema.js";
// GitBook reader operations of their own files: site redirects and site search.
import "./redirects.schema.js";
import "./site-search.schema.js";
import "./url-lookup.schema.js";

/**
 * The sites domain of the graph: lists, inputs and operations, over the types of
 * site-object.schema.ts (Site), site-structure.schema.ts (site spaces, sections, groups) and
 * site-published.schema.ts (published view, share links, visitor authentication).
 *
 * Importing this module defines all of them, in the order of those imports: the graph lists its
 * types (and /v1 its shapes) in the order they are defined, so the chain of imports is that order.
 */

export { SiteRef, SiteTypeEnum, SiteVisibilityScalar, SubdomainRef } from "./site-object.schema.js";
export { SiteSectionGroupRef, SiteSectionRef, SiteSpaceRef } from "./site-structure.schema.js";

// ─── Lists ─────────────────────────────────────────────────────────────────────────────────────

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
  description:
    "`before` places the item right before that neighbour, `after` right after it (with both, `after` must come first); without either it goes last.",
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
    resolve: (_r, args, ctx) => groups.listGroups(ctx, args.organizationId, args.siteId, args),
  }),
  siteSpaces: t.field({
    type: SiteSpaceList,
    description: "Site spaces of a site in the order visitors see them.",
    args: {
      ...siteArgs,
      shareKey: t.arg.string({ description: "Share key the published URLs of a share-link site carry." }),
      ...pageArgs,
      default: t.arg.boolean({
        description: "true: only default site spaces (of the root, or of each section); false: only the others; omitted: all.",
      }),
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
const SiteSectionGroupSectionRemovePayload = deletionPayload(
  "SiteSectionGroupSectionRemovePayload",
  "section from the group (the section stays in the site)",
  siteParent,
);
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
      basename: t.arg.string({
        description: `${service.BASENAME.min} to ${service.BASENAME.max} characters, unique in the organization; null removes it.`,
      }),
      adaptiveContent: t.arg({ type: AdaptiveContentInput }),
      agentsContext: t.arg({ type: AgentsContextEnum }),
      defaultSiteSpace: t.arg.string({
        description: "Site space used as default at the root; in a site with sections, the default of the default section.",
      }),
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
    resolve: (_r, args, ctx) =>
      structure.sortStructure(ctx, args.organizationId, args.siteId, args.structure as structure.StructureItemInput[]),
  }),

  siteSectionCreate: t.field({
    type: SiteSectionRef,
    description:
      "Adds a section, last, with a site space for `spaceId`. The first section of a site whose site spaces are at its root takes them in (first, keeping their default).",
    args: {
      ...siteArgs,
      spaceId: t.arg.string({ required: true, description: "The space its first site space shows." }),
      title: t.arg.string({
        description: `${service.SECTION_TITLE.min} to ${service.SECTION_TITLE.max} characters; null or omitted: the space's title.`,
      }),
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
    resolve: async (_r, args, ctx) =>
      deleted(structure.deleteSection(ctx, args.organizationId, args.siteId, args.siteSectionId), args.siteSectionId, args.siteId),
  }),
  siteSectionMove: t.field({
    type: SiteSectionRef,
    deprecationReason: "Use siteStructureSort (PUT /orgs/{organizationId}/sites/{siteId}/structure).",
    description: "Moves a section next to a section or group; it joins the group of its neighbour (or the top level).",
    args: { ...siteArgs, siteSectionId: t.arg.string({ required: true }), position: t.arg({ type: PositionInput }) },
    resolve: (_r, args, ctx) =>
      structure.moveSection(ctx, args.organizationId, args.siteId, args.siteSectionId, args.position as structure.PositionInput),
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
    resolve: (_r, args, ctx) => groups.createGroup(ctx, args.organizationId, args.siteId, args),
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
      return groups.updateGroup(ctx, organizationId, siteId, siteSectionGroupId, patch);
    },
  }),
  siteSectionGroupDelete: t.field({
    type: SiteSectionGroupDeletePayload,
    description: "Deletes a group; its sections stay, ungrouped, where it was. Succeeds also when it did not exist.",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(groups.deleteGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId), args.siteSectionGroupId, args.siteId),
  }),
  siteSectionGroupSectionAdd: t.field({
    type: SiteSectionGroupRef,
    description: "Puts a section last in the group (out of its previous group).",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }), sectionId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => groups.addSectionToGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId, args.sectionId),
  }),
  siteSectionGroupSectionRemove: t.field({
    type: SiteSectionGroupSectionRemovePayload,
    description: "Takes a section out of the group, right after it at the top level; succeeds also when it was not part of the group.",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }), siteSectionId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(
        groups.removeSectionFromGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId, args.siteSectionId),
        args.siteSectionId,
        args.siteId,
      ),
  }),
  siteSectionGroupMove: t.field({
    type: SiteSectionGroupRef,
    deprecationReason: "Use siteStructureSort (PUT /orgs/{organizationId}/sites/{siteId}/structure).",
    description: "Moves a group among the top-level groups and ungrouped sections.",
    args: { ...siteArgs, siteSectionGroupId: t.arg.string({ required: true }), position: t.arg({ type: PositionInput }) },
    resolve: (_r, args, ctx) =>
      groups.moveGroup(ctx, args.organizationId, args.siteId, args.siteSectionGroupId, args.position as structure.PositionInput),
  }),

  siteSpaceCreate: t.field({
    type: SiteSpaceRef,
    description: "Adds a site space, last in a section or at the root; the first of its level becomes the default.",
    args: {
      ...siteArgs,
      spaceId: t.arg.string({ required: true }),
      sectionId: t.arg.string({
        description: "Section to add it to; omitted: the default section, or the root of a site without sections.",
      }),
    },
    resolve: (_r, args, ctx) => structure.addSiteSpace(ctx, args.organizationId, args.siteId, args),
  }),
  siteSpaceUpdate: t.field({
    type: SiteSpaceRef,
    args: {
      ...siteArgs,
      siteSpaceId: t.arg.string({ required: true }),
      path: t.arg.string({
        description: `${service.PATH.min} to ${service.PATH.max} characters, unique in its section or the root (409 otherwise).`,
      }),
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
    resolve: async (_r, args, ctx) =>
      deleted(structure.deleteSiteSpace(ctx, args.organizationId, args.siteId, args.siteSpaceId), args.siteSpaceId, args.siteId),
  }),
  siteSpaceMove: t.field({
    type: SiteSpaceRef,
    deprecationReason: "Use siteStructureSort (PUT /orgs/{organizationId}/sites/{siteId}/structure).",
    description: "Moves a site space among the site spaces of its section (or of the root).",
    args: { ...siteArgs, siteSpaceId: t.arg.string({ required: true }), position: t.arg({ type: PositionInput }) },
    resolve: (_r, args, ctx) =>
      structure.moveSiteSpace(ctx, args.organizationId, args.siteId, args.siteSpaceId, args.position as structure.PositionInput),
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
    resolve: async (_r, args, ctx) =>
      deleted(service.revokeShareLink(ctx, args.organizationId, args.siteId, args.shareLinkId), args.shareLinkId, args.siteId),
  }),
}));
