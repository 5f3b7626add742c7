import type { Revision } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { spaceUrls } from "../spaces/spaces.service.js";
import { pageTree, type PageTreeNode, type RevisionContent, type StoredFile, type StoredReusableContent } from "./model.js";
import { toGitBookDocument, type GitBookDocument, type RefResolver } from "./gitbook-document.js";
import type { ContentScope } from "./revisions.js";

/**
 * What the graph's Revision, Page and File types resolve from: plain objects computed from a
 * revision's content, with every documented field already in its output form. Page trees are
 * served twice from the same objects: typed (GraphQL `pages { … }`) and, on /v1 where a
 * recursive selection cannot be spelled out, as JSON (see `pageJson`).
 */

/** Where a content scope lives, for links. */
export interface ScopeRef {
  spaceId: string;
  changeRequestId: string | null;
  changeRequestNumber: number | null;
  revisionId: string;
}

export function scopeRef(scope: ContentScope, revisionId: string): ScopeRef {
  return {
    spaceId: scope.space.id,
    changeRequestId: scope.changeRequest?.id ?? null,
    changeRequestNumber: scope.changeRequest?.number ?? null,
    revisionId,
  };
}

/** The app location of a scope's content: the space, or the change request inside it. */
export function scopeAppBase(ctx: Context, ref: Pick<ScopeRef, "spaceId" | "changeRequestNumber">): string {
  const space = ctx.urls.app(`/s/${ref.spaceId}`);
  return ref.changeRequestNumber === null ? space : `${space}/~/changes/${ref.changeRequestNumber}`;
}

export function pageAppUrl(ctx: Context, ref: Pick<ScopeRef, "spaceId" | "changeRequestNumber">, path: string): string {
  const base = scopeAppBase(ctx, ref);
  return path ? `${base}/${path.split("/").map(encodeURIComponent).join("/")}` : base;
}

/** Where a file's bytes are served (an authenticated GET on this server, see binary.ts). */
export function fileDownloadUrl(ctx: Context, spaceId: string, fileId: string): string {
  return ctx.urls.api(`/spaces/${spaceId}/content/files/${fileId}/download`);
}

export interface PageLayout {
  width: string;
  cover: boolean;
  coverSize: string;
  title: boolean;
  description: boolean;
  tableOfContents: boolean;
  outline: boolean;
  pagination: boolean;
  coverMask: string;
  metadata: boolean;
  tags: boolean;
  actions: boolean;
  anchors: boolean;
}

const DEFAULT_LAYOUT: PageLayout = {
  width: "default",
  cover: false,
  coverSize: "hero",
  title: true,
  description: true,
  tableOfContents: true,
  outline: true,
  pagination: true,
  coverMask: "none",
  metadata: true,
  tags: true,
  actions: true,
  anchors: true,
};

export interface PageView {
  id: string;
  title: string;
  emoji?: string;
  icon?: string;
  createdAt: string;
  updatedAt: string;
  markdown?: string;
  type: "document" | "group" | "link";
  /** `sheet` for documents, else the type (a deprecated field GitBook's clients still read). */
  kind: "sheet" | "group" | "link";
  /** Where a link page points: `{kind: url, url}` (link pages only). */
  target?: { kind: "url"; url: string };
  /** Page tags: pages carry none here. */
  tags: { tag: string; primary?: boolean }[];
  urls: { app: string };
  slug: string;
  path: string;
  description?: string;
  documentId?: string;
  pages: PageView[];
  layout?: PageLayout;
  hidden: boolean;
  noIndex: boolean;
  noRobotsIndex: boolean;
  /** Only on a single page read with `format=document` (which leaves out `markdown`). */
  document?: GitBookDocument;
  /** Not part of the output: where the page lives (for resolvers of other areas). */
  scope: ScopeRef;
}

/** The markdown a page serves: its own for documents, `[title](href)` for link pages, none for groups. */
export function pageMarkdown(node: Pick<PageTreeNode, "type" | "title" | "markdown" | "href">): string | undefined {
  if (node.type === "group") return undefined;
  if (node.type === "link") return node.href ? `[${node.title.replace(/([[\]])/g, "\\$1")}](<${node.href}>)` : "";
  return node.markdown;
}

export function pageView(ctx: Context, ref: ScopeRef, node: PageTreeNode): PageView {
  const view: PageView = {
    id: node.id,
    title: node.title,
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
    type: node.type,
    kind: node.type === "document" ? "sheet" : node.type,
    tags: [],
    urls: { app: pageAppUrl(ctx, ref, node.path) },
    slug: node.slug,
    path: node.path,
    pages: node.pages.map((child) => pageView(ctx, ref, child)),
    hidden: node.hidden ?? false,
    noIndex: node.noIndex ?? false,
    noRobotsIndex: node.noRobotsIndex ?? false,
    scope: ref,
  };
  if (node.emoji) view.emoji = node.emoji;
  if (node.icon) view.icon = node.icon;
  const markdown = pageMarkdown(node);
  if (markdown !== undefined) view.markdown = markdown;
  if (node.description) view.description = node.description;
  if (node.type === "link") view.target = { kind: "url", url: node.href ?? "" };
  if (node.type === "document") {
    // A page's document is derived from its markdown in each revision; it is named after the page.
    view.documentId = `doc_${node.id.replace(/^page_/, "")}`;
    view.layout = DEFAULT_LAYOUT;
  }
  return view;
}

export function pageViews(ctx: Context, ref: ScopeRef, content: RevisionContent): PageView[] {
  return pageTree(content).map((node) => pageView(ctx, ref, node));
}

/** Finds a page (anywhere in the tree) of a list of views. */
export function findPageView(pages: PageView[], pageId: string): PageView | null {
  for (const page of pages) {
    if (page.id === pageId) return page;
    const found = findPageView(page.pages, pageId);
    if (found) return found;
  }
  return null;
}

/**
 * A page read with `format=document`: its document instead of its markdown, as GitBook answers
 * (its Page mixes in `{markdown} | {document}`, one of them).
 */
export function withDocument(page: PageView, markdown: string, resolveRef?: RefResolver): PageView {
  const { markdown: _markdown, ...rest } = page;
  return { ...rest, document: toGitBookDocument(markdown, { resolveRef }) };
}

/** The fields of a documented Page, in order; `pageJson` writes exactly these (absent ones omitted). */
const PAGE_JSON_FIELDS = [
  "id",
  "title",
  "emoji",
  "icon",
  "createdAt",
  "updatedAt",
  "markdown",
  "type",
  "kind",
  "tags",
  "target",
  "urls",
  "slug",
  "path",
  "description",
  "documentId",
  "pages",
  "layout",
  "hidden",
  "noIndex",
  "noRobotsIndex",
  "document",
] as const;

/** A page and its sub-pages as the documented JSON (the /v1 form of the recursive `pages`). */
export function pageJson(page: PageView): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of PAGE_JSON_FIELDS) {
    const value = page[key];
    if (value === undefined || value === null) continue;
    out[key] = key === "pages" ? (value as PageView[]).map(pageJson) : value;
  }
  return out;
}

// ─── Files ───────────────────────────────────────────────────────────────────────────────────

export interface FileView {
  id: string;
  name: string;
  contentType: string;
  downloadURL: string;
  size: number;
  dimensions?: { width: number; height: number };
}

export function fileView(ctx: Context, spaceId: string, file: StoredFile): FileView {
  const view: FileView = {
    id: file.id,
    name: file.name,
    contentType: file.contentType,
    downloadURL: fileDownloadUrl(ctx, spaceId, file.id),
    size: file.size,
  };
  if (file.width && file.height) view.dimensions = { width: file.width, height: file.height };
  return view;
}

/** Files of a content, by name then id. */
export function fileViews(ctx: Context, spaceId: string, content: RevisionContent): FileView[] {
  return Object.values(content.files)
    .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))
    .map((f) => fileView(ctx, spaceId, f));
}

// ─── Reusable contents ───────────────────────────────────────────────────────────────────────

/** GitBook's RevisionReusableContent: `document` names its document, absent when it is empty. */
export interface ReusableContentView {
  id: string;
  title: string;
  markdown: string;
  document?: string;
}

export function reusableContentView(item: StoredReusableContent): ReusableContentView {
  const view: ReusableContentView = { id: item.id, title: item.title, markdown: item.markdown };
  // Like a page's, its document is derived from its markdown in each revision and named after it.
  if (item.markdown.trim()) view.document = `doc_${item.id.replace(/^rc_/, "")}`;
  return view;
}

/** Reusable contents of a content, by title then id. */
export function reusableContentViews(content: RevisionContent): ReusableContentView[] {
  return Object.values(content.reusableContents)
    .sort((a, b) => a.title.localeCompare(b.title) || a.id.localeCompare(b.id))
    .map(reusableContentView);
}

// ─── Revisions ───────────────────────────────────────────────────────────────────────────────

export interface RevisionView {
  id: string;
  parents: string[];
  createdAt: Date;
  type: string;
  content: RevisionContent;
  ref: ScopeRef;
  urls: { app: string; published?: string; public?: string };
}

export function revisionView(ctx: Context, scope: ContentScope, revision: Revision, content: RevisionContent): RevisionView {
  const ref = scopeRef(scope, revision.id);
  const urls: RevisionView["urls"] = { app: `${scopeAppBase(ctx, ref)}/~/revisions/${revision.id}` };
  if (!scope.changeRequest) {
    // The published site shows the space's active revision; a change request is not published.
    const space = spaceUrls(ctx, scope.space);
    if (space.published) urls.published = space.published;
    if (space.public) urls.public = space.public;
  }
  return { id: revision.id, parents: revision.parents, createdAt: revision.createdAt, type: revision.type, content, ref, urls };
}
