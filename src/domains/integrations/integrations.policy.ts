import type { Integration, Member } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { viewerMembership, viewerMemberWhere } from "../../core/access/access.js";
import { defineLoader } from "../../core/graph/loaders.js";
import { atLeast, type Role } from "../../core/access/roles.js";

/**
 * Who may do what with an integration:
 * - read it: everyone authenticated when it is public or unlisted; members of the owner
 *   organization when it is private (404 for anyone else);
 * - list it: public ones for everyone, every visibility for members of the owner;
 * - publish a new version, change development mode, read the signing secret, delete it: admins of
 *   the owner organization (members who are not admins: 403; anyone else: 404, even for a public one);
 * - read and follow its events: members of the owner organization with a role (guests, who reach
 *   only the spaces shared with them: 403; anyone else: 404);
 * - install it: admins of the installing organization; a private integration only into its owner;
 * - manage an installation (PATCH, uninstall, space installations): admins of the installing organization;
 * - see installations: admins of the owner see all of them, everyone else those of the
 *   organizations they are a member of with a role (guests see none).
 */
export const INTEGRATION_PERMISSIONS = ["admin", "install"] as const;

export function isMember(member: Pick<Member, "role"> | null | undefined): boolean {
  return !!member;
}

/** A member who is not a guest: organization-wide things (events, installations) are theirs to read. */
export function hasRole(member: Pick<Member, "role"> | null | undefined): boolean {
  return !!member && member.role !== null;
}

export function isAdmin(member: Pick<Member, "role"> | null | undefined): boolean {
  return !!member && atLeast(member.role as Role | null, "admin");
}

export function canSee(integration: Pick<Integration, "visibility">, ownerMember: Pick<Member, "role"> | null | undefined): boolean {
  return integration.visibility !== "private" || isMember(ownerMember);
}

/** Number of organizations the caller administers (one query per request). */
export const viewerAdminOrganizations = defineLoader<"all", string[]>(async (keys, ctx) => {
  const rows = await ctx.prisma.member.findMany({
    where: { ...viewerMemberWhere(ctx), role: "admin" },
    select: { organizationId: true },
  });
  const ids = rows.map((r) => r.organizationId);
  return keys.map(() => ids);
});

export async function integrationPermissions(ctx: Context, integration: Pick<Integration, "ownerId" | "visibility">) {
  const owner = await viewerMembership(ctx, integration.ownerId);
  const adminOf = await viewerAdminOrganizations(ctx).load("all");
  return {
    admin: isAdmin(owner),
    install: integration.visibility === "private" ? isAdmin(owner) : adminOf.length > 0,
  };
}
