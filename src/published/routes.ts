import type { Config } from "../config.js";
import { rawRoute, type RawRoute } from "../rest/raw-routes.js";
import { STYLESHEET_BYTES, STYLESHEET_CONTENT_TYPE, STYLESHEET_PATH } from "./stylesheet.js";

/**
 * The reader of published sites: HTML (and the machine-readable twins) at every path under a
 * site's published base, `<PUBLIC_URL>/sites/<organization>/<site>/…` (sites.service.ts
 * `sitePublishedUrl`). The renderer (markdown pipeline, highlighter) is imported on the first
 * visit, so that starting the server does not load it.
 *
 * Sites on a SITES_DOMAIN subdomain (`https://<organization hostname>.<SITES_DOMAIN>/…`) are
 * answered by `publishedHostRoutes`, which the gateway mounts for requests on such a host only
 * (`isSitesHost`): every path there is the reader's. Sites on a custom hostname are not served
 * yet: telling them from the API's own host would cost a look-up on every request.
 */

const reader = () => import("./reader.js");

export const publishedRoutes: RawRoute[] = [
  rawRoute({
    methods: ["GET"],
    path: STYLESHEET_PATH,
    auth: "none",
    // The path holds the stylesheet's hash: it never changes under that name.
    handler: () =>
      new Response(new Uint8Array(STYLESHEET_BYTES), {
        headers: {
          "content-type": STYLESHEET_CONTENT_TYPE,
          "cache-control": "public, max-age=31536000, immutable",
          "x-content-type-options": "nosniff",
        },
      }),
  }),
  rawRoute({
    methods: ["GET"],
    path: "/sites/{organization}{rest*}",
    auth: "optional",
    rateLimited: true,
    handler: async (ctx, _params, request, url) => (await reader()).answerPublished(ctx, request, url, null),
  }),
];

/** Whether a request's host is an organization's subdomain of SITES_DOMAIN (and not the API's own host). */
export function isSitesHost(config: Pick<Config, "sitesDomain" | "publicUrl">, url: URL): boolean {
  const domain = config.sitesDomain?.toLowerCase();
  if (!domain) return false;
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (!host.endsWith(`.${domain}`) || host.slice(0, -domain.length - 1).includes(".")) return false;
  return host !== new URL(config.publicUrl).hostname.toLowerCase();
}

/** The routes of a SITES_DOMAIN host: its stylesheet, and every other path a page of its sites. */
export const publishedHostRoutes: RawRoute[] = [
  publishedRoutes[0]!,
  ...["/", "/{first}{rest*}"].map((path) =>
    rawRoute({
      methods: ["GET"],
      path,
      auth: "optional",
      rateLimited: true,
      // Sites there are published over https (sites.service.ts sitePublishedUrl): their links are too.
      handler: async (ctx, _params, request, url) => (await reader()).answerPublished(ctx, request, url, `https://${url.host}`),
    }),
  ),
];
