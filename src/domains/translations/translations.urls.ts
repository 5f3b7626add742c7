import type { Context } from "../../core/context.js";

export function translationUrls(ctx: Pick<Context, "urls">, organizationId: string, id: string) {
  return { location: ctx.urls.api(`/orgs/${organizationId}/translations/${id}`) };
}
