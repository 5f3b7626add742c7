import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { startReceiver } from "../events/receiver.js";

// A shared machine can be slow: generous limits, so that only real failures fail.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 180_000 });

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const hasChromium = fs.existsSync(CHROMIUM);

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
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
    });
  }
}, 180_000);
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
    expect((await fetch(`${t.url}/dashboard/nope.js`)).status).toBe(404);
  });

  it.runIf(hasChromium)("shows recent events, receives new ones live, filters them and opens one with its trace", { timeout: 120_000 }, async () => {
    const page = await browser!.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
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
    await page.close();
  });

  it.skipIf(hasChromium)(`needs Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`, () => undefined);
});
