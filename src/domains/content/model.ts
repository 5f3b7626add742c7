import { diff3Merge } from "node-diff3";
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
  /** Left out of search and ask (true), or of search engines' indexes (noRobotsIndex). */
  noIndex?: boolean;
  noRobotsIndex?: boolean;
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

/** A variable's value, as GitBook's `VariableValue`: a string (at most 256 characters), a number or a boolean. */
export type VariableValue = string | number | boolean;

export interface RevisionContent {
  pages: Record<string, StoredPage>;
  files: Record<string, StoredFile>;
  reusableContents: Record<string, StoredReusableContent>;
  variables: Record<string, VariableValue>;
}

/**
 * The records of a content are keyed by ids that callers send (`/page/{pageId}`), so they are
 * objects without a prototype: `pages["constructor"]` is a page named so or nothing, never
 * Object's constructor, and `pages["__proto__"] = …` stores a key rather than changing the
 * record's prototype. Look ids up with `entry` (an own-property check) all the same: a record
 * made as a literal elsewhere has a prototype.
 */
export function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** The value stored under `key` in `rec`, own properties only. */
export function entry<T>(rec: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(rec, key) ? rec[key] : undefined;
}

export function emptyContent(): RevisionContent {
  return { pages: record(), files: record(), reusableContents: record(), variables: record() };
}

/** A stored item is kept only under its own id (earlier versions could store junk under `constructor` and the like). */
function copyItems<T extends { id: string }>(json: unknown): Record<string, T> {
  const out = record<T>();
  if (!json || typeof json !== "object") return out;
  for (const [key, value] of Object.entries(json)) {
    if (value && typeof value === "object" && (value as { id?: unknown }).id === key) out[key] = value as T;
  }
  return out;
}

function copyVariables(json: unknown): Record<string, VariableValue> {
  const out = record<VariableValue>();
  if (!json || typeof json !== "object") return out;
  for (const [key, value] of Object.entries(json)) {
    if (typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) out[key] = value;
  }
  return out;
}

/**
 * Reads Revision.content (JSON) defensively: missing parts become empty, records have no
 * prototype (see `record`), and an entry not stored under its own id is dropped. The records are
 * new objects (the items in them are the input's).
 */
export function readContent(json: unknown): RevisionContent {
  const c = (json ?? {}) as Partial<Record<keyof RevisionContent, unknown>>;
  return {
    pages: copyItems<StoredPage>(c.pages),
    files: copyItems<StoredFile>(c.files),
    reusableContents: copyItems<StoredReusableContent>(c.reusableContents),
    variables: copyVariables(c.variables),
  };
}

export interface PageTreeNode extends StoredPage {
  path: string;
  pages: PageTreeNode[];
}

/** The order of siblings: position, then id for a stable tie-break. */
const siblingOrder = (a: StoredPage, b: StoredPage) => a.position - b.position || a.id.localeCompare(b.id);

/** Siblings in order (position, then id for a stable tie-break). */
export function childrenOf(content: RevisionContent, parentId: string | null): StoredPage[] {
  return Object.values(content.pages)
    .filter((p) => p.parentId === parentId)
    .sort(siblingOrder);
}

/** The page tree with each page's path (its ancestors' slugs and its own, joined by "/"). */
export function pageTree(content: RevisionContent): PageTreeNode[] {
  // Every page's children, in one pass over the pages (childrenOf per page would be a pass per page).
  const children = new Map<string | null, StoredPage[]>();
  for (const page of Object.values(content.pages)) {
    const siblings = children.get(page.parentId);
    if (siblings) siblings.push(page);
    else children.set(page.parentId, [page]);
  }
  for (const siblings of children.values()) siblings.sort(siblingOrder);
  const build = (parentId: string | null, prefix: string): PageTreeNode[] =>
    (children.get(parentId) ?? []).map((page) => {
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
  for (let id: string | null = pageId; id; id = entry(content.pages, id)?.parentId ?? null) if (id === ancestorId) return true;
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
  /** For "markdown": the lines both sides changed differently (1-based line of the base). */
  hunks?: TextConflict[];
}

/** Lines changed differently on both sides: the base's, ours and theirs. */
export interface TextConflict {
  line: number;
  base: string[];
  ours: string[];
  theirs: string[];
}

export interface MergeResult {
  content: RevisionContent;
  conflicts: MergeConflict[];
}

const PAGE_FIELDS = [
  "title",
  "type",
  "parentId",
  "position",
  "slug",
  "description",
  "emoji",
  "icon",
  "hidden",
  "noIndex",
  "noRobotsIndex",
  "href",
] as const;

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Line-based three-way merge of markdown; null when both sides changed the same lines. */
export function mergeText(base: string, ours: string, theirs: string): string | null {
  return mergeTextDetailed(base, ours, theirs).text;
}

/**
 * Line-based three-way merge with the conflicting hunks: `text` is null when both sides changed
 * the same lines differently (identical changes on both sides are not a conflict).
 */
export function mergeTextDetailed(base: string, ours: string, theirs: string): { text: string | null; conflicts: TextConflict[] } {
  if (ours === theirs || theirs === base) return { text: ours, conflicts: [] };
  if (ours === base) return { text: theirs, conflicts: [] };
  const regions = diff3Merge(ours.split("\n"), base.split("\n"), theirs.split("\n"));
  const out: string[] = [];
  const conflicts: TextConflict[] = [];
  for (const region of regions) {
    if (region.ok) out.push(...region.ok);
    else if (region.conflict) {
      const c = region.conflict;
      conflicts.push({ line: c.oIndex + 1, base: c.o, ours: c.a, theirs: c.b });
    }
  }
  return conflicts.length ? { text: null, conflicts } : { text: out.join("\n"), conflicts: [] };
}

function mergeRecord<T>(
  kind: MergeConflict["kind"],
  base: Record<string, T>,
  ours: Record<string, T>,
  theirs: Record<string, T>,
  mergeItem: (b: T, o: T, t: T, id: string) => { value: T; conflicts: MergeConflict[] },
  label: (item: T) => string | undefined,
): { merged: Record<string, T>; conflicts: MergeConflict[] } {
  const merged = record<T>();
  const conflicts: MergeConflict[] = [];
  const ids = new Set([...Object.keys(base), ...Object.keys(ours), ...Object.keys(theirs)]);
  for (const id of ids) {
    const b = entry(base, id);
    const o = entry(ours, id);
    const t = entry(theirs, id);
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
  const markdown = mergeTextDetailed(b.markdown, o.markdown, t.markdown);
  if (markdown.text === null) conflicts.push({ kind: "page", id, title: o.title, field: "markdown", hunks: markdown.conflicts });
  else value.markdown = markdown.text;
  // biome-ignore lint/complexity/useMathMinMax: ISO timestamps, compared as strings
  value.updatedAt = o.updatedAt > t.updatedAt ? o.updatedAt : t.updatedAt;
  return { value, conflicts };
}

/** Reusable contents merge like pages: their title field by field, their markdown line by line. */
function mergeReusableContent(b: StoredReusableContent, o: StoredReusableContent, t: StoredReusableContent, id: string) {
  const conflicts: MergeConflict[] = [];
  const value: StoredReusableContent = { ...o };
  if (!same(o.title, t.title) && !same(t.title, b.title)) {
    if (same(o.title, b.title)) value.title = t.title;
    else conflicts.push({ kind: "reusableContent", id, title: o.title, field: "title" });
  }
  const markdown = mergeTextDetailed(b.markdown, o.markdown, t.markdown);
  if (markdown.text === null) conflicts.push({ kind: "reusableContent", id, title: o.title, field: "markdown", hunks: markdown.conflicts });
  else value.markdown = markdown.text;
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
    mergeReusableContent,
    (r) => r.title,
  );
  const variables = mergeRecord(
    "variable",
    base.variables,
    ours.variables,
    theirs.variables,
    mergeValue<VariableValue>("variable"),
    () => undefined,
  );
  const content: RevisionContent = {
    pages: pages.merged,
    files: files.merged,
    reusableContents: reusable.merged,
    variables: variables.merged,
  };
  // A page whose parent was deleted on the other side would be orphaned.
  for (const page of Object.values(content.pages)) {
    if (page.parentId && !entry(content.pages, page.parentId)) {
      pages.conflicts.push({ kind: "page", id: page.id, title: page.title, field: "parentId" });
    }
  }
  // A page moved under its own descendant on the other side would leave the tree.
  for (const page of Object.values(content.pages)) {
    if (page.parentId && isSelfOrAncestor(content, page.id, page.parentId) && !pages.conflicts.some((c) => c.id === page.id)) {
      pages.conflicts.push({ kind: "page", id: page.id, title: page.title, field: "parentId" });
    }
  }
  const conflicts = [...pages.conflicts, ...files.conflicts, ...reusable.conflicts, ...variables.conflicts];
  if (!conflicts.length) dedupeSlugs(content);
  return { content, conflicts };
}

// ─── Editing helpers ─────────────────────────────────────────────────────────────────────────

/** The path under which a page placed below `parentId` gets its slug ("" at the top level or under top-level groups). */
export function parentPath(content: RevisionContent, parentId: string | null): string {
  const segments: string[] = [];
  for (let id = parentId; id; id = entry(content.pages, id)?.parentId ?? null) {
    const page = entry(content.pages, id);
    if (!page) break;
    if (page.type !== "group") segments.unshift(page.slug);
  }
  return segments.join("/");
}

/**
 * Slugs already used by pages whose path has the same prefix as a page placed under `parentId`:
 * groups add no path segment, so the pages of sibling groups share one namespace.
 */
export function takenSlugs(content: RevisionContent, parentId: string | null, exceptId?: string): Set<string> {
  const prefix = parentPath(content, parentId);
  const taken = new Set<string>();
  for (const page of Object.values(content.pages)) {
    if (page.id === exceptId || page.type === "group") continue;
    if (parentPath(content, page.parentId) === prefix) taken.add(page.slug);
  }
  return taken;
}

/**
 * Gives pages that ended up on the same path (both sides of a merge added "intro") distinct
 * slugs: the older page keeps its slug, the newer one gets the next free variant.
 */
export function dedupeSlugs(content: RevisionContent): void {
  const byPath = new Map<string, StoredPage[]>();
  for (const page of Object.values(content.pages)) {
    if (page.type === "group") continue;
    const key = `${parentPath(content, page.parentId)}/${page.slug}`;
    byPath.set(key, [...(byPath.get(key) ?? []), page]);
  }
  for (const pages of byPath.values()) {
    if (pages.length < 2) continue;
    pages.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    for (const page of pages.slice(1)) {
      const slug = uniqueSlug(page.slug, takenSlugs(content, page.parentId, page.id));
      content.pages[page.id] = { ...page, slug };
    }
  }
}

/**
 * The `position` value that puts a page at `index` among the siblings under `parentId` (the
 * page itself excluded); past the end, or without an index, it goes last. Only the moved page
 * changes (a value between its new neighbours), so concurrent inserts merge cleanly; siblings
 * are renumbered only when no value fits between two neighbours.
 */
export function positionAt(content: RevisionContent, parentId: string | null, index: number | null | undefined, movingId?: string): number {
  const siblings = childrenOf(content, parentId).filter((p) => p.id !== movingId);
  if (!siblings.length) return 0;
  const i = index === null || index === undefined ? siblings.length : Math.max(0, Math.min(index, siblings.length));
  if (i === siblings.length) return Math.floor(siblings[siblings.length - 1]!.position) + 1;
  if (i === 0) return siblings[0]!.position - 1;
  const low = siblings[i - 1]!.position;
  const high = siblings[i]!.position;
  const mid = (low + high) / 2;
  if (low < mid && mid < high) return mid;
  siblings.forEach((s, n) => (content.pages[s.id] = { ...s, position: n < i ? n : n + 1 }));
  return i;
}
