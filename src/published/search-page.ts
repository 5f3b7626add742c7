import { searchSite } from "../domains/sites/site-search.js";
import { escapeHtml, renderShell } from "./layout.js";
import { encodePath, siteSpaceBase, type Visit, viewSiteSpaces } from "./visit.js";

/**
 * `<site>/~search?q=…`: the site search of the API (sites/site-search.ts, the same full-text
 * index and the same published view), as a page of results with a highlighted snippet each.
 */

const RESULTS_MAX = 50;
const SNIPPET = 200;

/** A snippet of `text` around the first term found, escaped, the terms marked. */
function snippet(text: string, terms: string[]): string {
  const lower = text.toLowerCase();
  const at = Math.max(
    0,
    ...terms
      .map((t) => lower.indexOf(t))
      .filter((i) => i >= 0)
      .slice(0, 1),
  );
  const start = Math.max(0, at - SNIPPET / 4);
  const cut = `${start > 0 ? "…" : ""}${text.slice(start, start + SNIPPET)}${start + SNIPPET < text.length ? "…" : ""}`;
  let html = escapeHtml(cut);
  for (const term of terms) {
    const escaped = escapeHtml(term).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    if (escaped) html = html.replace(new RegExp(`(${escaped})`, "gi"), "<mark>$1</mark>");
  }
  return html;
}

export async function searchPage(visit: Visit, query: string): Promise<string> {
  const { resolved } = visit;
  const text = query.trim().slice(0, 200);
  const terms = [
    ...new Set(
      text
        .toLowerCase()
        .split(/\s+/)
        .filter((t) => t.length > 1),
    ),
  ];
  const bases = new Map<string, string>();
  for (const { siteSpace } of viewSiteSpaces(visit))
    if (!bases.has(siteSpace.spaceId)) bases.set(siteSpace.spaceId, siteSpaceBase(visit, siteSpace));
  const items: string[] = [];
  if (text) {
    const found = await searchSite(visit.ctx, resolved.organizationId, resolved.site.id, {
      query: text,
      scope: { mode: "all" },
      shareKey: resolved.shareKey,
      limit: RESULTS_MAX,
    });
    for (const space of found.items) {
      const base = bases.get(space.id);
      if (!base) continue;
      for (const page of space.pages) {
        const body = page.sections.map((s) => s.body).find((b) => terms.some((t) => b.toLowerCase().includes(t))) ?? page.description;
        items.push(
          `<li><a href="${escapeHtml(`${base}${encodePath(page.path)}`)}">${escapeHtml(page.title)}</a>${body ? `<p>${snippet(body, terms)}</p>` : ""}</li>`,
        );
      }
    }
  }
  const heading = text ? `Results for “${escapeHtml(text)}”` : "Search";
  const list = items.length ? `<ol class="results">${items.join("")}</ol>` : text ? "<p>No page matches.</p>" : "";
  return renderShell({
    site: { title: resolved.site.title, url: visit.siteBase.replace(/\/$/, "") },
    noindex: true,
    query: text,
    title: text ? `Search: ${text}` : "Search",
    main: `<h1>${heading}</h1>\n${list}`,
  });
}
