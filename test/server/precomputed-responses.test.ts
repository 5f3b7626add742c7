import crypto from "node:crypto";
import http from "node:http";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { fixedAnswer } from "../../src/server/precomputed-responses.js";

/**
 * Answers whose bytes are fixed (src/server/precomputed-responses.ts): the OpenAPI document, the API
 * reference and its Swagger UI files, the dashboard's files, the icon. Each has a strong ETag of
 * its bytes and answers 304 to it; HEAD is GET without the body; compressed codings decode to the
 * same bytes, under the weak tag, whichever the client prefers. Raw node:http requests, so that
 * the bytes checked are the ones sent.
 */
let t: TestGateway;

beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t?.close());

const FIXED = [
  "/openapi.json",
  "/v1/openapi.json",
  "/docs",
  "/docs/assets/swagger-ui.css",
  "/docs/assets/swagger-ui-bundle.js",
  "/dashboard",
  "/dashboard/app.js",
  "/dashboard/uplot.css",
  "/favicon.ico",
];

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function request(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${t.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

function decoded(raw: Raw): Buffer {
  const coding = raw.headers["content-encoding"];
  if (coding === "br") return zlib.brotliDecompressSync(raw.body);
  if (coding === "gzip") return zlib.gunzipSync(raw.body);
  if (coding === "deflate") return zlib.inflateSync(raw.body);
  return raw.body;
}

describe("fixed answers", () => {
  it("carry the strong ETag of their bytes, answer 304 to it, and HEAD without a body", async () => {
    for (const path of FIXED) {
      const plain = await request(path);
      expect(plain.status, path).toBe(200);
      expect(plain.headers["content-encoding"], path).toBeUndefined();
      expect(Number(plain.headers["content-length"]), path).toBe(plain.body.length);
      const etag = `"${crypto.createHash("sha1").update(plain.body).digest("base64url")}"`;
      expect(plain.headers.etag, path).toBe(etag);
      for (const tag of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const same = await request(path, { "if-none-match": tag });
        expect(same.status, `${path} ${tag}`).toBe(304);
        expect(same.body.length).toBe(0);
        // The validator, without the representation's type and length (as REST's 304s).
        expect(same.headers.etag).toBe(etag);
        expect(same.headers["content-type"], path).toBeUndefined();
      }
      expect((await request(path, { "if-none-match": '"other"' })).status).toBe(200);
      const head = await request(path, {}, "HEAD");
      expect(head.status, path).toBe(200);
      expect(head.body.length).toBe(0);
      expect(head.headers.etag).toBe(etag);
      expect(head.headers["content-length"]).toBe(plain.headers["content-length"]);
    }
  });

  it("send the coding the client prefers, decoding to the same bytes under the weak tag", async () => {
    for (const path of ["/openapi.json", "/v1/openapi.json", "/docs/assets/swagger-ui-bundle.js", "/dashboard/app.js"]) {
      const plain = await request(path);
      const cases: [string, string][] = [
        ["gzip, deflate, br", "br"],
        ["br;q=0.5, gzip", "gzip"],
        ["gzip;q=0.9, br;q=0.1", "gzip"],
        ["deflate", "deflate"],
        ["*", "br"],
        ["identity", "identity"],
      ];
      for (const [accept, coding] of cases) {
        const coded = await request(path, { "accept-encoding": accept });
        expect(coded.status, `${path} ${accept}`).toBe(200);
        expect(coded.headers["content-encoding"] ?? "identity", `${path} ${accept}`).toBe(coding);
        expect(decoded(coded).equals(plain.body), `${path} ${accept}`).toBe(true);
        expect(coded.headers.vary?.toLowerCase()).toContain("accept-encoding");
        expect(coded.headers.etag).toBe(coding === "identity" ? plain.headers.etag : `W/${plain.headers.etag}`);
        expect((await request(path, { "accept-encoding": accept, "if-none-match": coded.headers.etag! })).status).toBe(304);
      }
    }
  });

  it("include GraphiQL (GET /graphql for a browser): the same page, encoded once; GraphQL over GET unchanged", async () => {
    const html = { accept: "text/html,application/xhtml+xml" };
    const page = await request("/graphql", html);
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body.toString("utf8")).toContain("Documentation API — GraphiQL");
    expect(page.headers.etag).toBe(`"${crypto.createHash("sha1").update(page.body).digest("base64url")}"`);
    expect((await request("/graphql", { ...html, "if-none-match": page.headers.etag! })).status).toBe(304);
    const coded = await request("/graphql", { ...html, "accept-encoding": "br" });
    expect(coded.headers["content-encoding"]).toBe("br");
    expect(decoded(coded).equals(page.body)).toBe(true);
    // Not a browser: GraphQL itself answers (here: no token).
    const get = await request("/graphql?query=%7B__typename%7D", { accept: "application/json" });
    expect(get.status).toBe(401);
    expect(JSON.parse(get.body.toString()).errors[0].message).toMatch(/^Authentication required/);
  });

  it("are made once, by the first request, whichever waits (a page made lazily: GraphiQL's), and again after a failure", async () => {
    let calls = 0;
    let fail = true;
    const answer = fixedAnswer(
      async () => {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (fail) throw new Error("not yet");
        return "made";
      },
      { "content-type": "text/plain; charset=utf-8" },
    );
    const first = await Promise.allSettled(Array.from({ length: 5 }, () => answer(new Request("http://x/"))));
    expect(first.every((r) => r.status === "rejected")).toBe(true);
    expect(calls).toBe(1);
    fail = false;
    const answers = await Promise.all(Array.from({ length: 5 }, () => answer(new Request("http://x/"))));
    expect(calls).toBe(2);
    for (const a of answers) expect(await a.text()).toBe("made");
    expect((await answer(new Request("http://x/"))).headers.get("etag")).toBe(answers[0]!.headers.get("etag"));
    expect(calls).toBe(2);
  });

  it("give clients asking at once for a coding not made yet the same bytes", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => request("/dashboard/uplot.css", { "accept-encoding": "gzip" })));
    const first = answers[0]!;
    expect(first.headers["content-encoding"]).toBe("gzip");
    for (const answer of answers) expect(answer.body.equals(first.body)).toBe(true);
  });
});
