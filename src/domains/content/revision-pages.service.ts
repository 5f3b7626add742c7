import { createHash } from "node:crypto";
import type { Context } from "../../core/context.js";
import { badInput, notFound } from "../../core/errors.js";
import { flattenTree, pageTree, type PageTreeNode, type RevisionContent, type StoredPage } from "./model.js";
import { contentOf, findChangeRequest, readScope, revisionById, type ContentScope } from "./revisions.js";
import { LinkResolver } from "./links.js";
import { toGitBookDocument, type GitBookDocument } from "./gitbook-document.js";
import { documentRefs, stableRefsMarkdown } from "./page-refs.js";
import {
  fileDownloadUrl,
  findPageView,
  reusableContentView,
  pageViews,
  revisionView,
  scopeRef,
  withDocument,
  type PageView,
  type RevisionView,
} from "./views.js";

/**
 * Reads of one revision of a space by id (GitBook's `/spaces/{spaceId}/revisions/{revisionId}/…`),
 * what GitBook's reader asks for to render a page: the revision with its page tree, a page (as
 * markdown or as a document), a page by path, its meta links, and what the revision changed.
 * Revisions are immutable, so each answer stays true for good. Access is the space's: any role
 * on the space reads every revision of it (its change requests' included).
 */

export type RefsFormat = "relative" | "stable";
export const REFS_FORMATS: RefsFormat[] = ["relative", "stable"];

interface RevisionRead {
  scope: ContentScope;
  view: RevisionView;
  content: RevisionContent;
}

/** A revision of the space (its own or one of its change requests'), or a 404 naming it. */
async function revisionRead(ctx: Context, spaceId: string, revisionId: string): Promise<RevisionRead> {
  const base = await readScope(ctx, spaceId);
  const revision = await revisionById(ctx).load(revisionId);
  if (!revision || revision.spaceId !== base.space.id) throw notFound(`Revision "${revisionId}" in space "${spaceId}"`);
  // A change request's revision links into the change request (its app URL).
  const changeRequest = revision.changeRequestId
    ? await findChangeRequest(ctx, base.space.id, revision.changeRequestId).catch(() => null)
    : null;
  const scope = { ...base, changeRequest };
  const content = contentOf(revision);
  return { scope, view: revisionView(ctx, scope, revision, content), content };
}

export async function getRevision(ctx: Context, spaceId: string, revisionId: string): Promise<RevisionView> {
  return (await revisionRead(ctx, spaceId, revisionId)).view;
}

/**
 * The value of `format.markdown.refs`: a GraphQL argument, else the dotted query parameter of a
 * /v1 request (a name GraphQL arguments cannot have); relative when absent.
 */
export function refsFormat(ctx: Context, arg: string | null | undefined): RefsFormat {
  let value = arg ?? null;
  if (value === null && ctx.request) {
    try {
      value = new URL(ctx.request.url).searchParams.get("format.markdown.refs");
    } catch {
      value = null;
    }
  }
  if (value === null || value === "") return "relative";
  if (!(REFS_FORMATS as string[]).includes(value))
    throw badInput(`format.markdown.refs must be relative or stable (got ${JSON.stringify(value.slice(0, 40))}).`);
  return value as RefsFormat;
}

export interface RevisionPageOptions {
  format?: "markdown" | "document" | null;
  refs: RefsFormat;
}

/** A page of a read as GitBook answers it: markdown (stable refs on demand) or document. */
function servePage(ctx: Context, read: RevisionRead, node: PageTreeNode, options: RevisionPageOptions): PageView {
  const ref = scopeRef(read.scope, read.view.id);
  const page = findPageView(pageViews(ctx, ref, read.content), node.id)!;
  if (node.type !== "document") return page;
  const resolver = () => new LinkResolver(ctx, ref, read.content);
  if (options.format === "document") return withDocument(page, node.markdown, documentRefs(resolver(), node));
  if (options.refs === "stable" && page.markdown) return { ...page, markdown: stableRefsMarkdown(page.markdown, resolver(), node) };
  return page;
}

function nodes(content: RevisionContent): PageTreeNode[] {
  return flattenTree(pageTree(content));
}

function pageNode(content: RevisionContent, pageId: string): PageTreeNode {
  const node = nodes(content).find((p) => p.id === pageId);
  if (!node) throw notFound(`Page "${pageId}"`);
  return node;
}

export async function getRevisionPage(
  ctx: Context,
  spaceId: string,
  revisionId: string,
  pageId: string,
  options: RevisionPageOptions,
): Promise<PageView> {
  const read = await revisionRead(ctx, spaceId, revisionId);
  return servePage(ctx, read, pageNode(read.content, pageId), options);
}

/**
 * The page at a path of the revision's tree (slugs joined by `/`, as in `path`), compared without
 * case and without leading or trailing slashes; a document before a group of the same path (a
 * group's path is its parent's). Link pages are not found by path. 404 when no page has it.
 */
export async function getRevisionPageByPath(
  ctx: Context,
  spaceId: string,
  revisionId: string,
  pagePath: string,
  options: RevisionPageOptions,
): Promise<PageView> {
  const read = await revisionRead(ctx, spaceId, revisionId);
  const wanted = pagePath.replace(/^\/+|\/+$/g, "").toLowerCase();
  const matches = wanted ? nodes(read.content).filter((p) => p.path.toLowerCase() === wanted) : [];
  // GitBook answers documents and groups here (link pages have no path of their own there).
  const node = matches.find((p) => p.type === "document") ?? matches.find((p) => p.type === "group");
  if (!node) throw notFound(`Page at path "${pagePath}"`);
  return servePage(ctx, read, node, options);
}

/** The document of a document page (groups and links have none: 404). */
export async function getRevisionPageDocument(ctx: Context, spaceId: string, revisionId: string, pageId: string): Promise<GitBookDocument> {
  const read = await revisionRead(ctx, spaceId, revisionId);
  const node = pageNode(read.content, pageId);
  if (node.type !== "document") throw notFound(`Document of page "${pageId}" (a ${node.type} page has none)`);
  const resolver = new LinkResolver(ctx, scopeRef(read.scope, read.view.id), read.content);
  return toGitBookDocument(node.markdown, { resolveRef: documentRefs(resolver, node) });
}

export interface MetaLinkTarget {
  kind: "page" | "url";
  page?: string;
  url?: string;
}

/** A page's meta links (canonical, alternates): pages carry none here, so alternates is empty. */
export async function getRevisionPageMetaLinks(
  ctx: Context,
  spaceId: string,
  revisionId: string,
  pageId: string,
): Promise<{ canonical?: MetaLinkTarget; alternates: MetaLinkTarget[] }> {
  const read = await revisionRead(ctx, spaceId, revisionId);
  pageNode(read.content, pageId);
  return { alternates: [] };
}

// ─── Semantic changes ────────────────────────────────────────────────────────────────────────

export interface ChangedPage {
  id: string;
  type: StoredPage["type"];
  title: string;
  path?: string;
}

export interface SemanticChange {
  type:
    | "page_created"
    | "page_edited"
    | "page_deleted"
    | "page_moved"
    | "file_created"
    | "file_edited"
    | "file_deleted"
    | "reusable_content_created"
    | "reusable_content_edited"
    | "reusable_content_deleted";
  page?: ChangedPage;
  reusableContent?: { id: string; title: string; document?: string };
  file?: { id: string; name: string; contentType: string; downloadURL: string };
  attributes?: Record<string, { before?: unknown; after?: unknown }>;
  parent?: { before?: ChangedPage; after?: ChangedPage };
}

export interface SemanticChanges {
  changes: SemanticChange[];
  more?: number;
}

export const CHANGES_LIMIT_MAX = 1000;
const DEFAULT_CHANGES_LIMIT = 10;

/** A short fingerprint of a page's markdown: what `attributes.document` compares (documents have no versions of their own here). */
function documentVersion(item: { id: string; markdown: string }): string {
  const id = item.id.replace(/^(page|rc)_/, "");
  return `doc_${id}_${createHash("sha256").update(item.markdown).digest("hex").slice(0, 12)}`;
}

/**
 * What a revision changed against its first parent (nothing for a first revision: everything
 * is created): pages created, edited (title, description, slug, emoji, link target, document),
 * moved (another parent; a new position among the same siblings is not a change) and deleted;
 * files and reusable contents created, edited and deleted. Pages in the revision's tree order,
 * then deleted pages, then files and reusable contents by name; at most `limit` (default 10),
 * `more` counting the rest.
 */
export async function getRevisionChanges(
  ctx: Context,
  spaceId: string,
  revisionId: string,
  limit: number | null | undefined,
): Promise<SemanticChanges> {
  const max = limit ?? DEFAULT_CHANGES_LIMIT;
  if (!Number.isInteger(max) || max < 1 || max > CHANGES_LIMIT_MAX)
    throw badInput(`limit must be an integer from 1 to ${CHANGES_LIMIT_MAX} (got ${max}).`);
  const read = await revisionRead(ctx, spaceId, revisionId);
  const parentId = read.view.parents[0];
  const parentRow = parentId ? await revisionById(ctx).load(parentId) : null;
  const before = parentRow && parentRow.spaceId === read.scope.space.id ? contentOf(parentRow) : contentOf(null);
  const changes = semanticChanges(ctx, read.scope.space.id, before, read.content);
  return changes.length > max ? { changes: changes.slice(0, max), more: changes.length - max } : { changes };
}

function semanticChanges(ctx: Context, spaceId: string, before: RevisionContent, after: RevisionContent): SemanticChange[] {
  const oldNodes = new Map(nodes(before).map((p) => [p.id, p]));
  const newNodes = nodes(after);
  const newById = new Map(newNodes.map((p) => [p.id, p]));
  const changed = (p: PageTreeNode): ChangedPage =>
    p.type === "group" ? { id: p.id, type: p.type, title: p.title } : { id: p.id, type: p.type, title: p.title, path: p.path };
  const parentOf = (p: PageTreeNode, byId: Map<string, PageTreeNode>) => (p.parentId ? byId.get(p.parentId) : undefined);
  const out: SemanticChange[] = [];
  for (const page of newNodes) {
    const old = oldNodes.get(page.id);
    if (!old) {
      out.push({ type: "page_created", page: changed(page) });
      continue;
    }
    if (old.parentId !== page.parentId) {
      const from = parentOf(old, oldNodes);
      const to = parentOf(page, newById);
      out.push({
        type: "page_moved",
        page: changed(page),
        parent: { ...(from ? { before: changed(from) } : {}), ...(to ? { after: changed(to) } : {}) },
      });
    }
    const attributes: NonNullable<SemanticChange["attributes"]> = {};
    const compare = (name: string, a: string | undefined, b: string | undefined) => {
      if (a !== b) attributes[name] = { ...(a !== undefined ? { before: a } : {}), ...(b !== undefined ? { after: b } : {}) };
    };
    compare("title", old.title, page.title);
    compare("emoji", old.emoji, page.emoji);
    compare("slug", old.type === "link" ? undefined : old.slug, page.type === "link" ? undefined : page.slug);
    if (page.type === "document") {
      compare("description", old.description, page.description);
      if (old.markdown !== page.markdown) attributes.document = { before: documentVersion(old), after: documentVersion(page) };
    }
    if (page.type === "link" && old.href !== page.href) {
      attributes.target = {
        ...(old.href !== undefined ? { before: { kind: "url", url: old.href } } : {}),
        ...(page.href !== undefined ? { after: { kind: "url", url: page.href } } : {}),
      };
    }
    if (Object.keys(attributes).length) out.push({ type: "page_edited", page: changed(page), attributes });
  }
  for (const old of oldNodes.values()) if (!newById.has(old.id)) out.push({ type: "page_deleted", page: changed(old) });

  const fileOf = (id: string, name: string, contentType: string) => ({
    id,
    name,
    contentType,
    downloadURL: fileDownloadUrl(ctx, spaceId, id),
  });
  const files = [...new Set([...Object.keys(before.files), ...Object.keys(after.files)])]
    .map((id) => ({
      id,
      old: Object.hasOwn(before.files, id) ? before.files[id] : undefined,
      now: Object.hasOwn(after.files, id) ? after.files[id] : undefined,
    }))
    .sort((a, b) => (a.now ?? a.old)!.name.localeCompare((b.now ?? b.old)!.name) || a.id.localeCompare(b.id));
  for (const { id, old, now } of files) {
    if (!old && now) out.push({ type: "file_created", file: fileOf(id, now.name, now.contentType) });
    else if (old && !now) out.push({ type: "file_deleted", file: fileOf(id, old.name, old.contentType) });
    else if (old && now) {
      const attributes: NonNullable<SemanticChange["attributes"]> = {};
      if (old.name !== now.name) attributes.name = { before: old.name, after: now.name };
      if (old.contentType !== now.contentType) attributes.contentType = { before: old.contentType, after: now.contentType };
      if (old.size !== now.size) attributes.size = { before: old.size, after: now.size };
      if (Object.keys(attributes).length) out.push({ type: "file_edited", file: fileOf(id, now.name, now.contentType), attributes });
    }
  }

  const reusable = (item: { id: string; title: string; markdown: string }) => {
    const view = reusableContentView(item);
    return view.document ? { id: view.id, title: view.title, document: view.document } : { id: view.id, title: view.title };
  };
  const items = [...new Set([...Object.keys(before.reusableContents), ...Object.keys(after.reusableContents)])]
    .map((id) => ({
      id,
      old: Object.hasOwn(before.reusableContents, id) ? before.reusableContents[id] : undefined,
      now: Object.hasOwn(after.reusableContents, id) ? after.reusableContents[id] : undefined,
    }))
    .sort((a, b) => (a.now ?? a.old)!.title.localeCompare((b.now ?? b.old)!.title) || a.id.localeCompare(b.id));
  for (const { old, now } of items) {
    if (!old && now) out.push({ type: "reusable_content_created", reusableContent: reusable(now) });
    else if (old && !now) out.push({ type: "reusable_content_deleted", reusableContent: reusable(old) });
    else if (old && now) {
      const attributes: NonNullable<SemanticChange["attributes"]> = {};
      if (old.title !== now.title) attributes.title = { before: old.title, after: now.title };
      if (old.markdown !== now.markdown) attributes.document = { before: documentVersion(old), after: documentVersion(now) };
      if (Object.keys(attributes).length) out.push({ type: "reusable_content_edited", reusableContent: reusable(now), attributes });
    }
  }
  return out;
}
