import type { Nodes } from "mdast";
import type { LinkResolver } from "./links.js";
import { parseMarkdown } from "./markdown.js";
import type { PageTreeNode } from "./model.js";
import type { RefResolver } from "./gitbook-document.js";

/**
 * The internal links of a page as readers of a revision want them: the targets the link report
 * resolves (content/links.ts `classify`: `page:<id>`, `file:<id>`, relative page paths, download
 * URLs) written as GitBook's stable refs in markdown, or as content refs in documents. Links that
 * resolve to nothing of the content (external, in-app, broken) stay as written.
 */

type Target = ReturnType<LinkResolver["classify"]>;

function resolved(resolver: LinkResolver, from: PageTreeNode, url: string): Target | null {
  const target = resolver.classify(url, from);
  return target.status === "ok" ? target : null;
}

/** GitBook's stable form of a resolved link (what its reader parses back), or null to keep it. */
function stableUrl(target: Target, raw: string): string | null {
  const ref = target.ref;
  if (ref.kind === "page" && ref.page) return `/pages/${ref.page}`;
  if (ref.kind === "anchor" && ref.page && ref.anchor) {
    if (raw.trim().startsWith("#")) return null; // already the same page's `#anchor`
    return `/pages/${ref.page}#${encodeURIComponent(ref.anchor)}`;
  }
  if (ref.kind === "file" && ref.file) return `/files/${ref.file.id}`;
  return null;
}

/**
 * The markdown with its internal links written as stable refs: `/pages/<pageId>`,
 * `/pages/<pageId>#<anchor>`, `/files/<fileId>` (`format.markdown.refs=stable`). Only the link
 * targets change: each is replaced where the parser found it in the source, the rest is kept
 * byte for byte.
 */
export function stableRefsMarkdown(markdown: string, resolver: LinkResolver, from: PageTreeNode): string {
  const edits: { start: number; end: number; text: string }[] = [];
  const walk = (node: Nodes) => {
    if ((node.type === "link" || node.type === "image" || node.type === "definition") && node.position) {
      const target = resolved(resolver, from, node.url);
      const url = target && stableUrl(target, node.url);
      const start = node.position.start.offset;
      const end = node.position.end.offset;
      if (url && start !== undefined && end !== undefined) {
        // The target is the last occurrence of the URL in the node's source (after the text).
        const at = markdown.slice(start, end).lastIndexOf(node.url);
        if (at >= 0) edits.push({ start: start + at, end: start + at + node.url.length, text: url });
      }
    }
    if ("children" in node) for (const child of node.children) walk(child as Nodes);
  };
  walk(parseMarkdown(markdown));
  let out = markdown;
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/** Content refs of a page's document for the links the content resolves (relative paths included). */
export function documentRefs(resolver: LinkResolver, from: PageTreeNode): RefResolver {
  return (url) => {
    const target = resolved(resolver, from, url);
    const ref = target?.ref;
    if (!ref) return undefined;
    if (ref.kind === "page" && ref.page) return { kind: "page", page: ref.page };
    if (ref.kind === "anchor" && ref.page && ref.anchor)
      return ref.page === from.id && url.trim().startsWith("#")
        ? { kind: "anchor", anchor: ref.anchor }
        : { kind: "anchor", page: ref.page, anchor: ref.anchor };
    if (ref.kind === "file" && ref.file) return { kind: "file", file: ref.file.id };
    return undefined;
  };
}
