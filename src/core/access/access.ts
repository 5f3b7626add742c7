import type { Member, Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../context.js";
import { defineLoader, byKeys } from "../graph/loaders.js";
import { forbidden, notFound, type AppError } from "../errors.js";
import { atLeast, type Role } from "./roles.js";
import { ssoMembershipWhere, ssoRefusal, ssoRefuses } from "./sso-enforce.js";

/**
 * The one door to "the caller's membership in an organization".
 *
 * Every read of a membership — guards, `permissions` objects, space roles, list filters — goes
 * through `membershipAccess` (or the helpers below, built on it), which applies every
 * organization rule in one place:
 * - a disabled member is no member (404, like a stranger);
 * - organization-wide SSO (core/access/sso-enforce.ts): a member marked `sso` of an organization
 *   with `sso: true` may use the membership only with a token issued by that organization's SAML
 *   sign-in; otherwise the membership is refused (403 naming how to sign in).
 * A new organization rule is one change here: in `resolveMemberships` and, for SQL list filters,
 * in `viewerMemberWhere`, which must agree with it.
 *
 * Answers depend on the viewer (user and the SSO provider of their token) and the organization
 * only: `resolveMemberships`, the single batch function behind the per-request loader, answers
 * from the gateway's access cache (core/access/access-cache.ts), keyed so, and reads the rest. Whatever
 * changes an input of these rules calls `ctx.accessCache.changed` once committed.
 */
export interface MembershipAccess {
  /** The caller's membership (not disabled), or null when they are not a member. */
  member: Member | null;
  /** Set when the membership exists but may not be used with this token: why. */
  refused: "sso" | null;
}

const NONE: MembershipAccess = Object.freeze({ member: null, refused: null }) as MembershipAccess;

async function resolveMemberships(ctx: Context, organizationIds: readonly string[]): Promise<MembershipAccess[]> {
  const { userId, ssoProvider } = ctx.viewer;
  if (!userId) return organizationIds.map(() => NONE);
  return ctx.accessCache.memberships(userId, ssoProvider, organizationIds, (missing) => readMemberships(ctx, missing));
}

async function readMemberships(ctx: Context, organizationIds: readonly string[]): Promise<MembershipAccess[]> {
  const { userId } = ctx.viewer;
  const rows = await ctx.prisma.member.findMany({
    where: { userId, organizationId: { in: [...organizationIds] }, disabled: false },
  });
  const members = byKeys(organizationIds, rows, (m) => m.organizationId);
  const refused = await Promise.all(members.map((m) => (m?.sso ? ssoRefuses(ctx, m) : false)));
  return members.map((member, i) => (member ? { member, refused: refused[i] ? "sso" : null } : NONE));
}

const memberships = defineLoader<string, MembershipAccess>((organizationIds, ctx) => resolveMemberships(ctx, organizationIds));

/** The door: the caller's membership in `organizationId` with every organization rule applied. */
export function membershipAccess(ctx: Context, organizationId: string): Promise<MembershipAccess> {
  return memberships(ctx).load(organizationId);
}

/** The caller's usable membership (null: not a member, disabled, or refused by a rule such as SSO). */
export async function viewerMembership(ctx: Context, organizationId: string): Promise<Member | null> {
  const access = await membershipAccess(ctx, organizationId);
  return access.refused ? null : access.member;
}

/** viewerMembership of several organizations, batched into one look-up. */
export function viewerMemberships(ctx: Context, organizationIds: readonly string[]): Promise<(Member | null)[]> {
  return Promise.all(organizationIds.map((id) => viewerMembership(ctx, id)));
}

/**
 * The caller's membership, or an error: 404 when they are not a member (an organization the
 * caller is not in does not exist for them), 403 when a rule refuses it (SSO).
 */
export async function requireMembership(ctx: Context, organizationId: string): Promise<Member> {
  const access = await membershipAccess(ctx, organizationId);
  if (!access.member) throw notFound(`Organization "${organizationId}"`);
  const refusal = membershipRefusal(organizationId, access);
  if (refusal) throw refusal;
  return access.member;
}

/**
 * The 403 to answer when the caller is a member but a rule refuses the membership (null otherwise).
 * Guards of resources inside an organization (a space, a collection, …) throw it before their own
 * 404, so such a member gets the same answer there as on the organization's routes.
 */
export function membershipRefusal(organizationId: string, access: MembershipAccess): AppError | null {
  if (!access.member) return null;
  if (access.refused === "sso") return ssoRefusal(organizationId);
  return null;
}

/** Membership with at least `role`, else 403 naming the action and the role it needs. */
export async function requireOrgRole(ctx: Context, organizationId: string, role: Role, action: string): Promise<Member> {
  const member = await requireMembership(ctx, organizationId);
  if (!atLeast(member.role as Role | null, role)) {
    throw forbidden(`Your role in this organization (${member.role ?? "guest"}) does not allow you to ${action}; it needs ${role}.`);
  }
  return member;
}

/**
 * The same rules as a Prisma filter on Member, for lists filtered in SQL
 * (`organization: { members: { some: viewerMemberWhere(ctx) } }`): the caller's memberships that
 * `viewerMembership` would return. Spread it and add conditions (`{ ...viewerMemberWhere(ctx), role: "admin" }`).
 */
export function viewerMemberWhere(ctx: Context): P.MemberWhereInput {
  return { userId: ctx.viewer.userId, disabled: false, AND: [ssoMembershipWhere(ctx.viewer)] };
}
