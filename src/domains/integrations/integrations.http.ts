import type { Services } from "../../core/context.js";
import { errorResponse } from "../../rest/handler.js";
import { bearerToken, viewerFromToken } from "../../core/auth.js";

const ASSET = /^\/integrations\/([^/]+)\/assets\/(icon|preview-(\d+))$/;
const PUBLIC = /^\/integrations\/[^/]+(\/.*)?\/public(\/.*)?$/;

/**
 * The integrations area's routes outside /v1, mounted in the gateway's routing:
 * - GET /integrations/{integrationName}/assets/icon and …/preview-<n> serve the published images
 *   (without a token for public and unlisted integrations, with an owner member's token otherwise);
 * - the reserved public endpoints answer 501.
 */
export function createIntegrationHttp(services: Services) {
  return async function handle(request: Request, url: URL): Promise<Response | undefined> {
    const path = url.pathname;
    const asset = ASSET.exec(path);
    if (asset && (request.method === "GET" || request.method === "HEAD")) return serveAsset(request, decodeURIComponent(asset[1]!), asset[2]!, asset[3]);
    if (PUBLIC.test(path) && path.startsWith("/integrations/")) {
      return errorResponse({ error: { code: 501, message: "Public endpoints of integrations are not served by this gateway yet." } } as any);
    }
    return undefined;
  };

  async function serveAsset(request: Request, name: string, what: string, index: string | undefined): Promise<Response> {
    const notFound = () => errorResponse({ error: { code: 404, message: "Not found." } });
    const integration = await services.prisma.integration.findUnique({
      where: { name },
      select: { icon: true, previewImages: true, visibility: true, ownerId: true },
    });
    if (!integration) return notFound();
    if (integration.visibility === "private") {
      const viewer = await viewerFromToken(services.prisma, bearerToken(request.headers.get("authorization")));
      const member = viewer
        ? await services.prisma.member.findFirst({ where: { userId: viewer.userId, organizationId: integration.ownerId, disabled: false } })
        : null;
      if (!member) return notFound();
    }
    const content = what === "icon" ? integration.icon : integration.previewImages[Number(index)];
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
}

/** The image type of published bytes, from their signature (SVG is served as text/plain: it may hold scripts). */
export function imageType(bytes: Buffer): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  if (bytes.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif";
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  return "application/octet-stream";
}
