import { type NavItem, type PageInput, renderPage } from "../../src/published/layout.js";
import { renderMarkdown } from "../../src/published/render-markdown.js";

/**
 * A sample published page for the layout tests: a site with two sections, two site spaces, a
 * nested page tree with a group and a link page, and a page whose markdown mixes ordinary content
 * with every hostile construct the pipeline must neutralise (each would set `window.__pwned`).
 */

export const SITE_URL = "/sites/acme/docs";

export const NAV: NavItem[] = [
  { title: "Welcome", url: `${SITE_URL}/` },
  {
    title: "Getting started",
    url: `${SITE_URL}/getting-started`,
    children: [
      { title: "Install", url: `${SITE_URL}/getting-started/install` },
      { title: "Configure", url: `${SITE_URL}/getting-started/configure` },
    ],
  },
  { title: "Reference", children: [{ title: "API", url: `${SITE_URL}/reference/api` }] },
  { title: "Status page", url: "https://status.example.com", external: true },
  { title: "Evil link page", url: "javascript:window.__pwned='nav'", external: true },
];

export const HOSTILE_MARKDOWN = `Install the server, then configure it.

## Requirements

You need Node.js 24. See [the configuration](page:configure#ports) and the [API](page:api).

<script>window.__pwned = "script"</script>

Inline <script>window.__pwned = "inline"</script> script and <img src="x" onerror="window.__pwned='img'"> image.

<iframe src="javascript:parent.__pwned='iframe'"></iframe>

<style>body { display: none }</style>

[Click me](javascript:window.__pwned='link') · [Data](data:text/html,<script>alert(1)</script>)

<a href="javascript:window.__pwned='raw'" onclick="window.__pwned='click'">raw anchor</a>

## Install

\`\`\`bash
npm install --global docs-server
docs-server --port 8080
\`\`\`

### From source

\`\`\`ts
import { start } from "./server.js";
await start({ port: 8080 }); // listens
\`\`\`

## Install

The second "Install" heading gets its own anchor.

| Option | Default |
| --- | --- |
| \`port\` | 8080 |

- [x] Download
- [ ] Configure
`;

export function samplePage(overrides: Partial<PageInput> = {}): string {
  const rendered = renderMarkdown(HOSTILE_MARKDOWN, {
    pageUrl: (id) => ({ configure: `${SITE_URL}/getting-started/configure`, api: `${SITE_URL}/reference/api` })[id],
  });
  return renderPage({
    site: { title: "Acme Docs", url: SITE_URL },
    sections: [
      { title: "Guides", url: `${SITE_URL}/`, current: true },
      { title: "API", url: `${SITE_URL}/api` },
    ],
    siteSpaces: [
      { title: "v2", url: `${SITE_URL}/`, current: true },
      { title: "v1", url: `${SITE_URL}/v1` },
    ],
    nav: NAV,
    page: {
      title: "Install",
      description: "How to install the server.",
      url: `http://docs.example.com${SITE_URL}/getting-started/install`,
      html: rendered.html,
      headings: rendered.headings,
    },
    currentUrl: `${SITE_URL}/getting-started/install`,
    ...overrides,
  });
}
