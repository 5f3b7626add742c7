import type { Services } from "../../core/context.js";
import { makeContext, type Context } from "../../core/context.js";
import { bearerToken, viewerFromToken } from "../../core/auth.js";
import { notFound, unauthorized, badInput, AppError } from "../../core/errors.js";
import { reportError } from "../../core/error-report.js";
import { errorResponse } from "../../rest/handler.js";
import { requireSpace } from "../spaces/spaces.service.js";
import { readScope, scopeRevision } from "./revisions.js";
import { renderPdf } from "./pdf.js";

/**
 * The content routes that answer bytes rather than JSON, served beside the /v1 graph routes
 * (mounted first in server.ts's routing plugin). Both take `Authorization: Bearer <token>`
 * like every /v1 operation and answer errors in the documented `{error: {code, message}}` form.
 *
 * - GET /v1/spaces/{spaceId}/content/files/{fileId}/download — a file's bytes with its
 *   content type (the `downloadURL` of File); any role on the space reads it.
 * - GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf/download[?pageId=…] — the
 *   change request's content as a PDF (the `url` of GET …/pdf); `pageId` restricts it to one page.
 */
const FILE_DOWNLOAD = /^\/v1\/spaces\/([^/]+)\/content\/files\/([^/]+)\/download\/?$/;
const PDF_DOWNLOAD = /^\/v1\/spaces\/([^/]+)\/change-requests\/([^/]+)\/pdf\/download\/?$/;

export function isContentBinaryPath(url: URL): boolean {
  return FILE_DOWNLOAD.test(url.pathname) || PDF_DOWNLOAD.test(url.pathname);
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badInput(`The path segment "${segment}" is not valid.`);
  }
}

function safeFilename(name: string): string {
  return name.replace(/["\\\r\n]/g, "_");
}

async function serveFile(ctx: Context, spaceId: string, fileId: string): Promise<Response> {
  const { space } = await requireSpace(ctx, spaceId);
  const blob = await ctx.prisma.fileBlob.findFirst({ where: { id: fileId, spaceId: space.id } });
  if (!blob) throw notFound(`File "${fileId}"`);
  return new Response(new Uint8Array(blob.data) as unknown as BodyInit, {
    status: 200,
    headers: {
      "content-type": blob.contentType,
      "content-length": String(blob.size),
      "content-disposition": `inline; filename="${safeFilename(blob.name)}"; filename*=UTF-8''${encodeURIComponent(blob.name)}`,
      "cache-control": "private, max-age=3600",
      "x-content-type-options": "nosniff",
    },
  });
}

async function servePdf(ctx: Context, spaceId: string, changeRequestId: string, pageId: string | null): Promise<Response> {
  const scope = await readScope(ctx, spaceId, changeRequestId);
  const { content } = await scopeRevision(ctx, scope);
  if (pageId && !content.pages[pageId]) throw notFound(`Page "${pageId}"`);
  const cr = scope.changeRequest!;
  const title = `${scope.space.title} — #${cr.number}${cr.subject ? ` ${cr.subject}` : ""}`;
  const bytes = await renderPdf(content, { title, pageId });
  return new Response(bytes as unknown as BodyInit, {
    status: 200,
    headers: {
      "content-type": "application/pdf",
      "content-length": String(bytes.byteLength),
      "content-disposition": `inline; filename="change-request-${cr.number}.pdf"`,
      "cache-control": "private, no-store",
    },
  });
}

/** Answers a byte route of the content area (see isContentBinaryPath). */
export async function serveContentBinary(services: Services, request: Request, url: URL): Promise<Response> {
  try {
    if (request.method !== "GET" && request.method !== "HEAD") {
      throw new AppError(404, `No operation ${request.method} ${url.pathname}.`);
    }
    const viewer = await viewerFromToken(services.prisma, bearerToken(request.headers.get("authorization")));
    if (!viewer) throw unauthorized();
    const ctx = makeContext(services, viewer, undefined, request);
    const file = FILE_DOWNLOAD.exec(url.pathname);
    if (file) return await serveFile(ctx, decode(file[1]!), decode(file[2]!));
    const pdf = PDF_DOWNLOAD.exec(url.pathname)!;
    return await servePdf(ctx, decode(pdf[1]!), decode(pdf[2]!), url.searchParams.get("pageId"));
  } catch (err) {
    const body = reportError(err);
    return errorResponse(body, body.error.code === 401 ? { "www-authenticate": "Bearer" } : {});
  }
}
