import type { Services } from "../../core/context.js";
import { AppError, badInput, notFound } from "../../core/errors.js";
import { reportError } from "../../core/error-report.js";
import { errorResponse } from "../../rest/handler.js";
import { authorizeUrl, serviceMetadata, verifySamlResponse } from "./sso.saml.js";
import { signInWithSaml } from "./sso.service.js";

/**
 * The unauthenticated SAML endpoints of every provider (mounted by src/server.ts):
 *
 * - `GET  /sso/saml/{providerId}/start`    302 to the identity provider's ssoURL with an AuthnRequest
 *                                          (HTTP-Redirect binding); `?RelayState=` is passed along.
 * - `POST /sso/saml/{providerId}/acs`      takes the HTTP-POST `SAMLResponse` (form-encoded or JSON),
 *                                          verifies it and answers 200 `{ token, user, organization }`.
 * - `GET  /sso/saml/{providerId}/metadata` the service provider's metadata XML (its URL is the entityID).
 *
 * Errors use the API's body `{ error: { code, message } }`.
 */
export const SAML_PATH = /^\/sso\/saml\/([^/]+)\/(start|acs|metadata)\/?$/;
const MAX_BODY = 1024 * 1024;

async function readSamlResponse(request: Request): Promise<string> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > MAX_BODY) throw new AppError(413, `The request body is larger than ${MAX_BODY} bytes.`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      size += part.value.byteLength;
      if (size > MAX_BODY) {
        await reader.cancel().catch(() => undefined);
        throw new AppError(413, `The request body is larger than ${MAX_BODY} bytes.`);
      }
      chunks.push(part.value);
    }
  }
  const text = Buffer.concat(chunks).toString("utf8");
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
  if (typeof value !== "string" || !value.trim()) throw badInput("SAMLResponse is required (the identity provider's HTTP-POST form field).");
  return value.replace(/\s+/g, "");
}

export async function samlHttp(services: Services, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const match = SAML_PATH.exec(url.pathname);
  try {
    if (!match) throw notFound(`${url.pathname}`);
    const [, rawId, action] = match as unknown as [string, string, "start" | "acs" | "metadata"];
    const providerId = decodeURIComponent(rawId);
    const expected = action === "acs" ? "POST" : "GET";
    if (request.method !== expected && !(expected === "GET" && request.method === "HEAD")) {
      return errorResponse({ error: { code: 405, message: `Use ${expected} on ${url.pathname}.` } }, { allow: expected });
    }
    const provider = await services.prisma.samlProvider.findUnique({ where: { id: providerId } });
    if (!provider || provider.status !== "active") throw notFound(`SAML provider "${providerId}"`);

    if (action === "start") {
      const location = await authorizeUrl(provider, services.config, url.searchParams.get("RelayState"));
      return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
    }
    if (action === "metadata") {
      return new Response(serviceMetadata(provider, services.config), { headers: { "content-type": "application/samlmetadata+xml; charset=utf-8" } });
    }
    const identity = await verifySamlResponse(provider, services.config, await readSamlResponse(request));
    const session = await signInWithSaml(services, provider, identity);
    return new Response(JSON.stringify(session), { headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });
  } catch (err) {
    return errorResponse(reportError(err));
  }
}
