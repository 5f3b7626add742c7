import { parse } from "node-html-parser";
import type { Context } from "../../core/context.js";
import { checkOutboundUrl } from "../../core/support/outbound.js";
import { checkUri } from "../../core/validate.js";
import { requireSpace } from "../spaces/spaces.access.js";
import { fetchBytes } from "./import.js";

/**
 * What an `embed` block of a space shows for a URL (GitBook's GET /spaces/{spaceId}/embed?url=,
 * which its reader calls to render embeds): always a `link` embed — the page's title, the site's
 * name and icon when the page can be read, else the host name. The page is fetched through the
 * outbound policy (never a private address unless OUTBOUND_ALLOWED_NETWORKS allows it), within
 * EMBED_TIMEOUT_MS and EMBED_MAX_BYTES; a page that cannot be read falls back to the URL alone,
 * so an embed never fails because of the site it points to. No HTML of the page is passed on.
 */

export const EMBED_TIMEOUT_MS = 3000;
export const EMBED_MAX_BYTES = 512 * 1024;
const TITLE_MAX = 300;

export interface EmbedView {
  type: "link";
  title: string;
  site: string;
  icon?: string;
}

function clean(text: string | undefined | null): string {
  const value = (text ?? "").replace(/\s+/g, " ").trim();
  return value.length > TITLE_MAX ? `${value.slice(0, TITLE_MAX - 1).trimEnd()}…` : value;
}

/** Title, site name and icon of an HTML page, from its Open Graph tags, <title> and icon links. */
export function describeHtml(html: string, pageUrl: URL): Partial<EmbedView> {
  const root = parse(html, { comment: false, blockTextElements: { script: false, style: false } });
  const meta = (name: string) =>
    root.querySelector(`meta[property="${name}"]`)?.getAttribute("content") ??
    root.querySelector(`meta[name="${name}"]`)?.getAttribute("content");
  const title = clean(meta("og:title")) || clean(meta("twitter:title")) || clean(root.querySelector("title")?.text);
  const site = clean(meta("og:site_name"));
  let icon: string | undefined;
  for (const link of root.querySelectorAll("link[rel][href]")) {
    const rel = (link.getAttribute("rel") ?? "").toLowerCase().split(/\s+/);
    if (!rel.includes("icon") && !rel.includes("apple-touch-icon")) continue;
    try {
      const href = new URL(link.getAttribute("href")!.trim(), pageUrl);
      if (href.protocol === "https:" || href.protocol === "http:") {
        icon = href.href;
        if (rel.includes("icon")) break;
      }
    } catch {
      // an unusable href: look at the next one
    }
  }
  return { ...(title ? { title } : {}), ...(site ? { site } : {}), ...(icon ? { icon } : {}) };
}

export async function getEmbed(ctx: Context, spaceId: string, url: string): Promise<EmbedView> {
  checkUri("url", url);
  await requireSpace(ctx, spaceId);
  const target = new URL(url);
  const host = target.hostname.replace(/^www\./, "");
  const fallback: EmbedView = { type: "link", title: host, site: host };
  try {
    checkOutboundUrl(ctx.config, "url", url);
    const got = await fetchBytes(
      ctx.config,
      target,
      Date.now() + EMBED_TIMEOUT_MS,
      EMBED_MAX_BYTES,
      "text/html, application/xhtml+xml;q=0.9",
    );
    if (!got || !/html/.test(got.type)) return fallback;
    return { ...fallback, ...describeHtml(got.bytes.toString("utf8"), target) };
  } catch {
    // Refused by the outbound policy, unreachable, too slow: the link alone.
    return fallback;
  }
}
