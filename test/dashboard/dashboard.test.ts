import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Browser, Page } from "playwright-core";
import { CHROMIUM, hasChromium, launchChromium } from "../helpers/chromium.js";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { startReceiver } from "../events/receiver.js";

// A shared machine can be slow: generous limits, so that only real failures fail.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;
let browser: Browser | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  t = await startGateway({ integrationDispatchPollMs: 100 });
  admin = await t.bootstrap("ada@acme.test", "Acme");
  receiver = await startReceiver();
  await admin.post("/v1/integrations/watched", { title: "Watched", organization: admin.organization, visibility: "public" });
  await admin.put("/v1/integrations/watched/dev", { tunnelUrl: receiver.url });
  await admin.post("/v1/integrations/watched/installations", { organization: admin.organization });
  if (hasChromium) {
    browser = await launchChromium();
  }
}, 180_000);
/** Every address a page of this file asked for (requests and WebSockets), to check none leaves the machine. */
const requested: string[] = [];

async function newPage(viewport = { width: 1280, height: 800 }): Promise<{ page: Page; errors: string[]; asked: string[] }> {
  const context = await browser!.newContext({ viewport });
  const page = await context.newPage();
  const errors: string[] = [];
  const asked: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("request", (r) => asked.push(r.url()));
  page.on("websocket", (ws) => asked.push(ws.url()));
  page.on("close", () => requested.push(...asked));
  return { page, errors, asked };
}

/** Opens the dashboard, connects with the token and picks the integration. */
async function openWatching(page: Page, integration: string, token = admin.token) {
  await page.goto(`${t.url}/dashboard`);
  await page.fill("#token", token);
  await page.click("#connect");
  await page.waitForSelector(`#integration option[value="${integration}"]`, { state: "attached" });
  await page.selectOption("#integration", integration);
  await page.waitForSelector("#events tbody tr");
  await page.waitForSelector("#live.on");
}

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
});

describe("GET /dashboard", () => {
  it("serves the page, its script and the graphql-ws browser build without a build step", async () => {
    const page = await fetch(`${t.url}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain('<script src="/dashboard/graphql-ws.js"></script>');
    const umd = await fetch(`${t.url}/dashboard/graphql-ws.js`);
    expect(umd.status).toBe(200);
    expect(await umd.text()).toContain("graphqlWs");
    expect((await fetch(`${t.url}/dashboard/app.js`)).status).toBe(200);
    expect(html).toContain('<script src="/dashboard/uplot.js"></script>');
    const uplot = await fetch(`${t.url}/dashboard/uplot.js`);
    expect(uplot.status).toBe(200);
    expect(await uplot.text()).toContain("uPlot");
    expect((await fetch(`${t.url}/dashboard/uplot.css`)).headers.get("content-type")).toContain("text/css");
    expect((await fetch(`${t.url}/dashboard/nope.js`)).status).toBe(404);
  });

  it.runIf(hasChromium)(
    "shows recent events, receives new ones live, filters them and opens one with its trace",
    { timeout: 120_000 },
    async () => {
      const { page, errors } = await newPage();
      await page.goto(`${t.url}/dashboard`);
      await page.fill("#token", admin.token);
      await page.click("#connect");
      await page.waitForSelector('#integration option[value="watched"]', { state: "attached" });
      await page.selectOption("#integration", "watched");
      // The installation_setup event recorded before the page opened, delivered by now.
      await page.waitForSelector('#events tbody tr[data-type="installation_setup"][data-status="success"]');
      await page.waitForSelector("#live.on");

      // A new event arrives over the subscription, first pending then delivered.
      const inst = (await admin.get("/v1/integrations/watched/installations")).body.items[0];
      await admin.patch(`/v1/integrations/watched/installations/${inst.id}`, { configuration: { channel: "#docs" } });
      await page.waitForFunction(() => document.querySelectorAll("#events tbody tr").length === 2);
      await page.waitForSelector('#events tbody tr[data-status="pending"], #events tbody tr[data-status="success"]:nth-child(2)');
      const newest = await page.getAttribute("#events tbody tr:first-child", "data-id");
      const events = (await admin.get("/v1/integrations/watched/events")).body.items;
      expect(newest).toBe(events[0].id);

      // Filters.
      await page.selectOption("#status-filter", "failed");
      await page.waitForFunction(() => document.querySelectorAll("#events tbody tr").length === 0);
      await page.selectOption("#status-filter", "");
      await page.selectOption("#type-filter", "installation_setup");
      await page.waitForFunction(() => document.querySelectorAll("#events tbody tr").length === 2);

      // Detail: payload and trace.
      await page.click("#events tbody tr:first-child");
      await page.waitForSelector("#detail:not([hidden])");
      await page.waitForFunction(() => document.querySelector("#detail-payload")!.textContent!.includes("previous"));
      const payload = JSON.parse((await page.textContent("#detail-payload"))!);
      expect(payload).toMatchObject({ type: "installation_setup", installationId: inst.id, previous: { configuration: {} } });
      await page.waitForFunction(() => document.querySelectorAll("#detail-trace tbody tr").length >= 2);
      expect(await page.textContent("#detail-trace")).toContain("Recorded");
      if (process.env.DASHBOARD_SCREENSHOT) await page.screenshot({ path: process.env.DASHBOARD_SCREENSHOT, fullPage: true });
      expect(errors).toEqual([]);
      await page.context().close();
    },
  );

  it.runIf(hasChromium)("reconnects after a reload and shows the same integration and filters", async () => {
    const { page, errors } = await newPage();
    await openWatching(page, "watched");
    await page.selectOption("#status-filter", "success");
    expect(new URL(page.url()).searchParams.get("integration")).toBe("watched");
    await page.reload();
    await page.waitForSelector("#live.on");
    expect(await page.textContent("#live")).toContain("live");
    expect(await page.inputValue("#integration")).toBe("watched");
    expect(await page.inputValue("#status-filter")).toBe("success");
    await page.waitForSelector('#events tbody tr[data-status="success"]');
    expect(await page.$$eval("#events tbody tr", (rows) => rows.every((r) => (r as HTMLElement).dataset.status === "success"))).toBe(true);
    // Still live after the reload: a new event arrives over the subscription.
    const before = await page.$$eval("#events tbody tr", (rows) => rows.length);
    const inst = (await admin.get("/v1/integrations/watched/installations")).body.items[0];
    await admin.patch(`/v1/integrations/watched/installations/${inst.id}`, { configuration: { channel: "#reload" } });
    await page.waitForFunction((n) => document.querySelectorAll("#events tbody tr").length > n, before, { timeout: 60_000 });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it.runIf(hasChromium)("charts events per minute by status above the table", async () => {
    const { page, errors } = await newPage();
    await openWatching(page, "watched");
    const events = (await admin.get("/v1/integrations/watched/events")).body.items as { status: string }[];
    await page.waitForFunction(
      (n) => JSON.parse(document.querySelector<HTMLElement>("#chart")!.dataset.counts ?? "{}").success === n,
      events.filter((e) => e.status === "success").length,
    );
    const counts = JSON.parse((await page.getAttribute("#chart", "data-counts"))!);
    for (const status of ["success", "pending", "failed", "skipped"])
      expect(counts[status]).toBe(events.filter((e) => e.status === status).length);
    // Above the table, and drawn: the canvas holds bars of the success color (#2f9e55).
    const [chartBottom, tableTop] = await page.evaluate(() => [
      document.querySelector("#chart")!.getBoundingClientRect().bottom,
      document.querySelector("#events")!.getBoundingClientRect().top,
    ]);
    expect(chartBottom).toBeLessThanOrEqual(tableTop);
    const painted = await page.$eval("#chart canvas", (canvas) => {
      const c = canvas as HTMLCanvasElement;
      const pixels = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i] === 0x2f && pixels[i + 1] === 0x9e && pixels[i + 2] === 0x55) n++;
      return n;
    });
    expect(painted).toBeGreaterThan(0);
    expect(await page.textContent("#chart")).toContain("success");
    expect(await page.getAttribute("#chart", "aria-label")).toContain(`${counts.success} success`);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it.runIf(hasChromium)("says on skipped events how to turn delivery on (development mode)", async () => {
    await admin.post("/v1/integrations/quiet", { title: "Quiet", organization: admin.organization, visibility: "public" });
    await admin.post("/v1/integrations/quiet/installations", { organization: admin.organization });
    const { page, errors } = await newPage();
    await openWatching(page, "quiet");
    await page.waitForSelector('#events tbody tr[data-status="skipped"]');
    await page.waitForSelector("#skipped-hint:not([hidden])");
    const hint = (await page.textContent("#skipped-hint"))!.replace(/\s+/g, " ");
    expect(hint).toContain("development mode");
    expect(hint).toContain("PUT /v1/integrations/quiet/dev");
    expect(hint).toContain('"tunnelUrl"');
    expect(await page.getAttribute('#events tbody tr[data-status="skipped"] .status', "title")).toContain("development mode");
    // Not shown for an integration whose events are delivered.
    await page.selectOption("#integration", "watched");
    await page.waitForSelector('#events tbody tr[data-status="success"]');
    expect(await page.isHidden("#skipped-hint")).toBe(true);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it.runIf(hasChromium)("shows every column whole at 1400 px wide, with an event open beside the table", async () => {
    const { page, errors } = await newPage({ width: 1400, height: 900 });
    await openWatching(page, "watched");
    await page.click("#events tbody tr:first-child");
    await page.waitForSelector("#detail:not([hidden])");
    await page.waitForFunction(() => document.querySelector("#detail-payload")!.textContent !== "");
    const layout = await page.evaluate(() => {
      const section = document.querySelector("#events")!.closest("section")!;
      const box = section.getBoundingClientRect();
      const cells = [...document.querySelectorAll<HTMLElement>("#events th, #events td")];
      const lines = (el: HTMLElement) => {
        const range = document.createRange();
        range.selectNodeContents(el);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      };
      return {
        sectionOverflow: section.scrollWidth - section.clientWidth,
        cut: cells
          .filter((c) => c.getBoundingClientRect().right > box.right + 0.5 || c.scrollWidth > c.clientWidth)
          .map((c) => c.textContent),
        wrappedIds: [...document.querySelectorAll<HTMLElement>("#events td:nth-child(4), #events td:nth-child(5)")]
          .filter((c) => lines(c) > 1)
          .map((c) => c.textContent),
        ids: document.querySelectorAll("#events td:nth-child(5)").length,
      };
    });
    expect(layout.ids).toBeGreaterThan(0);
    expect(layout.sectionOverflow).toBe(0);
    expect(layout.cut).toEqual([]);
    expect(layout.wrappedIds).toEqual([]);
    if (process.env.DASHBOARD_SCREENSHOT)
      await page.screenshot({ path: process.env.DASHBOARD_SCREENSHOT.replace(/(\.png)?$/, "-1400.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it.runIf(hasChromium)("shows the server's message for a wrong token, without retrying", async () => {
    const { page, errors } = await newPage();
    await page.goto(`${t.url}/dashboard`);
    await page.fill("#token", "dapi_wrong");
    await page.click("#connect");
    await page.waitForFunction(() => document.querySelector("#error")!.textContent!.includes("Invalid or revoked token"));
    await page.waitForSelector("#live.off");
    await page.waitForFunction(() => document.querySelector("#live")!.textContent!.includes("refused"));
    expect(await page.textContent("#error")).toMatch(/^Invalid or revoked token: /);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it.runIf(hasChromium)("loads nothing from outside this server", async () => {
    // A whole visit here (page, scripts, styles, icon, socket, REST, an event's detail), and those of the tests above.
    const { page, asked } = await newPage();
    await openWatching(page, "watched");
    await page.click("#events tbody tr:first-child");
    await page.waitForSelector("#detail:not([hidden])");
    await page.context().close();
    const all = [...asked, ...requested];
    const origin = new URL(t.url);
    const elsewhere = all.filter((address) => {
      const url = new URL(address);
      return !(url.host === origin.host && ["http:", "ws:"].includes(url.protocol)) && url.protocol !== "data:";
    });
    expect(elsewhere).toEqual([]);
    for (const path of ["/dashboard", "/dashboard/app.js", "/dashboard/uplot.js", "/dashboard/uplot.css", "/dashboard/graphql-ws.js"])
      expect(asked).toContain(`${t.url}${path}`);
    expect(asked).toContain(`${t.url.replace(/^http/, "ws")}/graphql`);
  });

  it.skipIf(hasChromium)(`needs Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`, () => undefined);
});
