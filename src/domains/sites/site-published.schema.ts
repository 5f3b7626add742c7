import type { SiteSection, SiteSpace } from "../../generated/prisma/client.js";
import { builder } from "../../core/graph/builder.js";
import type { PublishedView } from "./published.js";
import { publishedCustomizations } from "./customization.js";
import * as service from "./sites.service.js";
import { PublishedUrls, SiteRef, StructureTypeEnum } from "./site-object.schema.js";
import { SiteSectionRef, SiteSpaceRef } from "./site-structure.schema.js";

/**
 * What reaches a site's visitors: the site as one visitor sees it (its published structure), the
 * share links that open a share-link site, and the key of a visitor-auth site.
 */

// ─── Published structure, share links, visitor authentication ────────────────────────────────

const StructureItem = builder.unionType("SiteStructureItem", {
  description: "An item of a published structure: a SiteSection (type sections) or a SiteSpace (type siteSpaces).",
  types: [SiteSectionRef, SiteSpaceRef],
  resolveType: (item) => ("spaceId" in item ? "SiteSpace" : "SiteSection"),
});

const PublishedStructure = builder.objectRef<PublishedView["structure"]>("PublishedSiteStructure").implement({
  fields: (t) => ({
    type: t.field({ type: StructureTypeEnum, resolve: (s) => s.type }),
    structure: t.field({
      type: [StructureItem],
      description: "The sections (with their visible site spaces) or the root site spaces the visitor sees, in order.",
      resolve: (s) => s.structure as (SiteSection | SiteSpace)[],
    }),
  }),
});

const SiteIntegrationScript = builder.objectRef<{ script: string; cookies: boolean }>("SiteIntegrationScript").implement({
  description: "A script an integration installed on the site adds to its pages.",
  fields: (t) => ({
    script: t.exposeString("script", { description: "URL of the script." }),
    cookies: t.exposeBoolean("cookies", { description: "Whether the script sets cookies." }),
  }),
});

export const PublishedContentSite = builder.objectRef<PublishedView>("PublishedContentSite").implement({
  description: "A site as one visitor sees it.",
  fields: (t) => ({
    object: t.string({ resolve: () => "published-content-site" }),
    site: t.field({ type: SiteRef, resolve: (p) => p.site }),
    structure: t.field({ type: PublishedStructure, resolve: (p) => p.structure }),
    customizations: t.field({
      type: "JSON",
      description:
        "GitBook's customization settings of the site (`site`) and of each site space the visitor sees (`siteSpaces`, by id): the defaults, as sites here store no customization.",
      resolve: (p) => publishedCustomizations(p),
    }),
    scripts: t.field({
      type: [SiteIntegrationScript],
      description:
        "Scripts of integrations the site's pages load: none (this server does not inject integration scripts into published sites).",
      resolve: () => [],
    }),
  }),
});

export const ShareLinkRef = builder.objectRef<service.ShareLinkView>("SiteShareLink").implement({
  description: "A secret key that opens a share-link site to whoever holds it, until it is revoked.",
  fields: (t) => ({
    object: t.string({ resolve: () => "share-link" }),
    id: t.exposeString("id"),
    key: t.exposeString("key", { description: "The secret: pass it as `shareKey`." }),
    name: t.exposeString("name", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true, description: "When it was revoked; absent while it works." }),
    urls: t.field({
      type: PublishedUrls,
      resolve: async (l, _a, ctx) => ({
        // GitBook's form: the key is the first path segment after the site's base.
        published: `${(await service.siteUrls(ctx, l.site)).published}/${encodeURIComponent(l.key)}`,
      }),
    }),
  }),
});

export const VisitorAuthRef = builder.objectRef<{ site: string; algorithm: string; secret: string }>("SiteVisitorAuth").implement({
  description:
    "How visitors of a visitor-auth site authenticate: a JWT signed with `secret` using `algorithm`, whose payload holds their claims.",
  fields: (t) => ({
    object: t.string({ resolve: () => "site-visitor-auth" }),
    site: t.exposeString("site", { description: "Id of the site." }),
    algorithm: t.exposeString("algorithm", { description: "HS256." }),
    secret: t.exposeString("secret", { description: "The key visitor tokens are signed with (UTF-8 bytes of this string)." }),
  }),
});
