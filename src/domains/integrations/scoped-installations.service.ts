import type { Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { AppError, conflict, notFound } from "../../core/errors.js";
import { checkLength } from "../../core/validate.js";
import { announceEvents, prepareEvents, writeEvents, type NewIntegrationEvent } from "../../events/record.js";
import * as v from "./integrations.validate.js";
import {
  accountSchema,
  findInstallation,
  requireInstallationAdmin,
  requireIntegration,
  visibleInstallationWhere,
} from "./integrations.service.js";

// ─── Space and site installations ──────────────────────────────────────────────────────────────

/** Where an installation can be narrowed to: one of its organization's spaces or sites. */
export type InstallationScope = "space" | "site";

/** A space or site installation row (IntegrationSpaceInstallation or IntegrationSiteInstallation). */
export interface ScopedInstallationRow {
  installationId: string;
  status: string;
  configuration: P.JsonValue;
  externalIds: string[];
  createdAt: Date;
  /** The space's or site's id. */
  targetId: string;
}

export interface ScopedInstallationItem {
  scope: InstallationScope;
  row: ScopedInstallationRow;
  integrationName: string;
  /** The installation's organization (the space's or site's). */
  organizationId: string;
  expand: boolean;
}

type Db = Pick<Context["prisma"], "integrationSpaceInstallation" | "integrationSiteInstallation">;

/**
 * What differs between space and site installations: their table (one row per installation and
 * space or site), how a target of the organization is found, the integration targets that allow
 * them, the configuration schema that checks them and the events they record.
 */
interface ScopeDef {
  noun: InstallationScope;
  idField: "spaceId" | "siteId";
  targets: ReadonlySet<string>;
  events: { setup: NewIntegrationEvent["type"]; deleted: NewIntegrationEvent["type"] };
  table(db: Db): any;
  unique(installationId: string, targetId: string): Record<string, unknown>;
  exists(ctx: Context, organizationId: string, targetId: string): Promise<boolean>;
}

const SCOPES: Record<InstallationScope, ScopeDef> = {
  space: {
    noun: "space",
    idField: "spaceId",
    targets: new Set(["all", "space"]),
    events: { setup: "space_installation_setup", deleted: "space_installation_deleted" },
    table: (db) => db.integrationSpaceInstallation,
    unique: (installationId, spaceId) => ({ installationId_spaceId: { installationId, spaceId } }),
    exists: async (ctx, organizationId, id) =>
      !!(await ctx.prisma.space.findFirst({ where: { id, organizationId, deletedAt: null }, select: { id: true } })),
  },
  site: {
    noun: "site",
    idField: "siteId",
    targets: new Set(["all", "site"]),
    events: { setup: "site_installation_setup", deleted: "site_installation_deleted" },
    table: (db) => db.integrationSiteInstallation,
    unique: (installationId, siteId) => ({ installationId_siteId: { installationId, siteId } }),
    exists: async (ctx, organizationId, id) => !!(await ctx.prisma.site.findFirst({ where: { id, organizationId }, select: { id: true } })),
  },
};

/** Holds the installation's row for the rest of the transaction: its space and site installations change one request at a time. */
async function lockInstallation(tx: P.TransactionClient, installationId: string): Promise<void> {
  await tx.$queryRaw`SELECT "id" FROM "IntegrationInstallation" WHERE "id" = ${installationId} FOR NO KEY UPDATE`;
}

function asRow(def: ScopeDef, row: Record<string, any>): ScopedInstallationRow {
  return {
    installationId: row.installationId,
    status: row.status,
    configuration: row.configuration,
    externalIds: row.externalIds,
    createdAt: row.createdAt,
    targetId: row[def.idField],
  };
}

/**
 * Installs the integration in a space or site of the installation's organization, or changes that
 * installation (PUT). A new one, or a change of configuration, records <scope>_installation_setup
 * (with `previous` on a change).
 */
export async function installScoped(
  ctx: Context,
  scope: InstallationScope,
  integrationName: string,
  installationId: string,
  targetId: string,
  input: { configuration?: unknown; externalIds?: string[] | null },
): Promise<ScopedInstallationItem> {
  const def = SCOPES[scope];
  const { integration, installation } = await requireInstallationAdmin(ctx, integrationName, installationId, `install it in ${def.noun}s`);
  if (!def.targets.has(integration.target)) {
    throw conflict(`Integration "${integrationName}" targets ${integration.target}: it cannot be installed in a ${def.noun}.`);
  }
  checkLength(def.idField, targetId, 1, 100);
  if (!(await def.exists(ctx, installation.organizationId, targetId))) {
    throw notFound(`${def.noun === "space" ? "Space" : "Site"} "${targetId}" in organization "${installation.organizationId}"`);
  }
  const unique = def.unique(installationId, targetId);
  const given =
    input.configuration === undefined || input.configuration === null
      ? null
      : v.checkConfiguration("configuration", input.configuration, accountSchema(integration, scope));
  const givenIds = input.externalIds == null ? null : v.checkExternalIds(input.externalIds);
  const { row, prepared } = await ctx.prisma.$transaction(async (tx) => {
    // One change of the installation's spaces and sites at a time: identical PUTs sent at once
    // all succeed, and only the first records an event.
    await lockInstallation(tx, installationId);
    const existing = await def.table(tx).findUnique({ where: unique });
    const configuration = given ?? (existing?.configuration as Record<string, unknown> | undefined) ?? {};
    const externalIds = givenIds ?? existing?.externalIds ?? [];
    const changed = !existing || JSON.stringify(existing.configuration) !== JSON.stringify(configuration) || existing.status !== "active";
    const prepared = prepareEvents(
      changed
        ? [
            {
              integration,
              installation: { id: installation.id, organizationId: installation.organizationId },
              type: def.events.setup,
              fields: {
                [def.idField]: targetId,
                status: "active",
                ...(existing ? { previous: { status: existing.status, configuration: existing.configuration } } : {}),
              },
            },
          ]
        : [],
    );
    const saved = await def.table(tx).upsert({
      where: unique,
      create: { installationId, [def.idField]: targetId, configuration: configuration as P.InputJsonValue, externalIds },
      update: { configuration: configuration as P.InputJsonValue, externalIds, status: "active" },
    });
    await writeEvents(tx, prepared);
    return { row: saved, prepared };
  });
  announceEvents(ctx, prepared);
  return { scope, row: asRow(def, row), integrationName: integration.name, organizationId: installation.organizationId, expand: false };
}

/** Removes the integration from a space or site; records <scope>_installation_deleted. True also when it was not installed there. */
export async function uninstallScoped(
  ctx: Context,
  scope: InstallationScope,
  integrationName: string,
  installationId: string,
  targetId: string,
): Promise<boolean> {
  const def = SCOPES[scope];
  let found;
  try {
    found = await requireInstallationAdmin(ctx, integrationName, installationId, `remove it from ${def.noun}s`);
  } catch (err) {
    if (err instanceof AppError && err.status === 404) return true;
    throw err;
  }
  const { integration, installation } = found;
  const unique = def.unique(installationId, targetId);
  const prepared = await ctx.prisma.$transaction(async (tx) => {
    await lockInstallation(tx, installationId);
    const existing = await def.table(tx).findUnique({ where: unique });
    if (!existing) return null; // not installed there, or removed by a request sent at the same time
    const prepared = prepareEvents([
      {
        integration,
        installation: { id: installation.id, organizationId: installation.organizationId },
        type: def.events.deleted,
        fields: {
          [def.idField]: targetId,
          status: existing.status,
          previous: { status: existing.status, configuration: existing.configuration },
        },
      },
    ]);
    await def.table(tx).deleteMany({ where: { installationId, [def.idField]: targetId } });
    await writeEvents(tx, prepared);
    return prepared;
  });
  if (prepared) announceEvents(ctx, prepared);
  return true;
}

/** Whether the installation is installed in that space or site. */
export async function scopedInstallationExists(
  db: Db,
  scope: InstallationScope,
  installationId: string,
  targetId: string,
): Promise<boolean> {
  const def = SCOPES[scope];
  return !!(await def.table(db).findUnique({ where: def.unique(installationId, targetId), select: { installationId: true } }));
}

export async function getScopedInstallation(
  ctx: Context,
  scope: InstallationScope,
  integrationName: string,
  installationId: string,
  targetId: string,
  expand: boolean,
): Promise<ScopedInstallationItem> {
  const def = SCOPES[scope];
  const found = await requireIntegration(ctx, integrationName);
  checkLength("installationId", installationId, 1, 100);
  checkLength(def.idField, targetId, 1, 100);
  const hit = await findInstallation(ctx, found, installationId);
  const row = hit ? await def.table(ctx.prisma).findUnique({ where: def.unique(installationId, targetId) }) : null;
  if (!hit || !row)
    throw notFound(`${def.noun === "space" ? "Space" : "Site"} "${targetId}" installation of installation "${installationId}"`);
  return { scope, row: asRow(def, row), integrationName: found.integration.name, organizationId: hit.installation.organizationId, expand };
}

/** The spaces (sites) the integration is installed in, among the installations the caller sees; oldest first. */
export async function listScopedInstallations(
  ctx: Context,
  scope: InstallationScope,
  integrationName: string,
  args: PageArgs & { externalId?: string | null; expand?: boolean | null },
) {
  const def = SCOPES[scope];
  const found = await requireIntegration(ctx, integrationName);
  const where: Record<string, unknown> = { installation: visibleInstallationWhere(ctx, found) };
  if (args.externalId != null) {
    checkLength("externalId", args.externalId, 1, v.EXTERNAL_ID_MAX);
    where.externalIds = { has: args.externalId };
  }
  const table = def.table(ctx.prisma);
  const page = await paginate<Record<string, any>>({
    args,
    where,
    order: [
      ["createdAt", "asc"],
      ["installationId", "asc"],
      [def.idField, "asc"],
    ],
    from: table,
    include: { installation: { select: { organizationId: true } } },
  });
  return {
    ...page,
    items: page.items.map((row) => ({
      scope,
      row: asRow(def, row),
      integrationName: found.integration.name,
      organizationId: row.installation.organizationId as string,
      expand: !!args.expand,
    })),
  };
}
