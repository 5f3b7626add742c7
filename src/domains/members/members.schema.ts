import type { Space, Team } from "../../generated/prisma/client.js";
import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { organizationParent } from "../organizations/organizations.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { GRAPH_ONLY, KEEP_NULL, OrderEnum, RoleEnum, TeamRoleEnum, listOf, pageArgs, restName } from "../../core/graph/rest-fields.js";
import type { Role, TeamRole } from "../../core/access/roles.js";
import { UserRef } from "../users/users.schema.js";
import * as service from "./members.service.js";
import { userById } from "../../core/graph/shared-loaders.js";

export const MemberRef = builder.prismaObject("Member", {
  description: "A user's membership in an organization.",
  fields: (t) => ({
    object: t.string({ resolve: () => "member" }),
    id: t.exposeString("userId", { description: "The member's user id." }),
    role: t.field({
      type: RoleEnum,
      nullable: true,
      extensions: KEEP_NULL,
      description: "Organization role; null for guests.",
      resolve: (m) => m.role,
    }),
    user: t.field({
      type: UserRef,
      resolve: async (m, _a, ctx) => (await userById(ctx).load(m.userId))!,
    }),
    disabled: t.exposeBoolean("disabled"),
    joinedAt: t.expose("joinedAt", { type: "DateTime" }),
    lastSeenAt: t.expose("lastSeenAt", { type: "DateTime", nullable: true, description: "Absent when never seen." }),
    sso: t.exposeBoolean("sso", { description: "Whether the user is an SSO member." }),
    spacesCount: t.int({
      extensions: restName("spaces"),
      description: "Number of spaces the member can access.",
      resolve: (m, _a, ctx) => service.memberSpaceCount(ctx).load(m),
    }),
    teamsCount: t.int({
      extensions: restName("teams"),
      description: "Number of the organization's teams the member belongs to.",
      resolve: (m, _a, ctx) => service.memberTeamCount(ctx).load(m),
    }),
    sitesCount: t.int({
      extensions: restName("sites"),
      description: "Number of docs sites the member can read (every site of the organization; none when disabled).",
      resolve: (m, _a, ctx) => service.memberSiteCount(ctx).load(m),
    }),
    organization: t.relation("organization", { extensions: GRAPH_ONLY, description: "The organization of the membership." }),
  }),
});

/** A member's role in one team: the `member` of a member's team and the `team` of a team's member entry. */
export const TeamMembershipRoleRef = builder.objectRef<{ role: TeamRole }>("TeamMembershipRole").implement({
  fields: (t) => ({ role: t.field({ type: TeamRoleEnum, resolve: (p) => p.role }) }),
});

const MemberSpaceRef = builder.objectRef<{ permission: Role; space: Space }>("MemberSpace").implement({
  description: "A space a member can access, with their effective role on it.",
  fields: (t) => ({
    permission: t.field({ type: RoleEnum, resolve: (p) => p.permission }),
    space: t.prismaField({ type: "Space", resolve: (_q, p) => p.space }),
  }),
});

const MemberTeamRef = builder.objectRef<{ team: Team; member: { role: TeamRole } }>("MemberTeam").implement({
  description: "A team a member belongs to, with their role in it.",
  fields: (t) => ({
    team: t.prismaField({ type: "Team", resolve: (_q, p) => p.team }),
    member: t.field({ type: TeamMembershipRoleRef, resolve: (p) => p.member }),
  }),
});

const OrganizationPingRef = builder.objectRef<{ serviceVisitorClaims: string }>("OrganizationPing").implement({
  fields: (t) => ({
    serviceVisitorClaims: t.exposeString("serviceVisitorClaims", {
      description:
        "A JWT (HS256, valid one hour) to attach to the user: it authenticates the member as a visitor of the organization's visitor-auth sites " +
        "(as visitorToken or x-visitor-token of the published-site lookup). Claims: sub (user id), email, name, organization, role.",
    }),
  }),
});

const MemberSortEnum = builder.enumType("MemberSort", {
  values: {
    joinedAt: { description: "When the member joined (default)." },
    lastSeenAt: { description: "When the member was last active; lists only members seen at least once." },
    displayName: { description: "The user's display name." },
  } as const,
});

const MemberList = listOf("MemberList", MemberRef);
const MemberSpaceList = listOf("MemberSpaceList", MemberSpaceRef);
const MemberTeamList = listOf("MemberTeamList", MemberTeamRef);

// The graph: an organization's members as a connection (members with a role see all, guests themselves).
builder.prismaObjectFields("Organization", (t) => ({
  members: t.relatedConnection("members", {
    cursor: "organizationId_userId",
    totalCount: true,
    description: "The organization's members, newest first.",
    query: (_args, ctx) => ({
      where: service.visibleMembersWhere(ctx),
      orderBy: [{ joinedAt: "desc" }, { userId: "desc" }],
    }),
  }),
}));

builder.queryFields((t) => ({
  organizationMembers: t.field({
    type: MemberList,
    description: "Members of an organization.",
    args: {
      organizationId: t.arg.string({ required: true }),
      ...pageArgs,
      order: t.arg({ type: OrderEnum, description: "Sort direction, desc by default." }),
      role: t.arg({ type: RoleEnum, description: "Only members with this role." }),
      search: t.arg.string({ description: "Matches the display name and the email, case-insensitively." }),
      sort: t.arg({ type: MemberSortEnum, description: "Sort key, joinedAt by default." }),
    },
    resolve: (_r, args, ctx) => service.listMembers(ctx, args.organizationId, args),
  }),
  organizationMember: t.field({
    type: MemberRef,
    args: { organizationId: t.arg.string({ required: true }), userId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getMember(ctx, args.organizationId, args.userId),
  }),
  organizationMemberSpaces: t.field({
    type: MemberSpaceList,
    description: "Spaces a member can access, with their role on each.",
    args: {
      organizationId: t.arg.string({ required: true }),
      userId: t.arg.string({ required: true }),
      ...pageArgs,
      order: t.arg({ type: OrderEnum, description: "By creation date of the space, desc by default." }),
    },
    resolve: (_r, args, ctx) => service.listMemberSpaces(ctx, args.organizationId, args.userId, args),
  }),
  organizationMemberTeams: t.field({
    type: MemberTeamList,
    description: "Teams a member belongs to, by title.",
    args: {
      organizationId: t.arg.string({ required: true }),
      userId: t.arg.string({ required: true }),
      ...pageArgs,
      title: t.arg.string({ description: "Only teams whose title contains this, case-insensitively." }),
    },
    resolve: (_r, args, ctx) => service.listMemberTeams(ctx, args.organizationId, args.userId, args),
  }),
}));

const OrganizationMemberDeletePayload = deletionPayload("OrganizationMemberDeletePayload", "member (its user id)", organizationParent);

builder.mutationFields((t) => ({
  organizationMemberUpdate: t.field({
    type: MemberRef,
    description: "Changes a member's role; null makes them a guest.",
    args: {
      organizationId: t.arg.string({ required: true }),
      userId: t.arg.string({ required: true }),
      role: t.arg({ type: RoleEnum, description: "The new role, or null for a guest." }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, userId, role } = argsWithNulls(ctx, rawArgs);
      return service.updateMember(ctx, organizationId, userId, { role: role as Role | null | undefined });
    },
  }),
  organizationMemberDelete: t.field({
    type: OrganizationMemberDeletePayload,
    description: "Removes a member from the organization (succeeds also when they were not a member).",
    args: { organizationId: t.arg.string({ required: true }), userId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(service.removeMember(ctx, args.organizationId, args.userId), args.userId, args.organizationId),
  }),
  organizationPing: t.field({
    type: OrganizationPingRef,
    description: "Records the caller as active in the organization now.",
    args: { organizationId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.ping(ctx, args.organizationId),
  }),
  organizationMemberSsoMark: t.field({
    type: MemberRef,
    description: "Marks a member as an SSO member.",
    args: { organizationId: t.arg.string({ required: true }), userId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.markMemberSso(ctx, args.organizationId, args.userId),
  }),
}));
