import type { Heading } from "./render-markdown.js";
import { STYLESHEET_BYTES, STYLESHEET_CONTENT_TYPE, STYLESHEET_PATH } from "./stylesheet.js";

export { STYLESHEET_BYTES, STYLESHEET_CONTENT_TYPE, STYLESHEET_PATH };

/**
 * The HTML page around published content: header (site, sections, search), sidebar (site spaces
 * of the section and the page tree), breadcrumbs, the content, previous/next and the on-page
 * table of contents. Server-rendered, no script: everything works without JavaScript, and the
 * pages are served with PUBLISHED_CSP, which forbids script altogether.
 *
 * Every string given here is text, escaped where it is written; the one exception is the
 * content's HTML, which must come from renderMarkdown (sanitized). URLs given here pass through
 * safeUrl, so a link page pointing at `javascript:` becomes inert text.
 *
 * The layout's own ids are capitalised (`Main`, `Nav`, `Toc`, `Q`): heading ids are lower-case
 * slugs, so content can never take them.
 */

/**
 * The Content-Security-Policy of published pages: no script at all, styles only from the served
 * stylesheet, images from here or the web (pages embed images by URL), forms only to this origin
 * (the search form), no plugins, no `<base>`, and framing only by this origin.
 */
export const PUBLISHED_CSP = [
  "default-src 'none'",
  "script-src 'none'",
  "style-src 'self'",
  "img-src 'self' https: http: data:",
  "font-src 'self'",
  "form-action 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'self'",
].join("; ");

/** An entry of the sidebar: a page (with a URL), a group (title only), or a link page (external URL). */
export interface NavItem {
  title: string;
  /** Absent for a group; an absolute URL for a link page. */
  url?: string | null;
  /** A link page: leaves the site. */
  external?: boolean;
  children?: NavItem[];
}

/** A link of the header's sections or the sidebar's site spaces. */
export interface SiteLink {
  title: string;
  url: string;
  current?: boolean;
}

export interface SiteChrome {
  site: {
    title: string;
    /** The site's published URL (its home): the brand links there, the search form posts to `<url>/~search`. */
    url: string;
    /** `lang` of the pages. */
    lang?: string;
  };
  /** The site's sections (header tabs); the one shown is `current`. */
  sections?: SiteLink[];
  /** The site spaces of the current section (variants, versions); the one shown is `current`. */
  siteSpaces?: SiteLink[];
  /** The page tree of the site space shown. */
  nav?: NavItem[];
  /** The URL of the page shown, matched against `nav` URLs for `aria-current` (default: the page's URL). */
  currentUrl?: string;
  /** The search box's value (on a search page). */
  query?: string;
  /** `<meta name="robots" content="noindex">`: share-link and visitor-auth sites. */
  noindex?: boolean;
  /** Where the stylesheet is served from, before STYLESHEET_PATH (default: the server's root). */
  assetsBase?: string;
}

export interface PageInput extends SiteChrome {
  page: {
    title: string;
    description?: string | null;
    /** Its canonical, absolute URL. */
    url: string;
    /** The sanitized HTML from renderMarkdown. */
    html: string;
    headings: Heading[];
    /** Og:image, absolute. */
    imageUrl?: string | null;
  };
  /** Default: the page's ancestors in `nav`, after the site (and the current section). */
  breadcrumbs?: SiteLink[];
  /** Default: the neighbours of the current page among the pages of `nav` in reading order. */
  previous?: SiteLink | null;
  next?: SiteLink | null;
}

// ─── Escaping ────────────────────────────────────────────────────────────────────────────────

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text or attribute value as HTML. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A URL that is safe in `href`: http(s), mailto, or relative; anything else (javascript:, data:, …) is refused. */
export function safeUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  const trimmed = url.trim();
  // Control characters and whitespace inside a scheme are how `java\tscript:` slips past checks.
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) return null;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme && !["http", "https", "mailto"].includes(scheme)) return null;
  return trimmed;
}

const attr = (url: string) => escapeHtml(url);

// ─── Navigation helpers ──────────────────────────────────────────────────────────────────────

/** Path of items from the root to the one whose URL is `url` (inclusive), or [] when absent. */
function pathTo(items: NavItem[], url: string): NavItem[] {
  for (const item of items) {
    if (item.url === url && !item.external) return [item];
    const below = item.children ? pathTo(item.children, url) : [];
    if (below.length) return [item, ...below];
  }
  return [];
}

/** The pages of the tree in reading order (depth first), groups and link pages left out. */
function readingOrder(items: NavItem[], out: NavItem[] = []): NavItem[] {
  for (const item of items) {
    if (item.url && !item.external) out.push(item);
    if (item.children) readingOrder(item.children, out);
  }
  return out;
}

function navList(items: NavItem[], current: string): string {
  const li = (item: NavItem): string => {
    const url = safeUrl(item.url);
    let head: string;
    if (!url) head = `<span class="group">${escapeHtml(item.title)}</span>`;
    else if (item.external)
      head = `<a href="${attr(url)}" rel="noopener">${escapeHtml(item.title)}<span class="sr-only"> (external)</span></a>`;
    else head = `<a href="${attr(url)}"${item.url === current ? ' aria-current="page"' : ""}>${escapeHtml(item.title)}</a>`;
    const sub = item.children?.length ? navList(item.children, current) : "";
    return `<li>${head}${sub}</li>`;
  };
  return `<ul>${items.map(li).join("")}</ul>`;
}

/** Sections and site spaces: the current one is marked `aria-current="true"` (it holds the page, it is not the page). */
function linkList(links: SiteLink[]): string {
  return `<ul>${links
    .map((l) => {
      const url = safeUrl(l.url);
      if (!url) return `<li>${escapeHtml(l.title)}</li>`;
      return `<li><a href="${attr(url)}"${l.current ? ' aria-current="true"' : ""}>${escapeHtml(l.title)}</a></li>`;
    })
    .join("")}</ul>`;
}

function siteRoot(chrome: SiteChrome): string {
  return (safeUrl(chrome.site.url) ?? "").replace(/\/+$/, "");
}

// ─── The page ────────────────────────────────────────────────────────────────────────────────

export interface ShellInput extends SiteChrome {
  title: string;
  description?: string | null;
  canonical?: string | null;
  openGraph?: { type: "article" | "website"; url: string; imageUrl?: string | null };
  /** The `<main>`'s HTML (already escaped or sanitized). */
  main: string;
  /** The aside's HTML (table of contents), if any. */
  aside?: string;
}

/** The document around any published body: head, header, sidebar, main, aside. */
export function renderShell(input: ShellInput): string {
  const root = siteRoot(input);
  const home = safeUrl(input.site.url) ?? "/";
  const title = input.title === input.site.title ? input.title : `${input.title} · ${input.site.title}`;
  const description = input.description?.trim();
  const canonical = safeUrl(input.canonical);
  const head = [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${escapeHtml(title)}</title>`,
    description ? `<meta name="description" content="${escapeHtml(description)}">` : "",
    input.noindex ? '<meta name="robots" content="noindex, nofollow">' : "",
    canonical ? `<link rel="canonical" href="${attr(canonical)}">` : "",
    `<link rel="stylesheet" href="${attr(`${input.assetsBase ?? ""}${STYLESHEET_PATH}`)}">`,
    '<link rel="icon" href="data:,">',
  ];
  const og = input.openGraph;
  const ogUrl = safeUrl(og?.url);
  if (og && ogUrl) {
    head.push(
      `<meta property="og:type" content="${og.type}">`,
      `<meta property="og:title" content="${escapeHtml(input.title)}">`,
      `<meta property="og:site_name" content="${escapeHtml(input.site.title)}">`,
      `<meta property="og:url" content="${attr(ogUrl)}">`,
      description ? `<meta property="og:description" content="${escapeHtml(description)}">` : "",
      '<meta name="twitter:card" content="summary">',
    );
    const image = safeUrl(og.imageUrl);
    if (image) head.push(`<meta property="og:image" content="${attr(image)}">`);
  }

  const sections = input.sections?.length ? `<nav class="sections" aria-label="Sections">${linkList(input.sections)}</nav>` : "";
  const nav = input.nav ?? [];
  const current = input.currentUrl ?? "";
  const spaces =
    input.siteSpaces && input.siteSpaces.length > 1
      ? `<div class="variants"><h2 id="Variants">Versions</h2><nav aria-labelledby="Variants">${linkList(input.siteSpaces)}</nav></div>`
      : "";
  const sidebar =
    nav.length || spaces
      ? `<div class="sidebar" id="Nav">${spaces}${nav.length ? `<nav aria-label="Pages">${navList(nav, current)}</nav>` : ""}</div>`
      : "";

  return `<!doctype html>
<html lang="${escapeHtml(input.site.lang || "en")}">
<head>
${head.filter(Boolean).join("\n")}
</head>
<body>
<a class="skip" href="#Main">Skip to content</a>
<header class="top">
<a class="brand" href="${attr(home)}">${escapeHtml(input.site.title)}</a>
${sections}
${sidebar ? '<a class="menu" href="#Nav">Menu</a>' : ""}
<form class="search" role="search" method="get" action="${attr(`${root}/~search`)}">
<label class="sr-only" for="Q">Search this site</label>
<input id="Q" type="search" name="q" placeholder="Search…" value="${escapeHtml(input.query ?? "")}">
<button type="submit">Search</button>
</form>
</header>
<div class="layout">
${sidebar}
<main id="Main" tabindex="-1">
${input.main}
</main>
${input.aside ?? ""}
</div>
</body>
</html>
`;
}

function tableOfContents(headings: Heading[]): string {
  const shown = headings.filter((h) => (h.depth === 2 || h.depth === 3) && h.id && h.text.trim());
  if (shown.length < 2) return "";
  const items = shown
    .map((h) => `<li class="d${h.depth}"><a href="#${escapeHtml(encodeURIComponent(h.id))}">${escapeHtml(h.text)}</a></li>`)
    .join("");
  return `<aside class="toc"><nav aria-labelledby="Toc"><h2 id="Toc">On this page</h2><ul>${items}</ul></nav></aside>`;
}

function breadcrumbs(links: SiteLink[]): string {
  if (!links.length) return "";
  const items = links.map((l, i) => {
    const url = safeUrl(l.url);
    const last = i === links.length - 1;
    if (last) return `<li><a href="${attr(url ?? "#")}" aria-current="page">${escapeHtml(l.title)}</a></li>`;
    return url ? `<li><a href="${attr(url)}">${escapeHtml(l.title)}</a></li>` : `<li>${escapeHtml(l.title)}</li>`;
  });
  return `<nav class="crumbs" aria-label="Breadcrumb"><ol>${items.join("")}</ol></nav>`;
}

function pager(previous: SiteLink | null | undefined, next: SiteLink | null | undefined): string {
  const link = (l: SiteLink | null | undefined, rel: "prev" | "next") => {
    const url = safeUrl(l?.url);
    if (!l || !url) return "";
    const label = rel === "prev" ? "Previous" : "Next";
    return `<a class="${rel}" rel="${rel}" href="${attr(url)}"><small>${label}</small>${escapeHtml(l.title)}</a>`;
  };
  const body = link(previous, "prev") + link(next, "next");
  return body ? `<nav class="pager" aria-label="Previous and next">${body}</nav>` : "";
}

/** A content page of a published site. */
export function renderPage(input: PageInput): string {
  const nav = input.nav ?? [];
  const current = input.currentUrl ?? input.page.url;
  const trail = pathTo(nav, current);
  const currentSection = input.sections?.find((s) => s.current);
  const crumbs =
    input.breadcrumbs ??
    (trail.length
      ? [
          { title: input.site.title, url: input.site.url },
          ...(currentSection ? [{ title: currentSection.title, url: currentSection.url }] : []),
          ...trail.map((item) => ({ title: item.title, url: item.url ?? "" })),
        ]
      : []);
  const order = readingOrder(nav);
  const at = order.findIndex((item) => item.url === current);
  const neighbour = (i: number): SiteLink | null => {
    const item = at >= 0 ? order[i] : undefined;
    return item?.url ? { title: item.title, url: item.url } : null;
  };
  const previous = input.previous !== undefined ? input.previous : neighbour(at - 1);
  const next = input.next !== undefined ? input.next : neighbour(at + 1);
  const description = input.page.description?.trim();
  const lead = description ? `<p class="lead">${escapeHtml(description)}</p>` : "";
  // The page's title is its h1 unless the markdown starts with one of its own; the lead follows it.
  const ownTitle = input.page.headings[0]?.depth === 1 && /^\s*<h1[\s>]/.test(input.page.html);
  const titleEnd = ownTitle ? input.page.html.indexOf("</h1>") + "</h1>".length : 0;
  const main = [
    breadcrumbs(crumbs),
    `<article class="content">`,
    ownTitle ? input.page.html.slice(0, titleEnd) : `<h1>${escapeHtml(input.page.title)}</h1>`,
    lead,
    ownTitle ? input.page.html.slice(titleEnd) : input.page.html,
    `</article>`,
    pager(previous, next),
  ].join("\n");
  return renderShell({
    ...input,
    currentUrl: current,
    title: input.page.title,
    description,
    canonical: input.page.url,
    openGraph: { type: "article", url: input.page.url, imageUrl: input.page.imageUrl },
    main,
    aside: tableOfContents(input.page.headings),
  });
}

/** The page for a path that leads nowhere (served with status 404). */
export function renderNotFound(input: SiteChrome & { path?: string }): string {
  const home = safeUrl(input.site.url) ?? "/";
  const main = `<div class="notfound">
<h1>Page not found</h1>
<p>${input.path ? `There is no page at <code>${escapeHtml(input.path)}</code>.` : "There is no page at this address."} It may have moved or been removed.</p>
<p><a href="${attr(home)}">Go to the home page of ${escapeHtml(input.site.title)}</a>, or search the site with the box at the top.</p>
</div>`;
  return renderShell({ ...input, title: "Page not found", main });
}
