import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createCollection, createSpace, created, type Admin } from "../helpers/fixtures.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const hasChromium = fs.existsSync(CHROMIUM);

let t: TestGateway;
let admin: Admin;
let browser: Browser | undefined;

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  const collection = await createCollection(admin, admin.organization, { title: "Guides" });
  const space = await createSpace(admin, admin.organization, { title: "Handbook", parent: collection.id });
  const cr = created(await admin.post(`/v1/spaces/${space.id}/change-requests`, { subject: "Typos" }));
  created(await admin.post(`/v1/spaces/${space.id}/change-requests/${cr.id}/comments`, { body: { markdown: "Looks good" } }));
  if (hasChromium) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
  }
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("GraphiQL at /graphql", () => {
  it("is served with its assets inlined: nothing is fetched from another host", async () => {
    const page = await fetch(`${t.url}/graphql`, { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).not.toContain("__TITLE__");
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
    expect(html).not.toMatch(/<link[^>]+href="https?:/);
    expect(html).toContain("Bearer <paste token>");
    expect(html).toContain("query Nested");
  });

  it.runIf(hasChromium)("renders offline, runs the default query with a token from the header editor and shows the data", async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const origin = new URL(t.url).origin;
    const outside: string[] = [];
    const sentAuthorization: string[] = [];
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await context.route("**/*", async (route) => {
      const request = route.request();
      const url = request.url();
      if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) {
        outside.push(url);
        return route.abort();
      }
      if (request.method() === "POST" && new URL(url).pathname === "/graphql") {
        const headers = request.headers();
        sentAuthorization.push(headers.authorization ?? "");
        // The header editor's placeholder, replaced by a token as a user would paste it.
        if (headers.authorization === "Bearer <paste token>") headers.authorization = `Bearer ${admin.token}`;
        return route.continue({ headers });
      }
      return route.continue();
    });
    const answers: any[] = [];
    page.on("response", async (response) => {
      if (response.request().method() === "POST" && response.url().endsWith("/graphql")) {
        const body = await response.json().catch(() => null);
        if (body && !JSON.stringify(body).includes("__schema")) answers.push(body);
      }
    });

    await page.goto(`${t.url}/graphql`);
    await page.waitForSelector(".graphiql-container", { timeout: 60_000 });
    // Editors render with non-breaking spaces: compare the page's text with whitespace normalized.
    const shows = (text: string) =>
      page.waitForFunction((t) => (document.body.textContent ?? "").replace(/\s+/g, " ").includes(t), text, { timeout: 60_000 });
    await shows("query Nested {");
    expect(await page.title()).toBe("Documentation API — GraphiQL");
    // The header editor holds the Authorization placeholder.
    await shows('"Authorization": "Bearer <paste token>"');

    await page.click(".graphiql-execute-button");
    await shows('"title": "Acme Docs"');

    expect(sentAuthorization).toContain("Bearer <paste token>");
    // The page may show the answer before this side has read its body (the listener awaits it).
    await vi.waitFor(() => expect(answers.some((a) => a.data?.viewer)).toBe(true), { timeout: 30_000 });
    const answer = answers.find((a) => a.data?.viewer);
    expect(answer?.errors).toBeUndefined();
    const org = answer.data.viewer.organizations.nodes[0];
    expect(org.title).toBe("Acme Docs");
    const comment = org.collections.nodes[0].spaces.nodes[0].changeRequests.nodes[0].comments.nodes[0];
    expect(comment).toEqual({ body: { markdown: "Looks good" }, postedBy: { displayName: expect.any(String) } });
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
