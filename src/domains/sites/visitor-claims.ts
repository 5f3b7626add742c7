import crypto from "node:crypto";
import { SignJWT, jwtVerify } from "jose";
import type { PrismaClient } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";

/**
 * Visitor claims of members: `POST /v1/orgs/{organizationId}/ping` answers `serviceVisitorClaims`,
 * a JWT (HS256, signed with the organization's own key, valid VISITOR_CLAIMS_TTL_S) whose claims
 * describe the member — `sub` (user id), `email`, `name`, `organization`, `role` — with audience
 * `organization:<id>` and issuer PUBLIC_URL. Attached to the user by the app, it authenticates
 * them as a visitor of every `visitor-auth` site of that organization, like a token signed with
 * the site's own visitor-auth key: the published-site lookup accepts either, and site conditions
 * read these claims (`visitor.claims.role == "admin"`).
 */
export const VISITOR_CLAIMS_TTL_S = 60 * 60;

const key = (secret: string) => new TextEncoder().encode(secret);
const audience = (organizationId: string) => `organization:${organizationId}`;

/** The organization's visitor-claims key, created on first use (concurrent first uses agree on one). */
async function ensureOrganizationVisitorSecret(prisma: PrismaClient, organizationId: string): Promise<string> {
  const org = await prisma.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { visitorClaimsSecret: true } });
  if (org.visitorClaimsSecret) return org.visitorClaimsSecret;
  const secret = crypto.randomBytes(32).toString("base64url");
  const { count } = await prisma.organization.updateMany({
    where: { id: organizationId, visitorClaimsSecret: null },
    data: { visitorClaimsSecret: secret },
  });
  if (count) return secret;
  return (await prisma.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { visitorClaimsSecret: true } }))
    .visitorClaimsSecret!;
}

/** Signs the visitor claims of a member of the organization (the caller of ping). */
export async function signMemberVisitorClaims(
  ctx: Context,
  organizationId: string,
  member: { userId: string; role: string | null },
): Promise<string> {
  const [secret, user] = await Promise.all([
    ensureOrganizationVisitorSecret(ctx.prisma, organizationId),
    ctx.prisma.user.findUniqueOrThrow({ where: { id: member.userId }, select: { email: true, displayName: true } }),
  ]);
  return new SignJWT({ email: user.email, name: user.displayName, organization: organizationId, role: member.role ?? "guest" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(member.userId)
    .setAudience(audience(organizationId))
    .setIssuer(ctx.config.publicUrl)
    .setIssuedAt()
    .setExpirationTime(`${VISITOR_CLAIMS_TTL_S}s`)
    .sign(key(secret));
}

/**
 * The claims of a token signed with the organization's visitor-claims key; null when the
 * organization has no key or the signature is not its key's. Expiry and audience errors throw
 * (jose's errors), as for site keys.
 */
export async function verifyMemberVisitorClaims(
  prisma: PrismaClient,
  organizationId: string,
  token: string,
): Promise<Record<string, unknown> | null> {
  const org = await prisma.organization.findUnique({ where: { id: organizationId }, select: { visitorClaimsSecret: true } });
  if (!org?.visitorClaimsSecret) return null;
  try {
    const { payload } = await jwtVerify(token, key(org.visitorClaimsSecret), { algorithms: ["HS256"], audience: audience(organizationId) });
    return payload as Record<string, unknown>;
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED") return null;
    throw err;
  }
}
