import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, created, type Admin } from "../helpers/fixtures.js";
import { MAX_ERROR_MESSAGE, errorsLogged, fuzzTargets, hostileSegment, hostileString, hostileValue } from "../helpers/hostile.js";
import { firstOutcome, wsClient } from "../helpers/graphql-ws.js";

vi.setConfig({ testTimeout: 600_000, hookTimeout: 120_000 });

/**
 * A schema-driven property test over the server's own /openapi.json: for every documented
 * operation, fast-check generates path ids, query parameters and JSON bodies from the operation's
 * schema, mixed with hostile classes — NUL characters, lone UTF-16 surrogates, empty ids,
 * Object.prototype's member names, deep nesting, huge numbers, huge strings, wrong types,
 * malformed JSON, trailing slashes. No answer may be a 5xx; every 4xx carries the documented
 * error body with a message; nothing is logged as an error meanwhile (a client's mistake is not
 * a fault); and afterwards the stored data is intact.
 *
 * FUZZ_RUNS (default 5,008 requests per run, so both databases of a CI pass make 10,000+) and
 * FUZZ_SEED (to replay a failure) tune it. DELETE operations only get hostile ids: they would
 * remove the objects the other calls work on.
 */
const RUNS = Number(process.env.FUZZ_RUNS || 5_008);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const BATCH = 16; // requests sent concurrently by one property run

let t: TestGateway;
let admin: Admin;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  Object.assign(ids, await fuzzTargets(admin));
});
afterAll(() => t?.close());

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  $ref?: string;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  format?: string;
  maxLength?: number;
  additionalProperties?: boolean | Schema;
};

interface FuzzRequest {
  method: string;
  path: string;
  /** A raw body (already JSON text, or deliberately malformed, or bytes that are not UTF-8), or none. */
  body?: string | Uint8Array;
  /** Why the request must be refused (4xx) whatever else it holds: input the server may not read as text. */
  mustRefuse?: string;
}

/** Bytes that are not UTF-8 on their own: Latin-1, lone continuation bytes, truncated and overlong sequences, an encoded surrogate. */
const notUtf8 = fc
  .constantFrom([0xe9], [0x80], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xff])
  .map((b) => Buffer.from(b));

// ─── Values from the schema ──────────────────────────────────────────────────────────────────

let doc: any;
const resolve = (s: Schema | undefined): Schema | undefined =>
  s?.$ref
    ? resolve(
        s.$ref
          .split("/")
          .slice(1)
          .reduce((o: any, k) => o?.[k], doc),
      )
    : s;

function typeOf(schema: Schema | undefined): string | undefined {
  return Array.isArray(schema?.type) ? schema!.type.find((x) => x !== "null") : schema?.type;
}

/** A value that fits `schema` (roughly: strings of its length, its enum, its object shape). */
function fromSchema(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  schema = resolve(schema);
  if (!schema) return fc.jsonValue({ maxDepth: 2 });
  const variants = schema.oneOf ?? schema.anyOf ?? schema.allOf;
  if (variants?.length) return fc.oneof(...variants.map((v) => fromSchema(v, depth)));
  if (schema.enum?.length) return fc.constantFrom(...schema.enum);
  switch (typeOf(schema)) {
    case "string":
      if (schema.format === "uri")
        return fc.constantFrom("http://127.0.0.1:1/fuzz", "https://127.0.0.1:1/x", "not a uri", "ftp://127.0.0.1/x");
      if (schema.format === "date-time") return fc.constantFrom("2026-01-01T00:00:00.000Z", "yesterday", "2026-13-45T99:99:99Z");
      if (schema.format === "email") return fc.constantFrom("fuzz@example.test", "not-an-email", "@");
      return fc.oneof(fc.string({ maxLength: Math.min(schema.maxLength ?? 40, 60) }), fc.constantFrom(...Object.values(ids)));
    case "integer":
      return fc.oneof(fc.integer({ min: -5, max: 1005 }), fc.integer());
    case "number":
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -5, max: 100 }));
    case "boolean":
      return fc.boolean();
    case "array":
      return depth > 3 ? fc.constant([]) : fc.array(fromSchema(schema.items, depth + 1), { maxLength: 3 });
    case "object":
      if (depth > 3 || !schema.properties)
        return fc.jsonValue({ maxDepth: 2 }).map((v) => (v && typeof v === "object" && !Array.isArray(v) ? v : { value: v }));
      return objectFromSchema(schema, depth);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** An object of the schema's properties: each present or not, each fitting, hostile, or null. */
function objectFromSchema(schema: Schema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  const fields = Object.fromEntries(
    properties.map(([name, prop]) => [
      name,
      fc.oneof(
        { weight: 5, arbitrary: fromSchema(prop, depth + 1) },
        { weight: 3, arbitrary: hostileValue },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
    ]),
  );
  const base = fc.record(fields, { requiredKeys: [] }) as fc.Arbitrary<Record<string, unknown>>;
  return fc
    .tuple(base, fc.option(fc.tuple(fc.constantFrom("extra", "__proto__", "constructor", "\u0000", ""), hostileValue), { freq: 5 }))
    .map(([obj, extra]) => {
      if (!extra) return obj;
      // Defined as an own property: `obj["__proto__"] = …` would set the prototype instead.
      return Object.defineProperty({ ...obj }, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true });
    });
}

// ─── Requests of an operation ────────────────────────────────────────────────────────────────

/**
 * A list's `page` as the server writes it (the base64url of a JSON array of the last item's sort
 * keys) but holding values a client made up: hostile values, dates of any year or none, objects
 * with a query operator's name — decoded, each would reach the page's query.
 */
const cursorValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileValue,
  fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => ({ d: new Date(ms).toISOString() })),
  hostileString.filter((v) => v.length < 200).map((d) => ({ d })),
  fc.dictionary(fc.constantFrom("d", "not", "in", "gt", "equals", "contains", "__proto__"), hostileValue, { minKeys: 1, maxKeys: 2 }),
  fc.string(),
);
const forgedCursor = fc
  .array(cursorValue, { minLength: 1, maxLength: 3 })
  .map((values) => Buffer.from(JSON.stringify(values) ?? "[]").toString("base64url"))
  .filter((page) => page.length < 20_000);

function requestsOf(template: string, method: string, op: any): fc.Arbitrary<FuzzRequest> {
  const verb = method.toUpperCase();
  const params: string[] = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const realSegment = (name: string) => fc.constant(encodeURIComponent(ids[name] ?? "nope"));
  const segment = (name: string) =>
    verb === "DELETE" ? hostileSegment : fc.oneof({ weight: 6, arbitrary: realSegment(name) }, { weight: 4, arbitrary: hostileSegment });
  const path = fc.tuple(fc.tuple(...params.map(segment)), fc.integer({ min: 0, max: 9 })).map(([values, slash]) => {
    let i = 0;
    const p = template.replace(/\{[^}]+\}/g, () => values[i++]!);
    return slash === 0 ? `${p}/` : p;
  });
  const queryParams = (op.parameters ?? []).filter((p: any) => p.in === "query");
  const query = fc
    .tuple(
      ...queryParams.map((p: any) =>
        fc.option(
          fc.oneof(
            fromSchema(p.schema).map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v))),
            hostileString.filter((v) => v.length < 10_000),
            fc.constantFrom("1e309", "99999999999999999999", "-1", "", "true", "%00"),
            ...(p.name === "page" ? [forgedCursor, forgedCursor] : []),
          ),
          { freq: 2 },
        ),
      ),
    )
    .map((values) => {
      const search = new URLSearchParams();
      values.forEach((v, i) => {
        if (v !== null && v !== undefined) search.append(queryParams[i].name, String(v));
      });
      return search.toString();
    });
  // Now and then a value as sent raw, its percent-encoding possibly not UTF-8 (`%E9`, `%`, `%C0%AF`).
  const rawQuery = fc.option(fc.tuple(fc.constantFrom(...queryParams.map((p: any) => p.name as string), "x"), hostileSegment), { freq: 4 });
  const fullQuery = fc.tuple(query, rawQuery).map(([encoded, raw]) => {
    const parts = [encoded, raw ? `${raw[0]}=${raw[1]}` : ""].filter(Boolean);
    let undecodable = false;
    try {
      if (raw) decodeURIComponent(raw[1]);
    } catch {
      undecodable = true;
    }
    return { search: parts.length ? `?${parts.join("&")}` : "", undecodable };
  });
  const schema = resolve(op.requestBody?.content?.["application/json"]?.schema);
  const body: fc.Arbitrary<string | Uint8Array | undefined> =
    verb === "GET" || verb === "DELETE"
      ? fc.constant(undefined)
      : fc.oneof(
          // A body whose JSON holds bytes that are not UTF-8 inside a string.
          {
            weight: 1,
            arbitrary: fc
              .tuple(
                (schema?.properties ? objectFromSchema(schema) : fc.constant({})).map((o) => JSON.stringify({ ...o, title: "@" })),
                notUtf8,
              )
              .map(([json, bytes]) => {
                const at = json.indexOf('"@"') + 1;
                return Buffer.concat([Buffer.from(json.slice(0, at)), bytes, Buffer.from(json.slice(at + 1))]);
              }),
          },
          { weight: 8, arbitrary: (schema?.properties ? objectFromSchema(schema) : fc.constant({})).map((o) => JSON.stringify(o)) },
          { weight: 1, arbitrary: hostileValue.map((v) => JSON.stringify(v) ?? "null") },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              "{",
              "[]",
              "null",
              '"text"',
              "42",
              "",
              '{"a":1e400}',
              '{"__proto__":{"polluted":true}}',
              "[".repeat(100_000) + "]".repeat(100_000),
              // 5,000 levels deep, under any field name the schema knows and in free-form places.
              `{"configuration":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`,
              `{"title":${"[".repeat(5000)}${"]".repeat(5000)}}`,
              "\u0000",
              '{"title":"\\u0000"}',
            ),
          },
        );
  // A GET is sent as HEAD too: the same route, its answer without the body; and as OPTIONS, which
  // names the path's methods (answered before the request is read: a 204 whatever it holds), or
  // is the 404 of a path no route serves.
  const methods = verb === "GET" ? fc.constantFrom("GET", "GET", "GET", "HEAD", "OPTIONS") : fc.constant(verb);
  return fc.record({ method: methods, path, query: fullQuery, body }).map(({ method, path, query, body }) => ({
    method,
    path: path + query.search,
    body,
    mustRefuse:
      body instanceof Uint8Array
        ? "a body that is not UTF-8"
        : query.undecodable
          ? "a query value whose percent-encoding is not UTF-8"
          : undefined,
  }));
}

// ─── The property ────────────────────────────────────────────────────────────────────────────

describe("bad input on every documented operation", () => {
  it("never answers 5xx, answers 4xx with a message, and leaves stored data intact", async () => {
    doc = await (await fetch(`${t.url}/openapi.json`)).json();
    const operations: fc.Arbitrary<FuzzRequest>[] = [];
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
        operations.push(requestsOf(template, method, op));
      }
    }
    // Unknown paths and methods under /v1 too.
    operations.push(
      fc.record({
        method: fc.constantFrom("GET", "POST", "PATCH", "PUT", "DELETE"),
        path: fc.constantFrom(
          "/v1/",
          "/v1/orgs/",
          "/v1/nope",
          "/v1/orgs/%00",
          "/v1//orgs",
          "/v1/orgs/x/y/z/w",
          "/v1/%ED%A0%80",
          "/v1/orgs/constructor/spaces/",
        ),
        body: fc.constant(undefined),
      }),
    );
    expect(operations.length).toBeGreaterThan(100);

    const statuses: Record<number, number> = {};
    let sent = 0;
    const send = async (r: FuzzRequest): Promise<string | null> => {
      sent++;
      const res = await fetch(t.url + r.path, {
        method: r.method,
        headers: { authorization: `Bearer ${admin.token}`, ...(r.body !== undefined ? { "content-type": "application/json" } : {}) },
        body: r.body as BodyInit | undefined,
      });
      const text = await res.text();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const where = `${r.method} ${r.path.slice(0, 200)} ${typeof r.body === "string" ? r.body.slice(0, 200) : r.body ? `<${Buffer.from(r.body.subarray(0, 100)).toString("hex")}…>` : ""}`;
      if (res.status >= 500) return `${where} → ${res.status} ${text.slice(0, 300)}`;
      if (r.method === "OPTIONS") {
        const allow = res.headers.get("allow");
        if (
          res.status === 204 &&
          text === "" &&
          allow !== null &&
          /^(GET|HEAD|POST|PUT|PATCH|DELETE)(, (HEAD|POST|PUT|PATCH|DELETE))*, OPTIONS$/.test(allow)
        )
          return null;
        let notFound = false;
        try {
          notFound = res.status === 404 && allow === null && JSON.parse(text).error.code === 404;
        } catch {
          /* not the error body */
        }
        return notFound ? null : `${where} → ${res.status} allow ${allow} ${text.slice(0, 200)}`;
      }
      if (r.mustRefuse && res.status < 400) return `${where} → ${res.status}: took ${r.mustRefuse}`;
      // Node's HTTP parser answers these itself, before any handler: nothing to name there; a HEAD has no body.
      if (res.status === 431 || res.status === 414 || r.method === "HEAD") return null;
      if (res.status >= 400) {
        let message: unknown;
        try {
          const error = JSON.parse(text).error;
          message = error.code === res.status ? error.message : undefined;
        } catch {
          /* not the error body */
        }
        if (typeof message !== "string" || !message) return `${where} → ${res.status} without the error body: ${text.slice(0, 300)}`;
        // What the client sent is echoed cut (core/errors.ts, boundEchoes), never a 3,000-character id or a 200,000-character value whole.
        if (message.length > MAX_ERROR_MESSAGE)
          return `${where} → ${res.status} with a message of ${message.length} characters: ${message.slice(0, 200)}`;
      }
      return null;
    };

    // No answer is a 5xx, so nothing the server logs as an error is right.
    const logged = errorsLogged();
    const started = Date.now();
    const found: string[] = [];
    const details = await fc.check(
      fc.asyncProperty(fc.array(fc.oneof(...operations), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const failures = (await Promise.all(batch.map(send))).filter((f): f is string => f !== null);
        found.push(...failures);
        return failures.length === 0;
      }),
      { numRuns: Math.ceil(RUNS / BATCH), seed: SEED, endOnFailure: true },
    );
    logged.stop();
    // Reported here rather than by fast-check: its counterexamples hold 200,000-character values.
    if (details.failed) throw new Error(`FUZZ_SEED=${details.seed} reproduces it:\n${[...new Set(found)].slice(0, 20).join("\n")}`);
    expect(logged.lines, "logged as errors while answering generated requests").toEqual([]);
    console.log(
      `[bad-input] ${sent} generated requests over ${operations.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s` +
        ` (${t.gateway.db.kind}); answers by status: ${JSON.stringify(statuses)}`,
    );
    expect(sent).toBeGreaterThanOrEqual(RUNS);

    // Stored data is intact: every revision's records hold items under their own ids only, and
    // the content of the fixture space still reads, edits and merges (with a caller the fuzzing
    // could not have demoted).
    const { prisma } = t.gateway.db;
    for (const revision of await prisma.revision.findMany({ select: { id: true, content: true } })) {
      const content = revision.content as any;
      for (const part of ["pages", "files", "reusableContents"]) {
        for (const [key, value] of Object.entries<any>(content[part] ?? {})) expect(value?.id, `${revision.id} ${part}.${key}`).toBe(key);
      }
    }
    const spaces = await prisma.space.findMany({ where: { deletedAt: null }, select: { id: true, organizationId: true } });
    expect(spaces.length).toBeGreaterThan(0);
    const intact = await t.bootstrap("intact@acme.test", "Intact Org");
    const space = created(await intact.post(`/v1/orgs/${intact.organization}/spaces`, { title: "After the fuzz" }));
    const page = created(await intact.post(`/v1/spaces/${space.id}/content/pages`, { title: "Kept", markdown: "a\n\nb" }));
    const cr = created(await intact.post(`/v1/spaces/${space.id}/change-requests`, { subject: "Check" }));
    expect(
      (await intact.patch(`/v1/spaces/${space.id}/change-requests/${cr.id}/content/page/${page.id}`, { markdown: "a\n\nc" })).status,
    ).toBe(200);
    expect((await intact.patch(`/v1/spaces/${space.id}/change-requests/${cr.id}`, { status: "open" })).status).toBe(200);
    expect((await intact.post(`/v1/spaces/${space.id}/change-requests/${cr.id}/merge`, {})).status).toBe(200);
    expect((await intact.get(`/v1/spaces/${space.id}/content/page/${page.id}`)).body.markdown).toBe("a\n\nc");
    // The fixture space's content reads on both faces.
    const fixture = await fetch(`${t.url}/v1/spaces/${ids.spaceId}/content/pages`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(fixture.status).toBeLessThan(500);
  });

  it("echoes a long id, key or value cut to its start and its length, on both faces", async () => {
    const long = "x".repeat(5000);
    const auth = { authorization: `Bearer ${admin.token}`, "content-type": "application/json" };
    const answers: [string, Response][] = [
      ["REST path id", await fetch(`${t.url}/v1/spaces/${long}`, { headers: auth })],
      [
        "REST body key",
        await fetch(`${t.url}/v1/orgs/${ids.organizationId}/spaces`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ title: "a", [long]: 1 }),
        }),
      ],
      ["REST query parameter", await fetch(`${t.url}/v1/orgs/${ids.organizationId}/spaces?limit=${long}`, { headers: auth })],
      [
        "GraphQL argument",
        await fetch(`${t.url}/graphql`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ query: `{ space(spaceId: "${long}") { id } }` }),
        }),
      ],
      [
        "GraphQL variable",
        await fetch(`${t.url}/graphql`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ query: "query($n: Boolean!) { __typename @skip(if: $n) }", variables: { n: long } }),
        }),
      ],
      ["GraphQL field", await fetch(`${t.url}/graphql`, { method: "POST", headers: auth, body: JSON.stringify({ query: `{ ${long} }` }) })],
    ];
    for (const [what, res] of answers) {
      const body = await res.json();
      const messages: string[] = body.error ? [body.error.message] : body.errors.map((e: { message: string }) => e.message);
      // A GraphQL field error (the space not found) is answered 200 with `errors`, as GraphQL answers it.
      if (what.startsWith("REST")) expect(res.status, what).toBeGreaterThanOrEqual(400);
      expect(res.status, what).toBeLessThan(500);
      expect(messages.join("\n"), what).toContain(`${"x".repeat(64)}…(5000 characters)`);
      for (const message of messages) expect(message.length, `${what}: ${message.slice(0, 200)}`).toBeLessThan(400);
    }
    // A cut never splits a surrogate pair: the 64th character of "x💩💩…" is the first half of one.
    const emoji = await fetch(`${t.url}/v1/spaces/${encodeURIComponent(`x${"💩".repeat(1000)}`)}`, { headers: auth });
    const emojiMessage: string = (await emoji.json()).error.message;
    expect(emoji.status).toBe(404);
    expect(emojiMessage).toContain(`x${"💩".repeat(31)}…(2001 characters)`);
    expect(emojiMessage).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    // graphql-ws: a subscription refused for an unknown space, and one whose variable is refused.
    const client = wsClient(t.url, admin.token);
    try {
      for (const [query, variables] of [
        ["subscription($id: String!) { spaceUpdated(spaceId: $id) { id } }", { id: long }],
        ['subscription($id: Boolean!) { spaceUpdated(spaceId: "s") { id title @skip(if: $id) } }', { id: long }],
      ] as const) {
        const outcome = JSON.stringify(await firstOutcome(client, query, variables));
        expect(outcome).toContain(`${"x".repeat(64)}…(5000 characters)`);
        expect(outcome.length, outcome.slice(0, 300)).toBeLessThan(1000);
      }
    } finally {
      await client.dispose();
    }
  });

  it("names the field on the classes the property mixes in", async () => {
    const cases: [string, string, unknown, string][] = [
      ["POST", `/v1/orgs/${ids.organizationId}/spaces`, { title: "a\u0000b" }, "title"],
      ["POST", `/v1/orgs/${ids.organizationId}/spaces`, { title: "\ud800x" }, "title"],
      ["POST", `/v1/orgs/${ids.organizationId}/spaces`, { title: "Child", parent: "" }, "parent"],
      ["POST", `/v1/orgs/${ids.organizationId}/collections`, { title: "Child", parent: "" }, "parent"],
      ["PATCH", `/v1/spaces/${ids.spaceId}/content/page/${ids.pageId}`, { markdown: "x\u0000" }, "markdown"],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await admin.raw(method, path, JSON.stringify(body));
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.message).toContain(field);
    }
    const nul = await fetch(`${t.url}/v1/spaces/a%00b`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(nul.status).toBe(400);
    expect((await nul.json()).error.message).toContain("spaceId");
    const query = await fetch(`${t.url}/v1/orgs/${ids.organizationId}/spaces?limit=%00`, {
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(query.status).toBe(400);
    // A query parameter given twice, as a list or as an object: the message names it.
    for (const search of ["limit=1&limit=2", "limit[]=3", "limit[a]=3", "page[]=x", "limit=99999999999999999999"]) {
      const res = await fetch(`${t.url}/v1/orgs/${ids.organizationId}/spaces?${search}`, {
        headers: { authorization: `Bearer ${admin.token}` },
      });
      expect(res.status, search).toBe(400);
      expect((await res.json()).error.message, search).toMatch(/^(limit|page)\b/);
    }
    // A trailing slash names the same operation; unknown paths are a JSON 404.
    const slash = await fetch(`${t.url}/v1/orgs/`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(slash.status).toBe(200);
    const unknown = await fetch(`${t.url}/v1/no/such/thing`, { headers: { authorization: `Bearer ${admin.token}` } });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe(404);
    // Deep free-form JSON: the documented bound, naming the field.
    const install = await admin.post("/v1/integrations/fuzz/installations", { organization: ids.organizationId });
    expect(install.status).toBeLessThan(500);
    const deepConfig = await admin.raw(
      "POST",
      "/v1/integrations/fuzz/installations",
      `{"organization":"${ids.organizationId}","configuration":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`,
    );
    expect(deepConfig.status).toBe(400);
    expect(deepConfig.body.error.message).toMatch(/configuration.*nested too deeply/);
    // GraphQL: variables and arguments alike.
    const gqlVar = await admin.graphql(
      `mutation($title: String!) { spaceCreate(organizationId: "${ids.organizationId}", title: $title) { id } }`,
      { title: "a\u0000" },
    );
    expect(gqlVar.errors?.[0]?.message).toContain("$title");
    expect(gqlVar.status).toBe(400);
    const gqlArg = await admin.graphql(`mutation { spaceCreate(organizationId: "${ids.organizationId}", title: "a\\u0000") { id } }`);
    expect(gqlArg.errors?.[0]?.message).toContain("title");
    const gqlId = await admin.graphql(`query($id: String!) { space(spaceId: $id) { id } }`, { id: "\u0000" });
    expect(gqlId.status).toBe(400);
  });
});
