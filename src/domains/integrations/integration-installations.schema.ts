import type { GraphQLResolveInfo } from "graphql";
import type { IntegrationInstallation } from "../../generated/prisma/client.js";
import { builder } from "../../core/graph/builder.js";
import type { Context } from "../../core/context.js";
import { organizationById } from "../../core/graph/shared-loaders.js";
import { restName, urlsOf } from "../../core/graph/rest-fields.js";
import { restObject } from "../../rest/rest-object.js";
import { OrganizationRef } from "../organizations/organizations.schema.js";
import * as service from "./integrations.service.js";
import type * as scoped from "./scoped-installations.service.js";
import { installationUrls, scopedInstallationUrls } from "./integrations.urls.js";
import { IntegrationRef, JsonObject, SelectionEnum, SiteIdOrSite, SpaceIdOrSpace } from "./integration-object.schema.js";

/**
 * Where an integration is installed: its installations in organizations, and their installations
 * in spaces and sites (with the space or site itself when read with `expand=true`).
 */

// ─── Installations ─────────────────────────────────────────────────────────────────────────────

const InstallationUrls = urlsOf("IntegrationInstallationUrls", ["location", "app", "publicEndpoint", "publicContentEndpoint"] as const);
const InstallationTarget = builder.objectRef<{ organization: string }>("IntegrationInstallationTarget").implement({
  fields: (t) => ({
    organization: t.exposeString("organization", { description: "Id of the organization the integration is installed in." }),
  }),
});

async function nameOf(ctx: Context, installation: IntegrationInstallation & { integration?: { name: string } }): Promise<string> {
  return installation.integration?.name ?? (await service.integrationById(ctx).load(installation.integrationId))!.name;
}

export const InstallationRef = builder.prismaObject("IntegrationInstallation", {
  description: "An integration installed in an organization.",
  fields: (t) => ({
    id: t.exposeString("id"),
    status: t.exposeString("status", { description: "active." }),
    spaceSelection: t.field({ type: SelectionEnum, extensions: restName("space_selection"), resolve: (i) => i.spaceSelection as any }),
    siteSelection: t.field({ type: SelectionEnum, extensions: restName("site_selection"), resolve: (i) => i.siteSelection as any }),
    spacesCount: t.int({
      extensions: restName("spaces"),
      description: "Number of spaces the installation covers (every live space of the organization when space_selection is all).",
      resolve: (i, _a, ctx) => service.installationSpaceCount(ctx).load(i),
    }),
    configuration: t.field({ type: JsonObject, resolve: (i) => i.configuration ?? {} }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    urls: t.field({ type: InstallationUrls, resolve: async (i, _a, ctx) => installationUrls(ctx, await nameOf(ctx, i), i) }),
    externalIds: t.exposeStringList("externalIds"),
    target: t.field({ type: InstallationTarget, resolve: (i) => ({ organization: i.organizationId }) }),
    integration: t.field({
      type: IntegrationRef,
      extensions: { graphOnly: true },
      resolve: async (i, _a, ctx) => (await service.integrationById(ctx).load(i.integrationId))!,
    }),
    organization: t.field({
      type: OrganizationRef,
      extensions: { graphOnly: true },
      resolve: async (i, _a, ctx) => (await organizationById(ctx).load(i.organizationId))!,
    }),
  }),
});

builder.prismaObjectFields("Organization", (t) => ({
  integrations: t.relatedConnection("integrations", {
    description: "Integrations the organization publishes, by name.",
    cursor: "id",
    totalCount: true,
    query: { orderBy: [{ name: "asc" }, { id: "asc" }] },
  }),
  installations: t.relatedConnection("installations", {
    description: "Integrations installed in the organization, oldest first.",
    cursor: "id",
    totalCount: true,
    query: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
  }),
}));

// ─── Space and site installations ──────────────────────────────────────────────────────────────

const ScopedInstallationUrls = urlsOf("IntegrationInstallationItemUrls", ["location", "publicEndpoint", "publicContentEndpoint"] as const);

/** The installed space or site: its id, or with expand the object as its REST read answers it (its id when the caller cannot read it). */
async function installedTarget(item: scoped.ScopedInstallationItem, ctx: Context, info: GraphQLResolveInfo): Promise<unknown> {
  const id = item.row.targetId;
  if (!item.expand) return id;
  const object =
    item.scope === "space"
      ? await restObject(ctx, info, "space", { spaceId: id })
      : await restObject(ctx, info, "site", { organizationId: item.organizationId, siteId: id });
  return object ?? id;
}

function scopedInstallationType(name: string, scope: scoped.InstallationScope, target: typeof SpaceIdOrSpace) {
  return builder.objectRef<scoped.ScopedInstallationItem>(name).implement({
    description: `An integration installed in a ${scope}.`,
    fields: (t) => ({
      integration: t.string({ description: "Name of the integration.", resolve: (s) => s.integrationName }),
      installation: t.string({ description: "Id of the installation.", resolve: (s) => s.row.installationId }),
      status: t.string({ description: "active.", resolve: (s) => s.row.status }),
      configuration: t.field({ type: JsonObject, resolve: (s) => s.row.configuration ?? {} }),
      externalIds: t.stringList({ resolve: (s) => s.row.externalIds }),
      urls: t.field({
        type: ScopedInstallationUrls,
        resolve: (s, _a, ctx) => scopedInstallationUrls(ctx, s.integrationName, s.row.installationId, scope, s.row.targetId),
      }),
      [scope]: t.field({
        type: target,
        description: `The ${scope}'s id, or the ${scope === "space" ? "Space" : "Site"} object when read with expand=true (and the caller can read the ${scope}).`,
        resolve: (s, _a, ctx, info) => installedTarget(s, ctx, info),
      }),
    }),
  });
}

export const SpaceInstallation = scopedInstallationType("IntegrationSpaceInstallation", "space", SpaceIdOrSpace);
export const SiteInstallation = scopedInstallationType("IntegrationSiteInstallation", "site", SiteIdOrSite);
