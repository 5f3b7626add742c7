import type { Context } from "../../core/context.js";
import { notFound } from "../../core/errors.js";
import { rawRoute, type RawRoute } from "../../rest/raw-routes.js";
import { requireSpace } from "../spaces/spaces.access.js";
import { readScope, scopeRevision } from "./revisions.js";
import { entry } from "./model.js";
import { lazy } from "../../core/support/lazy.js";

/** PDF rendering (pdf-lib), loaded by the first export. */
const pdf = lazy(() => import("./pdf.js"));

/**
 * The content routes that answer bytes rather than JSON, served beside the /v1 graph routes as
 * raw routes (src/rest/raw-routes.ts, mounted before /v1). Both take `Authorization: Bearer <token>`
 * like every /v1 operation and answer errors in the documented `{error: {code, message}}` form.
 *
 * - GET /v1/spaces/{spaceId}/content/files/{fileId}/download — a file's bytes with its
 *   content type (the `downloadURL` of File); any role on the space reads it.
 * - GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf/download[?pageId=…] — the
 *   change request's content as a PDF (the `url` of GET …/pdf); `pageId` restricts it to one page.
 */
export const contentBinaryRoutes: RawRoute[] = [
  rawRoute({
    methods: ["GET"],
    path: "/v1/spaces/{spaceId}/content/files/{fileId}/download",
    auth: "required",
    handler: (ctx, { spaceId, fileId }) => serveFile(ctx, spaceId, fileId),
  }),
  rawRoute({
    methods: ["GET"],
    path: "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf/download",
    auth: "required",
    handler: (ctx, { spaceId, changeRequestId }, _request, url) => servePdf(ctx, spaceId, changeRequestId, url.searchParams.get("pageId")),
  }),
];

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
  if (pageId && !entry(content.pages, pageId)) throw notFound(`Page "${pageId}"`);
  const cr = scope.changeRequest!;
  const title = `${scope.space.title} — #${cr.number}${cr.subject ? ` ${cr.subject}` : ""}`;
  const bytes = await (await pdf()).renderPdf(content, { title, pageId });
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
