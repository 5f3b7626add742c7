import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { jsonScalar, stringScalar } from "../../core/graph/scalars.js";
import { listOf, pageArgs } from "../../core/graph/rest-fields.js";
import { argsWithNulls } from "../../core/context.js";
import { invalidScalarValue } from "../../core/errors.js";
import { SiteRef } from "./site-object.schema.js";
import { siteById } from "./sites.service.js";
import * as redirects from "./redirects.service.js";

/** Site redirects on the graph and on /v1 (GitBook's shapes): see redirects.service.ts. */

const SOURCE_SCHEMA = { type: "string", maxLength: redirects.SOURCE_MAX, pattern: redirects.SOURCE_PATTERN.source };

const DESTINATION_SCHEMAS = [
  {
    type: "object",
    properties: { kind: { type: "string", enum: ["site-section"] }, siteSectionId: { type: "string" } },
    required: ["kind", "siteSectionId"],
  },
  {
    type: "object",
    properties: { kind: { type: "string", enum: ["site-space"] }, siteSpaceId: { type: "string" } },
    required: ["kind", "siteSpaceId"],
  },
  {
    type: "object",
    properties: { kind: { type: "string", enum: ["site-page"] }, siteSpaceId: { type: "string" }, pageId: { type: "string" } },
    required: ["kind", "siteSpaceId", "pageId"],
  },
  {
    type: "object",
    properties: { kind: { type: "string", enum: ["external"] }, url: { type: "string", format: "uri" } },
    required: ["kind", "url"],
  },
];

const SiteRedirectDestinationScalar = jsonScalar("SiteRedirectDestination", {
  description:
    "Where a redirect leads: `{kind: site-section, siteSectionId}`, `{kind: site-space, siteSpaceId}`, " +
    "`{kind: site-page, siteSpaceId, pageId}` or `{kind: external, url}`.",
  extensions: { jsonSchema: { oneOf: DESTINATION_SCHEMAS } },
  serialize: (value) => value,
  parseValue: (value) => value,
});

const SiteRedirectDestinationInputScalar = jsonScalar("SiteRedirectDestinationInput", {
  description:
    "Where a redirect leads: a SiteRedirectDestination, or `{kind: path, spaceId, path}` (a page of a space the site shows, by its path; stored as a site-page).",
  // Each kind's fields are checked by the service, which names the one that is wrong.
  extensions: {
    jsonSchema: {
      type: "object",
      properties: { kind: { type: "string", enum: [...redirects.DESTINATION_KINDS, "path"] } },
      required: ["kind"],
    },
  },
  serialize: (value) => value,
  parseValue: (value) => {
    if (!value || typeof value !== "object" || Array.isArray(value))
      throw invalidScalarValue("SiteRedirectDestinationInput", "destination must be an object with a `kind`");
    return value;
  },
});

const SiteRedirectSourceScalar = stringScalar("SiteRedirectSourcePath", {
  description: `A path under the site (at most ${redirects.SOURCE_MAX} characters), \`*\` or \`/*\` at its end for every path it starts.`,
  extensions: { jsonSchema: SOURCE_SCHEMA },
  serialize: (value) => String(value),
  parseValue: (value) => {
    if (typeof value !== "string") throw invalidScalarValue("SiteRedirectSourcePath", "source must be a string");
    return value;
  },
});

const SiteRedirectOrderByEnum = builder.enumType("SiteRedirectOrderBy", {
  description: "createdAt: newest first (default); updatedAt: last changed first; source: by source path.",
  values: redirects.ORDER_BY,
});

export const SiteRedirectRef = builder.objectRef<redirects.RedirectView>("SiteRedirect").implement({
  description: "A redirect of a site: visitors of `source` are sent to `destination`.",
  fields: (t) => ({
    object: t.string({ resolve: () => "site-redirect" }),
    id: t.exposeString("id"),
    source: t.field({ type: SiteRedirectSourceScalar, resolve: (r) => r.source }),
    draft: t.exposeBoolean("draft", { description: "A draft redirect is not live: visitors are not sent anywhere." }),
    captureWildcard: t.exposeBoolean("captureWildcard", {
      description: "With a wildcard source, the part of the path it matched is appended to the destination.",
    }),
    permanent: t.exposeBoolean("permanent", { description: "Served as a permanent redirect (308) to visitors." }),
    destination: t.field({ type: SiteRedirectDestinationScalar, resolve: (r) => r.destination }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

const SiteRedirectList = listOf("SiteRedirectList", SiteRedirectRef);

const SiteRedirectLookup = builder.objectRef<{ redirect: redirects.RedirectView; target: string }>("SiteRedirectLookup").implement({
  description: "The live redirect a source path matches, and where it leads.",
  fields: (t) => ({
    redirect: t.field({ type: SiteRedirectRef, resolve: (l) => l.redirect }),
    target: t.exposeString("target", { description: "Absolute URL of the destination (with the wildcard's match when it captures it)." }),
  }),
});

const SiteRedirectDeletePayload = deletionPayload("SiteRedirectDeletePayload", "site redirect", {
  field: "site",
  type: SiteRef,
  description: "The site it was deleted from.",
  load: (ctx, id) => siteById(ctx).load(id),
});

const siteArgs = builder.args((t) => ({
  organizationId: t.string({ required: true }),
  siteId: t.string({ required: true }),
}));

const flagArgs = builder.args((t) => ({
  captureWildcard: t.boolean({ description: "Append the part of the path a wildcard source matched to the destination." }),
  draft: t.boolean({ description: "A draft redirect is not live." }),
  permanent: t.boolean({ description: "Served as a permanent redirect to visitors." }),
}));

builder.queryFields((t) => ({
  siteRedirects: t.field({
    type: SiteRedirectList,
    description: "Redirects of a site (members of the organization).",
    args: {
      ...siteArgs,
      ...pageArgs,
      search: t.arg.string({ description: "Only redirects whose source contains this, case-insensitively." }),
      draft: t.arg.boolean({ description: "Draft (true) or live (false, the default) redirects." }),
      orderBy: t.arg({ type: SiteRedirectOrderByEnum }),
    },
    resolve: (_r, args, ctx) => redirects.listRedirects(ctx, args.organizationId, args.siteId, args),
  }),
  siteRedirectBySource: t.field({
    type: SiteRedirectLookup,
    description:
      "The live redirect of a path of the site (the exact source, else the longest wildcard source that starts it) and the absolute URL it leads to; " +
      "404 when none. For anyone who may read the site as a visitor.",
    args: {
      ...siteArgs,
      source: t.arg({ type: SiteRedirectSourceScalar, required: true, description: "The path, starting with /." }),
      shareKey: t.arg.string({ description: "Key of a share link of the site (share-link sites)." }),
    },
    resolve: (_r, args, ctx) => redirects.resolveRedirect(ctx, args.organizationId, args.siteId, args as { source: string }),
  }),
}));

builder.mutationFields((t) => ({
  siteRedirectCreate: t.field({
    type: SiteRedirectRef,
    description: "Adds a redirect to a site (needs admin); 409 when the site already has one from that source.",
    args: {
      ...siteArgs,
      source: t.arg({ type: SiteRedirectSourceScalar, required: true }),
      destination: t.arg({ type: SiteRedirectDestinationInputScalar, required: true }),
      ...flagArgs,
    },
    resolve: (_r, args, ctx) => redirects.createRedirect(ctx, args.organizationId, args.siteId, args as unknown as redirects.RedirectInput),
  }),
  siteRedirectUpdate: t.field({
    type: SiteRedirectRef,
    description: "Changes a redirect of a site (needs admin); omitted fields stay as they are.",
    args: {
      ...siteArgs,
      siteRedirectId: t.arg.string({ required: true }),
      source: t.arg({ type: SiteRedirectSourceScalar }),
      destination: t.arg({ type: SiteRedirectDestinationInputScalar }),
      ...flagArgs,
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, siteId, siteRedirectId, ...patch } = argsWithNulls(ctx, rawArgs);
      return redirects.updateRedirect(ctx, organizationId, siteId, siteRedirectId, patch as unknown as redirects.RedirectInput);
    },
  }),
  siteRedirectDelete: t.field({
    type: SiteRedirectDeletePayload,
    description: "Deletes a redirect of a site (needs admin); succeeds also when it did not exist.",
    args: { ...siteArgs, siteRedirectId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) =>
      deleted(redirects.deleteRedirect(ctx, args.organizationId, args.siteId, args.siteRedirectId), args.siteRedirectId, args.siteId),
  }),
}));
