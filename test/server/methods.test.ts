import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, type Admin } from "../helpers/fixtures.js";
import { fuzzTargets } from "../helpers/hostile.js";
import { routeTable } from "../../src/rest/table.js";

/**
 * Methods on /v1 (RFC 9110 9.1, 9.3.2, 15.5.6): every GET route serves HEAD — the GET's status
 * and headers (ETag and length included), no body, from the response cache as well — and a path
 * that other methods serve answers 405 with `allow` naming exactly the methods that are served;
 * OPTIONS names the same (RFC 9110 9.3.7), and a CORS preflight allows only those.
 */
let t: TestGateway;
let admin: Admin;
let org: string;
let ids: Record<string, string>;

beforeAll(async () => {
  t = await startGateway({ corsOrigins: ["https://docs.example.test"] });
  ({ admin, org } = await acmeDocs(t));
  ids = await fuzzTargets(admin);
}, 180_000);
afterAll(() => t?.close());

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;
const pathOf = (template: string) =>
  `/v1${template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? `p_${name}`))}`;

async function send(method: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(t.url + path, { method, headers: { "accept-encoding": "identity", ...headers } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe("HEAD on REST routes", () => {
  it("answers every GET route with the GET's status and headers, and no body", async () => {
    const auth = { authorization: `Bearer ${admin.token}` };
    let answered = 0;
    for (const route of routeTable.filter((r) => r.method === "GET")) {
      const path = pathOf(route.path);
      // HEAD first (nothing kept yet), then GET, then HEAD again (the answer the GET kept).
      const before = await send("HEAD", path, auth);
      const get = await send("GET", path, auth);
      const after = await send("HEAD", path, auth);
      for (const head of [before, after]) {
        expect(head.status, `HEAD ${route.path}`).toBe(get.status);
        expect(head.text).toBe("");
        for (const name of ["content-type", "etag", "content-length"])
          expect(head.headers.get(name), `${name} of HEAD ${route.path}`).toBe(get.headers.get(name));
      }
      if (get.status === 200) answered++;
    }
    expect(answered).toBeGreaterThan(40);
  });

  it("answers 304 to a matching If-None-Match, and sends no body bytes on a kept-alive connection", async () => {
    const path = `/v1/orgs/${org}/spaces`;
    const get = await send("GET", path, { authorization: `Bearer ${admin.token}` });
    const etag = get.headers.get("etag")!;
    expect((await send("HEAD", path, { authorization: `Bearer ${admin.token}`, "if-none-match": etag })).status).toBe(304);

    // A HEAD then a GET on one connection: the GET's answer starts right after the HEAD's headers.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
      const chunks: Buffer[] = [];
      const request = (method: string, close: boolean) =>
        `${method} ${path} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${admin.token}\r\n${close ? "Connection: close\r\n" : ""}\r\n`;
      socket.on("connect", () => socket.write(request("HEAD", false) + request("GET", true)));
      socket.on("data", (chunk) => chunks.push(chunk));
      socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      socket.on("error", reject);
    });
    const answers = raw.split(/(?=HTTP\/1\.1 )/);
    expect(answers).toHaveLength(2);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /);
    expect(answers[0]!.endsWith("\r\n\r\n")).toBe(true);
    const [, body] = answers[1]!.split("\r\n\r\n");
    expect(answers[1]).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(body!).items.length).toBeGreaterThan(0);
  });
});

describe("405 on /v1", () => {
  it("answers a method a route's path does not serve with 405 and allow listing exactly those it serves", async () => {
    // A bad token: a served method answers 401 before anything runs, the others 405.
    const auth = { authorization: "Bearer dapi_not_a_token" };
    const templates = [...new Set(routeTable.map((r) => r.path))];
    for (const template of templates) {
      const path = pathOf(template);
      const documented = new Set<string>(routeTable.filter((r) => r.path === template).map((r) => r.method));
      if (documented.has("GET")) documented.add("HEAD");
      const answers = new Map<string, Awaited<ReturnType<typeof send>>>();
      for (const method of METHODS) answers.set(method, await send(method, path, auth));
      const served = METHODS.filter((m) => answers.get(m)!.status !== 405);
      for (const method of documented) expect(served, `${method} ${template}`).toContain(method);
      for (const method of METHODS) {
        const answer = answers.get(method)!;
        if (served.includes(method)) {
          expect(answer.status, `${method} ${template}`).toBe(401);
          continue;
        }
        expect(answer.headers.get("allow"), `${method} ${template}`).toBe([...served, "OPTIONS"].join(", "));
        if (method !== "HEAD")
          expect(JSON.parse(answer.text)).toEqual({ error: { code: 405, message: `Method ${method} is not allowed on ${path}.` } });
      }
    }
    expect(templates.length).toBeGreaterThan(80);
  });

  it("answers 405 on the OpenAPI document's path for anything but GET and HEAD, and 404 where no route is", async () => {
    const post = await send("POST", "/v1/openapi.json");
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    const head = await send("HEAD", "/v1/openapi.json");
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    const missing = await send("GET", "/v1/no-such-thing", { authorization: `Bearer ${admin.token}` });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("allow")).toBeNull();
  });
});

describe("OPTIONS", () => {
  it("names the methods of every route's path, as its 405 does, and a preflight allows only those", async () => {
    const templates = [...new Set(routeTable.map((r) => r.path))];
    for (const template of templates) {
      const path = pathOf(template);
      const documented = new Set<string>(routeTable.filter((r) => r.path === template).map((r) => r.method));
      if (documented.has("GET")) documented.add("HEAD");
      const allow = [...METHODS.filter((m) => documented.has(m)), "OPTIONS"].join(", ");
      // The same as the 405 of a method it does not serve.
      const unserved = METHODS.find((m) => !documented.has(m));
      if (unserved) expect((await send(unserved, path)).headers.get("allow"), template).toBe(allow);
      const options = await send("OPTIONS", path);
      expect(options.status, template).toBe(204);
      expect(options.headers.get("allow"), template).toBe(allow);
      expect(options.text).toBe("");
      const preflight = await send("OPTIONS", path, { origin: "https://docs.example.test", "access-control-request-method": "PUT" });
      expect(preflight.status, template).toBe(204);
      expect(preflight.headers.get("access-control-allow-methods"), template).toBe(allow);
      expect(preflight.headers.get("access-control-allow-origin"), template).toBe("https://docs.example.test");
    }
  });

  it("names GraphQL's methods and a raw route's, and answers 404 where no route is, a preflight too", async () => {
    expect((await send("OPTIONS", "/graphql")).headers.get("allow")).toBe("GET, POST, OPTIONS");
    expect((await send("OPTIONS", "/readyz")).headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect((await send("OPTIONS", "/v1/openapi.json")).headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    expect((await send("OPTIONS", "/v1/orgs/")).headers.get("allow")).toBe((await send("OPTIONS", "/v1/orgs")).headers.get("allow"));
    for (const path of ["/v1/no-such-thing", "/no-such-thing", "/v1/spaces/x/no-such-thing", "/v1", "/v1/"]) {
      for (const headers of [{}, { origin: "https://docs.example.test", "access-control-request-method": "GET" }] as Record<
        string,
        string
      >[]) {
        const answer = await send("OPTIONS", path, headers);
        expect(answer.status, path).toBe(404);
        expect(answer.headers.get("allow"), path).toBeNull();
        expect(answer.headers.get("access-control-allow-methods"), path).toBeNull();
        // The 404 that GET gets there.
        const get = await send("GET", path, { authorization: `Bearer ${admin.token}` });
        expect(get.status, path).toBe(404);
        expect(JSON.parse(answer.text), path).toEqual(JSON.parse(get.text.replace("GET", "OPTIONS")));
      }
    }
  });
});
