import type { Member } from "../generated/prisma/client.js";
import type { Context } from "./context.js";
import { defineLoader, byKeys } from "./loaders.js";
import { forbidden, notFound } from "./errors.js";
import { atLeast, type Role } from "./roles.js";
import { requireSsoSignIn } from "../domains/sso/sso.enforce.js";

/** The caller's own membership in each organization (null when not a member or disabled). */
export const viewerMembership = defineLoader<string, Member | null>(async (orgIds, ctx) =>
  byKeys(
    orgIds,
    await ctx.prisma.member.findMany({
      where: { userId: ctx.viewer.userId, organizationId: { in: [...orgIds] }, disabled: false },
    }),
    (m) => m.organizationId,
  ),
);

/** The caller's membership, or 404: an organization the caller is not in does not exist for them. */
export async function requireMembership(ctx: Context, organizationId: string): Promise<Member> {
  const member = await viewerMembership(ctx).load(organizationId);
  if (!member) throw notFound(`Organization "${organizationId}"`);
  await requireSsoSignIn(ctx, member); // organization-wide SSO: see domains/sso/sso.enforce.ts
  return member;
}

/** Membership with at least `role`, else 403 naming the action and the role it needs. */
export async function requireOrgRole(ctx: Context, organizationId: string, role: Role, action: string): Promise<Member> {
  const member = await requireMembership(ctx, organizationId);
  if (!atLeast(member.role as Role | null, role)) {
    throw forbidden(`Your role in this organization (${member.role ?? "guest"}) does not allow you to ${action}; it needs ${role}.`);
  }
  return member;
}
