import type { Services } from "../../core/context.js";
import { AppError, badInput, notFound } from "../../core/errors.js";
import { dispatchTarget } from "../../events/record.js";
import { callIntegration } from "../../events/exchange.js";
import { readBodyBytes } from "../../rest/raw-routes.js";
import { scopedInstallationExists } from "./scoped-installations.service.js";

/**
 * Public endpoints of integrations (`urls.publicEndpoint` of integrations, installations and
 * space or site installations), reached from outside without an API token — a third-party
 * service's webhook, an OAuth callback, a page the integration serves:
 *
 *   /integrations/{name}/public{/rest}
 *   /integrations/{name}/installations/{installationId}/public{/rest}
 *   /integrations/{name}/installations/{installationId}/spaces/{spaceId}/public{/rest}
 *   /integrations/{name}/installations/{installationId}/sites/{siteId}/public{/rest}
 *
 * The request (any method, its headers, query and body up to MAX_BODY_BYTES) is forwarded to the
 * integration's endpoint — its development tunnel, with `{/rest}` and the query appended to the
 * tunnel URL — signed like every request the gateway sends (x-signature over the exact body bytes),
 * with `x-integration-event-type: script_fetch`, the event id, the integration name, the
 * installation and space or site ids, `x-forwarded-host`/`x-forwarded-proto`, and the
 * integration's content security policy. The integration's answer (status, headers, body) is
 * relayed to the caller, with that policy added when the answer has none. Each request is
 * recorded as a script_fetch event: success when the integration answered below 500, failed
 * otherwise (502 to the caller when it could not be reached, 504 when its answer did not start
 * within INTEGRATION_DELIVERY_TIMEOUT_MS; a body that takes longer is relayed as it comes).
 * The endpoints of an unknown integration, installation, or space or site installation are 404;
 * without a reachable endpoint (development mode off, or not forwarding that organization) 503.
 * A private integration does not exist for callers without a token: every answer it does not
 * give itself (unknown installation, no reachable endpoint) is the 404 of a missing integration,
 * word for word, so its existence cannot be probed.
 */
/** What lies between the integration name and `/public` (the route's `scope` parameter, as sent). */
const SCOPE = /^(?:\/installations\/([^/]+)(?:\/(spaces|sites)\/([^/]+))?)?$/;

/** Request headers that belong to the hop, or that only the gateway may set. */
const DROPPED_REQUEST = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "content-length",
  "expect",
]);
const DROPPED_RESPONSE = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "trailer",
  "content-length",
  "content-encoding",
]);
const GATEWAY_HEADER = /^(x-integration-|x-signature)/;

export interface PublicTarget {
  integrationName: string;
  installationId?: string;
  scope?: "space" | "site";
  targetId?: string;
  /** The path after `/public`, with its leading slash ("" when none). */
  rest: string;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badInput(`The path segment "${segment}" is not valid.`);
  }
}

/**
 * The endpoint a request reached, from the route's parameters: the decoded integration name, the
 * part between it and `/public` ("" or `/installations/{id}[/spaces|sites/{id}]`, as sent) and the
 * rest of the path after `/public` (as sent). Anything else between name and `/public` is 404.
 */
export function publicTarget(params: { integrationName: string; scope: string; path: string }): PublicTarget {
  const m = SCOPE.exec(params.scope);
  if (!m) throw notFound("Public endpoint");
  return {
    integrationName: params.integrationName,
    installationId: m[1] === undefined ? undefined : decode(m[1]),
    scope: m[2] === undefined ? undefined : m[2] === "spaces" ? "space" : "site",
    targetId: m[3] === undefined ? undefined : decode(m[3]),
    rest: params.path,
  };
}

/** Forwards a request to an integration's public endpoint and relays its answer (see above). */
export async function forwardPublicRequest(services: Services, request: Request, url: URL, target: PublicTarget): Promise<Response> {
  const { prisma } = services;
  const integration = await prisma.integration.findUnique({ where: { name: target.integrationName } });
  const missing = () => notFound(`Integration "${target.integrationName}"`);
  if (!integration) throw missing();
  // Private: answers that are not the integration's own are those of a missing integration.
  const hidden = integration.visibility === "private";
  let installation: { id: string; organizationId: string } | null = null;
  if (target.installationId !== undefined) {
    installation = await prisma.integrationInstallation.findFirst({
      where: { id: target.installationId, integrationId: integration.id },
      select: { id: true, organizationId: true },
    });
    if (!installation) throw hidden ? missing() : notFound(`Installation "${target.installationId}" of integration "${integration.name}"`);
  }
  if (
    installation &&
    target.scope &&
    target.targetId !== undefined &&
    !(await scopedInstallationExists(prisma, target.scope, installation.id, target.targetId))
  ) {
    throw hidden
      ? missing()
      : notFound(`${target.scope === "space" ? "Space" : "Site"} "${target.targetId}" installation of installation "${installation.id}"`);
  }
  const destination = dispatchTarget(integration, installation?.organizationId ?? integration.ownerId);
  if ("skip" in destination) {
    if (hidden) throw missing();
    throw new AppError(
      503,
      integration.devTunnelUrl
        ? `Integration "${integration.name}" does not take requests of this installation: its development mode forwards only its owner organization's (all = false).`
        : `Integration "${integration.name}" has no endpoint to answer this request: its development mode is off.`,
    );
  }

  const body = await readBodyBytes(request, services.config.maxBodyBytes);
  const forwardUrl = new URL(destination.url);
  forwardUrl.pathname = forwardUrl.pathname.replace(/\/$/, "") + target.rest;
  forwardUrl.search = url.search;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    if (!DROPPED_REQUEST.has(name) && !GATEWAY_HEADER.test(name)) headers[name] = value;
  });
  headers["x-forwarded-host"] = url.host;
  headers["x-forwarded-proto"] = url.protocol.replace(/:$/, "");
  headers["x-integration-name"] = integration.name;
  if (installation) headers["x-integration-installation-id"] = installation.id;
  if (target.scope && target.targetId !== undefined) headers[`x-integration-${target.scope}-id`] = target.targetId;

  const method = request.method.toUpperCase();
  const what = `${method} ${target.rest || "/"}${url.search}`;
  const call = await callIntegration(services, {
    integration,
    installation,
    type: "script_fetch",
    fields: {
      method,
      path: target.rest || "/",
      ...(target.scope === "space" ? { spaceId: target.targetId } : {}),
      ...(target.scope === "site" ? { siteId: target.targetId } : {}),
    },
    url: forwardUrl.toString(),
    method,
    headers,
    body,
    what,
    timeoutMs: services.config.integrationDeliveryTimeoutMs,
    streamBody: true,
  });
  if (!call.response) {
    const { timedOut, message } = call.failure!;
    await call.finish(
      "failed",
      timedOut ? `The integration gave no answer in time (${message})` : `The integration could not be reached: ${message}`,
    );
    throw new AppError(
      timedOut ? 504 : 502,
      `Integration "${integration.name}" ${timedOut ? `did not answer within ${services.config.integrationDeliveryTimeoutMs} ms` : "could not be reached"}.`,
    );
  }
  const res = call.response;
  await call.finish(res.status < 500 ? "success" : "failed", `The integration answered HTTP ${res.status}`);
  const out = new Headers();
  res.headers.forEach((value, name) => {
    if (!DROPPED_RESPONSE.has(name) && name !== "set-cookie") out.set(name, value);
  });
  for (const cookie of res.headers.getSetCookie()) out.append("set-cookie", cookie);
  if (integration.contentSecurityPolicy && !out.has("content-security-policy"))
    out.set("content-security-policy", integration.contentSecurityPolicy);
  const empty = method === "HEAD" || res.status === 204 || res.status === 304;
  return new Response(empty ? null : res.body, { status: res.status, statusText: res.statusText, headers: out });
}
