import { merge as diff3Merge } from "node-diff3";
import GithubSlugger from "github-slugger";

/**
 * The content of a revision: an immutable snapshot stored as JSON in Revision.content.
 * Pages are kept flat, keyed by id, with their parent and position; the tree is derived.
 * Keeping them flat makes the three-way merge a per-page, per-field comparison.
 */
export interface StoredPage {
  id: string;
  title: string;
  /** "document" (markdown content), "group" (a heading holding pages) or "link". */
  type: "document" | "group" | "link";
  parentId: string | null;
  /** Order among siblings. */
  position: number;
  slug: string;
  markdown: string;
  description?: string;
  emoji?: string;
  icon?: string;
  hidden?: boolean;
  /** Target of a "link" page. */
  href?: string;
  createdAt: string;
  updatedAt: string;
}

export interface StoredFile {
  id: string;
  name: string;
  contentType: string;
  size: number;
  width?: number;
  height?: number;
}

export interface StoredReusableContent {
  id: string;
  title: string;
  markdown: string;
}

export interface RevisionContent {
  pages: Record<string, StoredPage>;
  files: Record<string, StoredFile>;
  reusableContents: Record<string, StoredReusableContent>;
  variables: Record<string, string>;
}

export function emptyContent(): RevisionContent {
  return { pages: {}, files: {}, reusableContents: {}, variables: {} };
}

/** Reads Revision.content (JSON) defensively: missing parts become empty. */
export function readContent(json: unknown): RevisionContent {
  const c = (json ?? {}) as Partial<RevisionContent>;
  return { pages: c.pages ?? {}, files: c.files ?? {}, reusableContents: c.reusableContents ?? {}, variables: c.variables ?? {} };
}

export interface PageTreeNode extends StoredPage {
  path: string;
  pages: PageTreeNode[];
}

/** Siblings in order (position, then id for a stable tie-break). */
export function childrenOf(content: RevisionContent, parentId: string | null): StoredPage[] {
  return Object.values(content.pages)
    .filter((p) => p.parentId === parentId)
    .sort((a, b) => a.position - b.position || a.id.localeCompare(b.id));
}

/** The page tree with each page's path (its ancestors' slugs and its own, joined by "/"). */
export function pageTree(content: RevisionContent): PageTreeNode[] {
  const build = (parentId: string | null, prefix: string): PageTreeNode[] =>
    childrenOf(content, parentId).map((page) => {
      const path = page.type === "group" ? prefix : prefix ? `${prefix}/${page.slug}` : page.slug;
      return { ...page, path, pages: build(page.id, page.type === "group" ? prefix : path) };
    });
  return build(null, "");
}

/** Every page with its path, in tree order. */
export function flattenTree(tree: PageTreeNode[]): PageTreeNode[] {
  return tree.flatMap((node) => [node, ...flattenTree(node.pages)]);
}

/** A slug from a title, unique among the given sibling slugs. */
export function uniqueSlug(title: string, taken: Iterable<string>): string {
  const base = new GithubSlugger().slug(title) || "page";
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let i = 2; ; i++) if (!used.has(`${base}-${i}`)) return `${base}-${i}`;
}

/** True when `ancestorId` is `pageId` or one of its ancestors (a page cannot move under itself). */
export function isSelfOrAncestor(content: RevisionContent, ancestorId: string, pageId: string): boolean {
  for (let id: string | null = pageId; id; id = content.pages[id]?.parentId ?? null) if (id === ancestorId) return true;
  return false;
}

/** The page and every page below it. */
export function subtreeIds(content: RevisionContent, pageId: string): string[] {
  return [pageId, ...childrenOf(content, pageId).flatMap((c) => subtreeIds(content, c.id))];
}

// ─── Three-way merge ─────────────────────────────────────────────────────────────────────────

export interface MergeConflict {
  kind: "page" | "file" | "variable" | "reusableContent";
  id: string;
  /** Title of the page (from either side) for messages. */
  title?: string;
  /** What collided: a field name, "markdown", or "deleted" for an edit against a deletion. */
  field: string;
}

export interface MergeResult {
  content: RevisionContent;
  conflicts: MergeConflict[];
}

const PAGE_FIELDS = ["title", "type", "parentId", "position", "slug", "description", "emoji", "icon", "hidden", "href"] as const;

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Line-based three-way merge of markdown; null when both sides changed the same lines. */
export function mergeText(base: string, ours: string, theirs: string): string | null {
  if (ours === theirs) return ours;
  if (ours === base) return theirs;
  if (theirs === base) return ours;
  const result = diff3Merge(ours.split("\n"), base.split("\n"), theirs.split("\n"));
  return result.conflict ? null : result.result.join("\n");
}

function mergeRecord<T>(
  kind: MergeConflict["kind"],
  base: Record<string, T>,
  ours: Record<string, T>,
  theirs: Record<string, T>,
  mergeItem: (b: T, o: T, t: T, id: string) => { value: T; conflicts: MergeConflict[] },
  label: (item: T) => string | undefined,
): { merged: Record<string, T>; conflicts: MergeConflict[] } {
  const merged: Record<string, T> = {};
  const conflicts: MergeConflict[] = [];
  const ids = new Set([...Object.keys(base), ...Object.keys(ours), ...Object.keys(theirs)]);
  for (const id of ids) {
    const b = base[id];
    const o = ours[id];
    const t = theirs[id];
    if (b === undefined) {
      // Added on one side (or on both with the same value).
      if (o !== undefined && t !== undefined && !same(o, t)) {
        const r = mergeItem(o, o, t, id);
        merged[id] = r.value;
        conflicts.push(...r.conflicts);
      } else merged[id] = (o ?? t)!;
      continue;
    }
    if (o === undefined && t === undefined) continue; // deleted on both sides
    if (o === undefined || t === undefined) {
      const kept = (o ?? t)!;
      if (same(kept, b)) continue; // deleted on one side, untouched on the other
      conflicts.push({ kind, id, title: label(kept), field: "deleted" });
      continue;
    }
    const r = mergeItem(b, o, t, id);
    merged[id] = r.value;
    conflicts.push(...r.conflicts);
  }
  return { merged, conflicts };
}

function mergePage(b: StoredPage, o: StoredPage, t: StoredPage, id: string) {
  const conflicts: MergeConflict[] = [];
  const value: StoredPage = { ...o };
  for (const field of PAGE_FIELDS) {
    const [bv, ov, tv] = [b[field], o[field], t[field]];
    if (same(ov, tv) || same(tv, bv)) continue;
    if (same(ov, bv)) (value as any)[field] = tv;
    else conflicts.push({ kind: "page", id, title: o.title, field });
  }
  const markdown = mergeText(b.markdown, o.markdown, t.markdown);
  if (markdown === null) conflicts.push({ kind: "page", id, title: o.title, field: "markdown" });
  else value.markdown = markdown;
  value.updatedAt = o.updatedAt > t.updatedAt ? o.updatedAt : t.updatedAt;
  return { value, conflicts };
}

function mergeValue<T>(kind: MergeConflict["kind"]) {
  return (b: T, o: T, t: T, id: string) => {
    if (same(o, t) || same(t, b)) return { value: o, conflicts: [] };
    if (same(o, b)) return { value: t, conflicts: [] };
    return { value: o, conflicts: [{ kind, id, field: "value" } as MergeConflict] };
  };
}

/**
 * Three-way merge of two contents from their common ancestor. Changes to different pages, and
 * non-overlapping changes within one page's markdown, combine; anything else is a conflict, and
 * the caller must not write the result.
 */
export function mergeContents(base: RevisionContent, ours: RevisionContent, theirs: RevisionContent): MergeResult {
  const pages = mergeRecord("page", base.pages, ours.pages, theirs.pages, mergePage, (p) => p.title);
  const files = mergeRecord("file", base.files, ours.files, theirs.files, mergeValue<StoredFile>("file"), (f) => f.name);
  const reusable = mergeRecord(
    "reusableContent",
    base.reusableContents,
    ours.reusableContents,
    theirs.reusableContents,
    mergeValue<StoredReusableContent>("reusableContent"),
    (r) => r.title,
  );
  const variables = mergeRecord("variable", base.variables, ours.variables, theirs.variables, mergeValue<string>("variable"), () => undefined);
  const content: RevisionContent = {
    pages: pages.merged,
    files: files.merged,
    reusableContents: reusable.merged,
    variables: variables.merged,
  };
  // A page whose parent was deleted on the other side would be orphaned.
  for (const page of Object.values(content.pages)) {
    if (page.parentId && !content.pages[page.parentId]) {
      pages.conflicts.push({ kind: "page", id: page.id, title: page.title, field: "parentId" });
    }
  }
  return { content, conflicts: [...pages.conflicts, ...files.conflicts, ...reusable.conflicts, ...variables.conflicts] };
}
