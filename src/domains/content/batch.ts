import YAML from "yaml";
import { badInput } from "../../core/errors.js";
import { checkLength, checkPattern, checkUri } from "../../core/validate.js";
import { newId } from "../../core/ids.js";
import { checkEmoji } from "../spaces/spaces.service.js";
import {
  entry,
  flattenTree,
  isSelfOrAncestor,
  pageTree,
  positionAt,
  subtreeIds,
  takenSlugs,
  uniqueSlug,
  type RevisionContent,
  type StoredFile,
  type StoredPage,
} from "./model.js";
import { documentToMarkdown } from "./markdown.js";
import { normalizeRef, resolveLinks } from "./links.js";

/**
 * Batched content changes of a change request (`POST …/change-requests/{id}/content`, GitBook's
 * `updateChangeRequestContent`): an ordered list of at most 50 changes — insert_page,
 * update_page, delete_page, revert_page, insert_files — applied in order to one copy of the
 * change request's content and stored as one revision, or not at all: the first change that
 * does not apply rejects the whole batch with a 400 naming it (`changes[2].into: …`).
 *
 * `planChanges` checks everything that does not depend on the content (types, lengths, which
 * fields each operation takes, refs); `applyChanges` applies a plan to a draft (pure: it is
 * replayed when another write landed first, so its ids are chosen in the plan).
 *
 * Markdown documents: a frontmatter block (`---` YAML `---`) sets the page's metadata (title,
 * description, icon, emoji, hidden, noIndex, noRobotsIndex) and is not stored; an inserted page
 * takes its title from the frontmatter, else from a leading `# heading` (then removed from the
 * body), else from `title`. Once every change is applied, the links of the markdown the batch
 * wrote are resolved against the change request's page tree (links.ts `resolveLinks`): `/pages/<pageId>`, `/pages/<path>`,
 * `/pages/<path>.md` and `…/README.md`, relative `.md` or folder links (from the page's Git
 * path), a `ref` of a page or file of the batch (`./<ref>`, `./<ref>.md`), and `/files/<fileId>`
 * become `page:<id>` and `file:<id>` links; anything else stays as written.
 */

export const CHANGE_OPERATIONS = ["update_page", "insert_page", "delete_page", "revert_page", "insert_files"] as const;
export type ChangeOperation = (typeof CHANGE_OPERATIONS)[number];

export const MAX_CHANGES = 50;
/** Files one batch may bring in (each fetched or decoded before the batch applies). */
export const MAX_BATCH_FILES = 20;
const TITLE_MAX = 256;
const DESCRIPTION_MAX = 1000;
const MARKDOWN_MAX = 1_000_000;
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const ICON = /^[a-z0-9][a-z0-9-]*$/;
const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;.*)?$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A change as the graph's input type (and the /v1 body) carries it: every field of every operation. */
export interface ContentChangeInput {
  operation: string;
  page?: string | null;
  title?: string | null;
  slug?: string | null;
  emoji?: string | null;
  icon?: string | null;
  description?: string | null;
  hidden?: boolean | null;
  noIndex?: boolean | null;
  noRobotsIndex?: boolean | null;
  condition?: string | null;
  document?: { markdown?: string | null; document?: unknown } | null;
  into?: string | null;
  at?: number | null;
  ref?: string | null;
  revision?: string | null;
  block?: string[] | null;
  files?: ContentFileInput[] | null;
}

export interface ContentFileInput {
  ref?: string | null;
  name?: string | null;
  contentType?: string | null;
  url?: string | null;
  base64?: string | null;
}

const META_FIELDS = ["title", "slug", "emoji", "icon", "description", "hidden", "noIndex", "noRobotsIndex", "condition"] as const;
const FIELDS_OF: Record<ChangeOperation, readonly string[]> = {
  insert_page: [...META_FIELDS, "document", "into", "at", "ref"],
  update_page: ["page", ...META_FIELDS, "document", "into", "at"],
  delete_page: ["page"],
  revert_page: ["page", "revision", "block"],
  insert_files: ["files"],
};
const ALL_FIELDS = ["page", ...META_FIELDS, "document", "into", "at", "ref", "revision", "block", "files"] as const;

/** Page metadata a change sets: undefined leaves a field as it is, "" / false removes it. */
export interface PageMeta {
  title?: string;
  slug?: string;
  emoji?: string;
  icon?: string;
  description?: string;
  hidden?: boolean;
  noIndex?: boolean;
  noRobotsIndex?: boolean;
}

export interface PlannedFile {
  id: string;
  ref?: string;
  name: string;
  contentType?: string;
  url?: string;
  base64?: string;
  /** Where the file is named in messages (`changes[0].files[1]`). */
  label: string;
}

export type PlannedChange =
  | {
      op: "insert_page";
      label: string;
      id: string;
      meta: PageMeta;
      markdown: string;
      titleFromDocument: boolean;
      into?: string;
      at?: number;
      ref?: string;
    }
  | { op: "update_page"; label: string; page: string; meta: PageMeta; markdown?: string; into?: string | null; at?: number }
  | { op: "delete_page"; label: string; page: string }
  | { op: "revert_page"; label: string; page: string; revision?: string }
  | { op: "insert_files"; label: string; files: PlannedFile[] };

function text(label: string, value: unknown, min: number, max: number): string {
  if (typeof value !== "string") throw badInput(`${label} must be a string.`);
  checkLength(label, value, min, max);
  return value;
}

function meta(label: string, input: Record<string, unknown>): PageMeta {
  const out: PageMeta = {};
  if (input.title !== undefined) {
    const title = text(`${label}.title`, input.title, 1, TITLE_MAX).trim();
    if (!title) throw badInput(`${label}.title cannot be blank.`);
    out.title = title;
  }
  if (input.slug !== undefined) {
    const slug = text(`${label}.slug`, input.slug, 0, 100);
    if (slug) checkPattern(`${label}.slug`, slug, SLUG, "lowercase letters and digits separated by single hyphens");
    out.slug = slug;
  }
  if (input.emoji !== undefined) {
    try {
      out.emoji = checkEmoji(text(`${label}.emoji`, input.emoji, 0, 50)) ?? "";
    } catch (err) {
      throw badInput(`${label}.${(err as Error).message}`);
    }
  }
  if (input.icon !== undefined) {
    const icon = text(`${label}.icon`, input.icon, 0, 50).trim();
    if (icon) checkPattern(`${label}.icon`, icon, ICON, "an icon name such as gear or arrow-right");
    out.icon = icon;
  }
  if (input.description !== undefined) out.description = text(`${label}.description`, input.description, 0, DESCRIPTION_MAX).trim();
  for (const flag of ["hidden", "noIndex", "noRobotsIndex"] as const) {
    if (input[flag] === undefined) continue;
    if (typeof input[flag] !== "boolean") throw badInput(`${label}.${flag} must be true or false.`);
    out[flag] = input[flag] as boolean;
  }
  if (input.condition !== undefined) {
    if (text(`${label}.condition`, input.condition, 0, 10_000).trim() !== "") {
      throw badInput(`${label}.condition: pages have no adaptive-content conditions on this server (send "" or leave it out).`);
    }
  }
  return out;
}

/** A document of a change: markdown, a JSON document (converted to markdown), or empty. */
function documentText(label: string, document: unknown): string {
  if (!document || typeof document !== "object" || Array.isArray(document))
    throw badInput(`${label} must be an object: {"markdown": "…"}, {"document": {…}} or {}.`);
  const { markdown, document: json } = document as { markdown?: unknown; document?: unknown };
  if (markdown !== undefined && markdown !== null && json !== undefined && json !== null)
    throw badInput(`${label}: give markdown or document, not both.`);
  if (markdown !== undefined && markdown !== null) {
    if (typeof markdown !== "string") throw badInput(`${label}.markdown must be a string.`);
    if (markdown.length > MARKDOWN_MAX)
      throw badInput(`${label}.markdown must be at most ${MARKDOWN_MAX} characters long (got ${markdown.length}).`);
    return markdown;
  }
  if (json !== undefined && json !== null) {
    const markdown = documentToMarkdown(`${label}.document`, json);
    if (markdown.length > MARKDOWN_MAX)
      throw badInput(`${label}.document is too large (more than ${MARKDOWN_MAX} characters as markdown).`);
    return markdown;
  }
  return "";
}

function refText(label: string, value: unknown, refs: Set<string>): string {
  const ref = text(label, value, 1, 256);
  if (/[\u0000-\u001f#?\\]/.test(ref)) throw badInput(`${label} cannot contain control characters, #, ? or backslashes.`);
  const key = normalizeRef(ref);
  if (!key) throw badInput(`${label} cannot be blank.`);
  if (refs.has(key)) throw badInput(`${label}: "${ref}" is already the ref of another page or file of this batch.`);
  refs.add(key);
  return ref;
}

/**
 * Checks a batch (see the header) and gives each page and file it creates its id. Throws a 400
 * naming the first change that is wrong.
 */
export function planChanges(changes: ContentChangeInput[] | null | undefined, opts: { maxFileBytes: number }): PlannedChange[] {
  if (!Array.isArray(changes) || changes.length === 0) throw badInput("changes is required: a list of 1 to 50 changes.");
  if (changes.length > MAX_CHANGES) throw badInput(`changes: at most ${MAX_CHANGES} changes per batch (got ${changes.length}).`);
  const refs = new Set<string>();
  let files = 0;
  return changes.map((change, i): PlannedChange => {
    const label = `changes[${i}]`;
    if (!change || typeof change !== "object") throw badInput(`${label} must be an object.`);
    const op = change.operation as ChangeOperation;
    if (!CHANGE_OPERATIONS.includes(op)) throw badInput(`${label}.operation must be one of ${CHANGE_OPERATIONS.join(", ")}.`);
    const input = change as unknown as Record<string, unknown>;
    for (const field of ALL_FIELDS) {
      const value = input[field];
      if (value === undefined) continue;
      if (!FIELDS_OF[op].includes(field)) throw badInput(`${label}.${field} is not a field of a ${op} change.`);
      if (value === null && !(op === "update_page" && field === "into")) throw badInput(`${label}.${field} cannot be null.`);
    }
    const page = () => text(`${label}.page`, input.page, 1, 256);
    const at = () => {
      if (input.at === undefined) return undefined;
      if (!Number.isInteger(input.at) || (input.at as number) < 0)
        throw badInput(`${label}.at must be an integer of 0 or more (an index among the siblings).`);
      return input.at as number;
    };
    switch (op) {
      case "insert_page": {
        if (input.document === undefined) throw badInput(`${label}.document is required for insert_page: {"markdown": "…"}.`);
        const read = readMarkdown(`${label}.document.markdown`, documentText(`${label}.document`, input.document), true);
        const m = { ...meta(label, input), ...read.meta };
        if (read.title) m.title = read.title;
        return {
          op,
          label,
          id: newId("Page"),
          meta: m,
          markdown: read.markdown,
          titleFromDocument: !!read.title,
          into: input.into === undefined ? undefined : text(`${label}.into`, input.into, 1, 256),
          at: at(),
          ref: input.ref === undefined ? undefined : refText(`${label}.ref`, input.ref, refs),
        };
      }
      case "update_page": {
        let markdown: string | undefined;
        let docMeta: PageMeta = {};
        if (input.document !== undefined) {
          const read = readMarkdown(`${label}.document.markdown`, documentText(`${label}.document`, input.document), false);
          markdown = read.markdown;
          docMeta = read.meta;
        }
        return {
          op,
          label,
          page: page(),
          meta: { ...meta(label, input), ...docMeta },
          markdown,
          into:
            input.into === undefined || input.into === null ? (input.into as null | undefined) : text(`${label}.into`, input.into, 1, 256),
          at: at(),
        };
      }
      case "delete_page":
        return { op, label, page: page() };
      case "revert_page":
        if (input.block !== undefined) {
          throw badInput(
            `${label}.block: reverting single blocks is not supported here (pages are stored as markdown); leave block out to revert the whole page.`,
          );
        }
        return {
          op,
          label,
          page: page(),
          revision: input.revision === undefined ? undefined : text(`${label}.revision`, input.revision, 1, 256),
        };
      case "insert_files": {
        const list = input.files;
        if (!Array.isArray(list) || list.length === 0 || list.length > 20)
          throw badInput(`${label}.files must be a list of 1 to 20 files.`);
        files += list.length;
        if (files > MAX_BATCH_FILES) throw badInput(`${label}.files: at most ${MAX_BATCH_FILES} files per batch.`);
        return { op, label, files: list.map((file, j) => planFile(`${label}.files[${j}]`, file, refs, opts.maxFileBytes)) };
      }
    }
  });
}

function planFile(label: string, file: ContentFileInput, refs: Set<string>, maxFileBytes: number): PlannedFile {
  if (!file || typeof file !== "object") throw badInput(`${label} must be an object.`);
  for (const [key, value] of Object.entries(file)) if (value === null) throw badInput(`${label}.${key} cannot be null.`);
  const name = text(`${label}.name`, file.name, 1, 256).trim();
  if (!name) throw badInput(`${label}.name cannot be blank.`);
  if (/[/\\\u0000-\u001f]/.test(name)) throw badInput(`${label}.name cannot contain slashes or control characters.`);
  const out: PlannedFile = { id: newId("File"), name, label };
  if (file.ref !== undefined) out.ref = refText(`${label}.ref`, file.ref, refs);
  if (file.contentType !== undefined) {
    const type = text(`${label}.contentType`, file.contentType, 1, 255).trim().toLowerCase();
    checkPattern(`${label}.contentType`, type, CONTENT_TYPE, "a media type such as image/png");
    out.contentType = type;
  }
  if ((file.url === undefined) === (file.base64 === undefined)) throw badInput(`${label}: give exactly one of url and base64.`);
  if (file.url !== undefined) {
    checkUri(`${label}.url`, text(`${label}.url`, file.url, 1, 2048));
    out.url = file.url as string;
  } else {
    if (!out.contentType) throw badInput(`${label}.contentType is required with base64.`);
    const encoded = text(`${label}.base64`, file.base64, 0, Number.MAX_SAFE_INTEGER).replace(/\s+/g, "");
    if (!BASE64.test(encoded) || encoded.length % 4 === 1)
      throw badInput(`${label}.base64 must be base64-encoded (RFC 4648, standard alphabet).`);
    if (Math.floor((encoded.length * 3) / 4) > maxFileBytes + 3)
      throw badInput(`${label}.base64 is too large: files are at most ${maxFileBytes} bytes.`);
    out.base64 = encoded;
  }
  return out;
}

// ─── Markdown documents ──────────────────────────────────────────────────────────────────────

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** The frontmatter's metadata, the leading heading as title (inserts), and the markdown to store. */
function readMarkdown(label: string, source: string, headingTitle: boolean): { markdown: string; meta: PageMeta; title?: string } {
  let markdown = source;
  const out: PageMeta = {};
  let title: string | undefined;
  const fm = FRONTMATTER.exec(markdown);
  if (fm) {
    markdown = markdown.slice(fm[0].length);
    let data: unknown;
    try {
      data = YAML.parse(fm[1]!, { maxAliasCount: 10 });
    } catch (err) {
      throw badInput(`${label}: the frontmatter is not valid YAML (${(err as Error).message.split("\n")[0]}).`);
    }
    if (data && typeof data === "object" && !Array.isArray(data)) {
      const values = data as Record<string, unknown>;
      const fields: Record<string, unknown> = {};
      for (const key of ["title", "description", "icon", "emoji", "hidden", "noIndex", "noRobotsIndex"])
        if (values[key] !== undefined && values[key] !== null) fields[key] = values[key];
      Object.assign(out, meta(`${label} frontmatter`, fields));
      if (out.title) title = out.title;
      delete out.title;
    }
  }
  if (headingTitle && !title) {
    const heading = /^\s*#[ \t]+([^\n]*?)[ \t]*#*[ \t]*(?:\r?\n|$)/.exec(markdown);
    const text = heading?.[1]?.trim();
    if (heading && text) {
      title = [...text].slice(0, TITLE_MAX).join("");
      markdown = markdown.slice(heading[0].length).replace(/^(?:[ \t]*\r?\n)+/, "");
    }
  }
  return { markdown, meta: out, title };
}

// ─── Applying a plan ─────────────────────────────────────────────────────────────────────────

export interface ChangeOutcome {
  object: "created_page" | "updated_page" | "deleted_page";
  pageId: string;
  ref?: string;
}

export interface BatchInputs {
  /** The stored description of each planned file, by its id (bytes already stored). */
  files: Map<string, StoredFile>;
  /** The content each revert_page change reverts to, by change index. */
  revertTo: Map<number, RevisionContent>;
  now: string;
}

function setMeta(page: StoredPage, m: PageMeta): void {
  if (m.title !== undefined) page.title = m.title;
  for (const key of ["emoji", "icon", "description"] as const) {
    if (m[key] === undefined) continue;
    if (m[key]) page[key] = m[key];
    else delete page[key];
  }
  for (const key of ["hidden", "noIndex", "noRobotsIndex"] as const) {
    if (m[key] === undefined) continue;
    if (m[key]) page[key] = true;
    else delete page[key];
  }
}

function checkInto(draft: RevisionContent, label: string, parent: string, movingId?: string): string {
  const target = entry(draft.pages, parent);
  if (!target) throw badInput(`${label}.into: page "${parent}" does not exist in this change request.`);
  if (target.type === "link") throw badInput(`${label}.into: page "${parent}" is a link page, which cannot hold pages.`);
  if (movingId && isSelfOrAncestor(draft, movingId, parent))
    throw badInput(`${label}.into: a page cannot move under itself or one of its sub-pages.`);
  return parent;
}

function slugFor(draft: RevisionContent, label: string, slug: string, parentId: string | null, pageId?: string): string {
  if (takenSlugs(draft, parentId, pageId).has(slug))
    throw badInput(`${label}.slug: "${slug}" is already used by another page at the same path.`);
  return slug;
}

function existing(draft: RevisionContent, label: string, pageId: string): StoredPage {
  const page = entry(draft.pages, pageId);
  if (!page) throw badInput(`${label}.page: page "${pageId}" does not exist in this change request.`);
  return page;
}

/**
 * Applies a plan to `draft` in order (see the header) and resolves the links of the markdown it
 * wrote; answers each page it touched, once, in the order first touched.
 */
export function applyChanges(draft: RevisionContent, plan: PlannedChange[], inputs: BatchInputs): ChangeOutcome[] {
  const touched = new Map<string, { created: boolean; ref?: string }>();
  const touch = (pageId: string, created = false, ref?: string) => {
    if (!touched.has(pageId)) touched.set(pageId, { created, ref });
  };
  const written = new Set<string>();
  const pageRefs = new Map<string, string>();
  const fileRefs = new Map<string, string>();

  plan.forEach((change, index) => {
    const { label } = change;
    switch (change.op) {
      case "insert_files":
        for (const file of change.files) {
          draft.files[file.id] = inputs.files.get(file.id)!;
          if (file.ref) fileRefs.set(normalizeRef(file.ref), file.id);
        }
        return;
      case "insert_page": {
        const parentId = change.into === undefined ? null : checkInto(draft, label, change.into);
        const title = change.meta.title ?? "Untitled";
        const slug = change.meta.slug ? slugFor(draft, label, change.meta.slug, parentId) : uniqueSlug(title, takenSlugs(draft, parentId));
        if (change.ref) {
          const key = normalizeRef(change.ref);
          if (flattenTree(pageTree(draft)).some((p) => p.type !== "group" && p.path === key)) {
            throw badInput(`${label}.ref: "${change.ref}" is the path of an existing page; choose another ref.`);
          }
          pageRefs.set(key, change.id);
        }
        const page: StoredPage = {
          id: change.id,
          title,
          type: "document",
          parentId,
          position: positionAt(draft, parentId, change.at),
          slug,
          markdown: change.markdown,
          createdAt: inputs.now,
          updatedAt: inputs.now,
        };
        setMeta(page, { ...change.meta, title });
        draft.pages[change.id] = page;
        written.add(change.id);
        touch(change.id, true, change.ref);
        return;
      }
      case "update_page": {
        const current = existing(draft, label, change.page);
        const page: StoredPage = { ...current };
        setMeta(page, change.meta);
        if (change.markdown !== undefined) {
          if (page.type !== "document" && change.markdown.trim())
            throw badInput(`${label}.document: ${page.type} pages have no content of their own.`);
          page.markdown = page.type === "document" ? change.markdown : "";
          written.add(page.id);
        }
        const moving = change.into !== undefined || change.at !== undefined;
        if (change.into !== undefined) page.parentId = change.into === null ? null : checkInto(draft, label, change.into, page.id);
        if (moving) page.position = positionAt(draft, page.parentId, change.at, page.id);
        if (change.meta.slug && change.meta.slug !== current.slug)
          page.slug = slugFor(draft, label, change.meta.slug, page.parentId, page.id);
        else if (page.parentId !== current.parentId && page.type !== "group" && takenSlugs(draft, page.parentId, page.id).has(page.slug)) {
          page.slug = uniqueSlug(page.slug, takenSlugs(draft, page.parentId, page.id));
        }
        page.updatedAt = inputs.now;
        draft.pages[page.id] = page;
        touch(page.id);
        return;
      }
      case "delete_page":
        existing(draft, label, change.page);
        for (const id of subtreeIds(draft, change.page)) delete draft.pages[id];
        touch(change.page);
        return;
      case "revert_page": {
        const target = inputs.revertTo.get(index)!;
        const then = entry(target.pages, change.page);
        const now = entry(draft.pages, change.page);
        if (!then && !now)
          throw badInput(`${label}.page: page "${change.page}" is neither in this change request nor in the revision it reverts to.`);
        touch(change.page);
        if (!then) {
          for (const id of subtreeIds(draft, change.page)) delete draft.pages[id];
          return;
        }
        if (then.parentId && !entry(draft.pages, then.parentId)) {
          throw badInput(
            `${label}.page: the parent of page "${change.page}" is not in this change request any more; revert the parent first.`,
          );
        }
        if (now && then.parentId && isSelfOrAncestor(draft, change.page, then.parentId)) {
          throw badInput(`${label}.page: page "${change.page}" was under a page that is now one of its sub-pages; move that page first.`);
        }
        // A page that was deleted comes back with the sub-pages it had.
        const restore = now ? [change.page] : subtreeIds(target, change.page).filter((id) => !entry(draft.pages, id));
        for (const id of restore) {
          const page = { ...entry(target.pages, id)! };
          if (page.type !== "group" && takenSlugs(draft, page.parentId, page.id).has(page.slug))
            page.slug = uniqueSlug(page.slug, takenSlugs(draft, page.parentId, page.id));
          draft.pages[id] = page;
        }
        return;
      }
    }
  });

  resolveLinks(
    draft,
    [...written].filter((id) => entry(draft.pages, id)),
    pageRefs,
    fileRefs,
  );

  // A page the batch created and removed again is not reported.
  return [...touched]
    .filter(([pageId, t]) => !(t.created && !entry(draft.pages, pageId)))
    .map(([pageId, t]): ChangeOutcome => {
      if (!entry(draft.pages, pageId)) return { object: "deleted_page", pageId };
      return t.created ? { object: "created_page", pageId, ...(t.ref ? { ref: t.ref } : {}) } : { object: "updated_page", pageId };
    });
}
