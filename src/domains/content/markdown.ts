import { fromMarkdown } from "mdast-util-from-markdown";
import { gfm } from "micromark-extension-gfm";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { toString } from "mdast-util-to-string";
import GithubSlugger from "github-slugger";
import type { Nodes, Root, RootContent, PhrasingContent, Definition } from "mdast";

/**
 * Markdown of pages, read with a real CommonMark + GFM parser (micromark / mdast). Everything
 * the content area derives from markdown goes through `parseMarkdown`: the JSON document of
 * `format=document`, search sections, links and backlinks, and the text of PDF exports.
 */
export function parseMarkdown(markdown: string): Root {
  return fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
}

// ─── The JSON document (`format=document`) ───────────────────────────────────────────────────

/**
 * The document of a page, derived from its markdown:
 *
 * - `{object: "document", nodes: Block[]}`
 * - Block `{object: "block", type, data?, nodes}` with `type` one of `paragraph`, `heading-1` …
 *   `heading-6` (data `{id}`: the anchor), `blockquote`, `code` (data `{syntax?}`, one text node),
 *   `list-unordered`, `list-ordered` (data `{start}`), `list-item` (data `{checked}` for task items),
 *   `divider`, `table` (data `{aligns}`) of `table-row` of `table-cell`, `html` (data `{html}`),
 *   `footnote-definition` (data `{id}`);
 * - Inline `{object: "inline", type, data, nodes}` with `type` one of `link` (data `{href, title?}`),
 *   `image` (data `{src, alt, title?}`, no nodes), `footnote-ref` (data `{id}`), `break`, `html` (data `{html}`);
 * - Text `{object: "text", text, marks?}` with marks among `bold`, `italic`, `strikethrough`, `code`.
 */
export interface DocText {
  object: "text";
  text: string;
  marks?: string[];
}
export interface DocInline {
  object: "inline";
  type: string;
  data?: Record<string, unknown>;
  nodes: (DocInline | DocText)[];
}
export interface DocBlock {
  object: "block";
  type: string;
  data?: Record<string, unknown>;
  nodes: DocNode[];
}
export type DocNode = DocBlock | DocInline | DocText;
export interface PageDocument {
  object: "document";
  nodes: DocBlock[];
}

/** JSON schema of the document (the OpenAPI document shows it for `document`). */
export const DOCUMENT_JSON_SCHEMA = {
  type: "object",
  description:
    "The page as a JSON document derived from its markdown (CommonMark + GFM): `{object: document, nodes: Block[]}`. " +
    "Block `{object: block, type, data?, nodes}`: paragraph, heading-1…heading-6 (data.id: anchor), blockquote, code (data.syntax), " +
    "list-unordered, list-ordered (data.start), list-item (data.checked), divider, table (data.aligns) › table-row › table-cell, html (data.html), " +
    "footnote-definition (data.id). Inline `{object: inline, type, data, nodes}`: link (data.href, data.title), image (data.src, data.alt, data.title), " +
    "footnote-ref (data.id), break, html. Text `{object: text, text, marks?}` with marks bold, italic, strikethrough, code.",
  required: ["object", "nodes"],
  properties: {
    object: { type: "string", enum: ["document"] },
    nodes: {
      type: "array",
      items: {
        type: "object",
        required: ["object"],
        properties: {
          object: { type: "string", enum: ["block", "inline", "text"] },
          type: { type: "string" },
          data: { type: "object" },
          nodes: { type: "array", items: { type: "object" } },
          text: { type: "string" },
          marks: { type: "array", items: { type: "string" } },
        },
      },
    },
  },
} as const;

function definitionsOf(root: Root): Map<string, Definition> {
  const map = new Map<string, Definition>();
  const walk = (node: Nodes) => {
    if (node.type === "definition") map.set(node.identifier.toLowerCase(), node);
    if ("children" in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(root);
  return map;
}

function compact<T extends Record<string, unknown>>(data: T): T | undefined {
  const out = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined && v !== null));
  return Object.keys(out).length ? (out as T) : undefined;
}

function block(type: string, nodes: DocNode[], data?: Record<string, unknown>): DocBlock {
  const d = data && compact(data);
  return d ? { object: "block", type, data: d, nodes } : { object: "block", type, nodes };
}

/** Converts a parsed markdown tree to the JSON document. */
export function toDocument(root: Root): PageDocument {
  const definitions = definitionsOf(root);
  const slugger = new GithubSlugger();

  const inlines = (nodes: PhrasingContent[], marks: string[]): (DocInline | DocText)[] => {
    const out: (DocInline | DocText)[] = [];
    for (const node of nodes) {
      switch (node.type) {
        case "text":
          out.push(marks.length ? { object: "text", text: node.value, marks } : { object: "text", text: node.value });
          break;
        case "emphasis":
          out.push(...inlines(node.children, [...marks, "italic"]));
          break;
        case "strong":
          out.push(...inlines(node.children, [...marks, "bold"]));
          break;
        case "delete":
          out.push(...inlines(node.children, [...marks, "strikethrough"]));
          break;
        case "inlineCode":
          out.push({ object: "text", text: node.value, marks: [...marks, "code"] });
          break;
        case "break":
          out.push({ object: "inline", type: "break", nodes: [] });
          break;
        case "link":
          out.push({ object: "inline", type: "link", data: compact({ href: node.url, title: node.title ?? undefined }) ?? {}, nodes: inlines(node.children, marks) });
          break;
        case "linkReference": {
          const def = definitions.get(node.identifier.toLowerCase());
          if (def) out.push({ object: "inline", type: "link", data: compact({ href: def.url, title: def.title ?? undefined }) ?? {}, nodes: inlines(node.children, marks) });
          else out.push(...inlines(node.children, marks));
          break;
        }
        case "image":
          out.push({ object: "inline", type: "image", data: compact({ src: node.url, alt: node.alt ?? "", title: node.title ?? undefined }) ?? {}, nodes: [] });
          break;
        case "imageReference": {
          const def = definitions.get(node.identifier.toLowerCase());
          if (def) out.push({ object: "inline", type: "image", data: compact({ src: def.url, alt: node.alt ?? "", title: def.title ?? undefined }) ?? {}, nodes: [] });
          break;
        }
        case "footnoteReference":
          out.push({ object: "inline", type: "footnote-ref", data: { id: node.identifier }, nodes: [] });
          break;
        case "html":
          out.push({ object: "inline", type: "html", data: { html: node.value }, nodes: [] });
          break;
        default:
          break;
      }
    }
    return out;
  };

  const blocks = (nodes: RootContent[]): DocBlock[] => {
    const out: DocBlock[] = [];
    for (const node of nodes) {
      switch (node.type) {
        case "paragraph":
          out.push(block("paragraph", inlines(node.children, [])));
          break;
        case "heading":
          out.push(block(`heading-${node.depth}`, inlines(node.children, []), { id: slugger.slug(toString(node)) }));
          break;
        case "blockquote":
          out.push(block("blockquote", blocks(node.children)));
          break;
        case "code":
          out.push(block("code", [{ object: "text", text: node.value }], { syntax: node.lang ?? undefined }));
          break;
        case "list":
          out.push(
            block(
              node.ordered ? "list-ordered" : "list-unordered",
              node.children.map((item) => block("list-item", blocks(item.children), { checked: item.checked ?? undefined })),
              node.ordered ? { start: node.start ?? 1 } : undefined,
            ),
          );
          break;
        case "thematicBreak":
          out.push(block("divider", []));
          break;
        case "table":
          out.push(
            block(
              "table",
              node.children.map((row) => block("table-row", row.children.map((cell) => block("table-cell", inlines(cell.children, []))))),
              { aligns: node.align ?? [] },
            ),
          );
          break;
        case "html":
          out.push(block("html", [], { html: node.value }));
          break;
        case "footnoteDefinition":
          out.push(block("footnote-definition", blocks(node.children), { id: node.identifier }));
          break;
        default:
          break; // definitions are resolved into the links that use them
      }
    }
    return out;
  };

  return { object: "document", nodes: blocks(root.children) };
}

export function markdownToDocument(markdown: string): PageDocument {
  return toDocument(parseMarkdown(markdown));
}

// ─── Links ───────────────────────────────────────────────────────────────────────────────────

export interface MarkdownLink {
  url: string;
  /** "link" for `[text](url)` (and autolinks), "image" for `![alt](src)`. */
  kind: "link" | "image";
}

/** Every link and image target of a markdown text, reference-style ones resolved, in order. */
export function linksOf(markdown: string): MarkdownLink[] {
  const root = parseMarkdown(markdown);
  const definitions = definitionsOf(root);
  const out: MarkdownLink[] = [];
  const walk = (node: Nodes) => {
    if (node.type === "link") out.push({ url: node.url, kind: "link" });
    else if (node.type === "image") out.push({ url: node.url, kind: "image" });
    else if (node.type === "linkReference" || node.type === "imageReference") {
      const def = definitions.get(node.identifier.toLowerCase());
      if (def) out.push({ url: def.url, kind: node.type === "linkReference" ? "link" : "image" });
    }
    if ("children" in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(root);
  return out.filter((l) => l.url.trim() !== "");
}

/** Anchors (GitHub-style heading ids) of a markdown text. */
export function anchorsOf(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const node of parseMarkdown(markdown).children) if (node.type === "heading") anchors.add(slugger.slug(toString(node)));
  return anchors;
}

// ─── Sections (search) and text blocks (PDF) ─────────────────────────────────────────────────

export interface Section {
  /** The heading's anchor; "" for the text before the first heading. */
  anchor: string;
  title: string;
  body: string;
}

/** Splits a page into sections at its headings; the text before the first heading is the "" section. */
export function sectionsOf(markdown: string): Section[] {
  const slugger = new GithubSlugger();
  const sections: Section[] = [{ anchor: "", title: "", body: "" }];
  for (const node of parseMarkdown(markdown).children) {
    if (node.type === "heading") {
      const title = toString(node);
      sections.push({ anchor: slugger.slug(title), title, body: "" });
      continue;
    }
    if (node.type === "definition") continue;
    const text = toString(node).trim();
    if (!text) continue;
    const current = sections[sections.length - 1]!;
    current.body = current.body ? `${current.body}\n${text}` : text;
  }
  return sections.filter((s, i) => i > 0 || s.body);
}

export interface TextBlock {
  kind: "heading" | "paragraph" | "code" | "item" | "quote";
  text: string;
  /** Heading depth (1-6), list nesting for items. */
  level: number;
}

/** The readable text of a page as blocks (for PDF export). */
export function textBlocks(markdown: string): TextBlock[] {
  const out: TextBlock[] = [];
  const walk = (nodes: RootContent[], level: number, quote: boolean) => {
    for (const node of nodes) {
      switch (node.type) {
        case "heading":
          out.push({ kind: "heading", text: toString(node), level: node.depth });
          break;
        case "code":
          out.push({ kind: "code", text: node.value, level: 0 });
          break;
        case "list":
          for (const item of node.children) {
            const [first, ...rest] = item.children;
            const bullet = item.checked === true ? "[x] " : item.checked === false ? "[ ] " : "";
            if (first) out.push({ kind: "item", text: bullet + toString(first), level: level + 1 });
            walk(rest, level + 1, quote);
          }
          break;
        case "blockquote":
          walk(node.children, level, true);
          break;
        case "table":
          for (const row of node.children) out.push({ kind: "paragraph", text: row.children.map((c) => toString(c)).join(" | "), level: 0 });
          break;
        case "thematicBreak":
        case "definition":
        case "html":
          break;
        default: {
          const text = toString(node).trim();
          if (text) out.push({ kind: quote ? "quote" : "paragraph", text, level });
        }
      }
    }
  };
  walk(parseMarkdown(markdown).children, 0, false);
  return out;
}

/** Plain text of a markdown text (search bodies). */
export function plainText(markdown: string): string {
  return parseMarkdown(markdown)
    .children.filter((n) => n.type !== "definition")
    .map((n) => toString(n))
    .filter(Boolean)
    .join("\n");
}
