import type { Member } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { byKeys, defineLoader } from "../../core/loaders.js";
import { forbidden } from "../../core/errors.js";

/**
 * Organization-wide SSO. When an organization has `sso: true`, its members marked `sso` may reach
 * it only with an API token issued by a SAML sign-in through one of that organization's providers.
 * Such tokens carry the label `sso:<providerId>`; any other token of theirs is refused with 403.
 * Members not marked `sso` (e.g. the admins who set SSO up) are not affected.
 */
export const SSO_TOKEN_PREFIX = "sso:";
export const ssoTokenLabel = (providerId: string) => `${SSO_TOKEN_PREFIX}${providerId}`;

const organizationRequiresSso = defineLoader<string, boolean>(async (orgIds, ctx) =>
  byKeys(orgIds, await ctx.prisma.organization.findMany({ where: { id: { in: [...orgIds] } }, select: { id: true, sso: true } }), (o) => o.id).map(
    (o) => o?.sso ?? false,
  ),
);

/** The organization whose SAML sign-in issued each token (null for tokens not issued by SSO). */
const tokenSsoOrganization = defineLoader<string, string | null>(async (tokenIds, ctx) => {
  const tokens = await ctx.prisma.apiToken.findMany({ where: { id: { in: [...tokenIds] } }, select: { id: true, label: true } });
  const providerOf = new Map<string, string>();
  for (const t of tokens) if (t.label?.startsWith(SSO_TOKEN_PREFIX)) providerOf.set(t.id, t.label.slice(SSO_TOKEN_PREFIX.length));
  const providers = providerOf.size
    ? await ctx.prisma.samlProvider.findMany({ where: { id: { in: [...new Set(providerOf.values())] } }, select: { id: true, organizationId: true } })
    : [];
  const orgOf = new Map(providers.map((p) => [p.id, p.organizationId]));
  return tokenIds.map((id) => orgOf.get(providerOf.get(id) ?? "") ?? null);
});

/** Throws 403 when the caller's token may not reach the organization of `member` (see above). */
export async function requireSsoSignIn(ctx: Context, member: Pick<Member, "organizationId" | "sso">): Promise<void> {
  if (!member.sso) return;
  if (!(await organizationRequiresSso(ctx).load(member.organizationId))) return;
  if ((await tokenSsoOrganization(ctx).load(ctx.viewer.tokenId)) === member.organizationId) return;
  throw forbidden(
    `Organization "${member.organizationId}" requires single sign-on: sign in through one of its SAML providers ` +
      `(their startURL is listed by GET /v1/orgs/${member.organizationId}/sso) and use the API token that sign-in issues.`,
  );
}
