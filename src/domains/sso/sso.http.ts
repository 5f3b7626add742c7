import type { Services } from "../../core/context.js";
import { badInput, notFound } from "../../core/errors.js";
import { rawRoute, readBodyBytes, type RawRoute } from "../../rest/raw-routes.js";
import { lazy } from "../../core/support/lazy.js";
import { signInWithSaml } from "./sso.service.js";

/** SAML (node-saml, xmldom), loaded by the first sign-in or metadata request. */
const saml = lazy(() => import("./sso.saml.js"));

/**
 * The unauthenticated SAML endpoints of every provider, raw routes (src/rest/raw-routes.ts) with
 * auth "none":
 *
 * - `GET  /sso/saml/{providerId}/start`    302 to the identity provider's ssoURL with an AuthnRequest
 *                                          (HTTP-Redirect binding); `?RelayState=` is passed along.
 * - `POST /sso/saml/{providerId}/acs`      takes the HTTP-POST `SAMLResponse` (form-encoded or JSON),
 *                                          verifies it and answers 200 `{ token, user, organization }`.
 * - `GET  /sso/saml/{providerId}/metadata` the service provider's metadata XML (its URL is the entityID).
 *
 * Errors use the API's body `{ error: { code, message } }`; another method answers 405.
 */
async function readSamlResponse(services: Services, request: Request): Promise<string> {
  const text = (await readBodyBytes(request, services.config.maxBodyBytes)).toString("utf8");
  let value: unknown;
  if ((request.headers.get("content-type") ?? "").includes("application/json")) {
    try {
      value = (JSON.parse(text) as Record<string, unknown>)?.SAMLResponse;
    } catch {
      throw badInput("The request body is not valid JSON.");
    }
  } else {
    value = new URLSearchParams(text).get("SAMLResponse");
  }
  if (typeof value !== "string" || !value.trim())
    throw badInput("SAMLResponse is required (the identity provider's HTTP-POST form field).");
  return value.replace(/\s+/g, "");
}

async function activeProvider(services: Services, providerId: string) {
  const provider = await services.prisma.samlProvider.findUnique({ where: { id: providerId } });
  if (!provider || provider.status !== "active") throw notFound(`SAML provider "${providerId}"`);
  return provider;
}

export const samlRoutes: RawRoute[] = [
  rawRoute({
    methods: ["GET"],
    path: "/sso/saml/{providerId}/start",
    auth: "none",
    rateLimited: true,
    async handler(services, { providerId }, _request, url) {
      const provider = await activeProvider(services, providerId);
      const location = await (await saml()).authorizeUrl(provider, services.config, url.searchParams.get("RelayState"));
      return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
    },
  }),
  rawRoute({
    methods: ["POST"],
    path: "/sso/saml/{providerId}/acs",
    auth: "none",
    rateLimited: true,
    async handler(services, { providerId }, request) {
      const provider = await activeProvider(services, providerId);
      const identity = await (await saml()).verifySamlResponse(provider, services.config, await readSamlResponse(services, request));
      const session = await signInWithSaml(services, provider, identity);
      return new Response(JSON.stringify(session), {
        headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
      });
    },
  }),
  rawRoute({
    methods: ["GET"],
    path: "/sso/saml/{providerId}/metadata",
    auth: "none",
    rateLimited: true,
    async handler(services, { providerId }) {
      const provider = await activeProvider(services, providerId);
      return new Response((await saml()).serviceMetadata(provider, services.config), {
        headers: { "content-type": "application/samlmetadata+xml; charset=utf-8" },
      });
    },
  }),
];
