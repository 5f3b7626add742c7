import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freshPostgres } from "./helpers/gateway.js";
import { OpenApiChecker } from "./helpers/openapi.js";
import { freePort } from "./helpers/ports.js";

/**
 * The README's first hour, run as written: the shell blocks of its "First user …" and
 * "Walkthrough …" sections, in order, in one bash, against a server started with `npm start`, on
 * a fresh database. Then what they did is checked through the API.
 */

// Starting the server and the admin command (tsx, a fresh embedded database) is slow on a shared machine.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const root = path.resolve(import.meta.dirname, "..");
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
const RUN_SECTIONS = ["First user, organization and API token", "Walkthrough: from a token to a published site"];
const VARS = ["TOKEN", "ORG", "COLLECTION", "SPACE", "PAGE", "CR", "SITE"] as const;

/** The body of a `## ` section of the README (up to the next one). */
function section(heading: string): string {
  const lines = readme.split("\n");
  const start = lines.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`README.md has no section "## ${heading}"`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

/** The ```sh code blocks of a piece of markdown, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

let dataDir: string;
let env: NodeJS.ProcessEnv;
let base: string;
let server: ReturnType<typeof spawn> | undefined;
let serverOutput = "";
let dropDb: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-readme-"));
  const port = await freePort();
  env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), PUBLIC_URL: `http://localhost:${port}` };
  if (process.env.DATABASE_URL) {
    const db = await freshPostgres(process.env.DATABASE_URL);
    env.DATABASE_URL = db.url;
    dropDb = db.drop;
  }
  base = `http://127.0.0.1:${port}`;
  // The README's own command (npm start passes SIGTERM on to the server, which the end of this file sends).
  server = spawn("npm", ["start"], { cwd: root, env });
  server.stdout!.on("data", (d) => (serverOutput += d));
  server.stderr!.on("data", (d) => (serverOutput += d));
  const exited = new Promise<never>((_, reject) =>
    server!.once("exit", (code) => reject(new Error(`the server exited (${code}): ${serverOutput}`))),
  );
  // Ready once the admin channel is known (the lock names the port) and the server answers.
  const ready = (async () => {
    for (;;) {
      const lock = path.join(dataDir, "server.lock");
      const held = env.DATABASE_URL || (fs.existsSync(lock) && fs.readFileSync(lock, "utf8").includes('"port"'));
      if (
        held &&
        (await fetch(`${base}/`).then(
          (r) => r.ok,
          () => false,
        ))
      )
        return;
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await Promise.race([ready, exited]);
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  await dropDb?.();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("README.md", () => {
  it("starts with the two commands, then the first user, organization and token, then PostgreSQL and Redis", () => {
    expect(shellBlocks(readme)[0]).toBe("npm install && npm start\nnpm test\n");
    const headings = readme.split("\n").filter((l) => l.startsWith("## "));
    expect(headings.slice(0, 2)).toEqual(["## First user, organization and API token", "## PostgreSQL and Redis"]);
    expect(readme.indexOf("```sh")).toBeLessThan(readme.indexOf("## First user"));
  });

  it("links the REST contract inside the repository, and every relative link resolves", () => {
    expect(readme).toContain("(docs/documentation-api.md)");
    for (const [, target] of readme.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      expect(target, `README link ${target}`).not.toMatch(/^\.\.\//);
      expect(fs.existsSync(path.join(root, target!)), `README link ${target}`).toBe(true);
    }
  });

  it("walks from a token to a published site with its own commands", async () => {
    const blocks = RUN_SECTIONS.flatMap((heading) => shellBlocks(section(heading)));
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    const script = [
      "set -eo pipefail",
      ...blocks.map((block, i) => `echo "::block ${i}"\n${block}`),
      `echo "::block end"`,
      ...VARS.map((name) => `echo "::var ${name}=\${${name}}"`),
    ].join("\n");

    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const shell = spawn("bash", ["-c", script], { cwd: root, env });
      let stdout = "";
      let stderr = "";
      shell.stdout.on("data", (d) => (stdout += d));
      shell.stderr.on("data", (d) => (stderr += d));
      shell.on("exit", (code) => resolve({ code, stdout, stderr }));
    });
    const failedIn = [...stdout.matchAll(/^::block (\S+)$/gm)].at(-1)?.[1];
    expect(code, `README block ${failedIn} failed:\n${blocks[Number(failedIn)] ?? ""}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`).toBe(
      0,
    );

    const vars = Object.fromEntries([...stdout.matchAll(/^::var (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    for (const name of VARS) expect(vars[name], `${name} set by the README`).toMatch(/^[a-z]+_\w+$/);
    // The admin command used the server's database (through it, for the embedded one) and said so.
    expect(stderr).toMatch(env.DATABASE_URL ? /admin: PostgreSQL / : /admin: embedded database in .*through the server that holds it/);
    expect(stderr).not.toContain("warning");

    // What the walkthrough did, read back through the API (every answer checked against /openapi.json).
    const openapi = new OpenApiChecker(await (await fetch(`${base}/openapi.json`)).json());
    const get = async (p: string, token: string | null = vars.TOKEN!) => {
      const res = await fetch(base + p, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      const text = await res.text();
      const body = text ? JSON.parse(text) : undefined;
      openapi.check("GET", p.split("?")[0]!, res.status, body, text);
      expect(res.status, `GET ${p}: ${text}`).toBe(200);
      return body;
    };
    const { ORG, COLLECTION, SPACE, PAGE, CR, SITE } = vars as Record<(typeof VARS)[number], string>;
    expect((await get(`/v1/spaces/${SPACE}`)).parent).toBe(COLLECTION);
    expect((await get(`/v1/collections/${COLLECTION}`)).organization).toBe(ORG);
    const cr = await get(`/v1/spaces/${SPACE}/change-requests/${CR}`);
    expect(cr.status).toBe("merged");
    // The change request's edit is the space's page now.
    const crPage = await get(`/v1/spaces/${SPACE}/change-requests/${CR}/content/page/${PAGE}`);
    const page = await get(`/v1/spaces/${SPACE}/content/page/${PAGE}`);
    expect(page.markdown).toBe(crPage.markdown);
    expect(stdout).toContain(page.markdown);
    const comments = await get(`/v1/spaces/${SPACE}/change-requests/${CR}/comments`);
    expect(comments.items).toHaveLength(1);
    expect(comments.items[0].body).toEqual({ markdown: expect.any(String) });
    // While it was a draft, the README's listing showed it.
    expect(stdout).toMatch(new RegExp(`^#${cr.number} draft: `, "m"));
    expect(section(RUN_SECTIONS[1]!)).toContain("?status=draft");
    // The site is published, and a visitor (no token) sees the space in its structure.
    expect((await get(`/v1/orgs/${ORG}/sites/${SITE}`)).published).toBe(true);
    const published = await get(`/v1/orgs/${ORG}/sites/${SITE}/published`, null);
    expect(published.structure.structure.map((s: any) => s.space.id)).toEqual([SPACE]);
    expect(stdout).toContain(published.structure.structure[0].urls.published);
    // Its published URL answers the site, read as a visitor: the space's first page.
    expect(stdout).toContain("<title>Getting started · Acme docs</title>");
  });

  it("names the shape a comment's body expects when it is wrong", async () => {
    const { token } = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        const admin = spawn(
          "node_modules/.bin/tsx",
          ["src/cli/admin.ts", "bootstrap", "--email", "you@example.com", "--org", "Acme Docs"],
          { cwd: root, env },
        );
        let out = "";
        admin.stdout.on("data", (d) => (out += d));
        admin.on("exit", (code) => (code === 0 ? resolve(out.trim().split("\n").at(-1)!) : reject(new Error(`admin exited ${code}`))));
      }),
    );
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const org = (await (await fetch(`${base}/v1/orgs`, { headers })).json()).items[0].id;
    const space = await (
      await fetch(`${base}/v1/orgs/${org}/spaces`, { method: "POST", headers, body: JSON.stringify({ title: "Comments" }) })
    ).json();
    const cr = await (await fetch(`${base}/v1/spaces/${space.id}/change-requests`, { method: "POST", headers, body: "{}" })).json();
    for (const body of [{ body: "Looks good" }, { body: { text: "Looks good" } }, { markdown: "Looks good" }, { body: { markdown: 5 } }]) {
      const res = await fetch(`${base}/v1/spaces/${space.id}/change-requests/${cr.id}/comments`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      const answer = await res.json();
      expect(answer.error.message).toMatch(/^body\b/);
      expect(answer.error.message).toContain('(expected {"body":{"markdown":"…"}})');
    }
  });
});
