import http from "node:http";
import zlib from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, createSpace, type Admin } from "../helpers/fixtures.js";
import { sseSubscribe } from "../helpers/graphql-ws.js";

/**
 * Answers are compressed for clients that accept it, and only for them: the bytes as sent, read
 * with node:http (fetch would decode them), decoded here and compared with the plain answer.
 */
let t: TestGateway;
let admin: Admin;
let org: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, org } = await acmeDocs(t));
  for (let i = 0; i < 12; i++) await createSpace(admin, org, { title: `Compressed ${i} ✓` });
});
afterAll(() => t?.close());

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

function raw(path: string, headers: Record<string, string>, method = "GET", body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${admin.token}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function decoded(answer: Raw): string {
  const coding = answer.headers["content-encoding"];
  if (coding === "gzip") return zlib.gunzipSync(answer.bytes).toString("utf8");
  if (coding === "br") return zlib.brotliDecompressSync(answer.bytes).toString("utf8");
  if (coding === "deflate") return zlib.inflateSync(answer.bytes).toString("utf8");
  return answer.bytes.toString("utf8");
}

describe("compressed answers", () => {
  it("a REST list: gzip or br as asked, the same JSON as the plain answer under its ETag made weak, and a 304 to either tag", async () => {
    const path = `/v1/orgs/${org}/spaces?limit=50`;
    const plain = await raw(path, {});
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(Number(plain.headers["content-length"])).toBe(plain.bytes.length);
    expect(plain.bytes.length).toBeGreaterThan(2048);
    expect(plain.headers.vary).toMatch(/accept-encoding/i);

    for (const [accept, coding] of [
      ["gzip", "gzip"],
      ["br", "br"],
      ["deflate", "deflate"],
      ["gzip;q=0.5, br;q=1", "br"],
      ["identity;q=1, gzip;q=0", undefined],
      ["compress", undefined],
    ] as const) {
      const answer = await raw(path, { "accept-encoding": accept });
      expect(answer.status, accept).toBe(200);
      expect(answer.headers["content-encoding"], accept).toBe(coding);
      expect(JSON.parse(decoded(answer)), accept).toEqual(JSON.parse(plain.bytes.toString("utf8")));
      expect(answer.headers.etag, accept).toBe(coding ? `W/${plain.headers.etag}` : plain.headers.etag);
      if (coding) expect(answer.bytes.length, accept).toBeLessThan(plain.bytes.length / 3);
    }
    expect(plain.headers.etag).toMatch(/^"/);
    for (const [accept, tag] of [
      ["gzip", plain.headers.etag!],
      ["gzip", `W/${plain.headers.etag}`],
      ["identity", `W/${plain.headers.etag}`],
    ]) {
      const notModified = await raw(path, { "accept-encoding": accept, "if-none-match": tag });
      expect(notModified.status, `${accept} ${tag}`).toBe(304);
      expect(notModified.bytes.length).toBe(0);
    }
  });

  it("GraphQL answers and the OpenAPI document too; a small answer is sent as it is", async () => {
    const query = JSON.stringify({
      query: `query O($id: String!) { organization(organizationId: $id) { spaces(first: 50) { edges { node { id title emoji visibility createdAt updatedAt } } } } }`,
      variables: { id: org },
    });
    const graph = await raw("/graphql", { "accept-encoding": "gzip", "content-type": "application/json" }, "POST", query);
    expect(graph.status).toBe(200);
    expect(graph.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(decoded(graph)).data.organization.spaces.edges.length).toBeGreaterThanOrEqual(12);

    const doc = await raw("/openapi.json", { "accept-encoding": "br" });
    expect(doc.headers["content-encoding"]).toBe("br");
    expect(JSON.parse(decoded(doc)).paths).toBeTruthy();

    const small = await raw(`/v1/spaces/spc_missing`, { "accept-encoding": "gzip" });
    expect(small.status).toBe(404);
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(small.bytes.toString("utf8")).error.code).toBe(404);
  });

  it("odd Accept-Encoding headers, listed and generated: an answer the client can read, never a 5xx", async () => {
    // A list (compressed by the middleware) and the OpenAPI document (a fixed answer, its codings
    // made ahead and chosen by the same negotiator: server/precomputed-responses.ts).
    const paths = [`/v1/orgs/${org}/spaces?limit=50`, "/openapi.json"];
    const plain = new Map<string, unknown>();
    for (const path of paths) plain.set(path, JSON.parse((await raw(path, {})).bytes.toString("utf8")));
    const readable = async (accept: string) => {
      for (const path of paths) {
        const answer = await raw(path, { "accept-encoding": accept });
        expect(answer.status, `${path} ${accept.slice(0, 40)}`).toBeLessThan(500);
        if (answer.status === 200) expect(JSON.parse(decoded(answer)), `${path} ${accept.slice(0, 40)}`).toEqual(plain.get(path));
      }
    };
    for (const accept of [
      "*",
      "*;q=0",
      "gzip;q=abc, br;q=NaN",
      "GZIP",
      " br , gzip ",
      ",,,",
      "x".repeat(8000),
      "identity;q=0, *;q=0",
      "gzip;q=0.000001",
      "\u00e9",
    ]) {
      await readable(accept);
    }
    // Lists of codings, known or not, with any q-value, separated and spaced in any way; and any
    // text a header may carry (visible Latin-1, spaces and tabs).
    const coding = fc.constantFrom("gzip", "br", "deflate", "identity", "*", "compress", "x-gzip", "GZIP", "zstd", "");
    const q = fc.oneof(
      fc.constant(""),
      fc.double({ noNaN: false }).map((n) => `;q=${n}`),
      fc.string({ maxLength: 6 }).map((t) => `;q=${t.replace(/[^\x20-\x7e]/g, "")}`),
    );
    const listed = fc
      .array(fc.tuple(coding, q), { maxLength: 6 })
      .chain((items) => fc.constantFrom(",", ", ", " ,", ",,").map((sep) => items.map(([c, v]) => c + v).join(sep)));
    const text = fc
      .string({
        unit: fc
          .integer({ min: 0x20, max: 0xff })
          .filter((c) => c !== 0x7f)
          .map((c) => String.fromCharCode(c)),
        maxLength: 200,
      })
      .map((t) => t.trim());
    await fc.assert(fc.asyncProperty(fc.oneof(listed, text), readable), { numRuns: Number(process.env.COMPRESSION_RUNS || 150) });
  });

  it("a client that leaves in the middle of a compressed answer costs nothing to the next", async () => {
    for (let i = 0; i < 20; i++) {
      await new Promise<void>((resolve) => {
        const req = http.get(`${t.url}/openapi.json`, { headers: { "accept-encoding": i % 2 ? "gzip" : "br" } }, (res) => {
          res.once("data", () => {
            req.destroy();
            resolve();
          });
        });
        req.on("error", () => resolve());
      });
    }
    const doc = await raw("/openapi.json", { "accept-encoding": "gzip" });
    expect(doc.status).toBe(200);
    expect(JSON.parse(decoded(doc)).paths).toBeTruthy();
  });

  it("a client without Accept-Encoding gets the same Vary as one with it (the middleware is skipped for it, not its Vary)", async () => {
    const space = await createSpace(admin, org, { title: "Varied" });
    const paths = [
      `/v1/orgs/${org}/spaces?limit=50`,
      `/v1/spaces/${space.id}`,
      "/v1/spaces/spc_missing",
      "/openapi.json",
      "/docs",
      "/favicon.ico",
      "/healthz",
    ];
    for (const path of paths) {
      const without = await raw(path, {});
      const withIt = await raw(path, { "accept-encoding": "gzip" });
      expect(without.headers["content-encoding"], path).toBeUndefined();
      expect(without.headers.vary, path).toBe(withIt.headers.vary);
    }
    expect((await raw(`/v1/orgs/${org}/spaces?limit=50`, {})).headers.vary).toBe("Accept-Encoding");
    // An answer that already varies keeps its own list, once.
    const gql = await raw(
      "/graphql",
      { "content-type": "application/json" },
      "POST",
      JSON.stringify({ query: "{ organizations { count } }" }),
    );
    expect(gql.headers.vary?.toLowerCase().match(/accept-encoding/g)?.length ?? 0).toBeLessThanOrEqual(1);
    // No body, nothing to vary: a 204.
    const deleted = await raw(`/v1/spaces/${space.id}`, {}, "DELETE");
    expect(deleted.status).toBe(204);
    expect(deleted.headers.vary).toBeUndefined();
  });

  it("never an event stream: its events arrive as they are sent", async () => {
    const space = await createSpace(admin, org, { title: "Streamed" });
    const subscription = "subscription S($id: String!) { spaceUpdated(spaceId: $id) { id title } }";
    const stream = await sseSubscribe(t.url, admin.token, subscription, { id: space.id });
    try {
      expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
      // yoga marks it "none" for the proxies on the way.
      expect(stream.response.headers.get("content-encoding") ?? "none").toBe("none");
      setTimeout(() => void admin.patch(`/v1/spaces/${space.id}`, { title: "Streamed again" }), 200);
      const event = await stream.firstEventWith("spaceUpdated");
      expect(event.data.spaceUpdated.title).toBe("Streamed again");
    } finally {
      stream.close();
    }
  });
});
