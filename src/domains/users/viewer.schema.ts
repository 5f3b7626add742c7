import { builder } from "../../core/graph/builder.js";
import { viewerMemberWhere } from "../../core/access/access.js";
import { UserRef } from "./users.schema.js";

/**
 * The caller, for GraphQL clients: their user fields, the organizations they are a member of
 * (a connection), and their memberships. Memberships go through the membership door's SQL form
 * (`viewerMemberWhere`): a disabled membership, or one refused by SSO for this token, is not listed.
 */
export const ViewerRef = builder.prismaObject("User", {
  variant: "Viewer",
  description: "The caller: the user of the API token.",
  fields: (t) => ({
    id: t.exposeID("id"),
    user: t.variant(UserRef, { description: "The caller as the User other objects name (postedBy, createdBy…)." }),
    displayName: t.exposeString("displayName"),
    email: t.exposeString("email"),
    photoURL: t.exposeString("photoURL", { nullable: true }),
    organizations: t.prismaConnection({
      type: "Organization",
      cursor: "id",
      description: "Organizations the caller is a member of, oldest membership first.",
      totalCount: (_user, _args, ctx) => ctx.prisma.organization.count({ where: { members: { some: viewerMemberWhere(ctx) } } }),
      resolve: (query, _user, _args, ctx) =>
        ctx.prisma.organization.findMany({
          ...query,
          where: { members: { some: viewerMemberWhere(ctx) } },
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        }),
    }),
    memberships: t.prismaConnection({
      type: "Member",
      cursor: "organizationId_userId",
      description: "The caller's memberships: their role in each organization.",
      totalCount: (_user, _args, ctx) => ctx.prisma.member.count({ where: viewerMemberWhere(ctx) }),
      resolve: (query, _user, _args, ctx) =>
        ctx.prisma.member.findMany({ ...query, where: viewerMemberWhere(ctx), orderBy: [{ joinedAt: "asc" }, { organizationId: "asc" }] }),
    }),
  }),
});

builder.queryField("viewer", (t) =>
  t.prismaField({
    type: ViewerRef,
    description: "The caller: the user of the API token, their organizations and memberships.",
    resolve: (query, _root, _args, ctx) => ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: ctx.viewer.userId } }),
  }),
);
