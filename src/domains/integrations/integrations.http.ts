import type { Context, Services } from "../../core/context.js";
import { errorResponse } from "../../rest/handler.js";
import { rawRoute, type RawParams, type RawRoute } from "../../rest/raw-routes.js";
import { forwardPublicRequest, publicTarget } from "./integrations.public.js";
import { canSee } from "./integrations.policy.js";
import { viewerMembership } from "../../core/access/access.js";

/**
 * The integrations area's routes outside /v1, raw routes (src/rest/raw-routes.ts):
 * - GET /integrations/{integrationName}/assets/icon and …/preview-<n> serve the published images,
 *   without a token for public and unlisted integrations, with an owner member's token otherwise
 *   (auth "optional": no token is anonymous, a bad token is 401);
 * - the public endpoints, `/integrations/{integrationName}…/public…` (of the integration, an
 *   installation, a space or site installation), take any method without the gateway's token:
 *   one route entry, see `publicEndpoint`.
 */
export const PUBLIC_ENDPOINT = "/integrations/{integrationName}{scope*}/public{path*}";

export type PublicEndpointParams = RawParams<typeof PUBLIC_ENDPOINT>;

/** A request from outside to an integration's public endpoint, forwarded to the integration (integrations.public.ts). */
export function publicEndpoint(services: Services, params: PublicEndpointParams, request: Request, url: URL): Promise<Response> {
  return forwardPublicRequest(services, request, url, publicTarget(params));
}

export const integrationRoutes: RawRoute[] = [
  rawRoute({
    methods: ["GET"],
    path: "/integrations/{integrationName}/assets/icon",
    auth: "optional",
    rateLimited: true,
    handler: (ctx, { integrationName }, request) => serveAsset(ctx, request, integrationName, "icon"),
  }),
  rawRoute({
    methods: ["GET"],
    path: "/integrations/{integrationName}/assets/preview-{index}",
    auth: "optional",
    rateLimited: true,
    handler: (ctx, { integrationName, index }, request) =>
      serveAsset(ctx, request, integrationName, /^\d+$/.test(index) ? Number(index) : null),
  }),
  rawRoute({ methods: "*", path: PUBLIC_ENDPOINT, auth: "none", handler: publicEndpoint }),
];

/** Serves the icon or a preview image (by its index; null for none) of an integration's published version. */
async function serveAsset(ctx: Context, request: Request, name: string, what: "icon" | number | null): Promise<Response> {
  const notFound = () => errorResponse({ error: { code: 404, message: "Not found." } });
  if (what === null) return notFound();
  const integration = await ctx.prisma.integration.findUnique({
    where: { name },
    select: { icon: true, previewImages: true, visibility: true, ownerId: true },
  });
  if (!integration) return notFound();
  // Who may see the images: who may see the integration (integrations.policy.ts).
  const owner = ctx.viewer.anonymous ? null : await viewerMembership(ctx, integration.ownerId);
  if (!canSee(integration, owner)) return notFound();
  const content = what === "icon" ? integration.icon : integration.previewImages[what];
  if (!content) return notFound();
  const bytes = Buffer.from(content, "base64");
  return new Response(request.method === "HEAD" ? null : bytes, {
    headers: {
      "content-type": imageType(bytes),
      "cache-control": integration.visibility === "private" ? "private, max-age=300" : "public, max-age=300",
      "x-content-type-options": "nosniff",
    },
  });
}

/** The image type of published bytes, from their signature (SVG is served as text/plain: it may hold scripts). */
export function imageType(bytes: Buffer): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  if (bytes.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return "application/octet-stream";
}
