import GithubSlugger from "github-slugger";
import { toString } from "mdast-util-to-string";
import type { Definition, Nodes, PhrasingContent, Root, RootContent } from "mdast";
import { parseMarkdown } from "./markdown.js";

/**
 * GitBook's `JSONDocument` (its editor's node tree) derived from markdown: the one document shape
 * every read answers (a page with `format=document`, a page's and a reusable content's
 * `…/document`, comment bodies). Stored content stays markdown; what GitBook's blocks cannot hold
 * where markdown puts it is carried as text:
 *
 * - paragraphs, headings (`heading-1` … `heading-3`; deeper levels are `heading-3`; the anchor in
 *   `meta.id`, which GitBook's reader links and outlines by, and in `data.id` when it fits GitBook's
 *   pattern), block quotes, code blocks (one `code-line` per line), lists (`list-tasks` when an item
 *   has a checkbox), dividers; text leaves with the marks bold, italic, strikethrough and code;
 * - links as content refs: `page:<id>` → page (with `#anchor` → anchor), `file:<id>` → file,
 *   `#anchor` → anchor, anything else → url (or what `resolveRef` makes of it); images as
 *   `inline-image` (url or file ref);
 * - tables and raw HTML blocks as code blocks of their markdown (`markdown`, `html`) marked
 *   `meta.rawMarkdown`, so that writing the document back gives the same markdown; inline HTML
 *   and footnote references as text, footnote definitions as a paragraph `[^id]:` before their
 *   blocks; a code block inside a quote as paragraphs of code-marked lines;
 * - every block and inline has a `key`: its position in the tree (`0`, `0.1`, …), the same for the
 *   same markdown, as GitBook's reader keys its nodes and task checkboxes by it.
 */

type Json = Record<string, unknown>;

const LEAF = (text: string, marks: string[]) => ({ object: "leaf", text, marks: marks.map((type) => ({ object: "mark", type })) });
const TEXT = (text: string, marks: string[] = []): Json => ({ object: "text", leaves: [LEAF(text, marks)] });
const EMPTY_TEXT = () => TEXT("");

function block(type: string, nodes: Json[], data: Json = {}): Json {
  return { object: "block", type, isVoid: false, data, nodes };
}

/** The ref of a link or image target as this server's markdown writes it. */
function contentRef(url: string): Json {
  const page = /^page:([^#]+)(?:#(.+))?$/.exec(url);
  if (page) return page[2] ? { kind: "anchor", page: page[1], anchor: page[2] } : { kind: "page", page: page[1] };
  const file = /^file:(.+)$/.exec(url);
  if (file) return { kind: "file", file: file[1] };
  if (url.startsWith("#") && url.length > 1) return { kind: "anchor", anchor: url.slice(1) };
  return { kind: "url", url };
}

/** How links are turned into refs beyond the forms above (a relative page path, for instance); undefined keeps the default. */
export type RefResolver = (url: string) => Json | undefined;

const ANCHOR = /^[-a-z0-9.+_]+$/;
/** Blocks GitBook allows inside a quote (besides quotes). */
const ESSENTIALS = new Set(["paragraph", "heading-1", "heading-2", "heading-3", "list-ordered", "list-unordered", "list-tasks", "divider"]);

export interface GitBookDocument {
  object: "document";
  data: Json;
  nodes: Json[];
}

/** Keys by position: `0`, `0.1`, … for blocks and inlines (texts need none). */
function assignKeys(nodes: Json[], prefix: string): void {
  nodes.forEach((node, i) => {
    if (node.object === "text") return;
    const key = prefix ? `${prefix}.${i}` : String(i);
    node.key = key;
    if (Array.isArray(node.nodes)) assignKeys(node.nodes as Json[], key);
  });
}

export function toGitBookDocument(markdown: string, options: { root?: Root; resolveRef?: RefResolver } = {}): GitBookDocument {
  const root = options.root ?? parseMarkdown(markdown);
  const refOf = (url: string): Json => options.resolveRef?.(url) ?? contentRef(url);
  const imageRef = (url: string): Json => {
    const ref = refOf(url);
    return ref.kind === "file" || ref.kind === "url" ? ref : { kind: "url", url };
  };
  const definitions = new Map<string, Definition>();
  const collect = (node: Nodes) => {
    if (node.type === "definition") definitions.set(node.identifier.toLowerCase(), node);
    if ("children" in node) for (const child of node.children) collect(child as Nodes);
  };
  collect(root);
  const slugger = new GithubSlugger();
  const source = (node: Nodes) => (node.position ? markdown.slice(node.position.start.offset, node.position.end.offset) : toString(node));

  const inlines = (nodes: PhrasingContent[], marks: string[], inLink = false): Json[] => {
    const out: Json[] = [];
    const link = (url: string, children: PhrasingContent[]) => {
      const inner = inlines(children, marks, true);
      out.push({
        object: "inline",
        type: "link",
        isVoid: false,
        data: { ref: refOf(url) },
        nodes: inner.length ? inner : [EMPTY_TEXT()],
      });
    };
    const image = (url: string, alt: string) => {
      out.push({ object: "inline", type: "inline-image", isVoid: true, data: { ref: imageRef(url), ...(alt ? { alt } : {}) } });
    };
    for (const node of nodes) {
      switch (node.type) {
        case "text":
          out.push(TEXT(node.value, marks));
          break;
        case "emphasis":
          out.push(...inlines(node.children, [...marks, "italic"], inLink));
          break;
        case "strong":
          out.push(...inlines(node.children, [...marks, "bold"], inLink));
          break;
        case "delete":
          out.push(...inlines(node.children, [...marks, "strikethrough"], inLink));
          break;
        case "inlineCode":
          out.push(TEXT(node.value, [...marks, "code"]));
          break;
        case "break":
          out.push(TEXT("\n", marks));
          break;
        case "link":
          if (inLink) out.push(...inlines(node.children, marks, true));
          else link(node.url, node.children);
          break;
        case "linkReference": {
          const def = definitions.get(node.identifier.toLowerCase());
          if (def && !inLink) link(def.url, node.children);
          else out.push(...inlines(node.children, marks, inLink));
          break;
        }
        case "image":
          image(node.url, node.alt ?? "");
          break;
        case "imageReference": {
          const def = definitions.get(node.identifier.toLowerCase());
          if (def) image(def.url, node.alt ?? "");
          break;
        }
        case "footnoteReference":
          out.push(TEXT(`[^${node.label ?? node.identifier}]`, marks));
          break;
        case "html":
          out.push(TEXT(node.value, marks));
          break;
        default:
          break;
      }
    }
    return out;
  };

  const phrasing = (nodes: PhrasingContent[]) => {
    const out = inlines(nodes, []);
    return out.length ? out : [EMPTY_TEXT()];
  };

  const code = (text: string, syntax?: string | null) =>
    block(
      "code",
      text.split("\n").map((line) => block("code-line", [TEXT(line)])),
      syntax ? { syntax } : {},
    );
  /** Markdown GitBook has no block for, kept as a code block that writes back as itself. */
  const raw = (text: string, syntax: string) => ({ ...code(text, syntax), meta: { rawMarkdown: true } });

  /** Blocks of a quote or a list item: what GitBook does not allow there becomes paragraphs. */
  const nested = (nodes: RootContent[], allowCode: boolean): Json[] =>
    blocks(nodes).flatMap((b) => {
      if (ESSENTIALS.has(b.type as string) || b.type === "blockquote" || (allowCode && b.type === "code")) return [b];
      if (b.type === "code") {
        return (b.nodes as Json[]).map((line) =>
          block("paragraph", [TEXT(((line.nodes as any[])[0].leaves[0].text as string) || "", ["code"])]),
        );
      }
      return [b];
    });

  const blocks = (nodes: RootContent[]): Json[] => {
    const out: Json[] = [];
    for (const node of nodes) {
      switch (node.type) {
        case "paragraph":
          out.push(block("paragraph", phrasing(node.children)));
          break;
        case "heading": {
          const id = slugger.slug(toString(node));
          out.push({
            ...block(`heading-${Math.min(node.depth, 3)}`, phrasing(node.children), ANCHOR.test(id) ? { id } : {}),
            meta: { id },
          });
          break;
        }
        case "blockquote": {
          const inner = nested(node.children, false);
          out.push(block("blockquote", inner.length ? inner : [block("paragraph", [EMPTY_TEXT()])]));
          break;
        }
        case "code":
          out.push(code(node.value, node.lang));
          break;
        case "list": {
          const tasks = node.children.some((item) => typeof item.checked === "boolean");
          const items = node.children.map((item) => {
            const inner = nested(item.children, true);
            return block(
              "list-item",
              inner.length ? inner : [block("paragraph", [EMPTY_TEXT()])],
              tasks ? { checked: item.checked === true } : {},
            );
          });
          const type = tasks ? "list-tasks" : node.ordered ? "list-ordered" : "list-unordered";
          out.push(block(type, items, node.ordered && !tasks ? { start: node.start ?? 1 } : {}));
          break;
        }
        case "thematicBreak":
          out.push({ object: "block", type: "divider", isVoid: true, data: {} });
          break;
        case "table":
          out.push(raw(source(node), "markdown"));
          break;
        case "html":
          out.push(raw(node.value, "html"));
          break;
        case "footnoteDefinition":
          out.push(block("paragraph", [TEXT(`[^${node.label ?? node.identifier}]:`)]), ...blocks(node.children));
          break;
        default:
          break; // definitions are resolved into the links that use them
      }
    }
    return out;
  };

  const nodes = blocks(root.children);
  assignKeys(nodes, "");
  return { object: "document", data: {}, nodes };
}

const DOCUMENT_DESCRIPTION =
  "GitBook's JSONDocument derived from the markdown: `{object: document, data, nodes}` of blocks `{object: block, key, type, isVoid, data, nodes}` " +
  "(headings with their anchor in `meta.id`), inlines (`link` with `data.ref`, `inline-image`) and texts `{object: text, leaves: [{object: leaf, text, marks: [{object: mark, type}]}]}`. " +
  "Tables and raw HTML come as code blocks of their markdown (`meta.rawMarkdown`).";

/** The JSON schema of the answer, for this server's OpenAPI document (GitBook's JSONDocument, loosely). */
export const GITBOOK_DOCUMENT_JSON_SCHEMA = {
  type: "object",
  description: DOCUMENT_DESCRIPTION,
  required: ["object", "data", "nodes"],
  properties: {
    object: { type: "string", enum: ["document"] },
    data: { type: "object" },
    nodes: { type: "array", items: { type: "object" } },
  },
} as const;

/** The same where a document is also input: `data` may be left out, and texts of the older shape (`{object: text, text, marks: [name]}`) are read too. */
export const PAGE_DOCUMENT_JSON_SCHEMA = {
  type: "object",
  description: `${DOCUMENT_DESCRIPTION} As input, \`data\` may be left out and texts may be \`{object: text, text, marks: [name]}\`.`,
  required: ["object", "nodes"],
  properties: GITBOOK_DOCUMENT_JSON_SCHEMA.properties,
} as const;
