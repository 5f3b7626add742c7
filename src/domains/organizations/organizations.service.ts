import type { Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership, requireOrgRole, viewerMemberWhere } from "../../core/access/access.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, conflict } from "../../core/errors.js";
import { checkLength, checkPattern, checkUri, checkOneOf } from "../../core/validate.js";
import { ROLES, type Role } from "../../core/access/roles.js";
import { newId } from "../../core/ids.js";
import type { PrismaClient } from "../../generated/prisma/client.js";

const HOSTNAME = /^[a-z0-9][a-z0-9-]{1,30}[a-z0-9]$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** The caller's organizations, newest membership first. */
export function listOrganizations(ctx: Context, args: PageArgs) {
  const where = { members: { some: viewerMemberWhere(ctx) } };
  return paginate({
    args,
    where,
    order: [
      ["createdAt", "desc"],
      ["id", "desc"],
    ],
    from: ctx.prisma.organization,
  });
}

/** An organization the caller is a member of; `query` (the Prisma plugin's) includes the relations selected under it. */
export async function getOrganization(
  ctx: Context,
  organizationId: string,
  query: { include?: P.OrganizationInclude; select?: P.OrganizationSelect } = {},
) {
  await requireMembership(ctx, organizationId);
  return ctx.prisma.organization.findUniqueOrThrow({ ...query, where: { id: organizationId } });
}

export interface OrganizationPatch {
  title?: string | null;
  emailDomains?: string[] | null;
  hostname?: string | null;
  defaultRole?: Role | null;
  defaultContent?: { type: string; site: string } | null;
  logo?: string | null;
  sso?: boolean | null;
  ai?: boolean | null;
  inviteLinks?: boolean | null;
}

function required<T>(field: string, value: T | null | undefined): T | undefined {
  if (value === null) throw badInput(`${field} cannot be null.`);
  return value;
}

export async function updateOrganization(ctx: Context, organizationId: string, patch: OrganizationPatch) {
  await requireOrgRole(ctx, organizationId, "admin", "change the organization's settings");
  const data: P.OrganizationUpdateInput = {};
  if (patch.title !== undefined) {
    const title = required("title", patch.title)!.trim();
    checkLength("title", title, 2, 255);
    data.title = title;
  }
  if (patch.emailDomains !== undefined) {
    const domains = required("emailDomains", patch.emailDomains)!.map((d) => d.trim().toLowerCase());
    domains.forEach((d, i) => checkPattern(`emailDomains[${i}]`, d, DOMAIN, "a domain name such as example.com"));
    data.emailDomains = [...new Set(domains)];
  }
  if (patch.hostname !== undefined) {
    if (patch.hostname !== null) {
      checkLength("hostname", patch.hostname, 3, 32);
      checkPattern("hostname", patch.hostname, HOSTNAME, "lowercase letters, digits and inner hyphens");
      const taken = await ctx.prisma.organization.findFirst({
        where: { hostname: patch.hostname, id: { not: organizationId } },
        select: { id: true },
      });
      if (taken) throw conflict(`hostname "${patch.hostname}" is already used by another organization.`);
    }
    data.hostname = patch.hostname;
  }
  if (patch.defaultRole !== undefined) data.defaultRole = checkOneOf("defaultRole", patch.defaultRole, ROLES) ?? null;
  if (patch.defaultContent !== undefined) {
    if (patch.defaultContent === null) data.defaultContent = null as any;
    else {
      if (patch.defaultContent.type !== "site") throw badInput(`defaultContent.type must be "site".`);
      checkLength("defaultContent.site", patch.defaultContent.site, 1, 100);
      data.defaultContent = { type: "site", site: patch.defaultContent.site };
    }
  }
  if (patch.logo !== undefined) {
    checkUri("logo", patch.logo, 2048);
    data.logo = patch.logo;
  }
  for (const flag of ["sso", "ai", "inviteLinks"] as const) {
    if (patch[flag] !== undefined) data[flag] = required(flag, patch[flag]);
  }
  return ctx.prisma.organization.update({ where: { id: organizationId }, data });
}

export async function deleteInviteLink(ctx: Context, organizationId: string, inviteId: string) {
  await requireOrgRole(ctx, organizationId, "admin", "delete invite links");
  await ctx.prisma.inviteLink.deleteMany({ where: { id: inviteId, organizationId } });
  return true;
}

/** Organizations that take members with this email domain, for a caller of that domain or already a member. */
export async function organizationsByEmailDomain(ctx: Context, emailDomain: string) {
  const domain = emailDomain.trim().toLowerCase();
  checkPattern("emailDomain", domain, DOMAIN, "a domain name such as example.com");
  const user = await ctx.prisma.user.findUniqueOrThrow({ where: { id: ctx.viewer.userId }, select: { email: true } });
  const ownDomain = user.email.toLowerCase().endsWith(`@${domain}`);
  return ctx.prisma.organization.findMany({
    where: {
      emailDomains: { has: domain },
      ...(ownDomain ? {} : { members: { some: viewerMemberWhere(ctx) } }),
    },
    orderBy: { createdAt: "asc" },
  });
}

/** Creates an organization with its first admin (used by the admin command line). */
export async function createOrganization(prisma: PrismaClient, title: string, adminUserId: string) {
  checkLength("title", title.trim(), 2, 255);
  return prisma.organization.create({
    data: {
      id: newId("Organization"),
      title: title.trim(),
      members: { create: { userId: adminUserId, role: "admin" } },
    },
  });
}
