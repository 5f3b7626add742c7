import type { Integration, IntegrationInstallation } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";

/**
 * Links of the integrations area. `assets` is where the gateway serves what was published as
 * base64 content (`icon`, `preview-<n>`, see integrations.http.ts). `publicEndpoint` is the
 * address reserved for requests from outside to the integration (its installation); this gateway
 * forwards such requests to the integration. `publicContentEndpoint` (rendered content) is the
 * same address: this gateway has no separate origin for content.
 */
export function integrationUrls(
  ctx: Pick<Context, "config" | "urls">,
  integration: Pick<Integration, "name" | "version" | "icon" | "previewImages">,
) {
  const base = `${ctx.config.publicUrl}/integrations/${encodeURIComponent(integration.name)}`;
  const assets = `${base}/assets/`;
  return {
    urls: {
      location: ctx.urls.api(`/integrations/${encodeURIComponent(integration.name)}`),
      ...(integration.icon ? { icon: `${assets}icon?v=${integration.version}` } : {}),
      app: ctx.urls.app(`/integrations/${encodeURIComponent(integration.name)}`),
      assets,
      publicEndpoint: `${base}/public`,
      publicContentEndpoint: `${base}/public`,
    },
    previewImages: integration.previewImages.map((_img, i) => `${assets}preview-${i}?v=${integration.version}`),
  };
}

export function installationUrls(
  ctx: Pick<Context, "config" | "urls">,
  integrationName: string,
  installation: Pick<IntegrationInstallation, "id" | "organizationId">,
) {
  const name = encodeURIComponent(integrationName);
  return {
    location: ctx.urls.api(`/integrations/${name}/installations/${installation.id}`),
    app: ctx.urls.app(`/o/${installation.organizationId}/integrations/${name}`),
    publicEndpoint: `${ctx.config.publicUrl}/integrations/${name}/installations/${installation.id}/public`,
    publicContentEndpoint: `${ctx.config.publicUrl}/integrations/${name}/installations/${installation.id}/public`,
  };
}

export function scopedInstallationUrls(
  ctx: Pick<Context, "config" | "urls">,
  integrationName: string,
  installationId: string,
  scope: "space" | "site",
  targetId: string,
) {
  const name = encodeURIComponent(integrationName);
  const path = `/integrations/${name}/installations/${installationId}/${scope}s/${encodeURIComponent(targetId)}`;
  return {
    location: ctx.urls.api(path),
    publicEndpoint: `${ctx.config.publicUrl}${path}/public`,
    publicContentEndpoint: `${ctx.config.publicUrl}${path}/public`,
  };
}
