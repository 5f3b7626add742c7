import { fromMarkdown } from "mdast-util-from-markdown";
import { gfm } from "micromark-extension-gfm";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { toString } from "mdast-util-to-string";
import GithubSlugger from "github-slugger";
import type { Nodes, Root, RootContent, Definition } from "mdast";
import { badInput } from "../../core/errors.js";

/**
 * Markdown of pages, read with a real CommonMark + GFM parser (micromark / mdast). Everything
 * the content area derives from markdown goes through `parseMarkdown`: the JSON document of
 * `format=document`, search sections, links and backlinks, and the text of PDF exports.
 */
export function parseMarkdown(markdown: string): Root {
  return fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
}

function definitionsOf(root: Root): Map<string, Definition> {
  const map = new Map<string, Definition>();
  const walk = (node: Nodes) => {
    if (node.type === "definition") map.set(node.identifier.toLowerCase(), node);
    if ("children" in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(root);
  return map;
}

// ─── Back to markdown: JSON documents sent by clients ────────────────────────────────────────

/**
 * Markdown from a JSON document, the way back of `toGitBookDocument` (gitbook-document.ts):
 * GitBook's shape (text `leaves`, `marks` objects, `code-line` blocks, hints, keys and metas
 * ignored) and the older shape this server answered before (texts with `text` and string marks,
 * `link` with `data.href`, `image`, `table` › `table-row` › `table-cell`, `html`), which clients may
 * still send. A node of another type is a 400 naming it.
 */
export function documentToMarkdown(label: string, document: unknown): string {
  const doc = document as { object?: unknown; nodes?: unknown };
  if (!doc || typeof doc !== "object" || !Array.isArray(doc.nodes))
    throw badInput(`${label} must be {"object": "document", "nodes": [...]}.`);
  let count = 0;
  const fail = (where: string, what: string): never => {
    throw badInput(`${label}${where}: ${what}; send the page as markdown instead.`);
  };
  // GitBook's content references: a URL, a page (and anchor) or a file of the content.
  const refTarget = (ref: any): string => {
    if (!ref || typeof ref !== "object") return "";
    if (ref.kind === "url" && typeof ref.url === "string") return ref.url;
    if ((ref.kind === "page" || ref.kind === "anchor") && typeof ref.page === "string")
      return `page:${ref.page}${typeof ref.anchor === "string" ? `#${ref.anchor}` : ""}`;
    if (ref.kind === "file" && typeof ref.file === "string") return `file:${ref.file}`;
    return typeof ref.url === "string" ? ref.url : "";
  };
  const escape = (s: string) => s.replace(/([\\`*_[\]<>])/g, "\\$1");
  // A link target as written: bare when markdown reads it back as it is, else in angle brackets.
  const destination = (url: string) => (/^[^\s()<>\\]+$/.test(url) ? url : `<${url}>`);
  const markOf = (m: unknown) =>
    typeof m === "string" ? m : m && typeof m === "object" ? String((m as { type?: unknown }).type ?? "") : "";
  const wrap = (s: string, marks: unknown) => {
    const list = Array.isArray(marks) ? marks.map(markOf) : [];
    // Marks go around the text, spaces stay outside them (`** bold**` is not bold in markdown).
    const [, lead, core, trail] = /^(\s*)([\s\S]*?)(\s*)$/.exec(s)!;
    if (!core) return list.includes("code") ? s : escape(s);
    let out = list.includes("code") ? "`" + core!.replace(/`/g, "\u02cb") + "`" : escape(core!);
    if (list.includes("bold")) out = `**${out}**`;
    if (list.includes("italic")) out = `_${out}_`;
    if (list.includes("strikethrough")) out = `~~${out}~~`;
    return `${lead}${out}${trail}`;
  };
  const inline = (node: any, where: string): string => {
    if (++count > 100_000) fail("", "the document has too many nodes");
    if (!node || typeof node !== "object") return fail(where, "a node must be an object");
    if (node.object === "text") {
      if (Array.isArray(node.leaves))
        return node.leaves.map((leaf: any) => wrap(typeof leaf?.text === "string" ? leaf.text : "", leaf?.marks)).join("");
      return wrap(typeof node.text === "string" ? node.text : "", node.marks);
    }
    if (node.object !== "inline") return fail(where, `a ${String(node.object)} node cannot be inside text`);
    const inner = () =>
      Array.isArray(node.nodes) ? node.nodes.map((n: any, i: number) => inline(n, `${where}.nodes[${i}]`)).join("") : "";
    const data = node.data && typeof node.data === "object" ? node.data : {};
    switch (node.type) {
      case "link": {
        const href = typeof data.href === "string" ? data.href : refTarget(data.ref);
        return `[${inner()}](${destination(href)})`;
      }
      case "image":
      case "inline-image":
        return `![${escape(String(data.alt ?? ""))}](${destination(typeof data.src === "string" ? data.src : refTarget(data.ref))})`;
      case "break":
        return "\\\n";
      case "html":
        return String(data.html ?? "");
      case "footnote-ref":
        return `[^${String(data.id ?? "")}]`;
      default:
        return fail(where, `inline type "${String(node.type)}" is not supported`);
    }
  };
  const inlines = (nodes: unknown, where: string) =>
    Array.isArray(nodes) ? nodes.map((n, i) => inline(n, `${where}.nodes[${i}]`)).join("") : "";
  const indent = (s: string, prefix: string) =>
    s
      .split("\n")
      .map((line) => (line ? prefix + line : line.trimEnd() || prefix.trimEnd()))
      .join("\n");
  const blocks = (nodes: unknown[], where: string): string =>
    nodes
      .map((n, i) => block(n as any, `${where}[${i}]`))
      .filter((s) => s !== "")
      .join("\n\n");
  // biome-ignore lint/correctness/noUnusedVariables: called through `blocks`, mutually recursive
  const block = (node: any, where: string): string => {
    if (++count > 100_000) fail("", "the document has too many nodes");
    if (!node || typeof node !== "object") return fail(where, "a node must be an object");
    if (node.object === "text" || node.object === "inline") return inline(node, where);
    if (node.object !== "block") return fail(where, `object must be block, inline or text (got ${JSON.stringify(node.object)})`);
    const children: unknown[] = Array.isArray(node.nodes) ? node.nodes : [];
    const data = node.data && typeof node.data === "object" ? node.data : {};
    const type = String(node.type);
    const heading = /^heading-([1-6])$/.exec(type);
    if (heading) return `${"#".repeat(Number(heading[1]))} ${inlines(children, where)}`;
    switch (type) {
      case "paragraph":
        return inlines(children, where);
      case "blockquote":
      case "hint":
        return indent(blocks(children, `${where}.nodes`), "> ");
      case "code": {
        const plain = children.map((c: any) => (c?.object === "block" ? plainOf(c.nodes) : plainOf([c]))).join("\n");
        // A table or HTML block the markdown had (gitbook-document.ts `raw`): written back as itself.
        if (node.meta?.rawMarkdown === true) return plain;
        const fence = "```" + "`".repeat(Math.max(0, ...[...plain.matchAll(/`{3,}/g)].map((m) => m[0].length - 2)));
        return `${fence}${typeof data.syntax === "string" ? data.syntax : ""}\n${plain}\n${fence}`;
      }
      case "list-unordered":
      case "list-ordered":
      case "list-tasks":
        return children
          .map((item: any, i) => {
            const content = Array.isArray(item?.nodes) ? blocks(item.nodes, `${where}.nodes[${i}].nodes`) : "";
            const checked = item?.data?.checked;
            const marker = type === "list-ordered" ? `${(Number(data.start) || 1) + i}.` : "-";
            const box = typeof checked === "boolean" ? (checked ? "[x] " : "[ ] ") : "";
            const pad = " ".repeat(marker.length + 1);
            const [first = "", ...rest] = content.split("\n");
            return `${marker} ${box}${first}${rest.length ? "\n" + indent(rest.join("\n"), pad) : ""}`;
          })
          .join("\n");
      case "divider":
        return "---";
      case "html":
        return String(data.html ?? "");
      case "table": {
        const rows = children.map((row: any) =>
          Array.isArray(row?.nodes)
            ? row.nodes.map((cell: any, j: number) =>
                inlines(cell?.nodes, `${where}.cells[${j}]`).replace(/\|/g, "\\|").replace(/\n/g, " "),
              )
            : [],
        );
        if (!rows.length) return "";
        const width = Math.max(...rows.map((r) => r.length), 1);
        const line = (cells: string[]) => `| ${Array.from({ length: width }, (_, j) => cells[j] ?? "").join(" | ")} |`;
        return [line(rows[0]!), line(Array(width).fill("---")), ...rows.slice(1).map(line)].join("\n");
      }
      default:
        return fail(where, `block type "${type}" is not supported`);
    }
  };
  const plainOf = (nodes: unknown): string =>
    Array.isArray(nodes)
      ? nodes
          .map((n: any) =>
            n?.object === "text"
              ? Array.isArray(n.leaves)
                ? n.leaves.map((l: any) => (typeof l?.text === "string" ? l.text : "")).join("")
                : typeof n.text === "string"
                  ? n.text
                  : ""
              : plainOf(n?.nodes),
          )
          .join("")
      : "";
  const out = blocks(doc.nodes as unknown[], ".nodes");
  return out ? `${out}\n` : "";
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
          for (const row of node.children)
            out.push({ kind: "paragraph", text: row.children.map((c) => toString(c)).join(" | "), level: 0 });
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
