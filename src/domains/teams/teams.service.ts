import type { Member, Prisma as P, Team, TeamMember } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership, requireOrgRole, viewerMembership, viewerMemberWhere } from "../../core/access/access.js";
import { byKeys, countsByKeys, defineLoader, defineSharedLoader } from "../../core/graph/loaders.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, forbidden, notFound } from "../../core/errors.js";
import { checkLength, requiredText } from "../../core/validate.js";
import { TEAM_ROLES, type TeamRole } from "../../core/access/roles.js";
import { newId } from "../../core/ids.js";
import { memberByKey, pageOfTeams, sortByText } from "../members/members.service.js";
import { canViewMember } from "../members/members.policy.js";
import { teamPermissions } from "./teams.policy.js";

export const TITLE_MAX = 100;
const unique = <T>(values: T[]) => [...new Set(values)];
const quoted = (values: string[]) => values.map((v) => JSON.stringify(v)).join(", ");

// ---------------------------------------------------------------------------------------------
// Per-request loaders

/** The caller's role in each team (null when not in it). */
export const viewerTeamRole = defineLoader<string, TeamRole | null>(async (teamIds, ctx) => {
  const rows = await ctx.prisma.teamMember.findMany({
    where: { userId: ctx.viewer.userId, teamId: { in: [...teamIds] } },
    select: { teamId: true, role: true },
  });
  return byKeys(teamIds, rows, (r) => r.teamId).map((r) => (r?.role as TeamRole | undefined) ?? null);
});

export const teamMemberCount = defineSharedLoader<string, number>(async (teamIds, prisma) => {
  const rows = await prisma.teamMember.groupBy({ by: ["teamId"], where: { teamId: { in: [...teamIds] } }, _count: { _all: true } });
  return countsByKeys(
    teamIds,
    rows.map((r) => ({ key: r.teamId, count: r._count._all })),
  );
});

/** Spaces the team is granted access to (SpaceAccess rows of the team on live spaces). */
export const teamSpaceCount = defineSharedLoader<string, number>(async (teamIds, prisma) => {
  const rows = await prisma.spaceAccess.groupBy({
    by: ["teamId"],
    where: { teamId: { in: [...teamIds] }, space: { deletedAt: null } },
    _count: { _all: true },
  });
  return countsByKeys(
    teamIds,
    rows.map((r) => ({ key: r.teamId!, count: r._count._all })),
  );
});

export async function permissionsOfTeam(ctx: Context, team: Pick<Team, "id" | "organizationId">) {
  const [viewer, role] = await Promise.all([viewerMembership(ctx, team.organizationId), viewerTeamRole(ctx).load(team.id)]);
  return teamPermissions(viewer, role);
}

// ---------------------------------------------------------------------------------------------
// Rules

async function findTeam(ctx: Context, organizationId: string, teamId: string) {
  return ctx.prisma.team.findFirst({ where: { id: teamId, organizationId } });
}

/** The team, when the caller may see it: 404 for strangers and unknown teams, 403 for other guests. */
async function requireViewableTeam(ctx: Context, organizationId: string, teamId: string) {
  const viewer = await requireMembership(ctx, organizationId);
  const team = await findTeam(ctx, organizationId, teamId);
  if (!team) throw notFound(`Team "${teamId}" of organization "${organizationId}"`);
  if (!teamPermissions(viewer, await viewerTeamRole(ctx).load(team.id)).view) {
    throw forbidden("Your role in this organization (guest) does not allow you to view teams you are not part of; it needs read.");
  }
  return { team, viewer };
}

function requireManage(viewer: Member, viewerRole: TeamRole | null, action: string) {
  if (!teamPermissions(viewer, viewerRole).admin) {
    throw forbidden(`You cannot ${action}: it needs the organization's admin role or the team's owner role.`);
  }
}

/** The team, when the caller may manage it (organization admin or team owner). */
async function requireManageableTeam(ctx: Context, organizationId: string, teamId: string, action: string) {
  const { team, viewer } = await requireViewableTeam(ctx, organizationId, teamId);
  requireManage(viewer, await viewerTeamRole(ctx).load(team.id), action);
  return team;
}

function checkTitle(value: string | null | undefined): string {
  const title = requiredText("title", value);
  checkLength("title", title, 1, TITLE_MAX);
  return title;
}

/**
 * Resolves user ids or emails to members of the organization. Throws one 400 naming, per field,
 * every entry that is not a known user or not a member.
 */
async function resolveMembers(ctx: Context, organizationId: string, fields: [field: string, entries: string[]][]) {
  const entries = unique(fields.flatMap(([, e]) => e));
  const emails = entries.filter((e) => e.includes("@")).map((e) => e.trim().toLowerCase());
  const ids = entries.filter((e) => !e.includes("@"));
  const users =
    entries.length === 0
      ? []
      : await ctx.prisma.user.findMany({
          where: { OR: [{ id: { in: ids } }, { email: { in: emails } }] },
          select: { id: true, email: true, memberships: { where: { organizationId }, select: { userId: true } } },
        });
  const userOf = (entry: string) =>
    entry.includes("@") ? users.find((u) => u.email === entry.trim().toLowerCase()) : users.find((u) => u.id === entry);
  const problems: string[] = [];
  for (const [field, list] of fields) {
    const unknown = list.filter((e) => !userOf(e));
    const outside = list.filter((e) => {
      const user = userOf(e);
      return user && user.memberships.length === 0;
    });
    if (unknown.length)
      problems.push(`${field}: ${quoted(unknown)} ${unknown.length === 1 ? "is not a known user" : "are not known users"}.`);
    if (outside.length) {
      problems.push(`${field}: ${quoted(outside)} ${outside.length === 1 ? "is not a member" : "are not members"} of this organization.`);
    }
  }
  if (problems.length) throw badInput(problems.join(" "));
  return (entry: string) => userOf(entry)!.id;
}

// ---------------------------------------------------------------------------------------------
// Operations

export interface TeamListArgs extends PageArgs {
  member?: string | null;
  title?: string | null;
}

/** The organization's teams by title; `member` keeps the teams that member can manage. */
export async function listTeams(ctx: Context, organizationId: string, args: TeamListArgs) {
  await requireOrgRole(ctx, organizationId, "read", "list the organization's teams");
  const where: P.TeamWhereInput = { organizationId };
  const title = args.title?.trim();
  if (title) where.title = { contains: title, mode: "insensitive" };
  if (args.member !== undefined && args.member !== null) {
    const member = await memberByKey(ctx).load({ organizationId, userId: args.member });
    if (!member) throw badInput(`member ${JSON.stringify(args.member)} is not a member of this organization.`);
    if (member.role !== "admin") where.members = { some: { userId: member.userId, role: "owner" } };
  }
  // By title ignoring case (the database's collation may sort "Zeta" before "alpha").
  const titled = await ctx.prisma.team.findMany({ where, select: { id: true, title: true } });
  return pageOfTeams(
    ctx,
    sortByText(
      titled,
      (t) => t.title,
      (t) => t.id,
    ),
    args,
  );
}

/** Creates a team with the given members (all with the `member` role). */
export async function createTeam(ctx: Context, organizationId: string, input: { title?: string | null; members?: string[] | null }) {
  await requireOrgRole(ctx, organizationId, "admin", "create teams");
  const title = checkTitle(input.title);
  const requested = unique(input.members ?? []);
  const idOf = await resolveMembers(ctx, organizationId, [["members", requested]]);
  return ctx.prisma.team.create({
    data: {
      id: newId("Team"),
      organizationId,
      title,
      members: { create: unique(requested.map(idOf)).map((userId) => ({ userId, role: "member" as const })) },
    },
  });
}

export async function getTeam(ctx: Context, organizationId: string, teamId: string) {
  return (await requireViewableTeam(ctx, organizationId, teamId)).team;
}

export async function updateTeam(ctx: Context, organizationId: string, teamId: string, patch: { title?: string | null }) {
  const team = await requireManageableTeam(ctx, organizationId, teamId, "rename this team");
  if (patch.title === undefined) return team;
  if (patch.title === null) throw badInput("title cannot be null.");
  return ctx.prisma.team.update({ where: { id: team.id }, data: { title: checkTitle(patch.title) } });
}

/** Deletes a team with its memberships and space grants; nothing to do when it does not exist. */
export async function deleteTeam(ctx: Context, organizationId: string, teamId: string): Promise<boolean> {
  const viewer = await requireMembership(ctx, organizationId);
  const team = await findTeam(ctx, organizationId, teamId);
  if (!team) return true;
  requireManage(viewer, await viewerTeamRole(ctx).load(team.id), "delete this team");
  await ctx.prisma.team.deleteMany({ where: { id: team.id, organizationId } });
  return true;
}

export interface TeamMemberEntry {
  membership: TeamMember;
  organizationId: string;
  permissions: { view: boolean };
}

/** The team's members, in the order they joined it. */
export async function listTeamMembers(ctx: Context, organizationId: string, teamId: string, args: PageArgs) {
  const { team, viewer } = await requireViewableTeam(ctx, organizationId, teamId);
  const page = await paginate({
    args,
    where: { teamId: team.id, user: { memberships: { some: { organizationId } } } },
    order: [
      ["createdAt", "asc"],
      ["userId", "asc"],
    ],
    from: ctx.prisma.teamMember,
  });
  return {
    ...page,
    items: page.items.map<TeamMemberEntry>((membership) => ({
      membership,
      organizationId,
      permissions: { view: canViewMember(viewer, membership.userId) },
    })),
  };
}

export interface TeamMembersUpdate {
  add?: string[] | null;
  remove?: string[] | null;
  memberships?: unknown;
}

function checkMemberships(value: unknown): [string, TeamRole][] {
  if (value === undefined || value === null) return [];
  if (typeof value !== "object" || Array.isArray(value)) {
    throw badInput("memberships must be an object mapping user ids to { role }.");
  }
  return Object.entries(value as Record<string, unknown>).map(([userId, entry]) => {
    const role = entry && typeof entry === "object" && !Array.isArray(entry) ? (entry as { role?: unknown }).role : undefined;
    if (typeof role !== "string" || !TEAM_ROLES.includes(role as TeamRole)) {
      throw badInput(`memberships.${userId}.role must be one of ${TEAM_ROLES.join(", ")}.`);
    }
    const extra = Object.keys(entry as object).filter((k) => k !== "role");
    if (extra.length) throw badInput(`memberships.${userId}.${extra[0]} is not a known field of a membership.`);
    return [userId, role as TeamRole];
  });
}

/**
 * Adds, removes and sets the roles of several team members at once, all or nothing. Added users
 * join as `member` unless `memberships` gives a role; a user listed in both add and remove ends up removed.
 */
export async function updateTeamMembers(ctx: Context, organizationId: string, teamId: string, input: TeamMembersUpdate) {
  const team = await requireManageableTeam(ctx, organizationId, teamId, "change this team's members");
  const roles = checkMemberships(input.memberships);
  const add = unique(input.add ?? []);
  const remove = unique(input.remove ?? []);
  const idOf = await resolveMembers(ctx, organizationId, [
    ["add", add],
    ["remove", remove],
    ["memberships", roles.map(([userId]) => userId)],
  ]);
  const removed = new Set(remove.map(idOf));
  const withRole = new Map(roles.map(([entry, role]) => [idOf(entry), role]));
  const added = unique(add.map(idOf)).filter((id) => !removed.has(id) && !withRole.has(id));
  await ctx.prisma.$transaction([
    ctx.prisma.teamMember.deleteMany({ where: { teamId: team.id, userId: { in: [...removed] } } }),
    ctx.prisma.teamMember.createMany({
      data: added.map((userId) => ({ teamId: team.id, userId, role: "member" as const })),
      skipDuplicates: true,
    }),
    ...[...withRole]
      .filter(([userId]) => !removed.has(userId))
      .map(([userId, role]) =>
        ctx.prisma.teamMember.upsert({
          where: { teamId_userId: { teamId: team.id, userId } },
          create: { teamId: team.id, userId, role },
          update: { role },
        }),
      ),
  ]);
  return true;
}

/** Adds a member to the team, or changes their role when already in it. */
export async function setTeamMember(
  ctx: Context,
  organizationId: string,
  teamId: string,
  userId: string,
  input: { role?: TeamRole | null },
) {
  const team = await requireManageableTeam(ctx, organizationId, teamId, "change this team's members");
  const member = await memberByKey(ctx).load({ organizationId, userId });
  if (!member) throw badInput(`userId ${JSON.stringify(userId)} is not a member of this organization.`);
  // Both forms are single statements (INSERT … ON CONFLICT), so identical concurrent PUTs all
  // succeed: Prisma runs an upsert with an empty update as a read then an insert, which races.
  if (input.role) {
    await ctx.prisma.teamMember.upsert({
      where: { teamId_userId: { teamId: team.id, userId } },
      create: { teamId: team.id, userId, role: input.role },
      update: { role: input.role },
    });
  } else {
    await ctx.prisma.teamMember.createMany({ data: [{ teamId: team.id, userId, role: "member" }], skipDuplicates: true });
  }
  return true;
}

/** Takes a member out of the team; nothing to do when they were not in it or the team does not exist. */
export async function removeTeamMember(ctx: Context, organizationId: string, teamId: string, userId: string): Promise<boolean> {
  const viewer = await requireMembership(ctx, organizationId);
  const team = await findTeam(ctx, organizationId, teamId);
  if (!team) return true;
  requireManage(viewer, await viewerTeamRole(ctx).load(team.id), "change this team's members");
  await ctx.prisma.teamMember.deleteMany({ where: { teamId: team.id, userId } });
  return true;
}

/** Prisma filter: the teams a caller may see through the graph (all for members with a role, else their own). */
export function visibleTeamsWhere(ctx: Context): P.TeamWhereInput {
  return {
    OR: [
      { members: { some: { userId: ctx.viewer.userId } } },
      { organization: { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } } },
    ],
  };
}
