import fc from "fast-check";
import { type HTMLElement, parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { anchorsOf } from "../../src/domains/content/markdown.js";
import { renderMarkdown } from "../../src/published/render-markdown.js";

/**
 * The rendering pipeline of published pages (src/published/render-markdown.ts): heading ids and
 * the table of contents, highlighting, `page:`/`file:` links, and hostile markdown coming out inert.
 */

const EXECUTABLE_TAGS = new Set([
  "script",
  "iframe",
  "frame",
  "frameset",
  "object",
  "embed",
  "style",
  "link",
  "meta",
  "base",
  "form",
  "svg",
  "math",
  "template",
  "noscript",
]);
const URL_ATTRIBUTES = new Set(["href", "src", "action", "formaction", "xlink:href", "srcset", "poster", "background", "cite", "longdesc"]);

/** What a browser would run or load as script in the HTML: empty when nothing. */
function executable(html: string): string[] {
  const found: string[] = [];
  const walk = (el: HTMLElement) => {
    const tag = el.tagName?.toLowerCase();
    if (tag && EXECUTABLE_TAGS.has(tag)) found.push(`<${tag}>`);
    for (const [name, value] of Object.entries(el.attributes ?? {})) {
      const key = name.toLowerCase();
      if (key.startsWith("on") || key === "style" || key === "srcdoc") found.push(`${tag}[${key}]`);
      // Browsers drop tabs and newlines anywhere in a URL and C0 controls and spaces around it.
      const url = value
        .replace(/[\t\n\r]/g, "")
        .replace(/^[\u0000-\u0020]+/, "")
        .toLowerCase();
      if (URL_ATTRIBUTES.has(key) && /^(javascript|vbscript|data|file):/.test(url)) found.push(`${tag}[${key}=${value}]`);
    }
    for (const child of el.childNodes) if (child.nodeType === 1) walk(child as HTMLElement);
  };
  walk(parse(html));
  // Whatever the parser made of it, no tag-opening text may be left raw outside a quoted attribute
  // value (where `<` is data: an image's alt text may quote a tag).
  const outsideValues = html.replace(/="[^"]*"/g, '=""');
  for (const m of outsideValues.matchAll(/<\s*\/?\s*(script|iframe|style|object|embed|svg)\b/gi)) found.push(`raw ${m[0]}`);
  return found;
}

describe("heading ids and the table of contents", () => {
  it("gives every heading a unique GitHub-style id, the same anchors as the API's, and lists the top-level headings", () => {
    const md = "# Guide\n\n## Install\n\ntext\n\n## Install\n\n### Café & *crème*\n\n> ## Install\n\n## Install\n";
    const { html, headings } = renderMarkdown(md);
    expect(headings).toEqual([
      { depth: 1, text: "Guide", id: "guide" },
      { depth: 2, text: "Install", id: "install" },
      { depth: 2, text: "Install", id: "install-1" },
      { depth: 3, text: "Café & crème", id: "café--crème" },
      { depth: 2, text: "Install", id: "install-2" },
    ]);
    expect(new Set(headings.map((h) => h.id))).toEqual(anchorsOf(md));
    // The heading nested in a quote still gets an id, unique on the page.
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toContain("install-3");
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("keeps ids unique for any list of headings (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 1, max: 6 }), fc.constantFrom("Intro", "intro", "Intro 1", "Intro-1", "API", "a", "", "😀", "Étape")),
          {
            maxLength: 30,
          },
        ),
        (list) => {
          const md = list.map(([d, t]) => `${"#".repeat(d)} ${t}\n`).join("\n");
          const { html, headings } = renderMarkdown(md);
          const ids = [...html.matchAll(/<h[1-6] id="([^"]*)"/g)].map((m) => m[1]);
          expect(headings).toHaveLength(list.length);
          expect(new Set(ids).size).toBe(ids.length);
          // Every heading has its id but an empty one, which gets none (never `id=""`).
          expect(headings.map((h) => h.id).filter(Boolean)).toEqual(ids);
          expect(html).not.toContain('id=""');
        },
      ),
      { numRuns: 200 },
    );
  });

  it("never lets a heading take the footnotes' ids", () => {
    const { html } = renderMarkdown("## Footnote label\n\n## fn-1\n\nSee[^1].\n\n[^1]: the note\n");
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(html).toContain('href="#Note-fn-1"');
    expect(html).toContain('id="Note-fn-1"');
  });
});

describe("code highlighting", () => {
  it("marks a known language's tokens with highlight.js classes and the block with its language", () => {
    const { html } = renderMarkdown("```ts\nconst answer: number = 42; // why\n```\n");
    expect(html).toContain('<code class="language-ts">');
    expect(html).toContain('<span class="hljs-keyword">const</span>');
    expect(html).toContain('<span class="hljs-number">42</span>');
    expect(html).toContain('<span class="hljs-comment">// why</span>');
  });

  it("leaves unknown and unlabelled blocks as escaped text", () => {
    const { html } = renderMarkdown("```nolang\n<b>x</b> && y\n```\n\n```\n<script>\n```\n");
    expect(html).toContain('<code class="language-nolang">&#x3C;b>x&#x3C;/b> &#x26;&#x26; y\n</code>');
    expect(html).toContain("<pre><code>&#x3C;script>\n</code></pre>");
    expect(html).not.toContain("hljs");
  });

  it("highlights a language named with an alias and extra words", () => {
    const { html } = renderMarkdown("```JS title=x\nlet a = 'b'\n```\n");
    expect(html).toContain('<code class="language-js">');
    expect(html).toContain('<span class="hljs-string">');
  });
});

describe("links and files", () => {
  const pages: Record<string, string> = { p1: "/docs/guide/install", p2: "/docs/faq" };
  const options = {
    pageUrl: (id: string) => pages[id],
    fileUrl: (id: string) => (id === "f1" ? "/files/f1/logo.png" : null),
  };

  it("resolves page:<id> and file:<id> references through the caller's callbacks", () => {
    const md = "[Install](page:p1) [Step](page:p1#step-2) [FAQ][faq] ![Logo](file:f1) [doc](file:f1)\n\n[faq]: page:p2\n";
    const { html } = renderMarkdown(md, options);
    expect(html).toContain('<a href="/docs/guide/install">Install</a>');
    expect(html).toContain('<a href="/docs/guide/install#step-2">Step</a>');
    expect(html).toContain('<a href="/docs/faq">FAQ</a>');
    expect(html).toContain('<img src="/files/f1/logo.png" alt="Logo">');
    expect(html).toContain('<a href="/files/f1/logo.png">doc</a>');
  });

  it("keeps the text of a link to a page or file the reader cannot reach, without a target", () => {
    const { html } = renderMarkdown("[Secret](page:hidden) and ![x](file:nope) and [y](PAGE:p2)", options);
    expect(html).toContain("<a>Secret</a>");
    expect(html).not.toContain("hidden");
    expect(html).toContain('<img alt="x">');
    expect(html).toContain('<a href="/docs/faq">y</a>');
  });

  it("keeps external, relative and anchor links as written", () => {
    const { html } = renderMarkdown("[a](https://example.com/x?y=1&z=2) [b](../other) [c](#install) [d](mailto:a@b.c)");
    expect(html).toContain('<a href="https://example.com/x?y=1&#x26;z=2">a</a>');
    expect(html).toContain('<a href="../other">b</a>');
    expect(html).toContain('<a href="#install">c</a>');
    expect(html).toContain('<a href="mailto:a@b.c">d</a>');
  });

  it("renders GFM: tables, task lists, strikethrough, autolinks", () => {
    const { html } = renderMarkdown("| a | b |\n|---|--:|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n~~old~~ www.example.com\n");
    expect(html).toContain("<table>");
    expect(html).toContain('<td align="right">2</td>');
    expect(html).toContain('<input type="checkbox" checked disabled aria-label="done"> done');
    expect(html).toContain('<input type="checkbox" disabled aria-label="todo"> todo');
    expect(html).toContain("<del>old</del>");
    expect(html).toContain('<a href="http://www.example.com">www.example.com</a>');
  });
});

describe("hostile markdown", () => {
  const cases: [string, string][] = [
    ["script block", "<script>alert(1)</script>"],
    ["inline script", "text <script>alert(1)</script> more"],
    ["event handler", '<img src="x" onerror="alert(1)">'],
    ["event handler inline", 'a <b onmouseover="alert(1)">b</b> c'],
    ["iframe", '<iframe src="https://evil.example"></iframe>'],
    ["srcdoc", '<iframe srcdoc="<script>alert(1)</script>"></iframe>'],
    ["style", "<style>body{display:none}</style>"],
    ["script quoted in an image's alt text", '![[](javascript:alert(""))<ScRiPt src="//evil.example/"></ScRiPt>[]](javascript:alert(""))'],
    ["style attribute", '<p style="background:url(javascript:alert(1))">x</p>'],
    ["javascript link", "[x](javascript:alert(1))"],
    ["javascript link, mixed case", "[x](JaVaScRiPt:alert(1))"],
    ["javascript link, entity", "[x](jav&#x09;ascript:alert(1))"],
    ["javascript link, encoded", "[x](javascript&#58;alert(1))"],
    ["javascript autolink", "<javascript:alert(1)>"],
    ["javascript reference", "[x][r]\n\n[r]: javascript:alert(1)"],
    ["javascript image", "![x](javascript:alert(1))"],
    ["data link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"],
    ["data image", "![x](data:image/svg+xml,<svg onload=alert(1)>)"],
    ["vbscript link", "[x](vbscript:msgbox(1))"],
    ["raw anchor", '<a href="javascript:alert(1)">x</a>'],
    ["svg", "<svg><script>alert(1)</script></svg>"],
    ["object", '<object data="x.swf"></object><embed src="x.swf">'],
    ["form", '<form action="https://evil.example"><input name="a"></form>'],
    ["meta refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'],
    ["base", '<base href="https://evil.example/">'],
    ["link title breaking out", '[x](https://ok.example "a\\" onmouseover=\\"alert(1)")'],
    ["code language breaking out", '```js" onmouseover="alert(1)\nx\n```'],
    ["html comment", "<!-- <script>alert(1)</script> -->"],
    ["heading with markup", "## <img src=x onerror=alert(1)> title"],
    ["table cell", "| a |\n|---|\n| <script>alert(1)</script> |"],
  ];

  for (const [name, md] of cases) {
    it(`renders ${name} inert`, () => {
      const { html } = renderMarkdown(md);
      expect(executable(html)).toEqual([]);
    });
  }

  it("keeps the text around dropped raw HTML", () => {
    const { html } = renderMarkdown("before <script>alert(1)</script> after");
    expect(html).toContain("before");
    expect(html).toContain("after");
    expect(html).not.toContain("alert");
  });

  const text = fc.string({ maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, " "));
  const scheme = fc.constantFrom(
    "javascript:",
    "JAVASCRIPT:",
    " javascript:",
    "java\tscript:",
    "jav&#x09;ascript:",
    "javascript&#58;",
    "&#106;avascript:",
    "data:text/html,",
    "vbscript:",
  );
  const hostileUrl = fc.tuple(scheme, text).map(([s, t]) => `${s}alert(${JSON.stringify(t)})`);
  const handler = fc.constantFrom("onerror", "onload", "onclick", "ONMOUSEOVER", "onfocus", "onanimationstart");
  const tag = fc.constantFrom("img", "a", "div", "svg", "body", "input", "details", "video", "p", "span", "b");
  const fragment = fc.oneof(
    text,
    fc.tuple(fc.integer({ min: 1, max: 6 }), text).map(([d, t]) => `\n\n${"#".repeat(d)} ${t}\n\n`),
    fc.tuple(text, hostileUrl).map(([t, u]) => `[${t}](${u})`),
    fc.tuple(text, hostileUrl).map(([t, u]) => `![${t}](${u})`),
    fc.tuple(text, hostileUrl).map(([t, u]) => `[${t}][ref]\n\n[ref]: ${u}\n\n`),
    hostileUrl.map((u) => `<${u}>`),
    fc.tuple(tag, handler, text).map(([t, h, x]) => `<${t} ${h}="alert(1)" src=x>${x}</${t}>`),
    fc.tuple(tag, handler).map(([t, h]) => `<${t} ${h}=alert(1)//`),
    fc.tuple(tag, hostileUrl).map(([t, u]) => `<${t} href="${u}" src="${u}">x</${t}>`),
    text.map((t) => `<script>${t}</script>`),
    text.map((t) => `<ScRiPt src="//evil.example/${t}"></ScRiPt>`),
    text.map((t) => `<iframe src="javascript:${t}"></iframe>`),
    text.map((t) => `<style>*{x:${t}}</style>`),
    fc.tuple(text, handler).map(([t, h]) => `\n\n\`\`\`html ${h}="x"\n<script>${t}</script>\n\`\`\`\n\n`),
    fc.constantFrom("\n\n", "\n", "> ", "- ", "1. ", "| a |\n|---|\n| ", "`", "*", "_", "\\", "<", ">", '"', "'", "&", "&#"),
  );

  it("renders generated markdown with injected scripts, handlers and script URLs without executable content (property)", () => {
    fc.assert(
      fc.property(fc.array(fragment, { minLength: 1, maxLength: 25 }), (parts) => {
        const { html } = renderMarkdown(parts.join(""), { pageUrl: () => "/p", fileUrl: () => "/f" });
        expect(executable(html)).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
});
