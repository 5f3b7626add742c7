import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, type Admin } from "../helpers/fixtures.js";

/**
 * Bodies are read whole before anything else runs, authentication included; what all requests
 * under way hold together is bounded by MAX_BUFFERED_BODY_BYTES: past it a body is answered 503
 * with Retry-After, while requests without a body are served, and the budget comes back as
 * answers finish or clients go away. Here 64 KiB per body and 200 KiB in all.
 */
const KiB = 1024;
let t: TestGateway;
let admin: Admin;

beforeAll(async () => {
  t = await startGateway({ maxBodyBytes: 64 * KiB, maxBufferedBodyBytes: 200 * KiB });
  ({ admin } = await acmeDocs(t));
});
afterAll(() => t?.close());

/** A POST whose body is sent in part (`bytes`) and held open; `answer` resolves if the server answers early. */
function holding(bytes: number) {
  const url = new URL(`${t.url}/v1/orgs/${admin.organization}/collections`);
  let settle: (value: { status: number; text: string; headers: http.IncomingHttpHeaders }) => void;
  const answer = new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>((resolve) => (settle = resolve));
  const req = http.request(
    {
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${admin.token}` },
    },
    (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => settle({ status: res.statusCode!, text, headers: res.headers }));
    },
  );
  req.on("error", () => undefined);
  req.write(`{"title":"${"x".repeat(bytes - 11)}`);
  return { answer, end: () => req.end('"}'), abort: () => req.destroy() };
}

const post = (body: string) =>
  fetch(`${t.url}/v1/orgs/${admin.organization}/collections`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json" },
    body,
  });

describe("the budget of bodies held at once", () => {
  it("answers 503 with Retry-After past it, serves requests without a body, and gets it back when clients leave", async () => {
    const held = [holding(60 * KiB), holding(60 * KiB), holding(60 * KiB)];
    // Once the server holds the three (180 KiB), a fourth body of 60 KiB does not fit.
    let refused: { status: number; text: string; headers: http.IncomingHttpHeaders } | undefined;
    for (let i = 0; i < 100 && !refused; i++) {
      const fourth = holding(60 * KiB);
      const early = await Promise.race([fourth.answer, new Promise<undefined>((resolve) => setTimeout(resolve, 50))]);
      fourth.abort();
      if (early?.status === 503) refused = early;
    }
    expect(refused?.status).toBe(503);
    expect(refused!.headers["retry-after"]).toBe("1");
    expect(JSON.parse(refused!.text).error.message).toContain("MAX_BUFFERED_BODY_BYTES");
    // An answer the published document lists for the operation, in its error shape.
    t.openapi.check("POST", `/v1/orgs/${admin.organization}/collections`, 503, JSON.parse(refused!.text), refused!.text);
    expect((await admin.get("/v1/orgs")).status).toBe(200);

    // The clients that held bodies leave: their bytes come back.
    for (const h of held) h.abort();
    let accepted = 0;
    for (let i = 0; i < 100 && accepted === 0; i++) {
      const res = await post(JSON.stringify({ title: "T", padding: "x".repeat(60 * KiB) }));
      if (res.status !== 503) accepted = res.status;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(accepted).toBe(400); // read and parsed: `padding` is not a field of the body
  });

  it("answers a body past its own bound 413, as the published document lists for every operation that takes a body", async () => {
    const res = await post(JSON.stringify({ title: "T", padding: "x".repeat(70 * KiB) }));
    const text = await res.text();
    expect(res.status).toBe(413);
    t.openapi.check("POST", `/v1/orgs/${admin.organization}/collections`, 413, JSON.parse(text), text);
    const doc = await (await fetch(`${t.url}/openapi.json`)).json();
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        expect(Boolean(op.responses["413"]), `${method} ${path}`).toBe(["post", "put", "patch"].includes(method));
      }
    }
  });

  it("gives the budget back when answers finish: bodies one after another never run out", async () => {
    for (let i = 0; i < 12; i++) {
      const res = await post(JSON.stringify({ title: `Collection ${i}`.padEnd(40, "."), parent: null }));
      expect(res.status).toBe(201);
      const big = await post(JSON.stringify({ title: "T", padding: "x".repeat(50 * KiB) }));
      expect(big.status).toBe(400);
    }
    // A body held to the end is answered too.
    const slow = holding(30 * KiB);
    slow.end();
    expect((await slow.answer).status).toBe(400); // a 30 KiB title is past the title's bound
  });
});
