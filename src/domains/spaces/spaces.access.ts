import type { Member, Prisma as P, Space } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { membershipAccess, membershipRefusal, viewerMemberWhere, viewerMemberships } from "../../core/access/access.js";
import { byKeys, defineLoader, defineSharedLoader } from "../../core/graph/loaders.js";
import { conflict, forbidden, notFound } from "../../core/errors.js";
import type { Role } from "../../core/access/roles.js";
import { effectiveSpaceRole, spaceRefusal, type EditMode, type SpaceAction } from "./spaces.policy.js";
import { collectionById } from "../collections/collections.access.js";

/**
 * Who reaches which space, for every domain: the space loaders, the caller's role on a space
 * (organization membership through the door of core/access/access.ts, parent collection, grants), the
 * guards (`requireSpace`, `requireSpaceAction`, …) and the SQL filters of
 * visible spaces. The rules themselves are the predicates of spaces.policy.ts; those of
 * collections (a space's parent) are collections/collections.access.ts.
 * This module imports no other domain's service, so every domain can import it.
 */

export const spaceById = defineSharedLoader<string, Space | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.space.findMany({ where: { id: { in: [...ids] } } }), (s) => s.id),
);

/** The caller's explicit grants on each space: their own and their teams'. */
export const viewerSpaceGrants = defineLoader<string, Role[]>(async (spaceIds, ctx) => {
  const userId = ctx.viewer.userId;
  const rows = await ctx.prisma.spaceAccess.findMany({
    where: { spaceId: { in: [...spaceIds] }, OR: [{ userId }, { team: { members: { some: { userId } } } }] },
    select: { spaceId: true, role: true },
  });
  const grants = new Map<string, Role[]>();
  for (const row of rows) grants.set(row.spaceId, [...(grants.get(row.spaceId) ?? []), row.role as Role]);
  return spaceIds.map((id) => grants.get(id) ?? []);
});

type RoleInputs = Pick<Space, "id" | "organizationId" | "parentId" | "defaultLevel">;

/**
 * The caller's role on each space (see effectiveSpaceRole), for any number of spaces in three
 * batched look-ups at most: memberships, parent collections, grants. Keyed by every input of the
 * rule, so a space changed during the request is not answered from the old values.
 */
export const viewerSpaceRole = defineLoader<RoleInputs, Role | null>(
  async (spaces, ctx) => {
    // A site token (core/access/site-token.ts) reads the spaces its site shows to its visitor, nothing else.
    const content = ctx.viewer.content;
    if (content) return spaces.map((s) => (content.spaces.has(s.id) && s.organizationId === content.organization ? "read" : null));
    const orgIds = [...new Set(spaces.map((s) => s.organizationId))];
    const members = await viewerMemberships(ctx, orgIds);
    const memberOf = new Map<string, { role: Role | null }>();
    members.forEach((m, i) => m && memberOf.set(orgIds[i]!, { role: m.role as Role | null }));
    // Org admins administer every space: only the others need collections and grants.
    const others = spaces.filter((s) => memberOf.has(s.organizationId) && memberOf.get(s.organizationId)!.role !== "admin");
    const parentIds = [...new Set(others.filter((s) => s.parentId && !s.defaultLevel).map((s) => s.parentId!))];
    const [parents, grants] = await Promise.all([
      collectionById(ctx).loadMany(parentIds),
      viewerSpaceGrants(ctx).loadMany(others.map((s) => s.id)),
    ]);
    const parentLevel = new Map<string, Role | null>();
    parents.forEach((c, i) => parentLevel.set(parentIds[i]!, c && !(c instanceof Error) ? (c.defaultLevel as Role | null) : null));
    const grantsOf = new Map<string, Role[]>();
    others.forEach((s, i) => grantsOf.set(s.id, (grants[i] instanceof Error ? [] : grants[i]) as Role[]));
    return spaces.map((s) =>
      effectiveSpaceRole({
        member: memberOf.get(s.organizationId),
        spaceDefaultLevel: s.defaultLevel as Role | null,
        collectionDefaultLevel: s.parentId ? parentLevel.get(s.parentId) : null,
        grants: grantsOf.get(s.id),
      }),
    );
  },
  { cacheKey: (s) => `${s.id}|${s.organizationId}|${s.parentId}|${s.defaultLevel}` },
);

/** Prisma filter for the spaces the caller can see: not deleted, and a role on them (effectiveSpaceRole ≠ null). */
export function visibleSpaceWhere(ctx: Context): P.SpaceWhereInput {
  const { userId } = ctx.viewer;
  const member = viewerMemberWhere(ctx);
  return {
    deletedAt: null,
    OR: [
      // Members who are not guests have a role on every space of their organization…
      { organization: { members: { some: { ...member, role: { not: null } } } } },
      // …guests only on the spaces granted to them or to one of their teams.
      {
        organization: { members: { some: member } },
        access: { some: { OR: [{ userId }, { team: { members: { some: { userId } } } }] } },
      },
    ],
  };
}

/**
 * visibleSpaceWhere for the spaces of one organization, once the caller's usable membership in it
 * is known (through the door of core/access/access.ts, from the access cache on the hot path): the same
 * rule without asking the database for the membership again, so a list is one plain SELECT. A
 * member who is not a guest sees every space that is not deleted; a guest, those granted to them
 * or to one of their teams.
 */
export function visibleSpaceWhereIn(
  ctx: Context,
  organizationId: string,
  member: Pick<Member, "organizationId" | "role">,
): P.SpaceWhereInput {
  if (member.organizationId !== organizationId) throw new Error("visibleSpaceWhereIn: the membership of another organization");
  const { userId } = ctx.viewer;
  if (member.role !== null) return { organizationId, deletedAt: null };
  return { organizationId, deletedAt: null, access: { some: { OR: [{ userId }, { team: { members: { some: { userId } } } }] } } };
}

/** True once a deleted space is past the retention period: it is gone, whether or not the purge ran yet. */
export function isExpired(ctx: Context, space: Pick<Space, "deletedAt">, now = Date.now()): boolean {
  return !!space.deletedAt && now - space.deletedAt.getTime() > ctx.config.spaceRetentionDays * 24 * 60 * 60 * 1000;
}

/**
 * A space the caller has a role on, with that role; 404 for unknown, expired or invisible spaces,
 * 403 when an organization rule (SSO) refuses the caller's membership in its organization — the
 * same answer as the organization's own routes give.
 */
export async function requireSpace(ctx: Context, spaceId: string): Promise<{ space: Space; role: Role }> {
  const space = await spaceById(ctx).load(spaceId);
  if (space && !isExpired(ctx, space)) {
    const refusal = membershipRefusal(space.organizationId, await membershipAccess(ctx, space.organizationId));
    if (refusal) throw refusal;
  }
  const role = space && !isExpired(ctx, space) ? await viewerSpaceRole(ctx).load(space) : null;
  // A site shows no deleted space to its visitors.
  if (!space || !role || (ctx.viewer.content && space.deletedAt)) throw notFound(`Space "${spaceId}"`);
  return { space, role };
}

/**
 * The guard of an action on a space: 403 naming the role it needs or the lock, from the same rule
 * (spaces.policy.ts SPACE_RULES) that fills the space's `permissions`. `what` names the action.
 */
export function requireSpaceAction(space: Pick<Space, "id" | "editMode">, role: Role | null, action: SpaceAction, what: string): void {
  const refusal = spaceRefusal(role, space.editMode as EditMode, action, what);
  if (refusal) throw forbidden(refusal.replace("This space", `Space "${space.id}"`));
}

/** Writes other than restore and delete are refused on a deleted space. */
export function requireNotDeleted(space: Space): void {
  if (space.deletedAt) {
    throw conflict(`Space "${space.id}" is deleted: restore it first (POST /v1/spaces/${space.id}/restore).`);
  }
}

/** The caller must be an admin of the organization named by the body field `organization`. */
export async function requireTargetOrganizationAdmin(ctx: Context, organizationId: string, action: string): Promise<void> {
  const access = await membershipAccess(ctx, organizationId);
  if (!access.member) throw notFound(`organization "${organizationId}" (the target organization)`);
  const refusal = membershipRefusal(organizationId, access);
  if (refusal) throw refusal;
  if (access.member.role !== "admin") {
    throw forbidden(
      `Your role in the target organization "${organizationId}" (${access.member.role ?? "guest"}) does not allow you to ${action}; it needs admin.`,
    );
  }
}
