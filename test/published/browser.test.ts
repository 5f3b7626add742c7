import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM, hasChromium, launchChromium } from "../helpers/chromium.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PUBLISHED_CSP, renderNotFound, STYLESHEET_BYTES, STYLESHEET_CONTENT_TYPE, STYLESHEET_PATH } from "../../src/published/layout.js";
import { NAV, SITE_URL, samplePage } from "./sample.js";

/**
 * A published page read in Chromium, served with its Content-Security-Policy by a bare node:http
 * server: nothing from the content runs, the page logs no error, axe-core finds no serious or
 * critical accessibility violation (light and dark), and the keyboard reaches the navigation.
 */

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const PAGE_PATH = `${SITE_URL}/getting-started/install`;
/** A page that bypasses the sanitizer with inline script: only the CSP stands between it and running. */
const UNSANITIZED_PATH = "/unsanitized";

let server: http.Server;
let origin: string;
let browser: Browser | undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path === STYLESHEET_PATH) {
      res.writeHead(200, { "content-type": STYLESHEET_CONTENT_TYPE, "cache-control": "public, max-age=31536000, immutable" });
      return res.end(STYLESHEET_BYTES);
    }
    const headers = { "content-type": "text/html; charset=utf-8", "content-security-policy": PUBLISHED_CSP };
    if (path === PAGE_PATH) {
      res.writeHead(200, headers);
      return res.end(samplePage());
    }
    if (path === UNSANITIZED_PATH) {
      res.writeHead(200, headers);
      return res.end(
        samplePage().replace(
          "</main>",
          `<script>window.__pwned="inline"</script><img src="/x" onerror="window.__pwned='handler'"><a id="Js" href="javascript:window.__pwned='url'">x</a></main>`,
        ),
      );
    }
    res.writeHead(404, headers);
    res.end(renderNotFound({ site: { title: "Acme Docs", url: SITE_URL }, nav: NAV, path }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (hasChromium) {
    browser = await launchChromium();
  }
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
});

interface Opened {
  page: Page;
  /** Console errors and uncaught page errors. */
  errors: string[];
  /** Every URL the page requested. */
  asked: string[];
}

async function open(path: string, options: { colorScheme?: "light" | "dark"; width?: number } = {}): Promise<Opened> {
  const context = await browser!.newContext({
    viewport: { width: options.width ?? 1280, height: 800 },
    colorScheme: options.colorScheme ?? "light",
  });
  const page = await context.newPage();
  const errors: string[] = [];
  const asked: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("request", (r) => asked.push(r.url()));
  await page.goto(`${origin}${path}`, { waitUntil: "load" });
  return { page, errors, asked };
}

/** axe-core's serious and critical violations on the page, as `rule: targets`. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP forbids script, and rightly so.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (ctx: Document, o: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(" ")) }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.targets.join(", ")}`);
}

describe.skipIf(!hasChromium)("a published page in Chromium", () => {
  it("loads its stylesheet under the CSP, logs no error and runs nothing from the content", async () => {
    const { page, errors, asked } = await open(PAGE_PATH);
    expect(await page.title()).toBe("Install · Acme Docs");
    // The stylesheet applied: the layout is a grid, the skip link is off screen until focused.
    expect(await page.$eval(".layout", (el) => getComputedStyle(el).display)).toBe("grid");
    expect(asked).toContain(`${origin}${STYLESHEET_PATH}`);
    // Every trap of the content, then every link of it clicked: nothing sets the marker.
    for (const link of await page.$$("article a[href]")) {
      const href = await link.getAttribute("href");
      if (href?.startsWith("#")) await link.click();
    }
    await page.getByText("Click me").click();
    await page.getByText("raw anchor").click();
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.$$("script, iframe, style, object, embed")).toHaveLength(0);
    // Nothing was asked of any other host.
    expect(asked.filter((url) => !url.startsWith(origin) && !url.startsWith("data:"))).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("blocks inline script, event handlers and script URLs by its CSP even if markup slipped through", async () => {
    const { page, errors } = await open(UNSANITIZED_PATH);
    await page.click("#Js");
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    // The browser reports what the policy refused: that is the policy working.
    expect(errors.some((e) => /Content Security Policy/i.test(e))).toBe(true);
    await page.context().close();
  });

  it("has no serious or critical accessibility violation, in light and dark mode, wide and narrow", async () => {
    for (const [colorScheme, width] of [
      ["light", 1280],
      ["dark", 1280],
      ["light", 390],
    ] as const) {
      const { page, errors } = await open(PAGE_PATH, { colorScheme, width });
      expect(await seriousViolations(page), `${colorScheme} ${width}px`).toEqual([]);
      expect(errors).toEqual([]);
      await page.context().close();
    }
  });

  it("follows the system's dark mode", async () => {
    const light = await open(PAGE_PATH, { colorScheme: "light" });
    const dark = await open(PAGE_PATH, { colorScheme: "dark" });
    const bg = (p: Page) => p.$eval("body", (el) => getComputedStyle(el).backgroundColor);
    expect(await bg(light.page)).toBe("rgb(255, 255, 255)");
    expect(await bg(dark.page)).not.toBe("rgb(255, 255, 255)");
    await light.page.context().close();
    await dark.page.context().close();
  });

  it("lets the keyboard skip to the content and reach every sidebar link, the current one marked", async () => {
    const { page } = await open(PAGE_PATH);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("Main");

    await page.goto(`${origin}${PAGE_PATH}`);
    const sidebarLinks = await page.$$eval('nav[aria-label="Pages"] a', (links) => links.map((a) => a.getAttribute("href")));
    const reached: string[] = [];
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate(() => {
        const el = document.activeElement;
        return el?.closest('nav[aria-label="Pages"]') ? { href: el.getAttribute("href"), current: el.getAttribute("aria-current") } : null;
      });
      if (focused?.href) reached.push(`${focused.href}${focused.current ? " (current)" : ""}`);
    }
    expect(reached.map((r) => r.replace(" (current)", ""))).toEqual(expect.arrayContaining(sidebarLinks));
    expect(reached).toContain(`${PAGE_PATH} (current)`);
    // Enter on a focused sidebar link follows it.
    await page.focus(`nav[aria-label="Pages"] a[href="${SITE_URL}/getting-started/configure"]`);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${origin}${SITE_URL}/getting-started/configure`);
    expect(await page.locator("h1").textContent()).toBe("Page not found");
    await page.context().close();
  });

  it("submits the search form to <site>/~search?q=", async () => {
    const { page } = await open(PAGE_PATH);
    await page.fill("#Q", "install guide");
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === `${SITE_URL}/~search`);
    expect(new URL(page.url()).searchParams.get("q")).toBe("install guide");
    await page.context().close();
  });

  it("serves a readable not-found page that passes the audit", async () => {
    const { page, errors } = await open(`${SITE_URL}/nowhere`);
    expect(await page.locator("h1").textContent()).toBe("Page not found");
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await page.context().close();
  });
});

describe.skipIf(hasChromium)("a published page in Chromium", () => {
  it(`needs Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`, () => undefined);
});
