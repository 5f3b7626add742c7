import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload, type PayloadParent } from "../../core/graph/payloads.js";
import { organizationParent } from "../organizations/organizations.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { TeamRoleEnum, listOf, pageArgs, permissionsOf, restName } from "../../core/graph/rest-fields.js";
import type { TeamRole } from "../../core/access/roles.js";
import { MemberRef, TeamMembershipRoleRef } from "../members/members.schema.js";
import { memberByKey } from "../members/members.service.js";
import { TEAM_PERMISSIONS } from "./teams.policy.js";
import * as service from "./teams.service.js";

const TeamPermissions = permissionsOf("TeamPermissions", TEAM_PERMISSIONS);
const TeamMemberPermissions = permissionsOf("TeamMemberPermissions", ["view"] as const);

/** A user's membership in a team, as the graph walks it (Team.memberships). */
export const TeamMembershipRef = builder.prismaObject("TeamMember", {
  name: "TeamMembership",
  fields: (t) => ({
    role: t.field({ type: TeamRoleEnum, resolve: (m) => m.role }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    user: t.relation("user"),
    member: t.field({
      type: MemberRef,
      description: "The user's membership in the team's organization.",
      select: { team: { select: { organizationId: true } } },
      resolve: async (m, _a, ctx) => (await memberByKey(ctx).load({ organizationId: m.team.organizationId, userId: m.userId }))!,
    }),
  }),
});

export const TeamRef = builder.prismaNode("Team", {
  id: { field: "id" },
  description: "A group of an organization's members.",
  fields: (t) => ({
    object: t.string({ resolve: () => "team" }),
    title: t.exposeString("title"),
    membersCount: t.int({
      extensions: restName("members"),
      description: "Number of members.",
      resolve: (team, _a, ctx) => service.teamMemberCount(ctx).load(team.id),
    }),
    spacesCount: t.int({
      extensions: restName("spaces"),
      description: "Number of spaces the team is granted access to.",
      resolve: (team, _a, ctx) => service.teamSpaceCount(ctx).load(team.id),
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    permissions: t.field({
      type: TeamPermissions,
      resolve: (team, _a, ctx) => service.permissionsOfTeam(ctx, team),
    }),
    memberships: t.relatedConnection("members", {
      cursor: "teamId_userId",
      totalCount: true,
      description: "The team's members, in the order they joined.",
      query: () => ({ orderBy: [{ createdAt: "asc" }, { userId: "asc" }] }),
    }),
  }),
});

/** An entry of a team's member list: the organization membership, the team role, and what the caller may do. */
const TeamMemberEntryRef = builder.objectRef<service.TeamMemberEntry>("TeamMemberEntry").implement({
  fields: (t) => ({
    organization: t.field({
      type: MemberRef,
      resolve: async (e, _a, ctx) => (await memberByKey(ctx).load({ organizationId: e.organizationId, userId: e.membership.userId }))!,
    }),
    team: t.field({ type: TeamMembershipRoleRef, resolve: (e) => ({ role: e.membership.role as TeamRole }) }),
    permissions: t.field({ type: TeamMemberPermissions, resolve: (e) => e.permissions }),
  }),
});

const TeamList = listOf("TeamList", TeamRef);
const TeamMemberList = listOf("TeamMemberList", TeamMemberEntryRef);

// The graph: an organization's teams (members with a role see all, guests their own).
builder.prismaObjectFields("Organization", (t) => ({
  teams: t.relatedConnection("teams", {
    cursor: "id",
    totalCount: true,
    description: "The organization's teams, by title.",
    query: (_args, ctx) => ({ where: service.visibleTeamsWhere(ctx), orderBy: [{ title: "asc" }, { id: "asc" }] }),
  }),
}));

builder.queryFields((t) => ({
  organizationTeams: t.field({
    type: TeamList,
    description: "Teams of an organization, by title.",
    args: {
      organizationId: t.arg.string({ required: true }),
      ...pageArgs,
      member: t.arg.string({ description: "A member's user id: only the teams that member can manage." }),
      title: t.arg.string({ description: "Only teams whose title contains this, case-insensitively." }),
    },
    resolve: (_r, args, ctx) => service.listTeams(ctx, args.organizationId, args),
  }),
  team: t.field({
    type: TeamRef,
    args: { organizationId: t.arg.string({ required: true }), teamId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getTeam(ctx, args.organizationId, args.teamId),
  }),
  teamMembers: t.field({
    type: TeamMemberList,
    description: "Members of a team, in the order they joined it.",
    args: { organizationId: t.arg.string({ required: true }), teamId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => service.listTeamMembers(ctx, args.organizationId, args.teamId, args),
  }),
}));

const TeamDeletePayload = deletionPayload("TeamDeletePayload", "team", organizationParent);
/** The team a member left, for its deletion payload. */
const teamParent: PayloadParent = {
  field: "team",
  type: TeamRef,
  description: "The team the member was removed from.",
  load: (ctx, id) => ctx.prisma.team.findUnique({ where: { id } }),
};
const TeamMemberDeletePayload = deletionPayload("TeamMemberDeletePayload", "team member (its user id)", teamParent);

builder.mutationFields((t) => ({
  teamCreate: t.field({
    type: TeamRef,
    description: "Creates a team.",
    args: {
      organizationId: t.arg.string({ required: true }),
      title: t.arg.string({ required: true, description: `1 to ${service.TITLE_MAX} characters.` }),
      members: t.arg.stringList({ description: "User ids of organization members to add to the team." }),
    },
    resolve: (_r, args, ctx) => service.createTeam(ctx, args.organizationId, args),
  }),
  teamUpdate: t.field({
    type: TeamRef,
    args: {
      organizationId: t.arg.string({ required: true }),
      teamId: t.arg.string({ required: true }),
      title: t.arg.string({ description: `1 to ${service.TITLE_MAX} characters.` }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, teamId, title } = argsWithNulls(ctx, rawArgs);
      return service.updateTeam(ctx, organizationId, teamId, { title });
    },
  }),
  teamDelete: t.field({
    type: TeamDeletePayload,
    description: "Deletes a team (succeeds also when it did not exist).",
    args: { organizationId: t.arg.string({ required: true }), teamId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(service.deleteTeam(ctx, args.organizationId, args.teamId), args.teamId, args.organizationId),
  }),
  teamMembersUpdate: t.field({
    type: TeamRef,
    description: "Adds, removes and sets roles of several team members at once; all or nothing. Answers the team.",
    args: {
      organizationId: t.arg.string({ required: true }),
      teamId: t.arg.string({ required: true }),
      add: t.arg.stringList({ description: "User ids or emails to add." }),
      remove: t.arg.stringList({ description: "User ids or emails to remove; wins over add." }),
      memberships: t.arg({ type: "JSON", description: "Map of user id (or email) to { role } (owner or member)." }),
    },
    resolve: async (_r, args, ctx) => {
      await service.updateTeamMembers(ctx, args.organizationId, args.teamId, args);
      return ctx.prisma.team.findUniqueOrThrow({ where: { id: args.teamId } });
    },
  }),
  teamMemberSet: t.field({
    type: TeamRef,
    description: "Adds a member to a team or changes their role. Answers the team.",
    args: {
      organizationId: t.arg.string({ required: true }),
      teamId: t.arg.string({ required: true }),
      userId: t.arg.string({ required: true }),
      role: t.arg({ type: TeamRoleEnum, description: "owner or member; new members default to member." }),
    },
    resolve: async (_r, args, ctx) => {
      await service.setTeamMember(ctx, args.organizationId, args.teamId, args.userId, args);
      return ctx.prisma.team.findUniqueOrThrow({ where: { id: args.teamId } });
    },
  }),
  teamMemberDelete: t.field({
    type: TeamMemberDeletePayload,
    description: "Takes a member out of a team (succeeds also when they were not in it).",
    args: {
      organizationId: t.arg.string({ required: true }),
      teamId: t.arg.string({ required: true }),
      userId: t.arg.string({ required: true }),
    },
    resolve: async (_r, args, ctx) =>
      deleted(service.removeTeamMember(ctx, args.organizationId, args.teamId, args.userId), args.userId, args.teamId),
  }),
}));
