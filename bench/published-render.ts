import { performance } from "node:perf_hooks";
import { renderPage, type NavItem } from "../src/published/layout.js";
import { renderMarkdown } from "../src/published/render-markdown.js";
import { int, percentile, runWhenMain } from "./common.js";

/**
 * An uncached render of a published page: a page of BENCH_RENDER_HEADINGS headings (200), each
 * with a paragraph of inline marks and links (`page:` refs resolved through the callback), every
 * fourth with a highlighted code block, a list and a table now and then, rendered by
 * renderMarkdown (parse → hast → highlight → sanitize → HTML) and wrapped by renderPage with a
 * 60-page sidebar. Nothing is cached between renders; the first (cold) render is shown apart,
 * then BENCH_RENDER_RUNS (50) renders after it. Target (issue 55): under 50 ms.
 *
 *   npm run bench -- published-render      (or: npx tsx bench/published-render.ts)
 */

export function benchMarkdown(headings: number): string {
  const parts: string[] = [];
  for (let i = 0; i < headings; i++) {
    parts.push(`${i % 10 === 0 ? "##" : "###"} Section ${i % 50} — *setup* of \`thing-${i}\``);
    parts.push(
      `Some **bold** text, _emphasis_, ~~old~~ and \`code\`, a [link to a page](page:p${i % 60}#section-${i % 50}), ` +
        `an [external one](https://example.com/${i}) and www.example.org/${i}. Lorem ipsum dolor sit amet, consectetur ` +
        `adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.`,
    );
    if (i % 4 === 0)
      parts.push(
        "```ts\n" +
          `import { start } from "./server.js";\n// Start server ${i}\nconst port: number = ${8000 + i};\n` +
          `await start({ port, host: "127.0.0.1" }).then((s) => console.log(s.url));\n` +
          "```",
      );
    if (i % 7 === 0) parts.push("- one\n- two with [a ref](page:p1)\n  - nested\n- [x] done");
    if (i % 13 === 0)
      parts.push(
        "| Option | Default | Meaning |\n| --- | :-: | --: |\n| `port` | 8080 | where it listens |\n| `host` | 0.0.0.0 | the interface |",
      );
  }
  return parts.join("\n\n");
}

function benchNav(): NavItem[] {
  return Array.from({ length: 12 }, (_, g) => ({
    title: `Chapter ${g}`,
    url: `/sites/acme/docs/chapter-${g}`,
    children: Array.from({ length: 4 }, (_, p) => ({ title: `Page ${g}.${p}`, url: `/sites/acme/docs/chapter-${g}/page-${p}` })),
  }));
}

export async function publishedRender() {
  const headings = int("BENCH_RENDER_HEADINGS", 200);
  const runs = int("BENCH_RENDER_RUNS", 50);
  const markdown = benchMarkdown(headings);
  const nav = benchNav();
  const render = () => {
    const page = renderMarkdown(markdown, { pageUrl: (id) => `/sites/acme/docs/${id}` });
    return renderPage({
      site: { title: "Acme Docs", url: "/sites/acme/docs" },
      nav,
      currentUrl: "/sites/acme/docs/chapter-3/page-2",
      page: {
        title: "A long page",
        description: "Two hundred headings.",
        url: "https://docs.example.com/sites/acme/docs/chapter-3/page-2",
        ...page,
      },
    });
  };
  let start = performance.now();
  const html = render();
  const cold = performance.now() - start;
  const times: number[] = [];
  // CPU time beside wall time: on a shared machine the wall time also counts waiting for a core.
  const cpu = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    start = performance.now();
    render();
    times.push(performance.now() - start);
  }
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  console.log(
    `uncached render of a ${headings}-heading page (${(markdown.length / 1024).toFixed(0)} KiB markdown → ${(html.length / 1024).toFixed(0)} KiB HTML):`,
  );
  console.log(`  first (cold)  ${ms(cold)}`);
  console.log(`  median        ${ms(percentile(times, 50))}   p95 ${ms(percentile(times, 95))}   over ${runs} renders   (target < 50 ms)`);
  console.log(`  CPU time      ${ms((used.user + used.system) / 1000 / Math.max(runs, 1))} per render`);
}

runWhenMain(import.meta.url, publishedRender);
