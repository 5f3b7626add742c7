import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Browser } from "playwright-core";
import { CHROMIUM, hasChromium, launchChromium } from "../helpers/chromium.js";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createCollection, createSpace, created, type Admin } from "../helpers/fixtures.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

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
    browser = await launchChromium();
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

  it.runIf(hasChromium)(
    "never sends the placeholder; a token pasted once fetches the schema (Docs and Explorer fill), runs the query and stays for the session",
    async () => {
      const context = await browser!.newContext();
      await context.grantPermissions(["clipboard-read", "clipboard-write"]);
      const page = await context.newPage();
      const origin = new URL(t.url).origin;
      const outside: string[] = [];
      const sent: { authorization: string; introspection: boolean }[] = [];
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await context.route("**/*", async (route) => {
        const url = route.request().url();
        if (!url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:")) {
          outside.push(url);
          return route.abort();
        }
        return route.continue();
      });
      page.on("request", (request) => {
        if (request.method() === "POST" && new URL(request.url()).pathname === "/graphql") {
          sent.push({
            authorization: request.headers().authorization ?? "",
            introspection: (request.postData() ?? "").includes("__schema"),
          });
        }
      });
      const answers: any[] = [];
      page.on("response", async (response) => {
        if (response.request().method() === "POST" && response.url().endsWith("/graphql")) {
          const body = await response.json().catch(() => null);
          if (body && !JSON.stringify(body).includes("__schema")) answers.push(body);
        }
      });
      // Editors render with non-breaking spaces: compare the page's text with whitespace normalized.
      const shows = (text: string) =>
        page.waitForFunction((t) => (document.body.textContent ?? "").replace(/\s+/g, " ").includes(t), text, { timeout: 60_000 });

      await page.goto(`${t.url}/graphql`);
      await page.waitForSelector(".graphiql-container", { timeout: 60_000 });
      await shows("query Nested {");
      expect(await page.title()).toBe("Documentation API — GraphiQL");
      // The header editor holds the Authorization placeholder; nothing has gone out with it.
      await shows('"Authorization": "Bearer <paste token>"');
      await page.click(".graphiql-execute-button");
      await shows("No API token yet");
      expect(sent).toEqual([]);

      // A token pasted over the placeholder: the schema is fetched with it, without any other action.
      const headerEditor = page.locator(".graphiql-editor-tool .monaco-editor", { hasText: "Authorization" }).first();
      await headerEditor.click();
      await page.keyboard.press("ControlOrMeta+A");
      // Pasted as a user pastes: through the clipboard (typing would meet the editor's closing of quotes and braces).
      await page.evaluate((text) => navigator.clipboard.writeText(text), JSON.stringify({ Authorization: `Bearer ${admin.token}` }));
      await page.keyboard.press("ControlOrMeta+V");
      await vi.waitFor(() => expect(sent.some((s) => s.introspection)).toBe(true), { timeout: 30_000 });
      await page.getByRole("button", { name: /Documentation Explorer/ }).click();
      await shows("A GraphQL schema provides a root type for each kind of operation.");
      await page.getByRole("button", { name: /GraphiQL Explorer/ }).click();
      await page.waitForFunction(() => document.querySelector(".graphiql-explorer-root")?.textContent?.includes("viewer"), null, {
        timeout: 30_000,
      });
      expect(await page.textContent(".graphiql-container")).not.toContain("Error fetching schema");

      await page.click(".graphiql-execute-button");
      await shows('"title": "Acme Docs"');
      // The page may show the answer before this side has read its body (the listener awaits it).
      await vi.waitFor(() => expect(answers.some((a) => a.data?.viewer)).toBe(true), { timeout: 30_000 });
      const answer = answers.find((a) => a.data?.viewer);
      expect(answer?.errors).toBeUndefined();
      const org = answer.data.viewer.organizations.nodes[0];
      expect(org.title).toBe("Acme Docs");
      const comment = org.collections.nodes[0].spaces.nodes[0].changeRequests.nodes[0].comments.nodes[0];
      expect(comment).toEqual({
        id: expect.any(String),
        body: { markdown: "Looks good" },
        postedBy: { id: admin.user, displayName: expect.any(String) },
      });
      expect(answer.extensions.cost.requested).toBeLessThan(answer.extensions.cost.limit);

      // Kept for the browser session, not beyond: a reload fetches the schema with it again.
      const storage = await page.evaluate(() => ({ session: JSON.stringify(sessionStorage), local: JSON.stringify(localStorage) }));
      expect(storage.session).toContain(admin.token);
      expect(storage.local).not.toContain(admin.token);
      const before = sent.length;
      await page.reload();
      await page.waitForSelector(".graphiql-container", { timeout: 60_000 });
      await vi.waitFor(() => expect(sent.slice(before).some((s) => s.introspection)).toBe(true), { timeout: 30_000 });

      expect(sent.length).toBeGreaterThan(0);
      for (const request of sent) expect(request.authorization).toBe(`Bearer ${admin.token}`);
      expect(outside).toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    },
  );

  it.runIf(hasChromium)("shows the default query whole: no line runs past the editor's edge", async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/graphql`);
    await page.waitForSelector(".graphiql-query-editor .view-line", { timeout: 60_000 });
    await page.waitForFunction(() =>
      (document.querySelector(".graphiql-query-editor")?.textContent ?? "").replace(/\s+/g, " ").includes("query Nested"),
    );
    const fit = await page.evaluate(() => {
      const editor = document.querySelector(".graphiql-query-editor .monaco-scrollable-element")!.getBoundingClientRect();
      const lines = [...document.querySelectorAll(".graphiql-query-editor .view-line > span")].map((line) => ({
        text: line.textContent ?? "",
        right: line.getBoundingClientRect().right,
      }));
      return { right: editor.right, lines };
    });
    expect(fit.lines.length).toBeGreaterThan(10);
    expect(fit.lines.filter((line) => line.right > fit.right).map((line) => line.text)).toEqual([]);
    await context.close();
  });
});
