import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { organizationParent } from "../organizations/organizations.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { KEEP_NULL, RoleEnum, listOf, pageArgs, urlsOf } from "../../core/graph/rest-fields.js";
import { TeamRef } from "../teams/teams.schema.js";
import { samlProviderUrls, samlServiceUrls } from "./sso.urls.js";
import * as service from "./sso.service.js";
import { viewerMemberWhere } from "../../core/access/access.js";

const SamlProviderStatusEnum = builder.enumType("SamlProviderStatus", {
  values: { active: { description: "The provider can be used to sign in." } } as const,
});

const SamlProviderService = builder.objectRef<ReturnType<typeof samlServiceUrls>>("SamlProviderService").implement({
  description: "The service-provider side of the provider, served by this API: what to configure in the identity provider.",
  fields: (t) => ({
    acsURL: t.exposeString("acsURL", { description: "Assertion Consumer Service URL (HTTP-POST binding)." }),
    startURL: t.exposeString("startURL", { description: "Opening it starts a sign-in through this provider." }),
    entityID: t.exposeString("entityID", { description: "The service provider's entity id (also its metadata URL)." }),
  }),
});

const SamlProviderUrls = urlsOf("SamlProviderUrls", ["location"] as const);

export const SamlProviderRef = builder.prismaNode("SamlProvider", {
  id: { field: "id" },
  description: "A SAML 2.0 identity provider members of the organization can sign in with.",
  fields: (t) => ({
    object: t.string({ resolve: () => "saml-provider" }),
    label: t.exposeString("label", { description: `1 to ${service.LIMITS.label} characters.` }),
    ssoURL: t.exposeString("ssoURL", { nullable: true, description: "The identity provider's sign-in URL (HTTP-Redirect binding)." }),
    entityID: t.exposeString("entityID", {
      nullable: true,
      description: "The identity provider's entity id (the Issuer of its assertions).",
    }),
    certificate: t.exposeString("certificate", { nullable: true, description: "The identity provider's X.509 signing certificate (PEM)." }),
    defaultTeam: t.field({
      type: TeamRef,
      nullable: true,
      description: "The team new members signing in through this provider join.",
      resolve: (p, _a, ctx) => service.defaultTeamOf(ctx).load(p),
    }),
    defaultRole: t.field({
      type: RoleEnum,
      nullable: true,
      extensions: KEEP_NULL,
      description: "The role new members signing in through this provider get; null: guest.",
      resolve: (p) => p.defaultRole,
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    status: t.field({ type: SamlProviderStatusEnum, resolve: (p) => p.status as "active" }),
    service: t.field({ type: SamlProviderService, resolve: (p, _a, ctx) => samlServiceUrls(ctx.config, p.id) }),
    urls: t.field({ type: SamlProviderUrls, resolve: (p, _a, ctx) => samlProviderUrls(ctx.config, p.organizationId, p.id) }),
  }),
});

const SsoLoginInfoRef = builder.objectRef<{ id: string; label: string; startURL: string }>("SsoLoginInfo").implement({
  description: "A way to sign in to the organization.",
  fields: (t) => ({ id: t.exposeString("id"), label: t.exposeString("label"), startURL: t.exposeString("startURL") }),
});
const SsoLoginInfoList = builder.objectRef<{ items: { id: string; label: string; startURL: string }[] }>("SsoLoginInfoList").implement({
  fields: (t) => ({ items: t.field({ type: [SsoLoginInfoRef], resolve: (p) => p.items }) }),
});

const SamlProviderList = listOf("SamlProviderList", SamlProviderRef);

// The graph: an organization's SAML providers, for its admins only (others see an empty list).
builder.prismaObjectFields("Organization", (t) => ({
  samlProviders: t.relatedConnection("samlProviders", {
    cursor: "id",
    totalCount: true,
    description: "The organization's SAML providers, oldest first; visible to its admins only.",
    query: (_args, ctx) => ({
      where: { organization: { members: { some: { ...viewerMemberWhere(ctx), role: "admin" } } } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
  }),
}));

const providerArgs = builder.args((t) => ({
  entityID: t.string({ description: `The identity provider's entity id, at most ${service.LIMITS.entityID} characters.` }),
  certificate: t.string({
    description: `The identity provider's X.509 certificate in PEM, at most ${service.LIMITS.certificate} characters.`,
  }),
  ssoURL: t.string({ description: `The identity provider's sign-in URL, at most ${service.LIMITS.ssoURL} characters.` }),
  defaultTeam: t.string({ description: "Id of a team of the organization that new members join." }),
  defaultRole: t.field({ type: RoleEnum, description: "Role of new members; null: guest." }),
}));

builder.queryFields((t) => ({
  organizationSamlProviders: t.field({
    type: SamlProviderList,
    description: "SAML providers of an organization, oldest first (admins only).",
    args: { organizationId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => service.listProviders(ctx, args.organizationId, args),
  }),
  samlProvider: t.field({
    type: SamlProviderRef,
    description: "A SAML provider (admins only).",
    args: { organizationId: t.arg.string({ required: true }), samlProviderId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getProvider(ctx, args.organizationId, args.samlProviderId),
  }),
  organizationSsoLogins: t.field({
    type: SsoLoginInfoList,
    description: "How to sign in to an organization with SSO: each provider's start URL (not paginated).",
    args: { organizationId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.loginInfo(ctx, args.organizationId),
  }),
}));

const SamlProviderDeletePayload = deletionPayload("SamlProviderDeletePayload", "SAML provider", organizationParent);

builder.mutationFields((t) => ({
  samlProviderCreate: t.field({
    type: SamlProviderRef,
    description: "Adds a SAML provider (admins only).",
    args: {
      organizationId: t.arg.string({ required: true }),
      label: t.arg.string({ required: true, description: `1 to ${service.LIMITS.label} characters.` }),
      ...providerArgs,
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, ...input } = argsWithNulls(ctx, rawArgs);
      return service.createProvider(ctx, organizationId, input);
    },
  }),
  samlProviderUpdate: t.field({
    type: SamlProviderRef,
    description: "Changes a SAML provider (admins only); null clears an optional field.",
    args: {
      organizationId: t.arg.string({ required: true }),
      samlProviderId: t.arg.string({ required: true }),
      label: t.arg.string({ description: `1 to ${service.LIMITS.label} characters.` }),
      ...providerArgs,
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, samlProviderId, ...input } = argsWithNulls(ctx, rawArgs);
      return service.updateProvider(ctx, organizationId, samlProviderId, input);
    },
  }),
  samlProviderDelete: t.field({
    type: SamlProviderDeletePayload,
    description: "Removes a SAML provider (succeeds also when it did not exist; admins only).",
    args: { organizationId: t.arg.string({ required: true }), samlProviderId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(service.deleteProvider(ctx, args.organizationId, args.samlProviderId), args.samlProviderId, args.organizationId),
  }),
}));
