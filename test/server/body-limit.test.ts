import http from "node:http";
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, processStorage, startServerProcess, type ServerProcess } from "../events/processes.js";

/**
 * Every request body is bounded by MAX_BODY_BYTES (1 MiB by default; the file upload route by
 * its own larger bound): a declared Content-Length past it is answered 413 at once, a streamed
 * body as soon as the count passes it — before parsing and before authentication — in the
 * documented error shape, and the server's memory stays bounded under many such bodies.
 * Run against a server process, so its memory is measured alone.
 */
const MiB = 1024 * 1024;
let server: ServerProcess;
let storage: Awaited<ReturnType<typeof processStorage>>;
let admin: ReturnType<typeof client>;
let boot: { token: string; organization: string; user: string };

beforeAll(async () => {
  storage = await processStorage();
  server = await startServerProcess(storage.env);
  boot = await storage.admin({ command: "bootstrap", email: "ada@acme.test", org: "Acme" });
  admin = client(server.url, boot.token);
}, 120_000);
afterAll(async () => {
  await server?.stop();
  await storage?.cleanup();
});

interface Sent {
  status: number;
  text: string;
  headers: http.IncomingHttpHeaders;
  /** Body bytes the client managed to write before the answer came. */
  written: number;
}

/**
 * Sends `total` bytes of `chunk` repeated as a request body (streamed in chunked encoding, or
 * with a declared Content-Length), stopping when the answer arrives; resolves with the answer.
 */
function send(
  path: string,
  opts: { method?: string; total: number; declare?: boolean; headers?: Record<string, string>; prefix?: string; fill?: string },
): Promise<Sent> {
  const url = new URL(server.url + path);
  const chunk = Buffer.alloc(64 * 1024, opts.fill ?? "x");
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: opts.method ?? "POST",
        headers: { "content-type": "application/json", ...(opts.declare ? { "content-length": String(opts.total) } : {}), ...opts.headers },
      },
      (res) => {
        answered = true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          resolve({ status: res.statusCode!, text, headers: res.headers, written });
          req.destroy();
        });
        res.on("error", reject);
      },
    );
    // Once the server answered and closed, writes fail: that is the point, not an error.
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const pump = () => {
      while (!answered && written < opts.total) {
        let part = chunk.subarray(0, Math.min(chunk.length, opts.total - written));
        if (written === 0 && opts.prefix) part = Buffer.concat([Buffer.from(opts.prefix), part.subarray(opts.prefix.length)]);
        written += part.length;
        if (!req.write(part)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

function errorBody(sent: Sent): { code: number; message: string } {
  return JSON.parse(sent.text).error;
}

/** Resident memory of the server process, in bytes (Linux). */
function rss(pid: number): number {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

describe("request body bound", () => {
  it("answers 413 in the error shape for a declared length past the bound, at once and without a token", async () => {
    const sent = await send("/v1/orgs", { total: 50 * MiB, declare: true });
    expect(sent.status).toBe(413);
    expect(errorBody(sent)).toMatchObject({ code: 413, message: expect.stringContaining("MAX_BODY_BYTES") });
    // Answered before the body was read, let alone authenticated.
    expect(sent.written).toBeLessThan(50 * MiB);
  });

  it("stops a streamed body as soon as it passes the bound, on every kind of route", async () => {
    const routes = [
      "/v1/orgs", // REST, no token
      `/v1/orgs/${boot.organization}/spaces`,
      "/graphql",
      "/sso/saml/nope/acs", // raw route, SAML
      "/integrations/nope/public/hook", // raw route, integration public endpoint
      "/nowhere",
    ];
    for (const path of routes) {
      const sent = await send(path, { total: 20 * MiB, prefix: '{"title":"' });
      expect(sent.status, `${path}: ${sent.text}`).toBe(413);
      expect(errorBody(sent).code).toBe(413);
      expect(sent.written, path).toBeLessThan(20 * MiB);
      // GraphQL clients read `errors`: the same message is there on the GraphQL endpoint.
      if (path === "/graphql")
        expect(JSON.parse(sent.text).errors).toEqual([{ message: errorBody(sent).message, extensions: { code: 413 } }]);
      else expect(JSON.parse(sent.text).errors).toBeUndefined();
    }
  });

  it("answers a commenter's 100 MB comment 413 and stores nothing", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${boot.organization}/spaces`, { title: "Big comments" })).body.id;
    const cr = (await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Review" })).body;
    await storage.admin({ command: "member-add", org: boot.organization, email: "carl@acme.test", role: "comment" });
    const { token } = await storage.admin({ command: "token-create", email: "carl@acme.test" });
    const path = `/v1/spaces/${spaceId}/change-requests/${cr.id}/comments`;
    for (const declare of [true, false]) {
      const sent = await send(path, {
        total: 100 * MiB,
        declare,
        prefix: '{"body":{"markdown":"',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(sent.status).toBe(413);
      expect(errorBody(sent).message).toContain(`${MiB} bytes`);
    }
    // A comment within the bound is taken; only it is stored.
    const commenter = client(server.url, token);
    expect((await commenter.post(path, { body: { markdown: "x".repeat(5_000) } })).status).toBe(201);
    expect((await admin.get(path)).body.count).toBe(1);
  });

  it("gives file uploads their own bound", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${boot.organization}/spaces`, { title: "Files" })).body.id;
    const data = Buffer.alloc(3 * MiB, 7).toString("base64");
    const up = await admin.post(`/v1/spaces/${spaceId}/content/files`, { name: "big.bin", contentType: "application/octet-stream", data });
    expect(up.status, JSON.stringify(up.body)).toBe(201);
    expect(up.body.size).toBe(3 * MiB);
    // The same body elsewhere is past MAX_BODY_BYTES.
    const page = await admin.post(`/v1/spaces/${spaceId}/content/pages`, { title: "x", markdown: data });
    expect(page.status).toBe(413);
    // Past the upload bound (MAX_FILE_BYTES, 10 MiB, base64-encoded, plus MAX_BODY_BYTES).
    const sent = await send(`/v1/spaces/${spaceId}/content/files`, {
      total: 20 * MiB,
      prefix: '{"data":"',
      headers: { authorization: `Bearer ${boot.token}` },
    });
    expect(sent.status).toBe(413);
  });

  it("keeps memory bounded under many concurrent oversized bodies, and keeps answering", { timeout: 180_000 }, async () => {
    const pid = server.child.pid!;
    // Warm up the paths involved, then measure.
    await send("/v1/orgs", { total: 2 * MiB });
    const before = rss(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
    const started = Date.now();
    try {
      const rounds = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          send(i % 2 ? "/v1/orgs" : "/graphql", { total: 200 * MiB, declare: i % 4 === 0, prefix: '{"query":"' }),
        ),
      );
      expect(rounds.map((r) => r.status)).toEqual(Array(20).fill(413));
    } finally {
      clearInterval(sampler);
    }
    const seconds = (Date.now() - started) / 1000;
    peak = Math.max(peak, rss(pid));
    const growth = peak - before;
    console.log(
      `[body-limit] server RSS before ${(before / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB, growth ${(growth / MiB).toFixed(1)} MiB, ${seconds.toFixed(1)} s`,
    );
    expect(growth).toBeLessThan(200 * MiB);
    const orgs = await admin.get("/v1/orgs");
    expect(orgs.status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });
});
