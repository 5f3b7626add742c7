import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload, type PayloadParent } from "../../core/graph/payloads.js";
import { argsWithNulls } from "../../core/context.js";
import { viewerMembership } from "../../core/access/access.js";
import { KEEP_NULL, MergeRulesRef, RoleEnum, listOf, pageArgs, permissionsOf, restName, urlsOf } from "../../core/graph/rest-fields.js";
import { ORGANIZATION_PERMISSIONS, organizationPermissions } from "./organizations.policy.js";
import * as service from "./organizations.service.js";

const OrganizationUrls = urlsOf("OrganizationUrls", ["location", "app", "logo"] as const, ["logo"]);
const OrganizationPermissions = permissionsOf("OrganizationPermissions", ORGANIZATION_PERMISSIONS);

const DefaultContent = builder.objectRef<{ type: string; site: string }>("OrganizationDefaultContent").implement({
  fields: (t) => ({ type: t.exposeString("type"), site: t.exposeString("site") }),
});
const Trial = builder.objectRef<{ status: string }>("OrganizationTrial").implement({
  description: "Trial state. A self-hosted organization has no trial: status is notapplicable, count 0.",
  fields: (t) => ({
    status: t.exposeString("status"),
    count: t.int({ description: "Number of trials the organization has consumed: none.", resolve: () => 0 }),
    endDate: t.field({ type: "DateTime", nullable: true, resolve: () => null }),
    decision: t.string({ nullable: true, resolve: () => null }),
  }),
});

export const OrganizationRef = builder.prismaNode("Organization", {
  id: { field: "id" },
  fields: (t) => ({
    object: t.string({ resolve: () => "organization" }),
    title: t.exposeString("title"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    emailDomains: t.exposeStringList("emailDomains"),
    hostname: t.exposeString("hostname", { nullable: true }),
    type: t.exposeString("type"),
    useCase: t.exposeString("useCase", { nullable: true }),
    communityType: t.exposeString("communityType", { nullable: true }),
    defaultRole: t.field({ type: RoleEnum, nullable: true, extensions: KEEP_NULL, resolve: (o) => o.defaultRole }),
    defaultContent: t.field({
      type: DefaultContent,
      nullable: true,
      description: "The site visitors of the organization land on; absent when none is set.",
      resolve: (o) => (o.defaultContent as { type: string; site: string } | null) ?? null,
    }),
    sso: t.exposeBoolean("sso"),
    ai: t.exposeBoolean("ai"),
    inviteLinks: t.exposeBoolean("inviteLinks"),
    plan: t.exposeString("plan"),
    customHostname: t.exposeString("customHostname", { nullable: true }),
    trial: t.field({ type: Trial, resolve: () => ({ status: "notapplicable" }) }),
    mergeRules: t.field({
      type: MergeRulesRef,
      description: "Rules a change request must pass to be merged: none beyond the review role on its space.",
      resolve: () => ({ type: "none" as const }),
    }),
    internalIsOnNewTrial: t.boolean({
      deprecationReason: "Always true.",
      extensions: restName("internal_isOnNewTrial"),
      resolve: () => true,
    }),
    urls: t.field({
      type: OrganizationUrls,
      resolve: (o, _a, ctx) => ({ ...ctx.urls.organization(o.id), logo: o.logo ?? undefined }),
    }),
    permissions: t.field({
      type: OrganizationPermissions,
      resolve: async (o, _a, ctx) => organizationPermissions(await viewerMembership(ctx, o.id)),
    }),
  }),
});

const OrganizationList = listOf("OrganizationList", OrganizationRef);
const OrganizationsByDomain = builder
  .objectRef<{ organizations: unknown[] }>("OrganizationsByEmailDomain")
  .implement({ fields: (t) => ({ organizations: t.field({ type: [OrganizationRef], resolve: (p) => p.organizations as any }) }) });

const DefaultContentInput = builder.inputType("OrganizationDefaultContentInput", {
  fields: (t) => ({ type: t.string({ required: true }), site: t.string({ required: true }) }),
});

builder.queryFields((t) => ({
  organizations: t.field({
    type: OrganizationList,
    description: "Organizations the caller is a member of.",
    args: { ...pageArgs },
    resolve: (_r, args, ctx) => service.listOrganizations(ctx, args),
  }),
  // A Prisma field: the relations selected under it (spaces, collections…) are read with its row,
  // instead of the row being read again to load them.
  organization: t.prismaField({
    type: OrganizationRef,
    args: { organizationId: t.arg.string({ required: true }) },
    resolve: (query, _r, args, ctx) => service.getOrganization(ctx, args.organizationId, query),
  }),
  organizationsByEmailDomain: t.field({
    type: OrganizationsByDomain,
    description: "Organizations that accept members of an email domain.",
    args: { emailDomain: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => ({ organizations: await service.organizationsByEmailDomain(ctx, args.emailDomain) }),
  }),
}));

/** The organization a deletion happened in, for deletion payloads. */
export const organizationParent: PayloadParent = {
  field: "organization",
  type: OrganizationRef,
  description: "The organization it was deleted from.",
  load: (ctx, id) => ctx.prisma.organization.findUnique({ where: { id } }),
};

const OrganizationInviteLinkDeletePayload = deletionPayload("OrganizationInviteLinkDeletePayload", "invite link", organizationParent);

builder.mutationFields((t) => ({
  organizationUpdate: t.field({
    type: OrganizationRef,
    args: {
      organizationId: t.arg.string({ required: true }),
      title: t.arg.string(),
      emailDomains: t.arg.stringList(),
      hostname: t.arg.string(),
      defaultRole: t.arg({ type: RoleEnum }),
      defaultContent: t.arg({ type: DefaultContentInput }),
      logo: t.arg.string(),
      sso: t.arg.boolean(),
      ai: t.arg.boolean(),
      inviteLinks: t.arg.boolean(),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateOrganization(ctx, organizationId, patch as service.OrganizationPatch);
    },
  }),
  organizationInviteLinkDelete: t.field({
    type: OrganizationInviteLinkDeletePayload,
    args: { organizationId: t.arg.string({ required: true }), inviteId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(service.deleteInviteLink(ctx, args.organizationId, args.inviteId), args.inviteId, args.organizationId),
  }),
}));
