import { builder } from "../../core/graph/builder.js";
import { badInput, notFound } from "../../core/errors.js";
import { checkLength } from "../../core/validate.js";
import { mintSiteToken } from "../../core/access/site-token.js";
import type { JsonObject } from "./adaptive.js";
import { resolvePublishedUrl, visibleSpaces, type ResolvedUrl } from "./url-lookup.js";

/**
 * POST /v1/urls/published (GitBook's `resolvePublishedContentByUrl`): what a published URL shows,
 * with the site token its reader sends on every later call (core/access/site-token.ts).
 */

const VisitorTypeEnum = builder.enumType("PublishedContentVisitorType", {
  description: "Whether the visitor is a person or an AI agent.",
  values: ["human", "agent"] as const,
});

const VisitorInput = builder.inputType("PublishedContentVisitorInput", {
  description: "Who visits: their visitor token and unsigned claims (adaptive content, visitor-auth sites).",
  fields: (t) => ({
    jwtToken: t.string({
      description: "The visitor's JWT, signed with the site's visitor-auth key (or the member visitor claims of ping).",
    }),
    unsignedClaims: t.field({
      type: "JSON",
      description: "Claims the visitor states, unsigned: `visitor.claims.unsigned.*` of conditions.",
    }),
    type: t.field({ type: VisitorTypeEnum, description: "human (default) or agent." }),
  }),
});

const UNSIGNED_MAX_KEYS = 50;

type Lookup = ResolvedUrl & { apiToken: string };

const PublishedSiteContent = builder.objectRef<Lookup>("PublishedSiteContent").implement({
  description: "What a published URL shows: the site, section and site space it names, and the path of the page below them.",
  fields: (t) => ({
    organization: t.string({ description: "Id of the site's organization.", resolve: (r) => r.organizationId }),
    site: t.string({ description: "Id of the site.", resolve: (r) => r.site.id }),
    siteSection: t.string({
      nullable: true,
      description: "Id of the section (sites with sections).",
      resolve: (r) => r.section?.id ?? null,
    }),
    siteSpace: t.string({ description: "Id of the site space.", resolve: (r) => r.siteSpace.id }),
    space: t.string({ description: "Id of the site space's space.", resolve: (r) => r.space }),
    shareKey: t.string({ nullable: true, description: "The share key the URL carried.", resolve: (r) => r.shareKey }),
    pathname: t.exposeString("pathname", { description: "The page's path below the site space, no leading slash; empty at its root." }),
    basePath: t.exposeString("basePath", { description: "Path of the site space's root, with leading and trailing slash." }),
    siteBasePath: t.exposeString("siteBasePath", {
      description: "Path of the site's root (share key segment included), with leading and trailing slash.",
    }),
    canonicalUrl: t.exposeString("canonicalUrl", { description: "The URL of what was resolved, on the host it was asked for." }),
    complete: t.exposeBoolean("complete", {
      description: "False when the URL stopped at a level (section or site space) with several items and the default was chosen.",
    }),
    apiToken: t.exposeString("apiToken", {
      description:
        "A site token (JWT, HS256) to send as `Authorization: Bearer` for this visitor's reads of the site: the same all UTC day, expiring at 00:05 the next day.",
    }),
  }),
});

builder.queryFields((t) => ({
  publishedContentByUrl: t.field({
    type: PublishedSiteContent,
    description:
      "Resolves a published URL (scheme and port ignored) to its site, section, site space and page path, for the visitor described by `visitor`. " +
      "No token needed; members of the organization may preview unpublished sites. 404 when the URL names no site the caller may see, " +
      "401 for a visitor-auth site without a valid visitor token.",
    args: {
      url: t.arg.string({ required: true, description: "The absolute URL." }),
      visitor: t.arg({ type: VisitorInput }),
      redirectOnError: t.arg.boolean({
        description: "Accepted for GitBook's reader; answers are the same either way (no login redirect here).",
      }),
      cacheBust: t.arg.string({ description: "Accepted and ignored: a site token is minted fresh for each answer already." }),
    },
    resolve: async (_r, args, ctx) => {
      checkLength("url", args.url, 1, 4096);
      const visitor = args.visitor ?? {};
      const unsigned = visitor.unsignedClaims;
      if (unsigned !== undefined && unsigned !== null) {
        if (typeof unsigned !== "object" || Array.isArray(unsigned)) throw badInput("visitor.unsignedClaims must be a JSON object.");
        if (Object.keys(unsigned).length > UNSIGNED_MAX_KEYS)
          throw badInput(`visitor.unsignedClaims has at most ${UNSIGNED_MAX_KEYS} claims.`);
      }
      if (visitor.jwtToken !== undefined && visitor.jwtToken !== null) checkLength("visitor.jwtToken", visitor.jwtToken, 1, 8192);
      const resolved = await resolvePublishedUrl(ctx, args.url, {
        jwtToken: visitor.jwtToken ?? null,
        unsignedClaims: (unsigned as JsonObject | null | undefined) ?? null,
      });
      const apiToken = await mintSiteToken(ctx, {
        organization: resolved.organizationId,
        site: resolved.site.id,
        siteSpace: resolved.siteSpace.id,
        space: resolved.space,
        siteSection: resolved.section?.id ?? null,
        spaces: visibleSpaces(resolved.view),
        shareKey: resolved.shareKey,
        claims: resolved.claims,
        draft: resolved.preview,
        visitorType: visitor.type ?? "human",
      });
      if (!apiToken) throw notFound(`Site "${resolved.site.id}"`);
      return { ...resolved, apiToken };
    },
  }),
}));
