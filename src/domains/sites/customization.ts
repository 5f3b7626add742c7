import type { Site } from "../../generated/prisma/client.js";
import type { PublishedView } from "./published.js";

/**
 * The customization of a published site, in GitBook's `SiteCustomizationSettings` shape (what its
 * reader dereferences to draw a page). Sites here have no stored customization yet: every site and
 * site space gets GitBook's defaults, titled with the site's title. No AI backend runs here, so
 * `ai.mode` is "none" and no assistant, MCP or external-AI page action is offered.
 */
export function defaultCustomization(site: Pick<Site, "title">): Record<string, unknown> {
  const color = (hex: string) => ({ light: hex, dark: hex });
  const codeTheme = { light: "default-light", dark: "default-dark" };
  return {
    title: site.title,
    styling: {
      theme: "clean",
      primaryColor: color("#346DDB"),
      infoColor: color("#787878"),
      successColor: color("#00C950"),
      warningColor: color("#FE9A00"),
      dangerColor: color("#FB2C36"),
      corners: "rounded",
      depth: "subtle",
      links: "default",
      font: "Inter",
      monospaceFont: "IBMPlexMono",
      background: "plain",
      icons: "regular",
      search: "subtle",
      codeTheme: { default: codeTheme, openapi: codeTheme },
      sidebar: { background: "default", list: "default" },
    },
    internationalization: { locale: "en" },
    favicon: {},
    header: { preset: "default", links: [] },
    footer: { groups: [] },
    themes: { default: "light", toggeable: true },
    feedback: { enabled: false },
    ai: { mode: "none" },
    advancedCustomization: { enabled: false },
    pageActions: { items: ["markdown", "pdf"] },
    externalLinks: { target: "self" },
    pagination: { enabled: true },
    trademark: { enabled: false },
    privacyPolicy: {},
    socialPreview: {},
    socialAccounts: [],
    insights: { trackingCookie: false },
  };
}

/** `customizations` of a published view: the site's, and the same for every site space the visitor sees. */
export function publishedCustomizations(view: PublishedView) {
  const site = defaultCustomization(view.site);
  const siteSpaces: Record<string, unknown> = {};
  for (const item of view.structure.structure) {
    if ("spaceId" in item) siteSpaces[item.id] = site;
    else for (const s of item.view?.siteSpaces ?? []) siteSpaces[s.id] = site;
  }
  return { site, siteSpaces };
}
