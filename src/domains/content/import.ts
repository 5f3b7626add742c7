import type { Config } from "../../config.js";
import { checkOutboundUrl, outboundFetch, outboundRefusal } from "../../core/support/outbound.js";
import TurndownService from "turndown";
import { parse, type HTMLElement } from "node-html-parser";
import { badInput } from "../../core/errors.js";
import { checkUri } from "../../core/validate.js";
import crypto from "node:crypto";
import { imageSize } from "image-size";
import { newId } from "../../core/ids.js";
import { parentPath, positionAt, takenSlugs, uniqueSlug, type RevisionContent, type StoredPage } from "./model.js";

/**
 * Imports content from a URL into pages.
 *
 * - `website`: fetches the page at `url` and follows links to pages of the same origin whose
 *   path is under the given URL's folder, breadth first, at most IMPORT_MAX_PAGES pages, within
 *   IMPORT_TIME_MS overall and IMPORT_MAX_BYTES per page; each HTML page becomes a page (its
 *   <title> or first <h1> as title, its <main>/<article>/<body> converted to markdown with
 *   turndown). Pages nest as their URLs do; links between imported pages become relative links
 *   to the new pages.
 * - `html`: the one HTML page at `url`, not following links.
 * - `markdown`: the one markdown file at `url`, its first `# heading` as title.
 *
 * Images the pages show (`<img src>`, markdown `![](…)`) come in as files of the space: each is
 * downloaded through the outbound policy (the same as the pages), at most IMPORT_MAX_IMAGES per
 * import and the server's file size limit each, must be served as image/*, and is stored once
 * per content: its file id is derived from the SHA-256 of its bytes, so the same image found at
 * several addresses (or imported again) is one file. The imported pages reference the files
 * (`/v1/spaces/{spaceId}/content/files/{fileId}/download`); an image that could not be brought
 * in keeps its absolute link.
 *
 * Imported pages are added after the existing top-level pages.
 */

export const IMPORT_SOURCES = ["website", "html", "markdown"] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

export const IMPORT_MAX_PAGES = 50;
export const IMPORT_TIME_MS = 20_000;
export const IMPORT_MAX_BYTES = 2 * 1024 * 1024;
export const IMPORT_MAX_IMAGES = 100;
const FETCH_TIMEOUT_MS = 8_000;

/** An image an import brings in as a file. */
export interface ImportImage {
  /** Content-derived: `file_` and the start of the SHA-256 of the bytes. */
  id: string;
  name: string;
  contentType: string;
  bytes: Buffer;
  width?: number;
  height?: number;
}

export interface FetchedPage {
  url: URL;
  title: string;
  /** HTML of the page's content to convert, or markdown for the markdown source. */
  html?: string;
  markdown?: string;
}

export interface ImportPlan {
  pages: FetchedPage[];
  /** Images brought in, by content; `imageBySource` maps each absolute source address to one. */
  images: ImportImage[];
  imageBySource: Map<string, ImportImage>;
  /** Every resource found: the imported pages and those skipped (limits, errors, not HTML). */
  totalResources: number;
}

type OutboundConfig = Pick<Config, "outboundAllowedNetworks">;

function normalize(url: URL): string {
  const u = new URL(url.href);
  u.hash = "";
  u.search = "";
  return u.href.replace(/\/index\.html?$/i, "/");
}

/**
 * GETs `url` through the outbound policy, within the deadline and `maxBytes` (counted as the
 * bytes arrive); null when it fails, answers an error or is too large. A refusal by the policy
 * is thrown (outboundRefusal tells it apart).
 */
export async function fetchBytes(
  config: OutboundConfig,
  url: URL,
  deadline: number,
  maxBytes: number,
  accept: string,
): Promise<{ bytes: Buffer; type: string } | null> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) return null;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.min(FETCH_TIMEOUT_MS, remaining));
  try {
    const res = await outboundFetch(config, url, { signal: controller.signal, redirect: "follow", headers: { accept } });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }
    const declared = Number(res.headers.get("content-length") ?? "0");
    if (declared > maxBytes) {
      await res.body.cancel();
      return null;
    }
    const reader = res.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        return null;
      }
      chunks.push(value);
    }
    return { bytes: Buffer.concat(chunks), type: (res.headers.get("content-type") ?? "").toLowerCase() };
  } finally {
    clearTimeout(timer);
  }
}

async function fetchText(config: OutboundConfig, url: URL, deadline: number): Promise<{ text: string; type: string } | null> {
  try {
    const got = await fetchBytes(config, url, deadline, IMPORT_MAX_BYTES, "text/html, text/markdown;q=0.9, */*;q=0.5");
    return got && { text: got.bytes.toString("utf8"), type: got.type };
  } catch (err) {
    // A page that cannot be fetched is skipped, but an address the server may not reach is the caller's to fix.
    const refusal = outboundRefusal(err);
    if (refusal) throw badInput(`url: ${url.href} cannot be imported: ${refusal}.`);
    return null;
  }
}

/** The absolute http(s) addresses of the images of a page's HTML or markdown, in order. */
function imageSources(page: FetchedPage): URL[] {
  const raw: string[] = [];
  if (page.html !== undefined) {
    for (const img of parse(page.html, { comment: false }).querySelectorAll("img[src]")) raw.push(img.getAttribute("src")!);
  } else if (page.markdown !== undefined) {
    for (const m of page.markdown.matchAll(MARKDOWN_IMAGE)) raw.push(m[2]!);
  }
  const out: URL[] = [];
  for (const src of raw) {
    try {
      const url = new URL(src.trim(), page.url);
      if (url.protocol === "http:" || url.protocol === "https:") out.push(url);
    } catch {
      /* not an address */
    }
  }
  return out;
}

/** `![alt](address "title")` of markdown; group 2 is the address. */
const MARKDOWN_IMAGE = /(!\[[^\]\n]*\]\(\s*<?)([^)\s>]+)(>?(?:\s+"[^"\n]*")?\s*\))/g;

function fileNameOf(url: URL, contentType: string): string {
  const last = decodeURIComponent(url.pathname.split("/").filter(Boolean).pop() ?? "")
    .replace(/[/\\\u0000-\u001f]/g, "")
    .trim();
  if (last) return [...last].slice(0, 255).join("");
  const ext = /^image\/([a-z0-9.+-]+)/.exec(contentType)?.[1]?.replace(/\+.*$/, "") ?? "img";
  return `image.${ext}`;
}

/**
 * Downloads the images of the fetched pages (see the header): each address once, within the
 * deadline, IMPORT_MAX_IMAGES and `maxBytes` each; the same bytes become one image.
 */
async function fetchImages(config: OutboundConfig, pages: FetchedPage[], deadline: number, maxBytes: number) {
  const images = new Map<string, ImportImage>();
  const imageBySource = new Map<string, ImportImage>();
  const tried = new Set<string>();
  for (const page of pages) {
    for (const url of imageSources(page)) {
      const key = url.href;
      if (tried.has(key) || tried.size >= IMPORT_MAX_IMAGES || Date.now() >= deadline) continue;
      tried.add(key);
      let got: { bytes: Buffer; type: string } | null = null;
      try {
        got = await fetchBytes(config, url, deadline, maxBytes, "image/*");
      } catch {
        got = null; // refused by the outbound policy, or failed: the page keeps the image's link
      }
      const contentType = got?.type.split(";")[0]?.trim() ?? "";
      if (!got || !got.bytes.length || !/^image\/[a-z0-9.+-]+$/.test(contentType)) continue;
      const hash = crypto.createHash("sha256").update(got.bytes).digest("hex");
      let image = images.get(hash);
      if (!image) {
        image = { id: `file_${hash.slice(0, 32)}`, name: fileNameOf(url, contentType), contentType, bytes: got.bytes };
        try {
          const size = imageSize(got.bytes);
          if (size.width && size.height) Object.assign(image, { width: size.width, height: size.height });
        } catch {
          /* a format without readable dimensions */
        }
        images.set(hash, image);
      }
      imageBySource.set(key, image);
    }
  }
  return { images: [...images.values()], imageBySource };
}

function titleOf(doc: HTMLElement, url: URL): string {
  const fromTitle = doc.querySelector("title")?.text.trim();
  const fromH1 = doc.querySelector("h1")?.text.trim();
  const fromPath = decodeURIComponent(url.pathname.split("/").filter(Boolean).pop() ?? "").replace(/\.html?$/i, "");
  return (fromH1 || fromTitle || fromPath || url.hostname).replace(/\s+/g, " ").slice(0, 200);
}

function contentRoot(doc: HTMLElement): HTMLElement {
  const root = doc.querySelector("main") ?? doc.querySelector("article") ?? doc.querySelector("body") ?? doc;
  for (const el of root.querySelectorAll("script, style, noscript, nav, header, footer, template, iframe")) el.remove();
  return root;
}

/** Fetches what an import brings in, within the limits. */
export async function fetchImport(
  config: OutboundConfig,
  urlText: string,
  source: ImportSource,
  maxImageBytes: number,
): Promise<ImportPlan> {
  checkUri("url", urlText);
  checkOutboundUrl(config, "url", urlText);
  const start = new URL(urlText);
  const deadline = Date.now() + IMPORT_TIME_MS;

  if (source === "markdown") {
    const got = await fetchText(config, start, deadline);
    if (!got)
      throw badInput(
        `url: could not fetch a markdown file from ${start.href} (unreachable, not found, or over ${IMPORT_MAX_BYTES} bytes).`,
      );
    const heading = /^#\s+(.+)$/m.exec(got.text)?.[1]?.trim();
    const fallback = decodeURIComponent(start.pathname.split("/").filter(Boolean).pop() ?? "").replace(/\.md$/i, "") || start.hostname;
    const markdown = heading ? got.text.replace(/^#\s+.+\n?/m, "").replace(/^\s*\n/, "") : got.text;
    const pages = [{ url: start, title: (heading ?? fallback).slice(0, 200), markdown }];
    return { pages, totalResources: 1, ...(await fetchImages(config, pages, deadline, maxImageBytes)) };
  }

  const scope = new URL(start.href);
  scope.pathname = scope.pathname.replace(/[^/]*$/, ""); // the folder of the start URL
  const seen = new Set<string>([normalize(start)]);
  const queue: URL[] = [start];
  const pages: FetchedPage[] = [];
  while (queue.length && pages.length < IMPORT_MAX_PAGES && Date.now() < deadline) {
    const url = queue.shift()!;
    const got = await fetchText(config, url, deadline);
    if (!got || (got.type && !got.type.includes("html"))) continue;
    const doc = parse(got.text, { comment: false });
    const title = titleOf(doc, url);
    if (source === "website") {
      for (const a of doc.querySelectorAll("a[href]")) {
        let target: URL;
        try {
          target = new URL(a.getAttribute("href")!, url);
        } catch {
          continue;
        }
        if (target.origin !== start.origin || !target.pathname.startsWith(scope.pathname)) continue;
        if (/\.(png|jpe?g|gif|svg|webp|pdf|zip|css|js|ico|xml|json|txt)$/i.test(target.pathname)) continue;
        const key = normalize(target);
        if (seen.has(key)) continue;
        seen.add(key);
        queue.push(new URL(key));
      }
    }
    pages.push({ url, title, html: contentRoot(doc).toString() });
  }
  if (!pages.length) {
    throw badInput(
      `url: could not fetch an HTML page from ${start.href} (unreachable, not found, not HTML, or over ${IMPORT_MAX_BYTES} bytes).`,
    );
  }
  return { pages, totalResources: seen.size, ...(await fetchImages(config, pages, deadline, maxImageBytes)) };
}

function turndown(): TurndownService {
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_" });
  service.remove(["script", "style"] as any);
  return service;
}

/**
 * Adds the fetched pages to a content (pure: replayable on a newer head). Returns the number of
 * pages added.
 */
export function applyImport(content: RevisionContent, plan: ImportPlan, now: string, fileUrl: (fileId: string) => string): number {
  // The images become files of the content (the same id for the same bytes: added once).
  const used = new Set<string>();
  const imageLink = (src: string, base: URL): string | null => {
    let url: URL;
    try {
      url = new URL(src.trim(), base);
    } catch {
      return null;
    }
    const image = plan.imageBySource.get(url.href);
    if (!image) return null;
    used.add(image.id);
    return fileUrl(image.id);
  };
  const byUrl = new Map<string, { page: StoredPage; fetched: FetchedPage }>();
  // A page nests under the imported page whose URL is its closest ancestor: /docs/guide.html
  // (read as /docs/guide) holds /docs/guide/advanced.html.
  const keyOf = (u: URL) =>
    normalize(u)
      .replace(/\.html?$/i, "")
      .replace(/\/$/, "");
  const keys = plan.pages.map((p) => keyOf(p.url));
  const parentKey = (key: string): string | null => {
    let best: string | null = null;
    for (const other of keys) {
      if (other === key) continue;
      if (key.startsWith(`${other}/`) && (!best || other.length > best.length)) best = other;
    }
    return best;
  };
  // Parents before their pages; otherwise in the order the pages were found.
  const depth = (key: string) => key.split("/").length;
  const ordered = plan.pages.map((fetched, i) => ({ fetched, key: keys[i]! })).sort((a, b) => depth(a.key) - depth(b.key));
  for (const { fetched, key } of ordered) {
    if (byUrl.has(key)) continue;
    const parent = parentKey(key);
    const parentId = parent ? (byUrl.get(parent)?.page.id ?? null) : null;
    const id = newId("Page");
    const title = fetched.title || "Untitled";
    const page: StoredPage = {
      id,
      title,
      type: "document",
      parentId,
      position: positionAt(content, parentId, null),
      slug: uniqueSlug(title, takenSlugs(content, parentId)),
      markdown: "",
      createdAt: now,
      updatedAt: now,
    };
    content.pages[id] = page;
    byUrl.set(key, { page, fetched });
  }
  // Markdown last, once every imported page has its path: links between them become relative.
  const pathOf = (p: StoredPage) => [parentPath(content, p.parentId), p.slug].filter(Boolean).join("/");
  const service = turndown();
  for (const { page, fetched } of byUrl.values()) {
    if (fetched.markdown !== undefined) {
      page.markdown = fetched.markdown.replace(MARKDOWN_IMAGE, (all, open: string, src: string, close: string) => {
        const link = imageLink(src, fetched.url);
        return link ? `${open}${link}${close}` : all;
      });
      continue;
    }
    const html = parse(fetched.html!, { comment: false });
    for (const a of html.querySelectorAll("a[href]")) {
      try {
        const target = new URL(a.getAttribute("href")!, fetched.url);
        const hit = byUrl.get(keyOf(target));
        if (hit) a.setAttribute("href", `/${pathOf(hit.page)}${target.hash}`);
        else if (target.protocol.startsWith("http")) a.setAttribute("href", target.href);
      } catch {
        /* leave it as written */
      }
    }
    for (const img of html.querySelectorAll("img[src]")) {
      const src = img.getAttribute("src")!;
      const link = imageLink(src, fetched.url);
      if (link) {
        img.setAttribute("src", link);
        continue;
      }
      try {
        img.setAttribute("src", new URL(src, fetched.url).href);
      } catch {
        /* leave it */
      }
    }
    let markdown = service.turndown(html.toString()).trim();
    // The page's title is its first heading: do not repeat it in the body.
    const first = /^#\s+(.+)\n*/.exec(markdown);
    if (first && first[1]!.trim() === page.title) markdown = markdown.slice(first[0].length);
    page.markdown = markdown;
  }
  for (const image of plan.images) {
    if (!used.has(image.id) || content.files[image.id]) continue;
    content.files[image.id] = {
      id: image.id,
      name: image.name,
      contentType: image.contentType,
      size: image.bytes.length,
      ...(image.width && image.height ? { width: image.width, height: image.height } : {}),
    };
  }
  return byUrl.size;
}

export function checkSource(source: string | null | undefined): ImportSource {
  if (!source) throw badInput("source is required.");
  if (!(IMPORT_SOURCES as readonly string[]).includes(source)) {
    throw badInput(`source must be one of ${IMPORT_SOURCES.join(", ")} (got "${source}").`);
  }
  return source as ImportSource;
}
