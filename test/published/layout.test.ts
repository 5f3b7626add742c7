import { createHash } from "node:crypto";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { PUBLISHED_CSP, renderNotFound, renderPage, STYLESHEET_BYTES, STYLESHEET_PATH, safeUrl } from "../../src/published/layout.js";
import { renderMarkdown } from "../../src/published/render-markdown.js";
import { NAV, SITE_URL, samplePage } from "./sample.js";

/** The HTML page around published content (src/published/layout.ts), read as a parsed document. */

describe("published page layout", () => {
  const doc = parse(samplePage());

  it("has the reader's head: title, description, canonical, Open Graph, viewport and the hashed stylesheet", () => {
    expect(doc.querySelector("title")?.text).toBe("Install · Acme Docs");
    expect(doc.querySelector('meta[name="description"]')?.getAttribute("content")).toBe("How to install the server.");
    const canonical = `http://docs.example.com${SITE_URL}/getting-started/install`;
    expect(doc.querySelector('link[rel="canonical"]')?.getAttribute("href")).toBe(canonical);
    expect(doc.querySelector('meta[property="og:url"]')?.getAttribute("content")).toBe(canonical);
    expect(doc.querySelector('meta[property="og:title"]')?.getAttribute("content")).toBe("Install");
    expect(doc.querySelector('meta[property="og:site_name"]')?.getAttribute("content")).toBe("Acme Docs");
    expect(doc.querySelector('meta[property="og:type"]')?.getAttribute("content")).toBe("article");
    expect(doc.querySelector('meta[name="viewport"]')).toBeTruthy();
    expect(doc.querySelector("html")?.getAttribute("lang")).toBe("en");
    expect(doc.querySelector('link[rel="stylesheet"]')?.getAttribute("href")).toBe(STYLESHEET_PATH);
    expect(doc.querySelector('meta[name="robots"]')).toBeNull();
  });

  it("serves the stylesheet at a path naming its content's hash, with dark mode following the system", () => {
    const hash = createHash("sha256").update(STYLESHEET_BYTES).digest("base64url").slice(0, 16);
    expect(STYLESHEET_PATH).toBe(`/~published/style-${hash}.css`);
    expect(STYLESHEET_BYTES.toString()).toContain("prefers-color-scheme:dark");
  });

  it("has no script and no inline style or event handler anywhere", () => {
    const html = samplePage();
    expect(doc.querySelectorAll("script")).toHaveLength(0);
    expect(doc.querySelectorAll("style")).toHaveLength(0);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=|javascript:/i);
  });

  it("marks the current page in the sidebar, nests child pages and shows groups and link pages", () => {
    const sidebar = doc.querySelector('nav[aria-label="Pages"]')!;
    const current = sidebar.querySelectorAll('[aria-current="page"]');
    expect(current.map((a) => a.text)).toEqual(["Install"]);
    expect(current[0]!.getAttribute("href")).toBe(`${SITE_URL}/getting-started/install`);
    const nested = sidebar.querySelectorAll("ul ul a").map((a) => a.text);
    expect(nested).toEqual(["Install", "Configure", "API"]);
    expect(sidebar.querySelector(".group")?.text).toBe("Reference");
    expect(sidebar.querySelector('a[href="https://status.example.com"]')?.text).toBe("Status page (external)");
    // A link page pointing at a script URL is shown as text, without a link.
    expect(sidebar.text).toContain("Evil link page");
    expect(sidebar.querySelectorAll("a").some((a) => a.text.includes("Evil"))).toBe(false);
  });

  it("shows the sections and site spaces with the current ones marked", () => {
    expect(doc.querySelector('nav[aria-label="Sections"] [aria-current]')?.text).toBe("Guides");
    expect(doc.querySelector(".variants [aria-current]")?.text).toBe("v2");
  });

  it("has breadcrumbs from the site through the page's ancestors, and previous/next in reading order", () => {
    const crumbs = doc.querySelectorAll('nav[aria-label="Breadcrumb"] li').map((li) => li.text);
    expect(crumbs).toEqual(["Acme Docs", "Guides", "Getting started", "Install"]);
    expect(doc.querySelector('nav[aria-label="Breadcrumb"] li:last-child a')?.getAttribute("aria-current")).toBe("page");
    expect(doc.querySelector('a[rel="prev"]')?.getAttribute("href")).toBe(`${SITE_URL}/getting-started`);
    expect(doc.querySelector('a[rel="next"]')?.getAttribute("href")).toBe(`${SITE_URL}/getting-started/configure`);
  });

  it("has an on-page table of contents linking to the heading ids", () => {
    const toc = doc.querySelectorAll(".toc a").map((a) => [a.text, a.getAttribute("href")]);
    expect(toc).toEqual([
      ["Requirements", "#requirements"],
      ["Install", "#install"],
      ["From source", "#from-source"],
      ["Install", "#install-1"],
    ]);
    for (const [, href] of toc) expect(doc.getElementById(href!.slice(1))).toBeTruthy();
  });

  it("has a skip link to the main content and a search form leading to <site>/~search?q=", () => {
    const skip = doc.querySelector("a.skip")!;
    expect(skip.getAttribute("href")).toBe("#Main");
    expect(doc.getElementById("Main")?.tagName).toBe("MAIN");
    const form = doc.querySelector('form[role="search"]')!;
    expect(form.getAttribute("action")).toBe(`${SITE_URL}/~search`);
    expect(form.getAttribute("method")).toBe("get");
    expect(form.querySelector("input")?.getAttribute("name")).toBe("q");
    expect(form.querySelector(`label[for="${form.querySelector("input")?.getAttribute("id")}"]`)).toBeTruthy();
  });

  it("renders the page's title as its h1 once, whether or not the markdown starts with one", () => {
    expect(doc.querySelectorAll("h1").map((h) => h.text)).toEqual(["Install"]);
    const own = renderMarkdown("# Custom title\n\nBody");
    const page = parse(renderPage({ site: { title: "S", url: "/s" }, page: { title: "T", url: "https://x.example/s/t", ...own } }));
    expect(page.querySelectorAll("h1").map((h) => h.text)).toEqual(["Custom title"]);
  });

  it("escapes every string it is given", () => {
    const evil = `"><script>window.__pwned=1</script><img src=x onerror=alert(1)>'`;
    const html = renderPage({
      site: { title: evil, url: `/s/${evil}`, lang: evil },
      sections: [{ title: evil, url: `/x${evil}`, current: true }],
      siteSpaces: [
        { title: evil, url: "/a" },
        { title: "b", url: "/b" },
      ],
      nav: [{ title: evil, url: `/p${evil}`, children: [{ title: evil, url: "javascript:alert(1)" }] }],
      query: evil,
      page: {
        title: evil,
        description: evil,
        url: `https://x.example/${evil}`,
        html: "<p>ok</p>",
        headings: [
          { depth: 2, text: evil, id: evil },
          { depth: 2, text: "b", id: "b" },
        ],
        imageUrl: `https://x.example/${evil}`,
      },
      breadcrumbs: [{ title: evil, url: `/${evil}` }],
      previous: { title: evil, url: `/${evil}` },
      next: { title: evil, url: "javascript:alert(1)" },
    });
    expect(html).not.toMatch(/<script|<img/i);
    const page = parse(html);
    for (const el of page.querySelectorAll("*")) {
      expect(Object.keys(el.attributes).filter((a) => a.toLowerCase().startsWith("on"))).toEqual([]);
      expect(el.getAttribute("href") ?? "").not.toMatch(/^\s*javascript:/i);
    }
    expect(page.querySelector("title")?.text).toContain(evil);
    expect(page.querySelector("#Q")?.getAttribute("value")).toBe(evil);
    const scripted = parse(renderNotFound({ site: { title: "S", url: "javascript:alert(1)//" } }));
    expect(scripted.querySelector("form")?.getAttribute("action")).toBe("/~search");
    expect(scripted.querySelector("a.brand")?.getAttribute("href")).toBe("/");
  });

  it("marks share-link and visitor-auth pages noindex", () => {
    const page = parse(samplePage({ noindex: true }));
    expect(page.querySelector('meta[name="robots"]')?.getAttribute("content")).toBe("noindex, nofollow");
  });

  it("has a not-found page with the site's navigation, a way home and the search form", () => {
    const page = parse(renderNotFound({ site: { title: "Acme Docs", url: SITE_URL }, nav: NAV, path: "/missing/<b>" }));
    expect(page.querySelector("title")?.text).toBe("Page not found · Acme Docs");
    expect(page.querySelector("h1")?.text).toBe("Page not found");
    expect(page.querySelector("main code")?.text).toBe("/missing/<b>");
    expect(page.querySelector(`main a[href="${SITE_URL}"]`)).toBeTruthy();
    expect(page.querySelector('form[role="search"]')).toBeTruthy();
    expect(page.querySelectorAll('nav[aria-label="Pages"] [aria-current]')).toHaveLength(0);
  });

  it("has a Content-Security-Policy forbidding script, plugins, <base> and foreign framing", () => {
    const directives = new Map(
      PUBLISHED_CSP.split(";")
        .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
        .map(([k, ...v]) => [k, v]),
    );
    expect(directives.get("script-src")).toEqual(["'none'"]);
    expect(directives.get("object-src")).toEqual(["'none'"]);
    expect(directives.get("base-uri")).toEqual(["'none'"]);
    expect(directives.get("default-src")).toEqual(["'none'"]);
    expect(directives.get("frame-ancestors")).toEqual(["'self'"]);
    expect(directives.get("style-src")).toEqual(["'self'"]);
    expect(PUBLISHED_CSP).not.toContain("unsafe");
  });

  it("accepts only http(s), mailto and relative URLs as link targets", () => {
    expect(safeUrl("https://a.example/x")).toBe("https://a.example/x");
    expect(safeUrl("/docs/x")).toBe("/docs/x");
    expect(safeUrl("mailto:a@b.c")).toBe("mailto:a@b.c");
    for (const bad of ["javascript:alert(1)", " JavaScript:x", "java\tscript:x", "data:text/html,x", "vbscript:x", "", null])
      expect(safeUrl(bad)).toBeNull();
  });
});
