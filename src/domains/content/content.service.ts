import { imageSize } from "image-size";
import type { ChangeRequest, Space } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { badInput, conflict, notFound } from "../../core/errors.js";
import { paginateArray, type PageArgs } from "../../core/graph/pagination.js";
import { checkLength, checkPattern, checkUri } from "../../core/validate.js";
import { newId } from "../../core/ids.js";
import { checkEmoji, publishSpaceUpdated } from "../spaces/spaces.service.js";
import { requireSpace } from "../spaces/spaces.access.js";
import {
  entry,
  isSelfOrAncestor,
  positionAt,
  subtreeIds,
  takenSlugs,
  uniqueSlug,
  type RevisionContent,
  type StoredFile,
  type StoredPage,
} from "./model.js";
import {
  EDITABLE_STATUSES,
  commitChange,
  contentOf,
  editScope,
  readScope,
  revisionById,
  scopeRevision,
  ensureSpaceRevision,
  type ContentScope,
  type RevisionType,
} from "./revisions.js";
import {
  fileView,
  fileViews,
  findPageView,
  pageViews,
  revisionView,
  scopeRef,
  withDocument,
  type FileView,
  type PageView,
  type RevisionView,
} from "./views.js";
import { LinkResolver, addedBroken, linkReport, type LinkStatus } from "./links.js";
import { documentRefs } from "./page-refs.js";
import { applyImport, checkSource, fetchBytes, fetchImport } from "./import.js";
import { applyChanges, planChanges, type ChangeOutcome, type ContentChangeInput, type PlannedFile } from "./batch.js";
import { checkOutboundUrl, outboundRefusal } from "../../core/support/outbound.js";

// ─── Reads ───────────────────────────────────────────────────────────────────────────────────

/** `metadata` and `computed` of content reads: accepted; this server has no Git metadata or computed pages to leave out. */
export interface ReadOptions {
  metadata?: boolean | null;
  computed?: boolean | null;
}

/** A space's active revision for the graph's `Space.content` (the space was already authorized). */
export async function spaceRevisionView(ctx: Context, space: Space): Promise<RevisionView> {
  const id = await ensureSpaceRevision(ctx, space);
  const revision = await revisionById(ctx).load(id);
  if (!revision) throw notFound(`Revision "${id}"`);
  return revisionView(ctx, { space, role: "read", changeRequest: null }, revision, contentOf(revision));
}

/** A change request's active revision for the graph's `ChangeRequest.content` (batched loads only). */
export async function changeRequestRevisionView(ctx: Context, changeRequest: ChangeRequest): Promise<RevisionView> {
  const { space, role } = await requireSpace(ctx, changeRequest.spaceId);
  const revision = await revisionById(ctx).load(changeRequest.revisionId);
  if (!revision) throw notFound(`Revision "${changeRequest.revisionId}"`);
  return revisionView(ctx, { space, role, changeRequest }, revision, contentOf(revision));
}

export async function scopedContent(ctx: Context, spaceId: string, changeRequestId?: string | null) {
  const scope = await readScope(ctx, spaceId, changeRequestId);
  const { revision, content } = await scopeRevision(ctx, scope);
  return { scope, revision, content, ref: scopeRef(scope, revision.id) };
}

export async function getContent(ctx: Context, spaceId: string, changeRequestId?: string | null): Promise<RevisionView> {
  const { scope, revision, content } = await scopedContent(ctx, spaceId, changeRequestId);
  return revisionView(ctx, scope, revision, content);
}

export async function getPages(ctx: Context, spaceId: string, changeRequestId?: string | null): Promise<{ pages: PageView[] }> {
  const { content, ref } = await scopedContent(ctx, spaceId, changeRequestId);
  return { pages: pageViews(ctx, ref, content) };
}

export type PageFormat = "markdown" | "document";

export async function getPage(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  pageId: string,
  format: PageFormat | null | undefined,
): Promise<PageView> {
  const { content, ref } = await scopedContent(ctx, spaceId, changeRequestId);
  const page = findPageView(pageViews(ctx, ref, content), pageId);
  if (!page) throw notFound(`Page "${pageId}"`);
  if (format !== "document") return page;
  // Links in the document as content refs, relative page paths resolved (content/page-refs.ts).
  const resolver = new LinkResolver(ctx, ref, content);
  const node = resolver.pages.find((p) => p.id === pageId)!;
  return withDocument(page, page.markdown ?? "", documentRefs(resolver, node));
}

export async function listFiles(ctx: Context, spaceId: string, changeRequestId: string | null | undefined, args: PageArgs) {
  const { content, scope } = await scopedContent(ctx, spaceId, changeRequestId);
  return paginateArray(fileViews(ctx, scope.space.id, content), args);
}

export async function getFile(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  fileId: string,
): Promise<FileView> {
  const { content, scope } = await scopedContent(ctx, spaceId, changeRequestId);
  const file = entry(content.files, fileId);
  if (!file) throw notFound(`File "${fileId}"`);
  return fileView(ctx, scope.space.id, file);
}

export async function fileBacklinks(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  fileId: string,
  args: PageArgs,
) {
  const { content, ref } = await scopedContent(ctx, spaceId, changeRequestId);
  if (!entry(content.files, fileId)) throw notFound(`File "${fileId}"`);
  return paginateArray(new LinkResolver(ctx, ref, content).backlinks(fileId), args);
}

/** Broken links that draft and open change requests add to the space's content (see linkReport). */
async function changeRequestsBroken(ctx: Context, scope: ContentScope, main: LinkResolver, pageId?: string | null): Promise<number> {
  const heads = await ctx.prisma.changeRequest.findMany({
    where: { spaceId: scope.space.id, status: { in: EDITABLE_STATUSES } },
    select: { id: true, number: true, revisionId: true },
    orderBy: { number: "desc" },
    take: 100,
  });
  const revisions = await revisionById(ctx).loadMany(heads.map((h) => h.revisionId));
  let total = 0;
  heads.forEach((head, i) => {
    const revision = revisions[i];
    if (!revision || revision instanceof Error) return;
    const ref = { spaceId: scope.space.id, changeRequestId: head.id, changeRequestNumber: head.number, revisionId: revision.id };
    total += addedBroken(main, new LinkResolver(ctx, ref, contentOf(revision)), pageId);
  });
  return total;
}

export async function contentLinks(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  pageId: string | null,
  status: LinkStatus | null | undefined,
  args: PageArgs,
) {
  const { scope, content, ref } = await scopedContent(ctx, spaceId, changeRequestId);
  if (pageId && !entry(content.pages, pageId)) throw notFound(`Page "${pageId}"`);
  const resolver = new LinkResolver(ctx, ref, content);
  let changeRequestBroken: number;
  if (scope.changeRequest) {
    const mainId = await ensureSpaceRevision(ctx, scope.space);
    const main = await revisionById(ctx).load(mainId);
    const mainRef = { spaceId: scope.space.id, changeRequestId: null, changeRequestNumber: null, revisionId: mainId };
    changeRequestBroken = addedBroken(new LinkResolver(ctx, mainRef, contentOf(main)), resolver, pageId);
  } else {
    changeRequestBroken = await changeRequestsBroken(ctx, scope, resolver, pageId);
  }
  return linkReport(ctx, resolver, { pageId, status, args, changeRequestBroken });
}

// ─── Writes ──────────────────────────────────────────────────────────────────────────────────

export const PAGE_TYPES = ["document", "group", "link"] as const;
export type PageType = (typeof PAGE_TYPES)[number];
const TITLE_MAX = 256;
const DESCRIPTION_MAX = 1000;
export const MARKDOWN_MAX = 1_000_000;
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

export interface PageInput {
  title?: string | null;
  markdown?: string | null;
  description?: string | null;
  parent?: string | null;
  position?: number | null;
  hidden?: boolean | null;
  emoji?: string | null;
  type?: PageType | null;
  href?: string | null;
  slug?: string | null;
}

export function checkTitle(value: string | null | undefined): string {
  const title = value?.trim();
  if (!title) throw badInput("title is required and cannot be blank.");
  checkLength("title", title, 1, TITLE_MAX);
  return title;
}

function checkPosition(value: number | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 0)
    throw badInput(`position must be an integer of 0 or more (the index among the siblings; got ${value}).`);
  return value;
}

function checkParent(content: RevisionContent, parent: string | null, movingId?: string): string | null {
  if (parent === null) return null;
  const target = entry(content.pages, parent);
  if (!target) throw badInput(`parent: page "${parent}" does not exist in this content.`);
  if (target.type === "link") throw badInput(`parent: page "${parent}" is a link page, which cannot hold pages.`);
  if (movingId && isSelfOrAncestor(content, movingId, parent))
    throw badInput(`parent: a page cannot move under itself or one of its sub-pages.`);
  return parent;
}

function checkSlug(content: RevisionContent, slug: string, parentId: string | null, pageId?: string): string {
  checkLength("slug", slug, 1, 100);
  checkPattern("slug", slug, SLUG, "lowercase letters and digits separated by single hyphens");
  if (takenSlugs(content, parentId, pageId).has(slug)) throw conflict(`slug "${slug}" is already used by another page at the same path.`);
  return slug;
}

export function checkMarkdown(value: string): string {
  if (value.length > MARKDOWN_MAX) throw badInput(`markdown must be at most ${MARKDOWN_MAX} characters long (got ${value.length}).`);
  return value;
}

function checkDescription(value: string | null): string | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  checkLength("description", text, 0, DESCRIPTION_MAX);
  return text || undefined;
}

/** Stores a change to a scope (with its activity, commitChange) and tells the space's own subscribers. */
export async function commit<T>(ctx: Context, scope: ContentScope, type: RevisionType, change: (draft: RevisionContent) => T) {
  const result = await commitChange(ctx, scope, type, change);
  if (!scope.changeRequest) publishSpaceUpdated(ctx, scope.space.id);
  return result;
}

function pageAfter(ctx: Context, scope: ContentScope, revisionId: string, content: RevisionContent, pageId: string): PageView {
  return findPageView(pageViews(ctx, scopeRef(scope, revisionId), content), pageId)!;
}

export async function createPage(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  input: PageInput,
): Promise<PageView> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "create pages");
  const title = checkTitle(input.title);
  const type: PageType = input.type ?? "document";
  if (!PAGE_TYPES.includes(type)) throw badInput(`type must be one of ${PAGE_TYPES.join(", ")}.`);
  const markdown = checkMarkdown(input.markdown ?? "");
  if (type !== "document" && markdown) throw badInput(`markdown: ${type} pages have no content of their own; use a document page.`);
  if (type === "link") {
    if (!input.href) throw badInput("href is required for a link page: the URL it points to.");
    checkUri("href", input.href);
  } else if (input.href) throw badInput("href is only for link pages (type link).");
  const description = checkDescription(input.description ?? null);
  const emoji = checkEmoji(input.emoji) ?? undefined;
  const position = checkPosition(input.position);
  const now = new Date().toISOString();
  const id = newId("Page");
  const result = await commit(ctx, scope, "edits", (draft) => {
    const parentId = checkParent(draft, input.parent ?? null);
    const slug = input.slug ? checkSlug(draft, input.slug, parentId) : uniqueSlug(title, takenSlugs(draft, parentId));
    const page: StoredPage = {
      id,
      title,
      type,
      parentId,
      position: positionAt(draft, parentId, position),
      slug,
      markdown: type === "document" ? markdown : "",
      createdAt: now,
      updatedAt: now,
    };
    if (description) page.description = description;
    if (emoji) page.emoji = emoji;
    if (input.hidden) page.hidden = true;
    if (type === "link") page.href = input.href!;
    draft.pages[id] = page;
  });
  return pageAfter(ctx, scope, result.revisionId, result.content, id);
}

export async function updatePage(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  pageId: string,
  input: PageInput,
): Promise<PageView> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "edit pages");
  const title = input.title === undefined ? undefined : checkTitle(input.title);
  if (input.markdown === null) throw badInput("markdown cannot be null: send an empty string to clear the page.");
  const markdown = input.markdown === undefined ? undefined : checkMarkdown(input.markdown);
  const description = input.description === undefined ? undefined : checkDescription(input.description);
  const emoji = input.emoji === undefined ? undefined : checkEmoji(input.emoji);
  const position = checkPosition(input.position);
  if (input.hidden === null) throw badInput("hidden cannot be null: use true or false.");
  if (input.type !== undefined && input.type !== null) throw badInput("type cannot change: create a new page of the other type.");
  if (input.href) checkUri("href", input.href);
  const result = await commit(ctx, scope, "edits", (draft) => {
    const current = entry(draft.pages, pageId);
    if (!current) throw notFound(`Page "${pageId}"`);
    const page: StoredPage = { ...current };
    if (title !== undefined) page.title = title;
    if (markdown !== undefined) {
      if (page.type !== "document" && markdown) throw badInput(`markdown: ${page.type} pages have no content of their own.`);
      page.markdown = page.type === "document" ? markdown : "";
    }
    if (input.description !== undefined) {
      if (description) page.description = description;
      else delete page.description;
    }
    if (input.emoji !== undefined) {
      if (emoji) page.emoji = emoji;
      else delete page.emoji;
    }
    if (input.hidden !== undefined) {
      if (input.hidden) page.hidden = true;
      else delete page.hidden;
    }
    if (input.href !== undefined && input.href !== null) {
      if (page.type !== "link") throw badInput("href is only for link pages (type link).");
      page.href = input.href;
    }
    const moving = input.parent !== undefined || position !== undefined;
    if (input.parent !== undefined) page.parentId = checkParent(draft, input.parent, pageId);
    if (moving) page.position = positionAt(draft, page.parentId, position, pageId);
    if (input.slug !== undefined && input.slug !== null && input.slug !== page.slug)
      page.slug = checkSlug(draft, input.slug, page.parentId, pageId);
    else if (
      input.parent !== undefined &&
      page.parentId !== current.parentId &&
      page.type !== "group" &&
      takenSlugs(draft, page.parentId, pageId).has(page.slug)
    ) {
      page.slug = uniqueSlug(page.slug, takenSlugs(draft, page.parentId, pageId));
    }
    page.updatedAt = new Date().toISOString();
    draft.pages[pageId] = page;
  });
  return pageAfter(ctx, scope, result.revisionId, result.content, pageId);
}

/** Deletes a page and its sub-pages; true also when it did not exist. */
export async function deletePage(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  pageId: string,
): Promise<boolean> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "delete pages");
  const { content } = await scopeRevision(ctx, scope);
  if (!entry(content.pages, pageId)) return true;
  await commit(ctx, scope, "edits", (draft) => {
    if (!entry(draft.pages, pageId)) return;
    for (const id of subtreeIds(draft, pageId)) delete draft.pages[id];
  });
  return true;
}

export interface FileInput {
  name?: string | null;
  contentType?: string | null;
  data?: string | null;
}

const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;.*)?$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function maxFileBytes(ctx: Context): number {
  return ctx.config.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
}

/** Width and height of an image's bytes, when its format is one image-size reads. */
function imageDimensions(contentType: string, bytes: Buffer): { width: number; height: number } | undefined {
  if (!contentType.startsWith("image/")) return undefined;
  try {
    const size = imageSize(bytes);
    if (size.width && size.height) return { width: size.width, height: size.height };
  } catch {
    /* not an image format we can read: no dimensions */
  }
  return undefined;
}

export async function uploadFile(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  input: FileInput,
): Promise<FileView> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "upload files");
  const name = input.name?.trim();
  if (!name) throw badInput("name is required: the file's name, such as diagram.png.");
  checkLength("name", name, 1, 255);
  if (/[/\\\u0000-\u001f]/.test(name)) throw badInput("name cannot contain slashes or control characters.");
  const contentType = input.contentType?.trim().toLowerCase();
  if (!contentType) throw badInput("contentType is required, such as image/png.");
  checkPattern("contentType", contentType, CONTENT_TYPE, "a media type such as image/png");
  const encoded = (input.data ?? "").replace(/\s+/g, "");
  if (!encoded) throw badInput("data is required: the file's bytes, base64-encoded.");
  if (!BASE64.test(encoded) || encoded.length % 4 === 1) throw badInput("data must be base64-encoded (RFC 4648, standard alphabet).");
  const limit = maxFileBytes(ctx);
  if (Math.floor((encoded.length * 3) / 4) > limit + 3) throw badInput(`data is too large: files are at most ${limit} bytes.`);
  const bytes = Buffer.from(encoded, "base64");
  if (bytes.length > limit) throw badInput(`data is too large: files are at most ${limit} bytes (got ${bytes.length}).`);
  const dimensions = imageDimensions(contentType, bytes);
  const id = newId("File");
  // Raw insert: the embedded database's Prisma adapter cannot bind Bytes values (Prisma sends
  // them as base64 text), so the bytes travel as base64 and the database decodes them.
  await ctx.prisma.$executeRaw`
    INSERT INTO "FileBlob" ("id", "spaceId", "name", "contentType", "size", "width", "height", "data")
    VALUES (${id}, ${scope.space.id}, ${name}, ${contentType}, ${bytes.length}, ${dimensions?.width ?? null}, ${dimensions?.height ?? null}, decode(${bytes.toString("base64")}, 'base64'))`;
  try {
    const result = await commit(ctx, scope, "edits", (draft) => {
      draft.files[id] = { id, name, contentType, size: bytes.length, ...(dimensions ?? {}) };
    });
    return fileView(ctx, scope.space.id, result.content.files[id]!);
  } catch (err) {
    await ctx.prisma.fileBlob.deleteMany({ where: { spaceId: scope.space.id, id } }).catch(() => undefined);
    throw err;
  }
}

export async function importContent(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  input: { url?: string | null; source?: string | null },
): Promise<{ revision: string; importedResources: number; totalResources: number }> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "import content");
  if (!input.url) throw badInput("url is required: the address to import from.");
  const source = checkSource(input.source);
  const plan = await fetchImport(ctx.config, input.url, source, maxFileBytes(ctx));
  // The images' bytes first (content-addressed ids: an image the space already holds is kept as
  // it is), then the revision that references them.
  for (const image of plan.images) {
    await ctx.prisma.$executeRaw`
      INSERT INTO "FileBlob" ("id", "spaceId", "name", "contentType", "size", "width", "height", "data")
      VALUES (${image.id}, ${scope.space.id}, ${image.name}, ${image.contentType}, ${image.bytes.length}, ${image.width ?? null}, ${image.height ?? null}, decode(${image.bytes.toString("base64")}, 'base64'))
      ON CONFLICT ("spaceId", "id") DO NOTHING`;
  }
  const now = new Date().toISOString();
  const fileUrl = (fileId: string) => `/v1/spaces/${scope.space.id}/content/files/${fileId}/download`;
  const result = await commit(ctx, scope, "import", (draft) => applyImport(draft, plan, now, fileUrl));
  return { revision: result.revisionId, importedResources: result.value, totalResources: Math.max(plan.totalResources, result.value) };
}

// ─── Batched changes of a change request ─────────────────────────────────────────────────────

export interface ContentChangeView {
  object: ChangeOutcome["object"];
  ref?: string;
  page: { id: string; urls: { location: string } | null };
}

export interface ContentUpdateView {
  changeRequest: ChangeRequest;
  changes: ContentChangeView[];
  insertedFiles: FileView[];
}

const BATCH_FETCH_MS = 20_000;

/** The bytes of a planned file: decoded, or fetched through the outbound policy. */
async function plannedFileBytes(ctx: Context, file: PlannedFile, limit: number): Promise<{ bytes: Buffer; contentType: string }> {
  if (file.base64 !== undefined) {
    const bytes = Buffer.from(file.base64, "base64");
    if (bytes.length > limit) throw badInput(`${file.label}.base64 is too large: files are at most ${limit} bytes (got ${bytes.length}).`);
    return { bytes, contentType: file.contentType! };
  }
  checkOutboundUrl(ctx.config, `${file.label}.url`, file.url!);
  let got: { bytes: Buffer; type: string } | null;
  try {
    got = await fetchBytes(ctx.config, new URL(file.url!), Date.now() + BATCH_FETCH_MS, limit, "*/*");
  } catch (err) {
    const refusal = outboundRefusal(err);
    throw badInput(`${file.label}.url: ${file.url} could not be fetched${refusal ? `: ${refusal}` : ""}.`);
  }
  if (!got)
    throw badInput(
      `${file.label}.url: ${file.url} could not be fetched (an error status, no answer in time, or more than ${limit} bytes).`,
    );
  const served = got.type.split(";")[0]!.trim();
  const contentType = file.contentType ?? (CONTENT_TYPE.test(served) ? served : "application/octet-stream");
  return { bytes: got.bytes, contentType };
}

/**
 * GitBook's `POST …/change-requests/{id}/content`: applies a batch of changes (content/batch.ts)
 * to a draft or open change request as one revision. Files are stored first (and removed again
 * when the batch does not apply). Answers the change request, or with `compat` false the change
 * request, each page touched and the files inserted.
 */
export async function updateChangeRequestContent(
  ctx: Context,
  spaceId: string,
  changeRequestId: string,
  changes: ContentChangeInput[],
  compat: boolean,
): Promise<ChangeRequest | ContentUpdateView> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "edit content");
  const cr = scope.changeRequest!;
  const limit = maxFileBytes(ctx);
  const plan = planChanges(changes, { maxFileBytes: limit });

  // What each revert_page reverts to: a revision of this space, or the change request's base.
  const revertTo = new Map<number, RevisionContent>();
  for (const [index, change] of plan.entries()) {
    if (change.op !== "revert_page") continue;
    const id = change.revision ?? cr.revisionMergedAncestor ?? cr.revisionInitial;
    const revision = await ctx.prisma.revision.findFirst({ where: { id, spaceId: scope.space.id } });
    if (!revision) throw badInput(`${change.label}.revision: "${id}" is not a revision of this space.`);
    revertTo.set(index, contentOf(revision));
  }

  const planned = plan.flatMap((c) => (c.op === "insert_files" ? c.files : []));
  const files = new Map<string, StoredFile>();
  try {
    for (const file of planned) {
      const { bytes, contentType } = await plannedFileBytes(ctx, file, limit);
      const dimensions = imageDimensions(contentType, bytes);
      await ctx.prisma.$executeRaw`
        INSERT INTO "FileBlob" ("id", "spaceId", "name", "contentType", "size", "width", "height", "data")
        VALUES (${file.id}, ${scope.space.id}, ${file.name}, ${contentType}, ${bytes.length}, ${dimensions?.width ?? null}, ${dimensions?.height ?? null}, decode(${bytes.toString("base64")}, 'base64'))`;
      files.set(file.id, { id: file.id, name: file.name, contentType, size: bytes.length, ...(dimensions ?? {}) });
    }
    const now = new Date().toISOString();
    const result = await commit(ctx, scope, "edits", (draft) => applyChanges(draft, plan, { files, revertTo, now }));
    // The change request as this batch left it: its revision is the one the batch made, even when
    // a concurrent batch has already moved it on.
    const changeRequest = {
      ...(await ctx.prisma.changeRequest.findUniqueOrThrow({ where: { id: cr.id } })),
      revisionId: result.revisionId,
    };
    if (compat) return changeRequest;
    const location = (pageId: string) => ctx.urls.api(`/spaces/${scope.space.id}/change-requests/${cr.id}/content/page/${pageId}`);
    return {
      changeRequest,
      changes: result.value.map((o) => ({
        object: o.object,
        ...(o.ref ? { ref: o.ref } : {}),
        page: { id: o.pageId, urls: o.object === "deleted_page" ? null : { location: location(o.pageId) } },
      })),
      insertedFiles: planned.map((f) => fileView(ctx, scope.space.id, result.content.files[f.id]!)),
    };
  } catch (err) {
    if (files.size)
      await ctx.prisma.fileBlob.deleteMany({ where: { spaceId: scope.space.id, id: { in: [...files.keys()] } } }).catch(() => undefined);
    throw err;
  }
}
