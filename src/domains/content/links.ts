import type { Nodes } from "mdast";
import type { Context } from "../../core/context.js";
import { viewerMembership } from "../../core/access/access.js";
import { paginateArray, type PageArgs, type ListPage } from "../../core/graph/pagination.js";
import { spaceById, viewerSpaceRole, isExpired } from "../spaces/spaces.access.js";
import { entry, flattenTree, pageTree, type PageTreeNode, type RevisionContent } from "./model.js";
import { anchorsOf, linksOf, parseMarkdown } from "./markdown.js";
import { fileView, pageMarkdown, type FileView, type ScopeRef } from "./views.js";

/**
 * Links of a content, read from each page's markdown with the markdown parser.
 *
 * How a link target is read (`[text](target)` or `![alt](target)`, reference-style too):
 * - `#anchor` — a heading of the same page (GitHub-style anchor);
 * - a relative path (`faq`, `../guides/install`, `/guides/install#step-2`, `install.md`) — a page
 *   of the same content, resolved like a URL against the linking page's path (`/` is the
 *   content's root; a trailing `.md`, `/README.md` or `/` is ignored), with an optional anchor;
 * - `page:<pageId>` — a page by id; `file:<fileId>` — a file of the content by id; the file's
 *   `downloadURL` (absolute, or from `/v1/…`) is read as `file:<fileId>` too;
 * - an absolute URL under this server's app URL (`APP_URL`) — an in-app link: `/o/<org>` and
 *   `/s/<space>…` are resolved to the organization or space when the caller can see them;
 * - any other absolute URL (`https:`, `mailto:` …) — an external link, reported `ok` unchecked.
 * Links whose page, anchor or file does not exist in the revision are `broken`.
 */

export type LinkStatus = "ok" | "broken" | "in-app";
export const LINK_STATUSES: LinkStatus[] = ["ok", "broken", "in-app"];
export type LinkRelation = "reference" | "image";

/** A reference as the graph resolves it (ids here; objects in the schema). */
export interface ReferenceView {
  kind: "url" | "page" | "anchor" | "file" | "space" | "organization";
  url?: string;
  page?: string;
  anchor?: string;
  spaceId?: string;
  organizationId?: string;
  file?: FileView;
  versionContext?: { type: "revision"; revision: string };
}

export interface LinkItemView {
  status: LinkStatus;
  relation: LinkRelation;
  targetReference: ReferenceView;
  locationReferences: ReferenceView[];
}

export interface LinkReportView extends ListPage<LinkItemView> {
  stats: { total: number; broken: { total: number; changeRequest: number } };
}

interface RawTarget {
  status: LinkStatus;
  ref: ReferenceView;
  /** In-app candidates checked against the caller's access before they are shown. */
  inApp?: { organizationId?: string; spaceId?: string };
}

function versionContext(ref: ScopeRef) {
  return { type: "revision" as const, revision: ref.revisionId };
}

function stripPagePath(path: string): string {
  let p = path.replace(/^\/+/, "").replace(/\/+$/, "");
  p = p.replace(/(^|\/)README\.md$/i, "").replace(/\.md$/i, "");
  return p.replace(/\/+$/, "");
}

const DOWNLOAD = /\/v1\/spaces\/([^/?#]+)\/content\/files\/([^/?#]+)\/download\/?(?:[?#].*)?$/;

export class LinkResolver {
  private byPath = new Map<string, PageTreeNode>();
  private byId = new Map<string, PageTreeNode>();
  private anchors = new Map<string, Set<string>>();

  constructor(
    private ctx: Context,
    private ref: ScopeRef,
    private content: RevisionContent,
    readonly pages: PageTreeNode[] = flattenTree(pageTree(content)),
  ) {
    for (const page of pages) {
      this.byId.set(page.id, page);
      if (page.type !== "group" && !this.byPath.has(page.path)) this.byPath.set(page.path, page);
    }
  }

  private anchorsOf(page: PageTreeNode): Set<string> {
    let set = this.anchors.get(page.id);
    if (!set) {
      set = page.type === "document" ? anchorsOf(page.markdown) : new Set();
      this.anchors.set(page.id, set);
    }
    return set;
  }

  private pageRef(page: PageTreeNode, anchor: string | null, url: string): RawTarget {
    const base = { page: page.id, spaceId: this.ref.spaceId, versionContext: versionContext(this.ref) };
    if (!anchor) return { status: "ok", ref: { kind: "page", ...base } };
    const ok = this.anchorsOf(page).has(anchor);
    return { status: ok ? "ok" : "broken", ref: { kind: "anchor", ...base, anchor, ...(ok ? {} : { url }) } };
  }

  private fileRef(fileId: string, url: string): RawTarget {
    const file = entry(this.content.files, fileId);
    if (!file) return { status: "broken", ref: { kind: "file", url } };
    return {
      status: "ok",
      ref: {
        kind: "file",
        file: fileView(this.ctx, this.ref.spaceId, file),
        spaceId: this.ref.spaceId,
        versionContext: versionContext(this.ref),
      },
    };
  }

  /** What a link of `from` points to. */
  classify(raw: string, from: PageTreeNode): RawTarget {
    const url = raw.trim();
    const { publicUrl, appUrl } = this.ctx.config;
    if (url.startsWith("#")) return this.pageRef(from, decodeSafe(url.slice(1)), url);
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
    if (scheme === "file") return this.fileRef(url.slice(5), url);
    if (scheme === "page") {
      const [id, anchor] = url.slice(5).split("#");
      const page = this.byId.get(id!);
      return page ? this.pageRef(page, anchor ? decodeSafe(anchor) : null, url) : { status: "broken", ref: { kind: "page", url } };
    }
    const download = DOWNLOAD.exec(url);
    if (download && (url.startsWith("/v1/") || url.startsWith(`${publicUrl}/v1/`)) && download[1] === this.ref.spaceId) {
      return this.fileRef(decodeSafe(download[2]!), url);
    }
    if (scheme || url.startsWith("//")) {
      if (url === appUrl || url.startsWith(`${appUrl}/`) || url.startsWith(`${appUrl}?`) || url.startsWith(`${appUrl}#`)) {
        const rest = url.slice(appUrl.length);
        const org = /^\/o\/([^/?#]+)/.exec(rest)?.[1];
        const space = /^\/s\/([^/?#]+)/.exec(rest)?.[1];
        return {
          status: "in-app",
          ref: { kind: "url", url },
          inApp: org ? { organizationId: org } : space ? { spaceId: space } : undefined,
        };
      }
      return { status: "ok", ref: { kind: "url", url } };
    }
    // A relative path: resolved like a URL against the linking page's path.
    const [pathPart, anchorPart] = splitOnce(url, "#");
    let resolved: string;
    try {
      resolved = pathPart ? new URL(pathPart, `http://content/${from.path}`).pathname : `/${from.path}`;
    } catch {
      return { status: "broken", ref: { kind: "page", url } };
    }
    const target = this.byPath.get(stripPagePath(decodeSafe(resolved)));
    if (!target) return { status: "broken", ref: { kind: "page", url } };
    return this.pageRef(target, anchorPart ? decodeSafe(anchorPart) : null, url);
  }

  /** Every link of the content (or of one page), grouped by target, with the pages holding them. */
  report(pageId?: string | null): { items: (LinkItemView & { inApp?: RawTarget["inApp"]; key: string })[] } {
    const groups = new Map<string, LinkItemView & { inApp?: RawTarget["inApp"]; key: string }>();
    for (const page of this.pages) {
      if (pageId && page.id !== pageId) continue;
      const markdown = pageMarkdown(page);
      if (!markdown) continue;
      for (const link of linksOf(markdown)) {
        const target = this.classify(link.url, page);
        const relation: LinkRelation = link.kind === "image" ? "image" : "reference";
        const { file, ...keyed } = target.ref;
        const key = JSON.stringify([target.status, relation, keyed, file?.id ?? null]);
        let item = groups.get(key);
        if (!item) {
          item = { status: target.status, relation, targetReference: target.ref, locationReferences: [], inApp: target.inApp, key };
          groups.set(key, item);
        }
        if (!item.locationReferences.some((l) => l.page === page.id)) {
          item.locationReferences.push({
            kind: "page",
            page: page.id,
            spaceId: this.ref.spaceId,
            versionContext: versionContext(this.ref),
          });
        }
      }
    }
    const order: Record<LinkStatus, number> = { broken: 0, "in-app": 1, ok: 2 };
    return { items: [...groups.values()].sort((a, b) => order[a.status] - order[b.status] || a.key.localeCompare(b.key)) };
  }

  /** Pages that use a file (images or links to it), as references. */
  backlinks(fileId: string): ReferenceView[] {
    const out: ReferenceView[] = [];
    for (const page of this.pages) {
      const markdown = pageMarkdown(page);
      if (!markdown) continue;
      const uses = linksOf(markdown).some((l) => {
        const t = this.classify(l.url, page);
        return t.ref.kind === "file" && t.ref.file?.id === fileId;
      });
      if (uses) out.push({ kind: "page", page: page.id, spaceId: this.ref.spaceId, versionContext: versionContext(this.ref) });
    }
    return out;
  }
}

function splitOnce(text: string, sep: string): [string, string | null] {
  const i = text.indexOf(sep);
  return i < 0 ? [text, null] : [text.slice(0, i), text.slice(i + 1)];
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Turns in-app URLs into organization or space references the caller can see (others stay URLs). */
async function resolveInApp(ctx: Context, items: { inApp?: RawTarget["inApp"]; targetReference: ReferenceView }[]): Promise<void> {
  await Promise.all(
    items.map(async (item) => {
      if (!item.inApp) return;
      if (item.inApp.organizationId) {
        const member = await viewerMembership(ctx, item.inApp.organizationId);
        if (member) item.targetReference = { ...item.targetReference, kind: "organization", organizationId: item.inApp.organizationId };
      } else if (item.inApp.spaceId) {
        const space = await spaceById(ctx).load(item.inApp.spaceId);
        const role = space && !space.deletedAt && !isExpired(ctx, space) ? await viewerSpaceRole(ctx).load(space) : null;
        if (role) item.targetReference = { ...item.targetReference, kind: "space", spaceId: item.inApp.spaceId };
      }
    }),
  );
}

/**
 * The link report of a content (or one page): items grouped by target, filtered by status and
 * paginated; `stats` counts every item regardless of the filter. `broken.changeRequest` counts
 * broken links that exist only in change requests: in a change request's own report, the broken
 * links it adds compared with the space's content; in a space's report, the sum of that over the
 * space's draft and open change requests.
 */
export async function linkReport(
  ctx: Context,
  main: LinkResolver,
  opts: { pageId?: string | null; status?: LinkStatus | null; args: PageArgs; changeRequestBroken: number },
): Promise<LinkReportView> {
  const all = main.report(opts.pageId).items;
  const filtered = opts.status ? all.filter((i) => i.status === opts.status) : all;
  const page = paginateArray(filtered, opts.args);
  await resolveInApp(ctx, page.items);
  return {
    ...page,
    items: page.items.map(({ status, relation, targetReference, locationReferences }) => ({
      status,
      relation,
      targetReference,
      locationReferences,
    })),
    stats: {
      total: all.length,
      broken: { total: all.filter((i) => i.status === "broken").length, changeRequest: opts.changeRequestBroken },
    },
  };
}

/** Keys of the broken items of a resolver (optionally of one page). */
export function brokenKeys(resolver: LinkResolver, pageId?: string | null): Set<string> {
  return new Set(
    resolver
      .report(pageId)
      .items.filter((i) => i.status === "broken")
      .map((i) =>
        JSON.stringify([
          i.relation,
          i.targetReference.kind,
          i.targetReference.url ?? null,
          i.targetReference.page ?? null,
          i.targetReference.anchor ?? null,
        ]),
      ),
  );
}

/** Broken links of `changed` that `main` does not have. */
export function addedBroken(main: LinkResolver, changed: LinkResolver, pageId?: string | null): number {
  const before = brokenKeys(main, pageId);
  let added = 0;
  for (const key of brokenKeys(changed, pageId)) if (!before.has(key)) added++;
  return added;
}

// ─── Links a batch of changes writes (content/batch.ts) ───────────────────────────────────────

/** A ref as links name it: `./a.md`, `a.md` and `a` are the same ref `a`. */
export function normalizeRef(ref: string): string {
  return ref.trim().replace(/^\.\//, "").replace(/\.md$/i, "");
}

/** Where a page lives in Git Sync's layout: `a/b.md`, or `a/b/README.md` when it has sub-pages. */
function gitPath(page: PageTreeNode): string {
  const hasChildren = page.pages.some((p) => p.type !== "link");
  if (!page.path) return "README.md";
  return hasChildren ? `${page.path}/README.md` : `${page.path}.md`;
}

/**
 * Rewrites the links of the markdown of `pageIds` (the pages a batch wrote) against the draft's
 * page tree: `/pages/<pageId>`, `/pages/<path>`, `/pages/<path>.md` and `…/README.md`, relative
 * `.md` or folder links (from the page's Git path), a ref of a page or file of the batch
 * (`./<ref>`, `./<ref>.md`: `pageRefs`, `fileRefs`), and `/files/<fileId>` become `page:<id>` and
 * `file:<id>` links; anything else stays as written.
 */
export function resolveLinks(
  draft: RevisionContent,
  pageIds: string[],
  pageRefs: Map<string, string>,
  fileRefs: Map<string, string>,
): void {
  if (!pageIds.length) return;
  const pages = flattenTree(pageTree(draft));
  const byPath = new Map<string, PageTreeNode>();
  for (const p of pages) if (p.type !== "group" && !byPath.has(p.path)) byPath.set(p.path, p);
  const byId = new Map(pages.map((p) => [p.id, p]));
  const firstPage = pages.find((p) => p.type === "document");
  const pageByFilePath = (path: string): PageTreeNode | undefined => {
    const clean = path.replace(/^\/+/, "").replace(/\/+$/, "");
    if (clean === "" || /^README\.md$/i.test(clean)) return byPath.get("") ?? firstPage;
    const stripped = clean.replace(/\/README\.md$/i, "").replace(/\.md$/i, "");
    return byPath.get(stripped);
  };

  const target = (url: string, from: PageTreeNode): string | null => {
    const raw = url.trim();
    if (!raw || raw.startsWith("#") || raw.startsWith("//") || /^[a-z][a-z0-9+.-]*:/i.test(raw)) return null;
    const hash = raw.indexOf("#");
    const path = decodeSafe(hash < 0 ? raw : raw.slice(0, hash));
    const anchor = hash < 0 ? "" : raw.slice(hash);
    const pageLink = (p: PageTreeNode | undefined) => (p ? `page:${p.id}${anchor}` : null);
    const files = /^\/files\/([^/]+)$/.exec(path);
    if (files) return entry(draft.files, files[1]!) ? `file:${files[1]}` : null;
    const pagesPath = /^\/pages(?:\/(.*))?$/.exec(path);
    if (pagesPath) {
      const rest = pagesPath[1] ?? "";
      const byIdHit = byId.get(rest);
      return pageLink(byIdHit ?? pageByFilePath(rest));
    }
    if (path.startsWith("/")) return null;
    const ref = normalizeRef(path);
    const refPage = pageRefs.get(ref);
    if (refPage && byId.has(refPage)) return pageLink(byId.get(refPage));
    const refFile = fileRefs.get(path.replace(/^\.\//, "")) ?? fileRefs.get(ref);
    if (refFile) return `file:${refFile}`;
    let resolved: string;
    try {
      resolved = new URL(path, `http://content/${gitPath(from)}`).pathname;
    } catch {
      return null;
    }
    return pageLink(pageByFilePath(decodeSafe(resolved)));
  };

  for (const id of pageIds) {
    const from = byId.get(id);
    if (!from || !from.markdown) continue;
    const markdown = from.markdown;
    const edits: { from: number; to: number; text: string }[] = [];
    const walk = (node: Nodes) => {
      if ((node.type === "link" || node.type === "image" || node.type === "definition") && node.position) {
        const next = target(node.url, from);
        if (next) {
          const start = node.position.start.offset!;
          const end = node.position.end.offset!;
          const slice = markdown.slice(start, end);
          const at = node.type === "definition" ? slice.indexOf(node.url, slice.indexOf("]:")) : slice.lastIndexOf(node.url);
          if (at >= 0) edits.push({ from: start + at, to: start + at + node.url.length, text: next });
        }
      }
      if ("children" in node) for (const child of node.children) walk(child as Nodes);
    };
    walk(parseMarkdown(markdown));
    if (!edits.length) continue;
    edits.sort((a, b) => b.from - a.from);
    let out = markdown;
    let limit = Infinity;
    for (const e of edits) {
      if (e.to > limit) continue;
      out = out.slice(0, e.from) + e.text + out.slice(e.to);
      limit = e.from;
    }
    draft.pages[id] = { ...draft.pages[id]!, markdown: out };
  }
}
