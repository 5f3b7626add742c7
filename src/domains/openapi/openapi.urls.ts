import type { Context } from "../../core/context.js";

type UrlsCtx = Pick<Context, "urls">;

/**
 * `location` is the spec in this API; `app` its page in the web app; `published` — only while
 * the spec's visibility is public — the public page where the web app publishes it to anyone
 * holding the link. This server serves no unauthenticated spec content itself.
 */
export function specUrls(ctx: UrlsCtx, spec: { organizationId: string; slug: string; visibility: string }) {
  const slug = encodeURIComponent(spec.slug);
  return {
    location: ctx.urls.api(`/orgs/${spec.organizationId}/openapi/${slug}`),
    app: ctx.urls.app(`/o/${spec.organizationId}/openapi/${slug}`),
    published: spec.visibility === "public" ? ctx.urls.app(`/public/o/${spec.organizationId}/openapi/${slug}`) : undefined,
  };
}

export function versionUrls(ctx: UrlsCtx, spec: { organizationId: string; slug: string }, versionId: string) {
  return { location: ctx.urls.api(`/orgs/${spec.organizationId}/openapi/${encodeURIComponent(spec.slug)}/versions/${versionId}`) };
}
