import GithubSlugger from "github-slugger";
import type { Element, ElementContent, Root as HastRoot } from "hast";
import { defaultSchema, sanitize, type Schema } from "hast-util-sanitize";
import { toHtml } from "hast-util-to-html";
import { common, createLowlight } from "lowlight";
import type { Code, Heading as MdHeading, Nodes, Root } from "mdast";
import { toHast } from "mdast-util-to-hast";
import { toString as mdToString } from "mdast-util-to-string";
import { parseMarkdown } from "../domains/content/markdown.js";

/**
 * A page's markdown as the HTML a reader sees: the content area's parser (CommonMark + GFM) →
 * mdast → hast → highlighted code → sanitized hast (GitHub's rules) → HTML.
 *
 * Raw HTML in markdown is dropped, never passed through: pages are written through the API and
 * change requests by many hands, and the reader face must not run what any of them typed. The
 * sanitizer runs last, over everything the pipeline produced (highlighter output included), so
 * a mistake in an earlier step cannot reach the page as markup.
 */

export interface Heading {
  depth: 1 | 2 | 3 | 4 | 5 | 6;
  /** The heading's plain text. */
  text: string;
  /** Its anchor: GitHub-style, unique in the page, the same as the API's anchors (content/markdown.ts anchorsOf); "" for an empty heading, which has none. */
  id: string;
}

export interface RenderedMarkdown {
  html: string;
  /** The page's top-level headings in order, for an on-page table of contents. */
  headings: Heading[];
}

export interface RenderOptions {
  /** The URL of a page of the content by id (`page:<id>` links), or nothing when the reader may not go there. */
  pageUrl?: (pageId: string) => string | null | undefined;
  /** The URL of a file of the content by id (`file:<id>` links and images). */
  fileUrl?: (fileId: string) => string | null | undefined;
}

const lowlight = createLowlight(common);

/**
 * GitHub's schema, extended only where the pipeline needs it: heading ids kept as written (no
 * `user-content-` prefix: raw HTML is dropped, so every id comes from the pipeline and the
 * anchors must match the API's), highlighter classes on spans, lazy images.
 */
const schema: Schema = {
  ...defaultSchema,
  clobber: [],
  clobberPrefix: "",
  attributes: {
    ...defaultSchema.attributes,
    span: [...(defaultSchema.attributes?.span ?? []), ["className", /^hljs-[\w-]+$/]],
    img: [...(defaultSchema.attributes?.img ?? []), ["loading", "lazy"]],
    input: [...(defaultSchema.attributes?.input ?? []), "ariaLabel"],
  },
};

/**
 * Footnote ids get an uppercase prefix: heading slugs are always lower case, so a heading can
 * never take a footnote's id (nor the layout's ids, which are capitalised too).
 */
const FOOTNOTE_PREFIX = "Note-";

/** Renders a page's markdown; pure, no cache (callers cache the page). */
export function renderMarkdown(markdown: string, options: RenderOptions = {}): RenderedMarkdown {
  const root = parseMarkdown(markdown);
  dropRawHtml(root);
  const headings = assignHeadingIds(root);
  resolveRefs(root, options);
  const hast = toHast(root, {
    clobberPrefix: FOOTNOTE_PREFIX,
    handlers: { code: codeBlock },
  }) as HastRoot;
  finish(hast);
  const clean = sanitize(hast, schema) as HastRoot;
  return { html: toHtml(clean), headings };
}

/** A task item's checkbox named by the item's own text, so that assistive technology reads what is (not) done. */
function labelTask(li: Element) {
  const isInput = (c: ElementContent): c is Element => c.type === "element" && c.tagName === "input";
  // The checkbox is the item's first child, or its first paragraph's in a loose list: the label is that block's text.
  const first = li.children.find((c) => c.type === "element");
  const holder = first?.type === "element" && first.tagName === "p" ? first : li;
  const input = holder.children.find(isInput);
  if (!input) return;
  const text = (node: ElementContent): string =>
    node.type === "text"
      ? node.value
      : node.type === "element" && node.tagName !== "ul" && node.tagName !== "ol"
        ? node.children.map(text).join("")
        : "";
  const label = holder.children.map(text).join("").replace(/\s+/g, " ").trim().slice(0, 200);
  if (label) input.properties.ariaLabel = label;
}

/** Raw HTML elements whose content is code or markup, never text to show. */
const OPAQUE = /^<(script|style|iframe|object|noscript|textarea|template|svg|math|title|xmp|noembed|noframes)\b/i;

/**
 * Drops raw HTML. Inline raw HTML comes as one node per tag, so for an opaque element (`a
 * <script>…</script> b`) what lies between its tags goes too: the reader sees neither the tags
 * nor the script's source.
 */
function dropRawHtml(node: Nodes) {
  if (!("children" in node)) return;
  const kept: Nodes[] = [];
  let closing: RegExp | null = null;
  for (const child of node.children as Nodes[]) {
    if (closing) {
      if (child.type === "html" && closing.test(child.value)) closing = null;
      continue;
    }
    if (child.type === "html") {
      const name = OPAQUE.exec(child.value)?.[1];
      if (name && !new RegExp(`</${name}\\s*>`, "i").test(child.value) && !/\/>\s*$/.test(child.value))
        closing = new RegExp(`^</${name}\\s*>`, "i");
      continue;
    }
    dropRawHtml(child);
    kept.push(child);
  }
  (node as { children: Nodes[] }).children = kept;
}

/**
 * Ids for every heading: the top-level ones first, in order, with the same slugger the API's
 * anchors use (so `#install-1` means the same heading everywhere), then nested ones (in quotes,
 * lists), which the API does not name, continuing the same slugger so ids stay unique.
 */
function assignHeadingIds(root: Root): Heading[] {
  const slugger = new GithubSlugger();
  const headings: Heading[] = [];
  const setId = (node: MdHeading) => {
    const text = mdToString(node);
    const id = slugger.slug(text);
    // An empty heading still takes its slug (numbering stays the API's) but no empty `id`.
    if (id) node.data = { ...node.data, hProperties: { ...node.data?.hProperties, id } };
    return { text, id };
  };
  for (const node of root.children) if (node.type === "heading") headings.push({ depth: node.depth, ...setId(node) });
  const nested = (node: Nodes, top: boolean) => {
    if (!top && node.type === "heading") setId(node);
    if ("children" in node) for (const child of node.children) nested(child as Nodes, false);
  };
  for (const node of root.children) nested(node, true);
  return headings;
}

/** `page:<id>[#anchor]` and `file:<id>` targets to the reader's URLs; unknown ones lose their target. */
function resolveRefs(root: Root, options: RenderOptions) {
  const resolve = (url: string): string => {
    const scheme = /^\s*(page|file):/i.exec(url)?.[1]?.toLowerCase();
    if (!scheme) return url;
    const rest = url.trim().slice(scheme.length + 1);
    if (scheme === "file") return options.fileUrl?.(rest) ?? "";
    const hash = rest.indexOf("#");
    const id = hash < 0 ? rest : rest.slice(0, hash);
    const target = options.pageUrl?.(id);
    if (!target) return "";
    return hash < 0 ? target : `${target}${rest.slice(hash)}`;
  };
  const walk = (node: Nodes) => {
    if (node.type === "link" || node.type === "image" || node.type === "definition") node.url = resolve(node.url);
    if ("children" in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(root);
}

/**
 * Links and images whose target was refused or unknown keep their text, not an `href=""` to the
 * page itself; the footnotes' heading gets an id no heading slug can take.
 */
function finish(node: HastRoot | ElementContent) {
  if (node.type === "element") {
    const props = node.properties;
    if (node.tagName === "a" && props.href === "") delete props.href;
    if (node.tagName === "img" && props.src === "") delete props.src;
    if (node.tagName === "li" && Array.isArray(props.className) && props.className.includes("task-list-item")) labelTask(node);
    // mdast-util-to-hast names the footnotes' heading `footnote-label`, unprefixed; content headings carry no class.
    if (props.id === "footnote-label" && Array.isArray(props.className)) props.id = `${FOOTNOTE_PREFIX}label`;
    if (Array.isArray(props.ariaDescribedBy) && props.ariaDescribedBy[0] === "footnote-label")
      props.ariaDescribedBy = [`${FOOTNOTE_PREFIX}label`];
  }
  if (node.type === "root" || node.type === "element") for (const child of node.children) finish(child as ElementContent);
}

/**
 * A fenced code block: `<pre><code class="language-x">` with lowlight's spans when the language
 * is one it knows; no guessing for unlabelled blocks (detection is slow and often wrong).
 */
function codeBlock(_state: unknown, node: Code): Element {
  const lang = node.lang?.trim().split(/\s/)[0]?.toLowerCase() ?? "";
  const value = node.value ? `${node.value}\n` : "";
  let children: ElementContent[] = [{ type: "text", value }];
  if (lang && lowlight.registered(lang)) children = lowlight.highlight(lang, value).children as ElementContent[];
  const properties = lang ? { className: [`language-${lang}`] } : {};
  return { type: "element", tagName: "pre", properties: {}, children: [{ type: "element", tagName: "code", properties, children }] };
}
