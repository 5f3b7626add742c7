import { createHash } from "node:crypto";
import type { SiteSection } from "../generated/prisma/client.js";
import type { ContentGrant } from "../core/access/viewer.js";
import { type Context, makeContext } from "../core/context.js";
import { AppError } from "../core/errors.js";
import type { PageView } from "../domains/content/views.js";
import type { PublishedItemView } from "../domains/sites/published.js";
import { siteVisibility } from "../domains/sites/sites.service.js";
import type { Viewed } from "../domains/sites/structure.js";
import { resolvePublishedUrl, visibleSpaces } from "../domains/sites/url-lookup.js";
import { spaceById } from "../domains/spaces/spaces.access.js";
import { type NavItem, PUBLISHED_CSP, renderNotFound, renderPage, renderShell, type SiteLink } from "./layout.js";
import { renderMarkdown } from "./render-markdown.js";
import { llmsFullText, llmsText, robotsText, sitemapXml } from "./twins.js";
import { documentPages, encodePath, pagesOf, siteSpaceBase, type Visit, viewSiteSpaces } from "./visit.js";

/**
 * One request of a published site's reader (routes.ts): the URL is resolved by the API's own
 * door (sites/url-lookup.ts `resolvePublishedUrl`, which applies the site's visibility), then
 * its content is read as a visitor holding that site's grant (the viewer a site token gives, so
 * the content services let it read the site's spaces and nothing else), and rendered.
 *
 * Below a site's base: `sitemap.xml`, `robots.txt`, `llms.txt`, `llms-full.txt` at its root; `<page>.md` for a
 * page's markdown; `~…` segments are reserved (`~search`); anything else is a page path.
 * A share key given as `?share=` is written into every link as the path segment the resolver
 * also accepts, so a visit keeps it; a visitor token (`jwt_token`) is kept in a cookie scoped to
 * the site's path.
 */

const TWINS = new Set(["sitemap.xml", "robots.txt", "llms.txt", "llms-full.txt"]);
const VISITOR_COOKIE = "published_visitor";

function navOf(pages: PageView[], base: string): NavItem[] {
  return pages
    .filter((p) => !p.hidden)
    .map((p): NavItem => {
      const children = navOf(p.pages, base);
      if (p.type === "link") return { title: p.title, url: p.target?.url ?? null, external: true };
      if (p.type === "group") return { title: p.title, children };
      return { title: p.title, url: `${base}${encodePath(p.path)}`, ...(children.length ? { children } : {}) };
    });
}

function findPage(pages: PageView[], path: string): PageView | null {
  const wanted = path.replace(/^\/+|\/+$/g, "").toLowerCase();
  const all: PageView[] = [];
  const walk = (list: PageView[]) => {
    for (const p of list) {
      all.push(p);
      walk(p.pages);
    }
  };
  walk(pages);
  return all.find((p) => p.type === "document" && p.path.toLowerCase() === wanted) ?? null;
}

// ─── Answers ─────────────────────────────────────────────────────────────────────────────────

function answer(request: Request, visit: Visit | null, status: number, body: string, contentType: string): Response {
  const headers = new Headers({
    "content-type": contentType,
    "content-security-policy": PUBLISHED_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "cache-control": visit?.shared && status < 400 ? "public, max-age=0, must-revalidate" : "private, no-cache",
  });
  if (visit?.noindex) headers.set("x-robots-tag", "noindex, nofollow");
  if (visit?.setToken) {
    const path = new URL(visit.siteBase).pathname;
    headers.append("set-cookie", `${VISITOR_COOKIE}=${encodeURIComponent(visit.setToken)}; Path=${path}; HttpOnly; SameSite=Lax`);
  }
  if (status !== 200) return new Response(body, { status, headers });
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  headers.set("etag", etag);
  const match = request.headers.get("if-none-match");
  if (match && match.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)) {
    headers.delete("content-type");
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { status, headers });
}

const HTML = "text/html; charset=utf-8";

function cookieOf(request: Request, name: string): string | null {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) {
      try {
        return decodeURIComponent(value.join("="));
      } catch {
        return null;
      }
    }
  }
  return null;
}

/** The page of a visit that could not be resolved (no site, or not for this visitor). */
function refused(ctx: Context, request: Request, status: number, path: string, origin: string | null): Response {
  const home = `${origin ?? ctx.config.publicUrl.replace(/\/+$/, "")}/`;
  const chrome = { site: { title: "Published docs", url: home }, noindex: true };
  const body =
    status === 401
      ? renderShell({
          ...chrome,
          title: "Sign-in required",
          main: `<div class="notfound"><h1>Sign-in required</h1><p>This site is for authenticated visitors: open it from the link your organization gave you.</p></div>`,
        })
      : renderNotFound({ ...chrome, path });
  return answer(request, null, status, body, HTML);
}

/** Resolves the URL of a visit: `pathname` is the request's path without a twin's name or a reserved `~` tail. */
async function visitOf(ctx: Context, request: Request, url: URL, pathname: string, origin: string | null): Promise<Visit> {
  const lookup = `${origin ?? ctx.config.publicUrl.replace(/\/+$/, "")}${pathname}${url.search}`;
  const queryToken = url.searchParams.get("jwt_token");
  const token = queryToken || cookieOf(request, VISITOR_COOKIE);
  const resolved = await resolvePublishedUrl(ctx, lookup, { jwtToken: token || null, unsignedClaims: null });
  let siteBase = `${new URL(lookup).origin}${resolved.siteBasePath}`;
  const key = resolved.shareKey;
  if (key && !resolved.siteBasePath.endsWith(`/${encodeURIComponent(key)}/`)) siteBase += `${encodeURIComponent(key)}/`;
  const grant: ContentGrant = {
    organization: resolved.organizationId,
    site: resolved.site.id,
    siteSpace: resolved.siteSpace.id,
    space: resolved.space,
    ...(resolved.section ? { siteSection: resolved.section.id } : {}),
    spaces: new Set(visibleSpaces(resolved.view)),
    ...(key ? { shareKey: key } : {}),
    claims: resolved.claims ?? {},
    draft: resolved.preview,
  };
  const visitorCtx = makeContext(ctx, { userId: "", tokenId: "", anonymous: true, content: grant }, new Set(), request);
  const visibility = siteVisibility(resolved.site);
  return {
    resolved,
    ctx: visitorCtx,
    siteBase,
    shared: visibility === "public" && resolved.site.published && !resolved.preview,
    noindex: visibility !== "public" || !resolved.site.published,
    setToken: queryToken && visibility === "visitor-auth" ? queryToken : null,
  };
}

/**
 * Answers a GET of a published site's path: under `<PUBLIC_URL>/sites/` (origin null), or on a
 * site's own host (`origin`, scheme and host, the path being the whole of the request's).
 */
export async function answerPublished(ctx: Context, request: Request, url: URL, origin: string | null): Promise<Response> {
  const segments = url.pathname.split("/");
  const last = segments.at(-1) ?? "";
  const reserved = segments.findIndex((s) => s.startsWith("~") || s.startsWith("%7E") || s.startsWith("%7e"));
  let kind: "page" | "markdown" | "twin" | "reserved" = "page";
  let pathname = url.pathname;
  if (reserved >= 0) {
    kind = "reserved";
    pathname = segments.slice(0, reserved).join("/");
  } else if (TWINS.has(last)) {
    kind = "twin";
    pathname = segments.slice(0, -1).join("/");
  } else if (last.endsWith(".md") && last.length > 3) {
    kind = "markdown";
    pathname = url.pathname.slice(0, -3);
  }

  let visit: Visit;
  try {
    visit = await visitOf(ctx, request, url, pathname, origin);
  } catch (err) {
    if (err instanceof AppError && (err.status === 404 || err.status === 401))
      return refused(ctx, request, err.status, url.pathname, origin);
    throw err;
  }
  const { resolved } = visit;
  const atSiteRoot = resolved.pathname === "" && resolved.basePath === resolved.siteBasePath;

  if (kind === "twin") {
    if (!atSiteRoot) return notFoundPage(visit, request, url.pathname);
    if (last === "robots.txt") return answer(request, visit, 200, robotsText(visit), "text/plain; charset=utf-8");
    if (last === "sitemap.xml") return answer(request, visit, 200, await sitemapXml(visit), "application/xml; charset=utf-8");
    if (last === "llms-full.txt") return answer(request, visit, 200, await llmsFullText(visit), "text/plain; charset=utf-8");
    return answer(request, visit, 200, await llmsText(visit), "text/plain; charset=utf-8");
  }
  if (kind === "reserved") {
    if (/^(~|%7e)search$/i.test(segments[reserved]!) && reserved === segments.length - 1) {
      const { searchPage } = await import("./search-page.js");
      return answer(request, visit, 200, await searchPage(visit, url.searchParams.get("q") ?? ""), HTML);
    }
    return notFoundPage(visit, request, url.pathname);
  }

  const base = siteSpaceBase(visit, resolved.siteSpace);
  const pages = await pagesOf(visit, resolved.space);
  const page = resolved.pathname ? findPage(pages, resolved.pathname) : (documentPages(pages, base)[0]?.page ?? null);
  if (!page) return notFoundPage(visit, request, url.pathname);
  const pageUrl = `${base}${encodePath(page.path)}`;

  if (kind === "markdown") {
    const markdown = page.markdown ?? "";
    const body = /^\s*#\s/.test(markdown) ? markdown : `# ${page.title}\n\n${markdown}`;
    return answer(request, visit, 200, body.endsWith("\n") ? body : `${body}\n`, "text/markdown; charset=utf-8");
  }

  const urls = new Map(documentPages(pages, base).map((p) => [p.page.id, p.url]));
  const rendered = renderMarkdown(page.markdown ?? "", { pageUrl: (id) => urls.get(id) ?? null });
  const html = renderPage({
    ...(await chromeOf(visit, pages, base)),
    currentUrl: pageUrl,
    page: { title: page.title, description: page.description, url: pageUrl, html: rendered.html, headings: rendered.headings },
  });
  return answer(request, visit, 200, html, HTML);
}

async function notFoundPage(visit: Visit, request: Request, path: string): Promise<Response> {
  const base = siteSpaceBase(visit, visit.resolved.siteSpace);
  const pages = await pagesOf(visit, visit.resolved.space);
  return answer(request, visit, 404, renderNotFound({ ...(await chromeOf(visit, pages, base)), path }), HTML);
}

/** The site's chrome for a visit: header sections, the variants of the current section, the page tree. */
export async function chromeOf(visit: Visit, pages: PageView[], base: string) {
  const { resolved } = visit;
  const { structure } = resolved.view;
  const sections: SiteLink[] =
    structure.type === "sections"
      ? (structure.structure as Viewed<SiteSection>[]).map((s) => ({
          title: s.title,
          url: `${visit.siteBase}${encodePath((s.view as PublishedItemView | undefined)?.urlPath ?? "")}`,
          current: s.id === resolved.section?.id,
        }))
      : [];
  const variants = viewSiteSpaces(visit)
    .filter((e) => (e.section?.id ?? null) === (resolved.section?.id ?? null))
    .map((e) => e.siteSpace);
  const spaces = await spaceById(visit.ctx).loadMany(variants.map((s) => s.spaceId));
  const siteSpaces: SiteLink[] = variants.map((s, i) => {
    const space = spaces[i];
    return {
      title: space && !(space instanceof Error) ? space.title : s.path,
      url: siteSpaceBase(visit, s),
      current: s.id === resolved.siteSpace.id,
    };
  });
  return {
    site: { title: resolved.site.title, url: visit.siteBase.replace(/\/$/, "") },
    sections,
    siteSpaces,
    nav: navOf(pages, base),
    noindex: visit.noindex,
  };
}
