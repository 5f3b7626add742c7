import crypto from "node:crypto";
import type { PrismaClient } from "../../generated/prisma/client.js";
import { newId, randomString } from "../ids.js";
import { makeContext, type Context, type Services } from "../context.js";
import { type AppError, forbidden, invalidToken, unauthorized } from "../errors.js";
import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import { ssoProviderOfLabel } from "./sso-enforce.js";
import { isSiteTokenShaped, viewerFromSiteToken } from "./site-token.js";
import { ANONYMOUS, type Viewer } from "./viewer.js";

/** API tokens: random, shown once, stored only as a SHA-256 hash, revocable. */
const TOKEN_PREFIX = "dapi_";

export function hashToken(token: string): string {
  return crypto.hash("sha256", token, "hex");
}

export async function createApiToken(prisma: PrismaClient, userId: string, label?: string) {
  const token = TOKEN_PREFIX + randomString(40);
  const row = await prisma.apiToken.create({
    data: { id: newId("ApiToken"), userId, label: label ?? null, hash: hashToken(token) },
  });
  return { token, id: row.id };
}

/** Revokes a token given by its id or by its secret value; returns whether one was revoked. */
export async function revokeApiToken(prisma: PrismaClient, idOrToken: string): Promise<boolean> {
  const where = idOrToken.startsWith(TOKEN_PREFIX) ? { hash: hashToken(idOrToken) } : { id: idOrToken };
  const { count } = await prisma.apiToken.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt: new Date() } });
  return count > 0;
}

/**
 * Reads `Authorization: Bearer <token>`; null when absent, malformed, unknown or revoked. The value
 * may come from a graphql-ws `connection_init` payload, so anything but a string is malformed.
 */
export function bearerToken(header: unknown): string | null {
  if (!header || typeof header !== "string") return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * The viewer of a live token. Live tokens are kept in the access cache (core/access/access-cache.ts) by
 * the hash of their secret: a revoke drops them there before it answers. A JWT is a site token
 * (core/access/site-token.ts): a read-only visitor of one site.
 */
export async function viewerFromToken(services: Pick<Services, "prisma" | "accessCache">, token: string | null): Promise<Viewer | null> {
  if (token && !token.startsWith(TOKEN_PREFIX) && isSiteTokenShaped(token)) return viewerFromSiteToken(services, token);
  if (!token || !token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  const { prisma } = services;
  const hash = hashToken(token);
  const row = await services.accessCache.token(hash, () =>
    prisma.apiToken.findUnique({ where: { hash }, select: { id: true, userId: true, label: true, revokedAt: true, lastUsedAt: true } }),
  );
  if (!row || row.revokedAt) return null;
  // Record use at most once a minute per token, off the request's path (the cached row remembers it).
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    row.lastUsedAt = new Date();
    prisma.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: row.lastUsedAt } }).catch(() => undefined);
  }
  return { userId: row.userId, tokenId: row.id, ssoProvider: ssoProviderOfLabel(row.label) };
}

/**
 * The 401 of a caller without a live token: "invalid or revoked token" when one was sent (an
 * Authorization header or connection parameter that is not blank), else "authentication required".
 */
export function authenticationFailure(header: unknown): AppError {
  if (header == null) return unauthorized();
  return typeof header !== "string" || header.trim() ? invalidToken() : unauthorized();
}

/**
 * What a request's answer may depend on of its caller: its `Authorization` header and the visitor
 * token of published content. Answers kept or shared for one caller are keyed by it (the response
 * cache, server/response-cache.ts; request coalescing, rest/handler.ts).
 */
export function credentialsOf(request: Request): string {
  const h = request.headers;
  return `${h.get("authorization") ?? ""}\u0000${h.get("x-visitor-token") ?? ""}`;
}

/**
 * The authentication of an HTTP request, shared by the /v1 routes and the raw ones
 * (src/rest/raw-routes.ts): `Authorization: Bearer <token>` of a live token gives its viewer.
 * Otherwise AppError(401) (see authenticationFailure) — except on an "optional" route called without any Authorization
 * header, whose caller is anonymous; a bad token is refused there too.
 */
export async function authenticateRequest(
  services: Services,
  request: Request,
  auth: "required" | "optional",
  explicitNulls?: Set<string>,
): Promise<Context> {
  const header = request.headers.get("authorization");
  const viewer = await viewerFromToken(services, bearerToken(header));
  if (viewer) return makeContext(services, viewer, explicitNulls, request);
  if (auth === "optional" && !header) return makeContext(services, ANONYMOUS, explicitNulls, request);
  throw authenticationFailure(header);
}

/**
 * Site tokens read: every mutation (REST write or GraphQL) of their holder is a 403, before any
 * field runs. Reads go through the usual guards, where the token grants only its site and spaces.
 */
export function useSiteTokensReadOnly(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      if (!(args.contextValue as unknown as Context).viewer?.content) return;
      if (getOperationAST(args.document, args.operationName)?.operation !== "mutation") return;
      const message = "A site token only reads published content: this write needs an API token.";
      setResultAndStopExecution({ errors: [forbidden(message)] });
    },
  };
}
