import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs } from "../helpers/fixtures.js";
import { fuzzTargets } from "../helpers/hostile.js";
import { routeTable } from "../../src/rest/table.js";

vi.setConfig({ testTimeout: 600_000, hookTimeout: 120_000 });

/**
 * The /v1 operations run compiled by graphql-jit (REST_JIT on, the default); graphql's own
 * execution (REST_JIT off) is the reference. For generated requests — every documented GET route,
 * its path ids aimed at the objects of an organization (or at another organization's, or at
 * none), its query parameters from the OpenAPI document, sent by an admin, an editor, a reader,
 * a guest, an outsider, an anonymous caller or a bad token — both executions must give the same
 * answer: status, body and ETag, errors included. Writes are compared in two identical
 * organizations, one written through each execution (created ids and times told apart).
 *
 * JIT_RUNS (default 150 per property) and JIT_SEED tune it.
 */
const RUNS = Number(process.env.JIT_RUNS || 150);
const SEED = process.env.JIT_SEED ? Number(process.env.JIT_SEED) : undefined;

let t: TestGateway;
let doc: any;
const callers: Record<string, string | undefined> = {};
let ids: Record<string, string>;
let otherIds: Record<string, string>;

beforeAll(async () => {
  // Without the response cache: the second execution must not be answered from the first's entry.
  t = await startGateway({ responseCache: "off" });
  const { admin, other, org } = await acmeDocs(t);
  ids = await fuzzTargets(admin);
  // Another organization's objects, which the callers of the first may not see.
  const otherSpace = await other.post(`/v1/orgs/${other.organization}/spaces`, { title: "Elsewhere" });
  const otherCollection = await other.post(`/v1/orgs/${other.organization}/collections`, { title: "Elsewhere" });
  otherIds = { organizationId: other.organization, userId: other.user, spaceId: otherSpace.body.id, collectionId: otherCollection.body.id };
  for (const role of ["edit", "read", null] as const)
    callers[role ?? "guest"] = (await t.member(org, `${role ?? "guest"}@acme.test`, role)).token;
  callers.admin = admin.token;
  callers.outsider = other.token;
  callers.anonymous = undefined;
  callers.badToken = "dapi_not_a_token";
  doc = await (await fetch(`${t.url}/v1/openapi.json`)).json();
});
afterAll(() => t?.close());

interface Sent {
  status: number;
  body: string;
  etag: string | null;
}

async function send(jit: boolean, method: string, path: string, token: string | undefined, body?: unknown): Promise<Sent> {
  t.gateway.config.restJit = jit;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${t.url}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.text(), etag: res.headers.get("etag") };
}

/** A value for a path or query parameter named `name` with `schema`. */
function valueFor(name: string, schema: any): fc.Arbitrary<string | undefined> {
  const id = ids[name];
  if (id) return fc.constantFrom(id, id, id, otherIds[name] ?? "unknown", `${id.slice(0, 4)}unknown`);
  if (schema?.enum?.length) return fc.constantFrom(...schema.enum.map(String));
  if (schema?.type === "integer" || schema?.type === "number") return fc.constantFrom("1", "2", "50", "0", "x");
  if (schema?.type === "boolean") return fc.constantFrom("true", "false");
  return fc.constantFrom("x", ...Object.values(ids).slice(0, 3));
}

const getRoutes = routeTable.filter((r) => r.method === "GET");

function getRequest(): fc.Arbitrary<{ path: string; caller: string }> {
  return fc.constantFrom(...getRoutes).chain((route) => {
    const operation = doc.paths[route.path]?.get ?? {};
    const params: any[] = operation.parameters ?? [];
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const query = params.filter((p) => p.in === "query");
    return fc
      .record({
        segments: fc.tuple(...pathParams.map((name) => valueFor(name, params.find((p) => p.name === name)?.schema))),
        query: fc.tuple(...query.map((p) => fc.option(valueFor(p.name, p.schema), { nil: undefined }))),
        caller: fc.constantFrom(...Object.keys(callers)),
      })
      .map(({ segments, query: values, caller }) => {
        let i = 0;
        const path = route.path.replace(/\{(\w+)\}/g, () => encodeURIComponent(segments[i++] ?? ""));
        const search = new URLSearchParams();
        query.forEach((p, j) => values[j] !== undefined && search.set(p.name, values[j]!));
        return { path: search.size ? `${path}?${search}` : path, caller };
      });
  });
}

// ─── Writes: two organizations made alike, one written through each execution ──────────────────

interface Twin {
  label: string;
  admin: string;
  reader: string;
  ids: Record<string, string>;
}

async function twin(label: string): Promise<Twin> {
  const slug = label.toLowerCase().replace(/\s+/g, "-");
  const admin = await t.bootstrap(`ada@${slug}.test`, label);
  const org = admin.organization;
  const ids: Record<string, string> = { organizationId: org, userId: admin.user };
  ids.spaceId = (await admin.post(`/v1/orgs/${org}/spaces`, { title: "Twin" })).body.id;
  ids.collectionId = (await admin.post(`/v1/orgs/${org}/collections`, { title: "Twin" })).body.id;
  ids.siteId = (await admin.post(`/v1/orgs/${org}/sites`, { title: "Twin site" })).body.id;
  ids.pageId = (await admin.post(`/v1/spaces/${ids.spaceId}/content/pages`, { title: "Page", markdown: "Hello" })).body.id;
  ids.changeRequestId = (await admin.post(`/v1/spaces/${ids.spaceId}/change-requests`, { subject: "Twin" })).body.id;
  ids.commentId = (
    await admin.post(`/v1/spaces/${ids.spaceId}/change-requests/${ids.changeRequestId}/comments`, { body: { markdown: "Hm" } })
  ).body.id;
  ids.teamId = (await admin.put(`/v1/orgs/${org}/teams`, { title: "Twins" })).body.id;
  const reader = await t.member(org, `rex@${slug}.test`, "read");
  return { label, admin: admin.token, reader: reader.token, ids };
}

/** A value standing for one of a twin's objects, or a plain value. */
type Symbolic = { id: string } | { plain: unknown };
const resolveIn = (twin: Twin, value: Symbolic): unknown => ("id" in value ? twin.ids[value.id] : value.plain);

function bodyValue(schema: any, depth = 0): fc.Arbitrary<Symbolic> {
  schema = schema?.$ref
    ? schema.$ref
        .split("/")
        .slice(1)
        .reduce((o: any, k: string) => o?.[k], doc)
    : schema;
  const variants = schema?.oneOf ?? schema?.anyOf;
  if (variants?.length) return fc.oneof(...variants.map((v: any) => bodyValue(v, depth))) as fc.Arbitrary<Symbolic>;
  const plain = (a: fc.Arbitrary<unknown>): fc.Arbitrary<Symbolic> => a.map((v) => ({ plain: v }));
  if (schema?.enum?.length) return plain(fc.constantFrom(...schema.enum, "not-one-of-them"));
  const type = Array.isArray(schema?.type) ? schema.type.find((x: string) => x !== "null") : schema?.type;
  switch (type) {
    case "string":
      return fc.oneof(
        plain(fc.constantFrom("Renamed", "", "x".repeat(300), "📚")),
        fc.constantFrom(...["spaceId", "collectionId", "pageId", "teamId", "userId"].map((id) => ({ id }))),
      );
    case "integer":
    case "number":
      return plain(fc.constantFrom(0, 1, 2, -1, 1.5));
    case "boolean":
      return plain(fc.boolean());
    case "array":
      return depth > 3
        ? plain(fc.constant([]))
        : fc.array(bodyValue(schema.items, depth + 1), { maxLength: 2 }).map((items) => ({ plain: items, items }) as any);
    case "object": {
      if (depth > 3 || !schema.properties) return plain(fc.constantFrom({}, { markdown: "Hi" }));
      const keys = Object.keys(schema.properties);
      return fc
        .record(Object.fromEntries(keys.map((k) => [k, bodyValue(schema.properties[k], depth + 1)])), { requiredKeys: [] })
        .map((fields) => ({ plain: fields, fields }) as any);
    }
    default:
      return plain(fc.constantFrom(null, "x", 1));
  }
}

/** Resolves the symbolic parts of a body (ids of the twin) at any depth. */
function materialize(twin: Twin, value: any): unknown {
  if (value && "fields" in value) return Object.fromEntries(Object.entries(value.fields).map(([k, v]) => [k, materialize(twin, v)]));
  if (value && "items" in value) return value.items.map((v: any) => materialize(twin, v));
  return resolveIn(twin, value);
}

const writeRoutes = routeTable.filter((r) => r.method !== "GET" && !r.upload);

function writeRequest() {
  return fc.constantFrom(...writeRoutes).chain((route) => {
    const operation = doc.paths[route.path]?.[route.method.toLowerCase()] ?? {};
    const schema = operation.requestBody?.content?.["application/json"]?.schema;
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    return fc.record({
      route: fc.constant(route),
      segments: fc.tuple(...pathParams.map((name) => fc.constantFrom<Symbolic>({ id: name }, { id: name }, { plain: "unknown" }))),
      body: schema ? bodyValue(schema) : fc.constant(undefined),
      asReader: fc.boolean(),
    });
  });
}

/** An answer of one twin written as the other's would be: its ids, names and times told apart. */
function normalized(twin: Twin, answer: Sent): Sent {
  let text = answer.body;
  for (const [name, id] of Object.entries(twin.ids)) text = text.split(id).join(`<${name}>`);
  const seen = new Map<string, string>();
  text = text
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, "<signed token>")
    // Ids of new objects, and secrets (share keys), by order of appearance.
    .replace(
      /\b(?:[a-z]{2,8}_[A-Za-z0-9_-]{12,}|[A-Za-z0-9]{24,})\b/g,
      (id) => seen.get(id) ?? (seen.set(id, `<new ${seen.size}>`), seen.get(id)!),
    )
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .split(twin.label)
    .join("<twin>")
    .split(twin.label.toLowerCase().replace(/\s+/g, "-"))
    .join("<twin>");
  return { ...answer, body: text, etag: answer.etag ? "<etag>" : null };
}

describe("REST answers: graphql-jit and graphql's execution", () => {
  it("every GET route, every caller: the same status, body and ETag", async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(getRequest(), async ({ path, caller }) => {
        const compiled = await send(true, "GET", path, callers[caller]);
        const reference = await send(false, "GET", path, callers[caller]);
        statuses.add(reference.status);
        expect(compiled, `GET ${path} as ${caller}`).toEqual(reference);
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // The property saw answers and refusals (a generator that only made 404s would prove little).
    expect([...statuses]).toEqual(expect.arrayContaining([200, 404]));
  });

  it("writes: the same answers, and the same state after them, in two organizations made alike", async () => {
    const compiledTwin = await twin("Twin A");
    const referenceTwin = await twin("Twin B");
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.array(writeRequest(), { minLength: 1, maxLength: 4 }), async (writes) => {
        for (const { route, segments, body, asReader } of writes) {
          const answers = [] as Sent[];
          for (const [jit, twin] of [
            [true, compiledTwin],
            [false, referenceTwin],
          ] as const) {
            let i = 0;
            const path = route.path.replace(/\{(\w+)\}/g, () => encodeURIComponent(String(resolveIn(twin, segments[i++]!))));
            const sent = await send(
              jit,
              route.method,
              path,
              asReader ? twin.reader : twin.admin,
              body === undefined ? undefined : materialize(twin, body),
            );
            answers.push(normalized(twin, sent));
          }
          statuses.add(answers[1]!.status);
          expect(answers[0], `${route.method} ${route.path}`).toEqual(answers[1]);
        }
        // Both organizations read alike afterwards.
        for (const path of [
          "/orgs/{organizationId}/spaces",
          "/spaces/{spaceId}",
          "/spaces/{spaceId}/content",
          "/orgs/{organizationId}/collections",
        ]) {
          const [a, b] = await Promise.all(
            [compiledTwin, referenceTwin].map(async (twin) =>
              normalized(
                twin,
                await send(
                  false,
                  "GET",
                  path.replace(/\{(\w+)\}/g, (_, n: string) => twin.ids[n]!),
                  twin.admin,
                ),
              ),
            ),
          );
          expect(a, `GET ${path} after the writes`).toEqual(b);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400]));
  });

  it("a variable graphql refuses (a nested value outside its enumeration): graphql's own error, from both", async () => {
    const body = { position: { before: { type: "page", page: "x" } } };
    const compiled = await send(true, "POST", `/collections/${ids.collectionId}/move`, callers.admin, body);
    const reference = await send(false, "POST", `/collections/${ids.collectionId}/move`, callers.admin, body);
    expect(reference.status).toBe(400);
    expect(JSON.parse(reference.body).error.message).toContain('at "position.before.type"');
    expect(compiled).toEqual(reference);
  });

  it("every GET route with the organization's own objects, as its admin: the same answer", async () => {
    for (const route of getRoutes) {
      const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? "x"));
      const compiled = await send(true, "GET", path, callers.admin);
      const reference = await send(false, "GET", path, callers.admin);
      expect(compiled, `GET ${path}`).toEqual(reference);
    }
  });
});
