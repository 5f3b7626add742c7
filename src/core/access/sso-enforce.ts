import type { Member, Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../context.js";
import type { Viewer } from "./viewer.js";
import { byKeys, defineSharedLoader } from "../graph/loaders.js";
import { forbidden, type AppError } from "../errors.js";

/**
 * Organization-wide SSO. When an organization has `sso: true`, its members marked `sso` may reach
 * it only with an API token issued by a SAML sign-in through one of that organization's providers.
 * Such tokens carry the label `sso:<providerId>` (the viewer's `ssoProvider`); any other token of
 * theirs is refused with 403. Members not marked `sso` (e.g. the admins who set SSO up) are not
 * affected. Applied by the membership door (core/access/access.ts), never called on its own.
 */
export const SSO_TOKEN_PREFIX = "sso:";
export const ssoTokenLabel = (providerId: string) => `${SSO_TOKEN_PREFIX}${providerId}`;

/** The SAML provider that issued a token, from its label (null for tokens not issued by SSO). */
export function ssoProviderOfLabel(label: string | null | undefined): string | null {
  return label?.startsWith(SSO_TOKEN_PREFIX) ? label.slice(SSO_TOKEN_PREFIX.length) : null;
}

const organizationRequiresSso = defineSharedLoader<string, boolean>(async (orgIds, prisma) =>
  byKeys(
    orgIds,
    await prisma.organization.findMany({ where: { id: { in: [...orgIds] } }, select: { id: true, sso: true } }),
    (o) => o.id,
  ).map((o) => o?.sso ?? false),
);

/** The organization of each SAML provider (null when it is gone). */
const providerOrganization = defineSharedLoader<string, string | null>(async (providerIds, prisma) =>
  byKeys(
    providerIds,
    await prisma.samlProvider.findMany({ where: { id: { in: [...providerIds] } }, select: { id: true, organizationId: true } }),
    (p) => p.id,
  ).map((p) => p?.organizationId ?? null),
);

/** True when the caller's token may not reach the organization of `member` (see above). */
export async function ssoRefuses(ctx: Context, member: Pick<Member, "organizationId" | "sso">): Promise<boolean> {
  if (!member.sso) return false;
  if (!(await organizationRequiresSso(ctx).load(member.organizationId))) return false;
  const provider = ctx.viewer.ssoProvider;
  return !provider || (await providerOrganization(ctx).load(provider)) !== member.organizationId;
}

/** The 403 of a member refused by SSO: where to sign in instead. */
export function ssoRefusal(organizationId: string): AppError {
  return forbidden(
    `Organization "${organizationId}" requires single sign-on: sign in through one of its SAML providers ` +
      `(their startURL is listed by GET /v1/orgs/${organizationId}/sso) and use the API token that sign-in issues.`,
  );
}

/** ssoRefuses as a Prisma filter on Member: the memberships the viewer's token may use. */
export function ssoMembershipWhere(viewer: Viewer): P.MemberWhereInput {
  return {
    OR: [
      { sso: false },
      { organization: { sso: false } },
      ...(viewer.ssoProvider ? [{ organization: { samlProviders: { some: { id: viewer.ssoProvider } } } }] : []),
    ],
  };
}
