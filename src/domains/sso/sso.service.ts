import type { Prisma as P, PrismaClient, SamlProvider, Team } from "../../generated/prisma/client.js";
import type { Context, Services } from "../../core/context.js";
import { membershipAccess, requireOrgRole } from "../../core/access/access.js";
import { defineLoader } from "../../core/graph/loaders.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { AppError, badInput, forbidden, notFound } from "../../core/errors.js";
import { checkLength, checkOneOf, checkUri } from "../../core/validate.js";
import { ROLES, type Role } from "../../core/access/roles.js";
import { newId } from "../../core/ids.js";
import { createApiToken } from "../../core/access/auth.js";
import { checkCertificate } from "./sso.certificate.js";
import { ssoTokenLabel } from "../../core/access/sso-enforce.js";
import { samlServiceUrls } from "./sso.urls.js";
import type { SamlIdentity } from "./sso.saml.js";

export const LIMITS = { label: 30, entityID: 1024, certificate: 10000, ssoURL: 2048 } as const;
const ADMIN_ACTION = "manage SAML providers";

/** Each provider's default team, when it still is a team of the provider's organization. */
export const defaultTeamOf = defineLoader<SamlProvider, Team | null>(
  async (providers, ctx) => {
    const ids = [...new Set(providers.map((p) => p.defaultTeamId).filter((id): id is string => !!id))];
    const teams = ids.length ? await ctx.prisma.team.findMany({ where: { id: { in: ids } } }) : [];
    const byId = new Map(teams.map((t) => [t.id, t]));
    return providers.map((p) => {
      const team = p.defaultTeamId ? byId.get(p.defaultTeamId) : undefined;
      return team && team.organizationId === p.organizationId ? team : null;
    });
  },
  { cacheKey: (p) => p.id },
);

export interface ProviderInput {
  label?: string | null;
  entityID?: string | null;
  certificate?: string | null;
  ssoURL?: string | null;
  defaultTeam?: string | null;
  defaultRole?: Role | null;
}

/** Checks the given fields (absent: unchanged; null: cleared) and returns the data to store. */
async function providerData(ctx: Context, organizationId: string, input: ProviderInput, creating: boolean) {
  const data: P.SamlProviderUncheckedUpdateInput = {};
  if (input.label === null || (creating && input.label === undefined))
    throw badInput(creating ? "label is required." : "label cannot be null.");
  if (input.label !== undefined) {
    const label = input.label.trim();
    checkLength("label", label, 1, LIMITS.label);
    data.label = label;
  }
  if (input.entityID !== undefined) {
    checkLength("entityID", input.entityID, 1, LIMITS.entityID);
    data.entityID = input.entityID;
  }
  if (input.certificate !== undefined) {
    if (input.certificate !== null) {
      checkLength("certificate", input.certificate, 1, LIMITS.certificate);
      checkCertificate(input.certificate);
    }
    data.certificate = input.certificate;
  }
  if (input.ssoURL !== undefined) {
    checkUri("ssoURL", input.ssoURL, LIMITS.ssoURL);
    data.ssoURL = input.ssoURL;
  }
  if (input.defaultTeam !== undefined) {
    if (input.defaultTeam !== null) {
      const team = await ctx.prisma.team.findFirst({ where: { id: input.defaultTeam, organizationId }, select: { id: true } });
      if (!team) throw badInput(`defaultTeam "${input.defaultTeam}" is not a team of this organization.`);
    }
    data.defaultTeamId = input.defaultTeam;
  }
  if (input.defaultRole !== undefined) data.defaultRole = checkOneOf("defaultRole", input.defaultRole, ROLES) ?? null;
  return data;
}

async function findProvider(ctx: Context, organizationId: string, samlProviderId: string) {
  const provider = await ctx.prisma.samlProvider.findFirst({ where: { id: samlProviderId, organizationId } });
  if (!provider) throw notFound(`SAML provider "${samlProviderId}" of organization "${organizationId}"`);
  return provider;
}

export async function listProviders(ctx: Context, organizationId: string, args: PageArgs) {
  await requireOrgRole(ctx, organizationId, "admin", ADMIN_ACTION);
  return paginate({
    args,
    where: { organizationId },
    order: [
      ["createdAt", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.samlProvider,
  });
}

export async function getProvider(ctx: Context, organizationId: string, samlProviderId: string) {
  await requireOrgRole(ctx, organizationId, "admin", ADMIN_ACTION);
  return findProvider(ctx, organizationId, samlProviderId);
}

export async function createProvider(ctx: Context, organizationId: string, input: ProviderInput) {
  await requireOrgRole(ctx, organizationId, "admin", ADMIN_ACTION);
  const data = await providerData(ctx, organizationId, input, true);
  return ctx.prisma.samlProvider.create({
    data: { ...(data as P.SamlProviderUncheckedCreateInput), id: newId("SamlProvider"), organizationId, status: "active" },
  });
}

export async function updateProvider(ctx: Context, organizationId: string, samlProviderId: string, input: ProviderInput) {
  await requireOrgRole(ctx, organizationId, "admin", ADMIN_ACTION);
  const provider = await findProvider(ctx, organizationId, samlProviderId);
  const data = await providerData(ctx, organizationId, input, false);
  if (Object.keys(data).length === 0) return provider;
  return ctx.prisma.samlProvider.update({ where: { id: provider.id }, data });
}

export async function deleteProvider(ctx: Context, organizationId: string, samlProviderId: string) {
  await requireOrgRole(ctx, organizationId, "admin", ADMIN_ACTION);
  await ctx.prisma.samlProvider.deleteMany({ where: { id: samlProviderId, organizationId } });
  return true;
}

/**
 * How to sign in to an organization: its providers with their start URLs. Open to every member,
 * and (unlike the rest of the organization) also to SSO members holding a non-SSO token, so they
 * can find where to sign in.
 */
export async function loginInfo(ctx: Context, organizationId: string) {
  if (!(await membershipAccess(ctx, organizationId)).member) throw notFound(`Organization "${organizationId}"`);
  const providers = await ctx.prisma.samlProvider.findMany({
    where: { organizationId, status: "active" },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, label: true },
  });
  return { items: providers.map((p) => ({ id: p.id, label: p.label, startURL: samlServiceUrls(ctx.config, p.id).startURL })) };
}

// ---------------------------------------------------------------------------------------------
// Sign-in

/** Remembers an accepted assertion id; a second use of the same id is a replay (401). */
async function rememberAssertion(prisma: PrismaClient, providerId: string, identity: SamlIdentity) {
  const { count } = await prisma.samlAssertionSeen.createMany({
    data: [{ id: `${providerId}:${identity.assertionId}`, providerId, expiresAt: identity.expiresAt }],
    skipDuplicates: true,
  });
  if (count === 0) {
    throw new AppError(401, `The SAML assertion "${identity.assertionId}" was already used: each response signs in only once.`);
  }
}

export async function purgeSeenAssertions(prisma: PrismaClient) {
  await prisma.samlAssertionSeen.deleteMany({ where: { expiresAt: { lt: new Date() } } });
}

/**
 * Signs in the verified identity: the user is found by email or created; an existing member is
 * marked `sso`; a new one joins as an SSO member with the provider's defaultRole (null: guest)
 * and in its defaultTeam. Returns an API token labelled `sso:<providerId>`.
 */
export async function signInWithSaml(services: Pick<Services, "prisma" | "urls">, provider: SamlProvider, identity: SamlIdentity) {
  const { prisma } = services;
  const organization = await prisma.organization.findUniqueOrThrow({ where: { id: provider.organizationId } });
  const existing = await prisma.user.findUnique({ where: { email: identity.email } });
  const member = existing
    ? await prisma.member.findUnique({ where: { organizationId_userId: { organizationId: organization.id, userId: existing.id } } })
    : null;
  if (member?.disabled) throw forbidden(`Your membership of organization "${organization.id}" is disabled: ask an administrator.`);
  await rememberAssertion(prisma, provider.id, identity);

  // Insert-if-absent in one statement: two first logins of one person at once both succeed.
  if (!existing) {
    await prisma.user.createMany({
      data: [{ id: newId("User"), email: identity.email, displayName: identity.displayName ?? identity.email.split("@")[0]! }],
      skipDuplicates: true,
    });
  }
  const user = existing ?? (await prisma.user.findUniqueOrThrow({ where: { email: identity.email } }));
  if (member) {
    if (!member.sso) {
      await prisma.member.update({
        where: { organizationId_userId: { organizationId: organization.id, userId: user.id } },
        data: { sso: true },
      });
    }
  } else {
    await prisma.member.upsert({
      where: { organizationId_userId: { organizationId: organization.id, userId: user.id } },
      update: { sso: true },
      create: { organizationId: organization.id, userId: user.id, role: provider.defaultRole, sso: true },
    });
    const team = provider.defaultTeamId
      ? await prisma.team.findFirst({ where: { id: provider.defaultTeamId, organizationId: organization.id }, select: { id: true } })
      : null;
    if (team) {
      await prisma.teamMember.createMany({ data: [{ teamId: team.id, userId: user.id, role: "member" }], skipDuplicates: true });
    }
  }
  const { token } = await createApiToken(prisma, user.id, ssoTokenLabel(provider.id));
  return {
    token,
    user: {
      object: "user",
      id: user.id,
      displayName: user.displayName,
      email: user.email,
      ...(user.photoURL ? { photoURL: user.photoURL } : {}),
      urls: services.urls.user(user.id),
    },
    organization: {
      object: "organization",
      id: organization.id,
      title: organization.title,
      urls: services.urls.organization(organization.id),
    },
  };
}
