import crypto from "node:crypto";
import { decodeJwt, jwtVerify, SignJWT } from "jose";
import type { PrismaClient } from "../../generated/prisma/client.js";
import { noteReads, readNoting, readsOutsideDatabase } from "../cache/request-reads.js";
import type { AccessCache } from "./access-cache.js";
import type { ContentGrant, Viewer } from "./viewer.js";

/**
 * Site tokens: the `apiToken` of POST /v1/urls/published, which GitBook's reader sends as its
 * Bearer for every later call of that visitor (`SiteAPIToken` of @gitbook/api: a JWT it decodes).
 *
 * HS256 with a key derived from the site's own visitor-auth secret (stored with the site, so every
 * gateway on the database agrees and nothing new is stored): whoever may sign that site's visitor
 * tokens could already read what a site token grants. The token is the same string for a
 * (site, site space, share key, claims) all UTC day — the reader keys its page cache by it — and
 * expires five minutes into the next day.
 *
 * A token is only as good as the site is now: on each use the site must still exist in the token's
 * organization, be published (unless it was minted for a member's preview), and for a share-link
 * site its share key must still be live; it reads only the spaces the site still shows. These
 * facts come from the access cache (dropped by every write of sites, core/access/access-cache.ts).
 */

const TOKEN_MAX = 4096;
const DAY = 86_400;

export interface SiteTokenInput {
  organization: string;
  site: string;
  siteSpace: string;
  space: string;
  siteSection?: string | null;
  spaces: string[];
  shareKey?: string | null;
  claims?: Record<string, unknown> | null;
  draft?: boolean;
  visitorType?: "human" | "agent";
}

/** What using a site token reads of its site. */
interface SiteFacts {
  organizationId: string;
  published: boolean;
  visibility: string;
  secret: string;
  spaceIds: string[];
  shareKeys: string[];
}

function keyOf(secret: string): Uint8Array {
  return new Uint8Array(crypto.createHmac("sha256", secret).update("site-api-token").digest());
}

/**
 * The facts of a site a token needs, from the access cache; what they were read from is told to
 * the requests under way each time (core/cache/request-reads.ts `noteReads`), so an answer the
 * response cache keeps for a site token is dropped by the writes that change them (unpublish, a
 * share link revoked), as if it had read them itself.
 */
async function siteFacts(services: { prisma: PrismaClient; accessCache: AccessCache }, siteId: string): Promise<SiteFacts | null> {
  const kept = await services.accessCache.siteEntry(`token-site\u0000${siteId}`, () =>
    readNoting(() => readSiteFacts(services.prisma, siteId)),
  );
  if (kept.noted) noteReads(kept.noted);
  else readsOutsideDatabase();
  return kept.value;
}

async function readSiteFacts(prisma: PrismaClient, siteId: string): Promise<SiteFacts | null> {
  const site = await prisma.site.findUnique({
    where: { id: siteId },
    select: {
      organizationId: true,
      published: true,
      visibility: true,
      visitorAuthSecret: true,
      siteSpaces: { select: { spaceId: true } },
      shareLinks: { where: { revokedAt: null }, select: { key: true } },
    },
  });
  if (!site) return null;
  let secret = site.visitorAuthSecret;
  if (!secret) {
    // Older sites get their key on first use, as GET …/visitor-auth does.
    const made = crypto.randomBytes(32).toString("base64url");
    await prisma.site.updateMany({ where: { id: siteId, visitorAuthSecret: null }, data: { visitorAuthSecret: made } });
    secret = (await prisma.site.findUnique({ where: { id: siteId }, select: { visitorAuthSecret: true } }))?.visitorAuthSecret ?? made;
  }
  return {
    organizationId: site.organizationId,
    published: site.published,
    visibility: site.visibility,
    secret,
    spaceIds: site.siteSpaces.map((s) => s.spaceId),
    shareKeys: site.shareLinks.map((l) => l.key),
  };
}

/** JSON with object keys sorted: equal claims give the same token. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The token of a visitor of a site, the same all UTC day of `now`; null when the site is gone. */
export async function mintSiteToken(
  services: { prisma: PrismaClient; accessCache: AccessCache },
  input: SiteTokenInput,
  now = Date.now(),
): Promise<string | null> {
  const facts = await siteFacts(services, input.site);
  if (!facts) return null;
  // The token depends on the day, which the database does not hold: an answer carrying it is not kept.
  readsOutsideDatabase();
  const dayStart = Math.floor(now / 1000 / DAY) * DAY;
  const payload: Record<string, unknown> = {
    kind: "site",
    organization: input.organization,
    site: input.site,
    siteSpace: input.siteSpace,
    space: input.space,
    ...(input.siteSection ? { siteSection: input.siteSection } : {}),
    spaces: [...new Set(input.spaces)].sort(),
    ...(input.draft ? { draft: true } : {}),
    visitorType: input.visitorType ?? "human",
    claims: canonical(input.claims ?? {}),
    ...(input.shareKey ? { shareKey: input.shareKey } : {}),
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(dayStart)
    .setExpirationTime(dayStart + DAY + 300)
    .sign(keyOf(facts.secret));
}

/** Whether a bearer looks like a JWT (three base64url parts), not an API token. */
export function isSiteTokenShaped(token: string): boolean {
  return token.length <= TOKEN_MAX && /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

/** The viewer of a valid site token; null when it does not verify or its site no longer grants it. */
export async function viewerFromSiteToken(
  services: { prisma: PrismaClient; accessCache: AccessCache },
  token: string,
): Promise<Viewer | null> {
  if (!isSiteTokenShaped(token)) return null;
  let siteId: unknown;
  try {
    const unverified = decodeJwt(token);
    if (unverified.kind !== "site") return null;
    siteId = unverified.site;
  } catch {
    return null;
  }
  if (typeof siteId !== "string" || siteId.length > 100) return null;
  const facts = await siteFacts(services, siteId);
  if (!facts) return null;
  let payload: Record<string, unknown>;
  try {
    payload = (await jwtVerify(token, keyOf(facts.secret), { algorithms: ["HS256"] })).payload as Record<string, unknown>;
  } catch {
    return null;
  }
  const { organization, siteSpace, space, siteSection, spaces, shareKey, claims, draft } = payload;
  if (organization !== facts.organizationId || typeof siteSpace !== "string" || typeof space !== "string") return null;
  if (!Array.isArray(spaces) || !spaces.every((s) => typeof s === "string")) return null;
  if (shareKey !== undefined && typeof shareKey !== "string") return null;
  if (draft !== true) {
    if (!facts.published) return null;
    if (facts.visibility === "share-link" && !(shareKey && facts.shareKeys.includes(shareKey))) return null;
  }
  const shown = new Set(facts.spaceIds);
  const content: ContentGrant = {
    organization: facts.organizationId,
    site: siteId,
    siteSpace,
    space,
    ...(typeof siteSection === "string" ? { siteSection } : {}),
    spaces: new Set((spaces as string[]).filter((s) => shown.has(s))),
    ...(shareKey ? { shareKey } : {}),
    claims: claims && typeof claims === "object" && !Array.isArray(claims) ? (claims as Record<string, unknown>) : {},
    draft: draft === true,
  };
  // No token id: nothing about it is stored to revoke (its site decides, above).
  return { userId: "", tokenId: "", anonymous: true, content };
}
