import type { Integration, IntegrationInstallation, Member, Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { membershipAccess, membershipRefusal, requireOrgRole, viewerMembership, viewerMemberWhere } from "../../core/access/access.js";
import { defineLoader, countsByKeys, defineSharedLoader } from "../../core/graph/loaders.js";
import { paginate, paginateArray, type PageArgs } from "../../core/graph/pagination.js";
import { AppError, badInput, conflict, forbidden, notFound } from "../../core/errors.js";
import { checkLength, checkOneOf, checkPattern, checkUri } from "../../core/validate.js";
import { newId } from "../../core/ids.js";
import { checkOutboundUrl } from "../../core/support/outbound.js";
import { newSigningSecret } from "../../events/signing.js";
import { announceEvents, eventTrace, prepareEvents, writeEvents } from "../../events/record.js";
import { EVENT_STATUSES } from "../../events/messages.js";
import { canSee, hasRole, isAdmin, isMember } from "./integrations.policy.js";
import * as v from "./integrations.validate.js";

export const VISIBILITIES = ["public", "private", "unlisted"] as const;
export const TARGETS = ["all", "organization", "space", "site"] as const;
export const SELECTIONS = ["all", "selected"] as const;
export const RUNTIMES = ["v1"] as const;

// ─── Lookups and access ────────────────────────────────────────────────────────────────────────

export interface VisibleIntegration {
  integration: Integration;
  /** The caller's membership in the owner organization (null: not a member). */
  owner: Member | null;
}

/** An integration the caller may see, else 404 (a private one of another organization does not exist for them). */
export async function requireIntegration(ctx: Context, integrationName: string): Promise<VisibleIntegration> {
  v.checkName("integrationName", integrationName);
  const integration = await integrationByName(ctx).load(integrationName);
  const owner = integration ? await viewerMembership(ctx, integration.ownerId) : null;
  if (!integration || !canSee(integration, owner)) throw notFound(`Integration "${integrationName}"`);
  return { integration, owner };
}

/**
 * The integration for an admin of its owner organization. Callers outside the owner organization
 * get 404 (it is not theirs to manage, even when public), members who are not admins 403.
 */
export async function requireIntegrationAdmin(ctx: Context, integrationName: string, action: string): Promise<VisibleIntegration> {
  const found = await requireIntegration(ctx, integrationName);
  if (!isMember(found.owner)) throw notFound(`Integration "${integrationName}" of your organizations`);
  if (!isAdmin(found.owner)) {
    throw forbidden(`Only admins of the organization that owns integration "${integrationName}" may ${action}.`);
  }
  return found;
}

/** For deletes: null when the integration does not exist (204), else as requireIntegrationAdmin (404, 403). */
async function integrationToRemove(ctx: Context, integrationName: string, action: string): Promise<Integration | null> {
  v.checkName("integrationName", integrationName);
  const integration = await ctx.prisma.integration.findUnique({ where: { name: integrationName } });
  if (!integration) return null;
  return (await requireIntegrationAdmin(ctx, integrationName, action)).integration;
}

/** Members of the owner organization with a role read its events; guests get 403; for anyone else they do not exist (404). */
async function requireEventReader(ctx: Context, integrationName: string): Promise<Integration> {
  const { integration, owner } = await requireIntegration(ctx, integrationName);
  if (!isMember(owner)) throw notFound(`Events of integration "${integrationName}"`);
  if (!hasRole(owner))
    throw forbidden(`Guests cannot read the events of integration "${integrationName}": it needs a role in its organization.`);
  return integration;
}

export const integrationByName = defineSharedLoader<string, Integration | null>(async (names, prisma) => {
  const rows = await prisma.integration.findMany({ where: { name: { in: [...names] } } });
  const map = new Map(rows.map((r) => [r.name, r]));
  return names.map((n) => map.get(n) ?? null);
});

export const integrationById = defineSharedLoader<string, Integration | null>(async (ids, prisma) => {
  const rows = await prisma.integration.findMany({ where: { id: { in: [...ids] } } });
  const map = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => map.get(id) ?? null);
});

/** An organization named by id or by hostname (subdomain) that the caller is a member of; 404 otherwise. */
export async function resolveOrganization(ctx: Context, ref: string, field: string) {
  checkLength(field, ref, 1, 100);
  const org = await ctx.prisma.organization.findFirst({
    where: { OR: [{ id: ref }, { hostname: ref.toLowerCase() }] },
    select: { id: true },
  });
  const access = org ? await membershipAccess(ctx, org.id) : null;
  if (!org || !access?.member) throw notFound(`Organization "${ref}" (${field})`);
  const refusal = membershipRefusal(org.id, access);
  if (refusal) throw refusal;
  return org.id;
}

// ─── Integrations ──────────────────────────────────────────────────────────────────────────────

export interface PublishInput {
  runtime?: string | null;
  icon?: string | null;
  title?: string | null;
  description?: string | null;
  summary?: string | null;
  previewImages?: string[] | null;
  visibility?: (typeof VISIBILITIES)[number] | null;
  target?: (typeof TARGETS)[number] | null;
  scopes?: string[] | null;
  categories?: string[] | null;
  blocks?: v.BlockInput[] | null;
  contentSources?: v.ContentSourceInput[] | null;
  externalLinks?: { url: string; label: string }[] | null;
  configurations?: Partial<Record<"account" | "space" | "site", v.ConfigurationSchemaInput | null>> | null;
  script?: string | null;
  organization?: string | null;
  secrets?: unknown;
  contentSecurityPolicy?: string | null;
}

/** The stored values of a publish request; an omitted field keeps its value, null resets it to its default. */
function publishData(input: PublishInput, creating: boolean): P.IntegrationUncheckedUpdateInput {
  const data: P.IntegrationUncheckedUpdateInput = {};
  const has = (k: keyof PublishInput) => input[k] !== undefined;
  if (has("runtime")) data.runtime = checkOneOf("runtime", input.runtime, RUNTIMES) ?? "v1";
  if (has("title") || creating) {
    const title = input.title?.trim();
    if (!title) throw badInput(creating ? "title is required to publish a new integration." : "title cannot be null or blank.");
    checkLength("title", title, 1, v.TITLE_MAX);
    data.title = title;
  }
  if (has("description")) {
    checkLength("description", input.description, 0, v.DESCRIPTION_MAX);
    data.description = input.description ?? "";
  }
  if (has("summary")) {
    checkLength("summary", input.summary, 0, v.SUMMARY_MAX);
    data.summary = input.summary ?? null;
  }
  if (has("icon")) data.icon = input.icon == null ? null : v.checkBase64("icon", input.icon);
  if (has("previewImages")) {
    const images = input.previewImages ?? [];
    if (images.length > 10) throw badInput(`previewImages must have at most 10 items (got ${images.length}).`);
    data.previewImages = images.map((img, i) => v.checkBase64(`previewImages[${i}]`, img));
  }
  if (has("visibility")) data.visibility = checkOneOf("visibility", input.visibility, VISIBILITIES) ?? "private";
  if (has("target")) data.target = checkOneOf("target", input.target, TARGETS) ?? "all";
  if (has("scopes")) data.scopes = v.checkScopes(input.scopes ?? []);
  if (has("categories")) data.categories = v.checkCategories(input.categories ?? []);
  if (has("blocks")) data.blocks = v.checkBlocks(input.blocks ?? []) as P.InputJsonValue;
  if (has("contentSources")) data.contentSources = v.checkContentSources(input.contentSources ?? []) as P.InputJsonValue;
  if (has("externalLinks")) data.externalLinks = v.checkExternalLinks(input.externalLinks ?? []) as P.InputJsonValue;
  if (has("configurations")) data.configurations = v.checkConfigurations(input.configurations ?? {}) as P.InputJsonValue;
  if (has("script")) {
    if (input.script != null && Buffer.byteLength(input.script) > v.SCRIPT_MAX)
      throw badInput(`script must be at most ${v.SCRIPT_MAX} bytes.`);
    data.script = input.script ?? null;
  }
  if (has("secrets")) data.secrets = (input.secrets == null ? {} : v.checkSecrets(input.secrets)) as P.InputJsonValue;
  if (has("contentSecurityPolicy"))
    data.contentSecurityPolicy = input.contentSecurityPolicy == null ? null : v.checkContentSecurityPolicy(input.contentSecurityPolicy);
  return data;
}

/**
 * Publishes an integration: the first publish creates it (version 1) for the organization named
 * in `organization`; each later one stores a new version (version + 1). Only admins of the
 * owning organization publish.
 */
export async function publishIntegration(ctx: Context, integrationName: string, input: PublishInput, again = false): Promise<Integration> {
  v.checkName("integrationName", integrationName);
  const existing = await ctx.prisma.integration.findUnique({ where: { name: integrationName } });
  if (existing) {
    const owner = await viewerMembership(ctx, existing.ownerId);
    if (!isMember(owner)) throw notFound(`Integration "${integrationName}" of your organizations`);
    if (!isAdmin(owner))
      throw forbidden(`Only admins of the organization that owns integration "${integrationName}" may publish new versions of it.`);
    if (input.organization != null) {
      const orgId = await resolveOrganization(ctx, input.organization, "organization");
      if (orgId !== existing.ownerId) {
        throw badInput(
          `organization: integration "${integrationName}" belongs to organization "${existing.ownerId}"; publishing cannot move it.`,
        );
      }
    }
    const data = publishData(input, false);
    ctx.response.status = 200; // a new version of an existing integration; creating answers 201
    return ctx.prisma.integration.update({ where: { id: existing.id }, data: { ...data, version: { increment: 1 } } });
  }
  if (input.organization == null)
    throw badInput("organization is required to publish a new integration (the id or subdomain of the publishing organization).");
  const ownerId = await resolveOrganization(ctx, input.organization, "organization");
  await requireOrgRole(ctx, ownerId, "admin", "publish integrations");
  const data = publishData(input, true) as P.IntegrationUncheckedCreateInput;
  try {
    return await ctx.prisma.integration.create({
      data: { ...data, id: newId("Integration"), name: integrationName, version: 1, ownerId, signingSecret: newSigningSecret() },
    });
  } catch (err) {
    // Published by another request at the same time: this one becomes its next version (or the
    // refusal an existing integration gets, when it belongs to another organization).
    if ((err as any)?.code === "P2002" && !again) return publishIntegration(ctx, integrationName, input, true);
    if ((err as any)?.code === "P2002")
      throw conflict(`An integration named "${integrationName}" was published at the same time; publish again to add a version.`);
    throw err;
  }
}

export async function getIntegration(ctx: Context, integrationName: string): Promise<Integration> {
  return (await requireIntegration(ctx, integrationName)).integration;
}

export async function deleteIntegration(ctx: Context, integrationName: string): Promise<boolean> {
  const integration = await integrationToRemove(ctx, integrationName, "delete it");
  if (integration) await ctx.prisma.integration.deleteMany({ where: { id: integration.id } });
  return true;
}

export interface IntegrationFilters extends PageArgs {
  search?: string | null;
  category?: string | null;
  blockDomain?: string | null;
  hasBlocks?: boolean | null;
  hasContentSources?: boolean | null;
  owner?: string | null;
  scope?: string | null;
  target?: (typeof TARGETS)[number] | null;
}

/**
 * Integrations the caller can list: public ones, and every one owned by an organization the
 * caller is a member of (unlisted integrations of other organizations are reachable by name
 * only). Ordered by name.
 */
export async function listIntegrations(ctx: Context, f: IntegrationFilters) {
  const and: P.IntegrationWhereInput[] = [{ OR: [{ visibility: "public" }, { owner: { members: { some: viewerMemberWhere(ctx) } } }] }];
  if (f.search != null) {
    checkLength("search", f.search, 1, 512);
    and.push({ OR: [{ name: { contains: f.search, mode: "insensitive" } }, { title: { contains: f.search, mode: "insensitive" } }] });
  }
  if (f.category != null) and.push({ categories: { has: f.category } });
  if (f.scope != null) and.push({ scopes: { has: f.scope } });
  if (f.target != null) and.push({ target: { in: f.target === "all" ? ["all"] : ["all", checkOneOf("target", f.target, TARGETS)!] } });
  if (f.owner != null) {
    checkLength("owner", f.owner, 1, 100);
    const org = await ctx.prisma.organization.findFirst({
      where: { OR: [{ id: f.owner }, { hostname: f.owner.toLowerCase() }] },
      select: { id: true },
    });
    and.push({ ownerId: org?.id ?? f.owner });
  }
  if (f.blockDomain != null) {
    checkLength("blockDomain", f.blockDomain, 1, 253);
    checkPattern("blockDomain", f.blockDomain, v.NAME, "^[a-zA-Z0-9-_.]+$");
  }
  const where: P.IntegrationWhereInput = { AND: and };
  const needsJson = f.blockDomain != null || f.hasBlocks != null || f.hasContentSources != null;
  if (!needsJson) {
    return paginate({
      args: f,
      where,
      order: [["name", "asc"]],
      from: ctx.prisma.integration,
    });
  }
  // Filters on the block and content source lists look into JSON: they run over the rows the other filters kept.
  const domain = f.blockDomain?.toLowerCase();
  const rows = (await ctx.prisma.integration.findMany({ where, orderBy: { name: "asc" } })).filter((row) => {
    const blocks = (row.blocks as { urlUnfurl?: string[] }[]) ?? [];
    const sources = (row.contentSources as unknown[]) ?? [];
    if (f.hasBlocks != null && blocks.length > 0 !== f.hasBlocks) return false;
    if (f.hasContentSources != null && sources.length > 0 !== f.hasContentSources) return false;
    if (domain) {
      const hosts = blocks.flatMap((b) => (b.urlUnfurl ?? []).map((u) => v.unfurlHost(u)).filter(Boolean) as string[]);
      if (!hosts.some((h) => h === domain || h.endsWith(`.${domain}`))) return false;
    }
    return true;
  });
  return paginateArray(rows, f);
}

export async function setDevelopmentMode(ctx: Context, integrationName: string, tunnelUrl: string, all: boolean | null | undefined) {
  const { integration } = await requireIntegrationAdmin(ctx, integrationName, "change its development mode");
  checkUri("tunnelUrl", tunnelUrl);
  checkOutboundUrl(ctx.config, "tunnelUrl", tunnelUrl);
  await ctx.prisma.integration.update({ where: { id: integration.id }, data: { devTunnelUrl: tunnelUrl, devAll: all ?? false } });
  return true;
}

export async function disableDevelopmentMode(ctx: Context, integrationName: string) {
  const integration = await integrationToRemove(ctx, integrationName, "change its development mode");
  if (integration) await ctx.prisma.integration.update({ where: { id: integration.id }, data: { devTunnelUrl: null, devAll: false } });
  return true;
}

export async function signingSecret(ctx: Context, integrationName: string) {
  const { integration } = await requireIntegrationAdmin(ctx, integrationName, "read its signing secret");
  return { signingSecret: integration.signingSecret };
}

export async function rotateSigningSecret(ctx: Context, integrationName: string) {
  const { integration } = await requireIntegrationAdmin(ctx, integrationName, "rotate its signing secret");
  const updated = await ctx.prisma.integration.update({ where: { id: integration.id }, data: { signingSecret: newSigningSecret() } });
  return { signingSecret: updated.signingSecret };
}

// ─── Installations ─────────────────────────────────────────────────────────────────────────────

/** Installations the caller sees: all for admins of the owner, else those of their organizations. */
export function visibleInstallationWhere(ctx: Context, found: VisibleIntegration): P.IntegrationInstallationWhereInput {
  const where: P.IntegrationInstallationWhereInput = { integrationId: found.integration.id };
  if (!isAdmin(found.owner)) where.organization = { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } };
  return where;
}

export type InstallationView = IntegrationInstallation & { integration: Pick<Integration, "name"> };

const withName = { integration: { select: { name: true } } } as const;

export async function installIntegration(ctx: Context, integrationName: string, organization: string): Promise<InstallationView> {
  const { integration } = await requireIntegration(ctx, integrationName);
  const organizationId = await resolveOrganization(ctx, organization, "organization");
  await requireOrgRole(ctx, organizationId, "admin", "install integrations");
  if (integration.visibility === "private" && organizationId !== integration.ownerId) {
    throw forbidden(`Integration "${integrationName}" is private: it can be installed only in the organization that owns it.`);
  }
  const existing = await ctx.prisma.integrationInstallation.findUnique({
    where: { integrationId_organizationId: { integrationId: integration.id, organizationId } },
  });
  if (existing) {
    throw conflict(
      `Integration "${integrationName}" is already installed in organization "${organizationId}" (installation ${existing.id}); change it with PATCH.`,
    );
  }
  const id = newId("IntegrationInstallation");
  const prepared = prepareEvents([
    { integration, installation: { id, organizationId }, type: "installation_setup", fields: { status: "active" } },
  ]);
  try {
    const installation = await ctx.prisma.$transaction(async (tx) => {
      const created = await tx.integrationInstallation.create({
        data: { id, integrationId: integration.id, organizationId },
        include: withName,
      });
      await writeEvents(tx, prepared);
      return created;
    });
    announceEvents(ctx, prepared);
    return installation;
  } catch (err) {
    if ((err as any)?.code === "P2002")
      throw conflict(`Integration "${integrationName}" is already installed in organization "${organizationId}".`);
    throw err;
  }
}

export async function listInstallations(ctx: Context, integrationName: string, args: PageArgs & { externalId?: string | null }) {
  const found = await requireIntegration(ctx, integrationName);
  const where = visibleInstallationWhere(ctx, found);
  if (args.externalId != null) {
    checkLength("externalId", args.externalId, 1, v.EXTERNAL_ID_MAX);
    where.externalIds = { has: args.externalId };
  }
  return paginate({
    args,
    where,
    order: [
      ["createdAt", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.integrationInstallation,
    include: withName,
  });
}

export async function findInstallation(ctx: Context, found: VisibleIntegration, installationId: string) {
  checkLength("installationId", installationId, 1, 100);
  const installation = await ctx.prisma.integrationInstallation.findFirst({
    where: { id: installationId, integrationId: found.integration.id },
    include: withName,
  });
  if (!installation) return null;
  const member = await viewerMembership(ctx, installation.organizationId);
  if (!hasRole(member) && !isAdmin(found.owner)) return null;
  return { installation, member };
}

export async function getInstallation(ctx: Context, integrationName: string, installationId: string): Promise<InstallationView> {
  const found = await requireIntegration(ctx, integrationName);
  const hit = await findInstallation(ctx, found, installationId);
  if (!hit) throw notFound(`Installation "${installationId}" of integration "${integrationName}"`);
  return hit.installation;
}

export async function requireInstallationAdmin(ctx: Context, integrationName: string, installationId: string, action: string) {
  const found = await requireIntegration(ctx, integrationName);
  const hit = await findInstallation(ctx, found, installationId);
  if (!hit) throw notFound(`Installation "${installationId}" of integration "${integrationName}"`);
  if (!isAdmin(hit.member))
    throw forbidden(`Only admins of the organization where integration "${integrationName}" is installed may ${action}.`);
  return { ...found, installation: hit.installation };
}

export interface InstallationPatch {
  configuration?: unknown;
  space_selection?: (typeof SELECTIONS)[number] | null;
  site_selection?: (typeof SELECTIONS)[number] | null;
  externalIds?: string[] | null;
}

export function accountSchema(integration: Integration, key: "account" | "space" | "site") {
  return ((integration.configurations ?? {}) as Record<string, any>)[key] ?? null;
}

/** Changes an installation; a change of its configuration or of its space or site selection records an installation_setup event with the previous state. */
export async function updateInstallation(
  ctx: Context,
  integrationName: string,
  installationId: string,
  patch: InstallationPatch,
): Promise<InstallationView> {
  const { integration, installation } = await requireInstallationAdmin(ctx, integrationName, installationId, "change the installation");
  const data: P.IntegrationInstallationUpdateInput = {};
  if (patch.configuration !== undefined) {
    if (patch.configuration === null) throw badInput("configuration cannot be null; send {} to clear it.");
    data.configuration = v.checkConfiguration(
      "configuration",
      patch.configuration,
      accountSchema(integration, "account"),
    ) as P.InputJsonValue;
  }
  if (patch.space_selection !== undefined) {
    if (patch.space_selection === null) throw badInput("space_selection cannot be null.");
    data.spaceSelection = checkOneOf("space_selection", patch.space_selection, SELECTIONS)!;
  }
  if (patch.site_selection !== undefined) {
    if (patch.site_selection === null) throw badInput("site_selection cannot be null.");
    data.siteSelection = checkOneOf("site_selection", patch.site_selection, SELECTIONS)!;
  }
  if (patch.externalIds !== undefined) data.externalIds = v.checkExternalIds(patch.externalIds ?? []);
  const setupChanged =
    (data.configuration !== undefined && JSON.stringify(data.configuration) !== JSON.stringify(installation.configuration)) ||
    (data.spaceSelection !== undefined && data.spaceSelection !== installation.spaceSelection) ||
    (data.siteSelection !== undefined && data.siteSelection !== installation.siteSelection);
  const prepared = prepareEvents(
    setupChanged
      ? [
          {
            integration,
            installation: { id: installation.id, organizationId: installation.organizationId },
            type: "installation_setup",
            fields: { status: installation.status, previous: { status: installation.status, configuration: installation.configuration } },
          },
        ]
      : [],
  );
  const updated = await ctx.prisma.$transaction(async (tx) => {
    const row = await tx.integrationInstallation.update({ where: { id: installation.id }, data, include: withName });
    await writeEvents(tx, prepared);
    return row;
  });
  announceEvents(ctx, prepared);
  return updated;
}

/** Removes an installation (and its space and site installations); records installation_deleted. True also when it did not exist. */
export async function uninstall(ctx: Context, integrationName: string, installationId: string): Promise<boolean> {
  let found;
  try {
    found = await requireInstallationAdmin(ctx, integrationName, installationId, "uninstall it");
  } catch (err) {
    if (err instanceof AppError && err.status === 404) return true;
    throw err;
  }
  const { integration, installation } = found;
  const prepared = prepareEvents([
    {
      integration,
      installation: { id: installation.id, organizationId: installation.organizationId },
      type: "installation_deleted",
      fields: { status: installation.status, organizationId: installation.organizationId },
    },
  ]);
  await ctx.prisma.$transaction(async (tx) => {
    await writeEvents(tx, prepared);
    await tx.integrationInstallation.deleteMany({ where: { id: installation.id } });
  });
  announceEvents(ctx, prepared);
  return true;
}

/** Number of spaces each installation covers: every live space of its organization with selection `all`, else its installed spaces. */
export const installationSpaceCount = defineLoader<IntegrationInstallation, number>(
  async (installations, ctx) => {
    const all = installations.filter((i) => i.spaceSelection === "all");
    const selected = installations.filter((i) => i.spaceSelection !== "all");
    const [orgCounts, rowCounts] = await Promise.all([
      all.length
        ? ctx.prisma.space.groupBy({
            by: ["organizationId"],
            where: { organizationId: { in: [...new Set(all.map((i) => i.organizationId))] }, deletedAt: null },
            _count: { _all: true },
          })
        : [],
      selected.length
        ? ctx.prisma.integrationSpaceInstallation.groupBy({
            by: ["installationId"],
            where: { installationId: { in: selected.map((i) => i.id) } },
            _count: { _all: true },
          })
        : [],
    ]);
    const byOrg = new Map(orgCounts.map((r) => [r.organizationId, r._count._all]));
    const byInstallation = countsByKeys(
      installations.map((i) => i.id),
      rowCounts.map((r) => ({ key: r.installationId, count: r._count._all })),
    );
    return installations.map((i, n) => (i.spaceSelection === "all" ? (byOrg.get(i.organizationId) ?? 0) : byInstallation[n]!));
  },
  { cacheKey: (i) => i.id },
);

// ─── Events ────────────────────────────────────────────────────────────────────────────────────

export async function listEvents(
  ctx: Context,
  integrationName: string,
  args: PageArgs & { type?: string | null; status?: string | null; installationId?: string | null },
) {
  const integration = await requireEventReader(ctx, integrationName);
  const where: P.IntegrationEventWhereInput = { integrationId: integration.id };
  if (args.type != null) {
    checkLength("type", args.type, 1, 100);
    where.type = args.type;
  }
  if (args.status != null) where.status = checkOneOf("status", args.status, EVENT_STATUSES);
  if (args.installationId != null) where.installationId = args.installationId;
  return paginate({
    args,
    where,
    order: [
      ["createdAt", "desc"],
      ["id", "desc"],
    ],
    from: ctx.prisma.integrationEvent,
  });
}

export async function getEvent(ctx: Context, integrationName: string, eventId: string) {
  const integration = await requireEventReader(ctx, integrationName);
  checkLength("eventId", eventId, 1, 100);
  const event = await ctx.prisma.integrationEvent.findFirst({
    where: { id: eventId, integrationId: integration.id },
    include: { logs: { orderBy: [{ timestamp: "asc" }, { id: "asc" }] } },
  });
  if (!event) throw notFound(`Event "${eventId}" of integration "${integrationName}"`);
  const { logs, ...record } = event;
  return { event: record, trace: { logs: eventTrace(record, logs) } };
}

/** Subscriptions: integration events need membership of the owner; an organization's events need its admins. */
export async function requireIntegrationEventsSubscriber(ctx: Context, integrationName: string): Promise<Integration> {
  return requireEventReader(ctx, integrationName);
}

export async function requireOrganizationEventsSubscriber(ctx: Context, organizationId: string): Promise<void> {
  await requireOrgRole(ctx, organizationId, "admin", "follow the integration events of its installations");
}
