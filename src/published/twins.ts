import { documentPages, pagesOf, type SitePage, siteSpaceBase, type Visit, viewSiteSpaces } from "./visit.js";

/**
 * The machine-readable twins of a published site, at its root: `sitemap.xml` (every page of every
 * site space the visitor may read), `robots.txt` naming it, and `llms.txt` (titles and
 * descriptions linking to each page's `.md`), `llms-full.txt` (every page's markdown). They list what the visitor's view of the site
 * shows: the same resolution and grant as the HTML pages (reader.ts).
 */

/** Every document page of every site space of the visit, in the site's order; hidden pages left out. */
async function sitePages(visit: Visit): Promise<{ title: string; pages: SitePage[] }[]> {
  const entries = viewSiteSpaces(visit);
  const trees = await Promise.all(entries.map((e) => pagesOf(visit, e.siteSpace.spaceId)));
  return entries.map((e, i) => ({
    title: e.section ? e.section.title : e.siteSpace.path,
    pages: documentPages(trees[i]!, siteSpaceBase(visit, e.siteSpace)).filter((p) => !p.page.hidden),
  }));
}

const XML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };
const xml = (text: string) => text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);

export async function sitemapXml(visit: Visit): Promise<string> {
  const seen = new Set<string>();
  const urls: string[] = [];
  for (const group of await sitePages(visit)) {
    for (const { page, url } of group.pages) {
      if (page.noRobotsIndex || page.noIndex || seen.has(url)) continue;
      seen.add(url);
      urls.push(`<url><loc>${xml(url)}</loc><lastmod>${xml(page.updatedAt)}</lastmod></url>`);
    }
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.join("\n")}\n</urlset>\n`;
}

/** Share-link and visitor-auth sites (and previews) are not for search engines. */
export function robotsText(visit: Visit): string {
  if (visit.noindex) return "User-agent: *\nDisallow: /\n";
  return `User-agent: *\nAllow: /\n\nSitemap: ${visit.siteBase}sitemap.xml\n`;
}

/** One line of markdown text: no line breaks, brackets escaped. */
const line = (text: string) =>
  text
    .replace(/\s+/g, " ")
    .replace(/([[\]])/g, "\\$1")
    .trim();

export async function llmsText(visit: Visit): Promise<string> {
  const groups = await sitePages(visit);
  const out = [`# ${line(visit.resolved.site.title)}`, ""];
  const several = groups.length > 1;
  for (const group of groups) {
    if (!group.pages.length) continue;
    if (several) out.push(`## ${line(group.title)}`, "");
    for (const { page, url } of group.pages) {
      const description = page.description ? `: ${line(page.description)}` : "";
      out.push(`- [${line(page.title)}](${url}.md)${description}`);
    }
    out.push("");
  }
  return `${out.join("\n").trimEnd()}\n`;
}

/** Every page's markdown, one after another, each under its title and URL. */
export async function llmsFullText(visit: Visit): Promise<string> {
  const out = [`# ${line(visit.resolved.site.title)}`];
  for (const group of await sitePages(visit)) {
    for (const { page, url } of group.pages) {
      const markdown = (page.markdown ?? "").trim();
      out.push("", "---", "", `Source: ${url}`, "", /^#\s/.test(markdown) ? markdown : `# ${page.title}\n\n${markdown}`.trim());
    }
  }
  return `${out.join("\n")}\n`;
}
