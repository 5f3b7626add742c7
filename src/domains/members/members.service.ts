import { signMemberVisitorClaims } from "../sites/visitor-claims.js";
import type { Member, Prisma as P, Role as DbRole, Team } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership, requireOrgRole, viewerMemberWhere } from "../../core/access/access.js";
import { byKeys, countsByKeys, defineLoader } from "../../core/graph/loaders.js";
import { paginate, paginateArray, type PageArgs } from "../../core/graph/pagination.js";
import { conflict, forbidden, notFound } from "../../core/errors.js";
import type { Role } from "../../core/access/roles.js";
import { effectiveSpaceRole } from "../spaces/spaces.policy.js";
import { canRemoveMember, canViewMember, isLastAdmin } from "./members.policy.js";

export type MemberSort = "joinedAt" | "lastSeenAt" | "displayName";
export type Order = "asc" | "desc";

interface MemberKey {
  organizationId: string;
  userId: string;
}
const keyOf = (m: MemberKey) => `${m.organizationId} ${m.userId}`;
const unique = <T>(values: T[]) => [...new Set(values)];
const collator = new Intl.Collator("en", { sensitivity: "base", numeric: true });

/** Sorts by a text ignoring case and accents, then by a unique id, in the given direction. */
export function sortByText<T>(rows: T[], text: (row: T) => string, id: (row: T) => string, dir: Order = "asc"): T[] {
  const sign = dir === "asc" ? 1 : -1;
  return [...rows].sort((a, b) => sign * (collator.compare(text(a), text(b)) || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)));
}

// ---------------------------------------------------------------------------------------------
// Per-request loaders (nested fields of members and team entries stay batched)

/** A member row by organization and user (null when not a member). */
export const memberByKey = defineLoader<MemberKey, Member | null>(
  async (keys, ctx) => {
    const rows = await ctx.prisma.member.findMany({
      where: { organizationId: { in: unique(keys.map((k) => k.organizationId)) }, userId: { in: unique(keys.map((k) => k.userId)) } },
    });
    return byKeys(keys.map(keyOf), rows, keyOf);
  },
  { cacheKey: keyOf },
);

/** Number of teams of the organization each member belongs to. */
export const memberTeamCount = defineLoader<MemberKey, number>(
  async (keys, ctx) => {
    const counts = new Map<string, number>();
    for (const organizationId of unique(keys.map((k) => k.organizationId))) {
      const userIds = unique(keys.filter((k) => k.organizationId === organizationId).map((k) => k.userId));
      const rows = await ctx.prisma.teamMember.groupBy({
        by: ["userId"],
        where: { userId: { in: userIds }, team: { organizationId } },
        _count: { _all: true },
      });
      for (const row of rows) counts.set(keyOf({ organizationId, userId: row.userId }), row._count._all);
    }
    return countsByKeys(
      keys.map(keyOf),
      [...counts].map(([key, count]) => ({ key, count })),
    );
  },
  { cacheKey: keyOf },
);

/**
 * Explicit grants on the live spaces of their organization, for each member: SpaceAccess rows
 * given to the user or to one of their teams. Two queries for any number of members.
 */
export async function spaceGrantsOf(ctx: Context, members: readonly MemberKey[]): Promise<Map<string, Map<string, Role[]>>> {
  const result = new Map<string, Map<string, Role[]>>(members.map((m) => [keyOf(m), new Map()]));
  if (members.length === 0) return result;
  const organizationIds = unique(members.map((m) => m.organizationId));
  const userIds = unique(members.map((m) => m.userId));
  const teamRows = await ctx.prisma.teamMember.findMany({
    where: { userId: { in: userIds }, team: { organizationId: { in: organizationIds } } },
    select: { userId: true, teamId: true, team: { select: { organizationId: true } } },
  });
  const teamIds = unique(teamRows.map((r) => r.teamId));
  const grants = await ctx.prisma.spaceAccess.findMany({
    where: {
      space: { organizationId: { in: organizationIds }, deletedAt: null },
      OR: [{ userId: { in: userIds } }, ...(teamIds.length ? [{ teamId: { in: teamIds } }] : [])],
    },
    select: { spaceId: true, userId: true, teamId: true, role: true, space: { select: { organizationId: true } } },
  });
  for (const member of members) {
    const teams = new Set(
      teamRows.filter((r) => r.userId === member.userId && r.team.organizationId === member.organizationId).map((r) => r.teamId),
    );
    const bySpace = result.get(keyOf(member))!;
    for (const grant of grants) {
      if (grant.space.organizationId !== member.organizationId) continue;
      if (grant.userId !== member.userId && !(grant.teamId && teams.has(grant.teamId))) continue;
      bySpace.set(grant.spaceId, [...(bySpace.get(grant.spaceId) ?? []), grant.role as Role]);
    }
  }
  return result;
}

/**
 * Number of spaces each member can access (see spaces.policy.ts): every live space of the
 * organization for members with a role, the spaces granted to them for guests, none when disabled.
 */
/**
 * Number of docs sites a member can read: every site of the organization (sites are read by any
 * member, guests included; sites.policy.ts), none for a disabled member.
 */
export const memberSiteCount = defineLoader<Member, number>(
  async (members, ctx) => {
    const organizationIds = unique(members.filter((m) => !m.disabled).map((m) => m.organizationId));
    const rows = organizationIds.length
      ? await ctx.prisma.site.groupBy({
          by: ["organizationId"],
          where: { organizationId: { in: organizationIds } },
          _count: { _all: true },
        })
      : [];
    const perOrg = new Map(rows.map((r) => [r.organizationId, r._count._all]));
    return members.map((m) => (m.disabled ? 0 : (perOrg.get(m.organizationId) ?? 0)));
  },
  { cacheKey: keyOf },
);

export const memberSpaceCount = defineLoader<Member, number>(
  async (members, ctx) => {
    const active = members.filter((m) => !m.disabled);
    const withRole = unique(active.filter((m) => m.role !== null).map((m) => m.organizationId));
    const spaceCounts = withRole.length
      ? await ctx.prisma.space.groupBy({
          by: ["organizationId"],
          where: { organizationId: { in: withRole }, deletedAt: null },
          _count: { _all: true },
        })
      : [];
    const perOrg = new Map(spaceCounts.map((r) => [r.organizationId, r._count._all]));
    const guests = active.filter((m) => m.role === null);
    const grants = await spaceGrantsOf(ctx, guests);
    return members.map((m) => {
      if (m.disabled) return 0;
      if (m.role !== null) return perOrg.get(m.organizationId) ?? 0;
      return grants.get(keyOf(m))?.size ?? 0;
    });
  },
  { cacheKey: keyOf },
);

// ---------------------------------------------------------------------------------------------
// Rules

/** The caller may see this member (members with a role see everyone, guests themselves), and it exists. */
async function requireViewableMember(ctx: Context, organizationId: string, userId: string): Promise<Member> {
  const viewer = await requireMembership(ctx, organizationId);
  if (!canViewMember(viewer, userId)) {
    throw forbidden("Your role in this organization (guest) does not allow you to view other members; it needs read.");
  }
  const member = await memberByKey(ctx).load({ organizationId, userId });
  if (!member) throw notFound(`Member "${userId}" of organization "${organizationId}"`);
  return member;
}

/** Serializes changes to an organization's admins inside a transaction (the last-admin rule). */
async function lockOrganization(tx: P.TransactionClient, organizationId: string) {
  await tx.$queryRaw`SELECT 1 FROM "Organization" WHERE id = ${organizationId} FOR UPDATE`;
}

async function activeAdmins(tx: P.TransactionClient, organizationId: string) {
  return tx.member.count({ where: { organizationId, role: "admin", disabled: false } });
}

// ---------------------------------------------------------------------------------------------
// Operations

export interface MemberListArgs extends PageArgs {
  order?: Order | null;
  role?: Role | null;
  search?: string | null;
  sort?: MemberSort | null;
}

/** The organization's members; `lastSeenAt` sorting lists only members seen at least once. */
export async function listMembers(ctx: Context, organizationId: string, args: MemberListArgs) {
  // Guests (no role) see only themselves: reading the list needs a role.
  await requireOrgRole(ctx, organizationId, "read", "list the organization's members");
  const dir: Order = args.order ?? "desc";
  const sort: MemberSort = args.sort ?? "joinedAt";
  const where: P.MemberWhereInput = { organizationId };
  if (args.role) where.role = args.role as DbRole;
  const search = args.search?.trim();
  if (search) {
    where.user = {
      OR: [{ displayName: { contains: search, mode: "insensitive" } }, { email: { contains: search, mode: "insensitive" } }],
    };
  }
  if (sort === "displayName") {
    // Sorted on the related user's name, ignoring case: page over the ordered ids, then read that page's rows.
    const named = await ctx.prisma.member.findMany({ where, select: { userId: true, user: { select: { displayName: true } } } });
    const ordered = sortByText(
      named,
      (m) => m.user.displayName,
      (m) => m.userId,
      dir,
    );
    const page = paginateArray(ordered, args);
    const rows = await ctx.prisma.member.findMany({ where: { organizationId, userId: { in: page.items.map((r) => r.userId) } } });
    const byUser = new Map(rows.map((r) => [r.userId, r]));
    return { ...page, items: page.items.map((r) => byUser.get(r.userId)).filter((m): m is Member => !!m) };
  }
  if (sort === "lastSeenAt") where.lastSeenAt = { not: null };
  return paginate({
    args,
    where,
    order: [
      [sort, dir],
      ["userId", dir],
    ],
    from: ctx.prisma.member,
  });
}

export function getMember(ctx: Context, organizationId: string, userId: string) {
  return requireViewableMember(ctx, organizationId, userId);
}

/** Removes a member with their team memberships and space grants in the organization. */
export async function removeMember(ctx: Context, organizationId: string, userId: string): Promise<boolean> {
  const viewer = await requireMembership(ctx, organizationId);
  if (!canRemoveMember(viewer, userId)) {
    throw forbidden(
      `Your role in this organization (${viewer.role ?? "guest"}) does not allow you to remove other members; it needs admin.`,
    );
  }
  await ctx.prisma.$transaction(async (tx) => {
    await lockOrganization(tx, organizationId);
    const target = await tx.member.findUnique({ where: { organizationId_userId: { organizationId, userId } } });
    if (!target) return;
    if (target.role === "admin" && isLastAdmin(target, await activeAdmins(tx, organizationId))) {
      throw conflict(`Member "${userId}" is the organization's last admin and cannot be removed: make another member admin first.`);
    }
    await tx.teamMember.deleteMany({ where: { userId, team: { organizationId } } });
    await tx.spaceAccess.deleteMany({ where: { userId, space: { organizationId } } });
    await tx.member.delete({ where: { organizationId_userId: { organizationId, userId } } });
  });
  return true;
}

/** Changes a member's role (null makes them a guest); the last admin keeps theirs. */
export async function updateMember(ctx: Context, organizationId: string, userId: string, patch: { role?: Role | null }) {
  await requireOrgRole(ctx, organizationId, "admin", "change members' roles");
  return ctx.prisma.$transaction(async (tx) => {
    await lockOrganization(tx, organizationId);
    const target = await tx.member.findUnique({ where: { organizationId_userId: { organizationId, userId } } });
    if (!target) throw notFound(`Member "${userId}" of organization "${organizationId}"`);
    if (patch.role === undefined || patch.role === target.role) return target;
    if (isLastAdmin(target, await activeAdmins(tx, organizationId))) {
      throw conflict(`role: member "${userId}" is the organization's last admin and must stay admin; make another member admin first.`);
    }
    return tx.member.update({
      where: { organizationId_userId: { organizationId, userId } },
      data: { role: (patch.role ?? null) as DbRole | null },
    });
  });
}

/**
 * Records that the caller is active in the organization now, and answers the member's visitor
 * claims: a JWT that authenticates them on the organization's visitor-auth sites (sites/visitor-claims.ts).
 */
export async function ping(ctx: Context, organizationId: string): Promise<{ serviceVisitorClaims: string }> {
  const viewer = await requireMembership(ctx, organizationId);
  const member = await ctx.prisma.member.update({
    where: { organizationId_userId: { organizationId, userId: viewer.userId } },
    data: { lastSeenAt: new Date() },
  });
  return { serviceVisitorClaims: await signMemberVisitorClaims(ctx, organizationId, member) };
}

export async function markMemberSso(ctx: Context, organizationId: string, userId: string) {
  await requireOrgRole(ctx, organizationId, "admin", "mark members as SSO members");
  const { count } = await ctx.prisma.member.updateMany({ where: { organizationId, userId }, data: { sso: true } });
  if (count === 0) throw notFound(`Member "${userId}" of organization "${organizationId}"`);
  return ctx.prisma.member.findUniqueOrThrow({ where: { organizationId_userId: { organizationId, userId } } });
}

/** The live spaces a member can access, with their effective role on each (see spaces.policy.ts). */
export async function listMemberSpaces(ctx: Context, organizationId: string, userId: string, args: PageArgs & { order?: Order | null }) {
  const member = await requireViewableMember(ctx, organizationId, userId);
  const dir: Order = args.order ?? "desc";
  const grants = member.disabled ? new Map<string, Role[]>() : (await spaceGrantsOf(ctx, [member])).get(keyOf(member))!;
  const where: P.SpaceWhereInput = { organizationId, deletedAt: null };
  // Members with a role reach every space; guests only what is granted to them; disabled members nothing.
  if (member.disabled || member.role === null) where.id = { in: [...grants.keys()] };
  const page = await paginate({
    args,
    where,
    order: [
      ["createdAt", dir],
      ["id", dir],
    ],
    from: ctx.prisma.space,
  });
  const parentIds = unique(page.items.map((s) => s.parentId).filter((id): id is string => !!id));
  const collections = parentIds.length
    ? await ctx.prisma.collection.findMany({ where: { id: { in: parentIds } }, select: { id: true, defaultLevel: true } })
    : [];
  const levels = new Map(collections.map((c) => [c.id, c.defaultLevel as Role | null]));
  return {
    ...page,
    items: page.items.map((space) => ({
      space,
      permission: effectiveSpaceRole({
        member: { role: member.role as Role | null },
        spaceDefaultLevel: space.defaultLevel as Role | null,
        collectionDefaultLevel: space.parentId ? (levels.get(space.parentId) ?? null) : null,
        grants: grants.get(space.id) ?? [],
      })!,
    })),
  };
}

/** The teams of the organization a member belongs to, with their role in each, by title. */
export async function listMemberTeams(ctx: Context, organizationId: string, userId: string, args: PageArgs & { title?: string | null }) {
  await requireViewableMember(ctx, organizationId, userId);
  const where: P.TeamWhereInput = { organizationId, members: { some: { userId } } };
  const title = args.title?.trim();
  if (title) where.title = { contains: title, mode: "insensitive" };
  const titled = await ctx.prisma.team.findMany({ where, select: { id: true, title: true } });
  const page = await pageOfTeams(
    ctx,
    sortByText(
      titled,
      (t) => t.title,
      (t) => t.id,
    ),
    args,
  );
  const roles = await ctx.prisma.teamMember.findMany({
    where: { userId, teamId: { in: page.items.map((t) => t.id) } },
    select: { teamId: true, role: true },
  });
  const roleOf = new Map(roles.map((r) => [r.teamId, r.role]));
  return { ...page, items: page.items.map((team) => ({ team, member: { role: roleOf.get(team.id) ?? "member" } })) };
}

/** One page of teams in a precomputed order: the page's rows are read with one query. */
export async function pageOfTeams(ctx: Context, ordered: { id: string }[], args: PageArgs) {
  const page = paginateArray(ordered, args);
  const rows = await ctx.prisma.team.findMany({ where: { id: { in: page.items.map((t) => t.id) } } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { ...page, items: page.items.map((t) => byId.get(t.id)).filter((t): t is Team => !!t) };
}

/** Prisma filter: the members a caller may see through the graph (everyone for members with a role, else themself). */
export function visibleMembersWhere(ctx: Context): P.MemberWhereInput {
  return {
    OR: [{ userId: ctx.viewer.userId }, { organization: { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } } }],
  };
}
