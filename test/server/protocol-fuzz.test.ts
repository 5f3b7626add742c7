import fs from "node:fs";
import net from "node:net";
import fc from "fast-check";
import WebSocket from "ws";
import {
  buildSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  isUnionType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
} from "graphql";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { acmeDocs, type Admin } from "../helpers/fixtures.js";
import {
  MAX_ERROR_MESSAGE,
  PROTOTYPE_NAMES,
  deep,
  errorsLogged,
  fuzzTargets,
  hostileString,
  hostileValue,
  hugeNumber,
} from "../helpers/hostile.js";
import { wsClient, collect } from "../helpers/graphql-ws.js";

vi.setConfig({ testTimeout: 600_000, hookTimeout: 120_000 });

/**
 * Generated hostile input on the faces the REST fuzz (bad-input.test.ts) does not reach: GraphQL
 * documents and variables built from the printed schema (every query and mutation field but the
 * destructive ones, every argument with fitting, hostile or wrongly typed values) sent over
 * POST and GET and as malformed requests; raw HTTP requests with hostile headers; and graphql-ws
 * sockets sending hostile frames, and malformed WebSocket frames beneath them. No answer may be a
 * 5xx or a masked "Unexpected error."; a socket is closed only with the protocol's 44xx codes (or
 * 1002/1007/1009 for a malformed or oversized frame), never 1011/4500, and nothing is reported as
 * an internal error; the server keeps serving and stored data reads afterwards.
 *
 * PROTOCOL_FUZZ_RUNS (requests and sockets, default 1,200) and FUZZ_SEED tune it.
 */
const RUNS = Number(process.env.PROTOCOL_FUZZ_RUNS || 1_200);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const BATCH = 16;
const UNEXPECTED = "Unexpected error.";

let t: TestGateway;
let admin: Admin;
let schema: GraphQLSchema;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startGateway();
  ({ admin } = await acmeDocs(t));
  Object.assign(ids, await fuzzTargets(admin));
  schema = buildSchema(fs.readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8"));
});
afterAll(() => t?.close());

// ─── GraphQL documents from the schema ───────────────────────────────────────────────────────

/** Mutations that would remove or lock out what the other calls work on. */
const DESTRUCTIVE = /delete|remove|revoke|leave|transfer|purge|logout|unpublish|archive/i;

const idLike = () =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...Object.values(ids)) },
    { weight: 2, arbitrary: hostileString.filter((s) => s.length < 5_000) },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  );

/** A variable value for `type`: mostly fitting, sometimes hostile or of the wrong type. */
function valueOf(type: GraphQLInputType, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(hostileValue, fc.constantFrom<unknown>(null, {}, [], "x", 1, true));
  const fitting = fittingValue(type, depth);
  return fc.oneof({ weight: 12, arbitrary: fitting }, { weight: 1, arbitrary: wrong });
}

function fittingValue(type: GraphQLInputType, depth: number): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return fittingValue(type.ofType, depth);
  if (isListType(type)) return depth > 3 ? fc.constant([]) : fc.array(valueOf(type.ofType, depth + 1), { maxLength: 3 });
  if (isEnumType(type)) return fc.oneof(fc.constantFrom(...type.getValues().map((v) => v.name)), fc.constantFrom(...PROTOTYPE_NAMES));
  if (isInputObjectType(type)) {
    if (depth > 3) return fc.constant({});
    const fields = Object.fromEntries(Object.values(type.getFields()).map((f) => [f.name, valueOf(f.type, depth + 1)]));
    return fc
      .tuple(
        fc.record(fields, { requiredKeys: [] }),
        fc.option(fc.tuple(fc.constantFrom(...PROTOTYPE_NAMES, "\u0000", ""), hostileValue), { freq: 4 }),
      )
      .map(([obj, extra]) =>
        extra
          ? Object.defineProperty({ ...obj }, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true })
          : obj,
      );
  }
  switch (type.name) {
    case "ID":
    case "String":
      return idLike();
    case "Int":
      return fc.oneof(fc.integer({ min: -2, max: 120 }), fc.integer(), hugeNumber);
    case "Float":
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), hugeNumber);
    case "Boolean":
      return fc.boolean();
    case "DateTime":
      return fc.constantFrom("2026-01-01T00:00:00.000Z", "yesterday", "2026-13-45T99:99:99Z", "");
    default: // JSON-like scalars
      return fc.oneof(fc.jsonValue({ maxDepth: 3 }), deep, hostileValue);
  }
}

/** A selection for a field's type: its id and typename where it has them. */
function selectionOf(field: GraphQLField<unknown, unknown>): string {
  const named = getNamedType(field.type);
  if (isObjectType(named) || isInterfaceType(named)) return named.getFields().id ? "{ __typename id }" : "{ __typename }";
  if (isUnionType(named)) return "{ __typename }";
  return "";
}

interface GraphQLCall {
  query: string;
  variables: Record<string, unknown>;
}

function callsOf(kind: "query" | "mutation", field: GraphQLField<unknown, unknown>): fc.Arbitrary<GraphQLCall> {
  const args = field.args;
  const declared = args.map((a, i) => `$a${i}: ${a.type.toString()}`).join(", ");
  const passed = args.map((a, i) => `${a.name}: $a${i}`).join(", ");
  const query = `${kind} Fuzz${declared ? `(${declared})` : ""} { ${field.name}${passed ? `(${passed})` : ""} ${selectionOf(field)} }`;
  const variables = fc.tuple(...args.map((a) => fc.option(valueOf(a.type), { freq: isNonNullType(a.type) ? 20 : 3 }))).map((values) => {
    const vars: Record<string, unknown> = {};
    values.forEach((v, i) => {
      if (v !== null) vars[`a${i}`] = v;
    });
    return vars;
  });
  return variables.map((vars) => ({ query, variables: vars }));
}

/** Documents that are not the schema's: syntax noise, deep selections, hostile names and literals. */
const strangeDocument = fc.oneof(
  fc.string({ maxLength: 200, unit: "binary" }),
  fc.constantFrom(
    "",
    "{",
    "query { __typename }",
    "{ __proto__ }",
    "{ constructor { prototype } }",
    `{ ${'space(spaceId: "x") { '.repeat(60)}id${" }".repeat(60)} }`,
    `{ viewer { id ${"...F ".repeat(500)} } } fragment F on User { id }`,
    `query($a: String = "\u0000") { space(spaceId: $a) { id } }`,
    `{ space(spaceId: "\\ud800") { id } }`,
    `{ space(spaceId: ${'"x"'.repeat(1)}) ${"{ __typename ".repeat(300)}${"}".repeat(300)} }`,
    `subscription { integrationEvents(integrationName: "fuzz") { id } }`,
    "fragment A on Query { ...B } fragment B on Query { ...A } { ...A }",
    `{ ${Array.from({ length: 2000 }, (_, i) => `a${i}: __typename`).join(" ")} }`,
    "x".repeat(200_000),
  ),
);

/** GraphQL answers by status, and whether a field resolved to something (the fuzz reached resolvers). */
const outcomes: Record<string, number> = {};

interface HttpCall {
  method: "GET" | "POST";
  body?: string;
  search?: string;
  contentType?: string;
}

// ─── Raw HTTP with hostile headers ──────────────────────────────────────────────────────────

const headerValue = fc.oneof(
  fc.constantFrom(
    "Bearer ",
    "Bearer",
    "bearer x",
    "Basic Zm9vOmJhcg==",
    "Bearer \u00ff\u00fe",
    "Bearer " + "a".repeat(20_000),
    "Bearer __proto__",
    "Bearer constructor",
    "Bearer %00",
    ",,,",
    "*/*;q=x",
  ),
  fc.string({ maxLength: 60, unit: "binary-ascii" }),
  fc.string({ maxLength: 60 }).map((s) => Buffer.from(s, "utf8").toString("latin1")),
);

interface RawRequest {
  target: string;
  method: string;
  headers: [string, string][];
  body: string;
}

const rawRequest: fc.Arbitrary<RawRequest> = fc.record({
  target: fc.constantFrom(
    "/v1/orgs",
    `/v1/spaces/SPACE`,
    "/graphql",
    "/graphql/",
    "/x/graphql",
    "/graphql?query=%7B__typename%7D",
    "/openapi.json",
    "/v1/spaces/SPACE/content",
    "/health",
    "/metrics",
  ),
  method: fc.constantFrom("GET", "POST", "PATCH", "OPTIONS", "HEAD"),
  headers: fc.array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          "authorization",
          "x-visitor-token",
          "if-none-match",
          "accept",
          "content-type",
          "x-request-id",
          "origin",
          "cookie",
          "accept-encoding",
          "x-forwarded-for",
        ),
        fc.constantFrom(...PROTOTYPE_NAMES),
      ),
      headerValue,
    ),
    { maxLength: 4 },
  ),
  body: fc.oneof(
    fc.constant(""),
    fc.constant('{"query":"{ __typename }"}'),
    hostileString.filter((s) => s.length < 1_000).map((s) => JSON.stringify({ title: s })),
  ),
});

/** Sends a request byte for byte (no client library to refuse or repair it); resolves its status, 0 when the server closed without one. */
function sendRaw(r: RawRequest): Promise<{ status: number; text: string }> {
  const url = new URL(t.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const body = Buffer.from(r.body, "utf8");
    const lines = [`${r.method} ${r.target.replace("SPACE", ids.spaceId!)} HTTP/1.1`, `host: ${url.host}`, "connection: close"];
    const hasAuth = r.headers.some(([n]) => n === "authorization");
    if (!hasAuth) lines.push(`authorization: Bearer ${admin.token}`);
    for (const [name, value] of r.headers) lines.push(`${name}: ${value}`);
    if (body.length) lines.push(`content-length: ${body.length}`);
    socket.write(Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1"), body]));
    socket.on("data", (c) => chunks.push(c));
    socket.setTimeout(20_000, () => socket.destroy());
    const done = () => {
      const text = Buffer.concat(chunks).toString("utf8");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    };
    socket.on("close", done);
    socket.on("error", () => undefined);
  });
}

// ─── graphql-ws frames ───────────────────────────────────────────────────────────────────────

const wsDocument = fc.oneof(
  fc.constantFrom(
    `subscription { integrationEvents(integrationName: "fuzz") { id } }`,
    `subscription($s: String!) { spaceUpdated(spaceId: $s) { id title } }`,
    `subscription($o: String!) { organizationIntegrationEvents(organizationId: $o) { id } }`,
    `query { viewer { id } }`,
    `mutation { __typename }`,
  ),
  strangeDocument,
);

const frame: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({
        id: fc.oneof(fc.uuid(), fc.constantFrom(...PROTOTYPE_NAMES, "", "\u0000", "x".repeat(10_000))),
        type: fc.constant("subscribe"),
        payload: fc.record(
          {
            query: wsDocument,
            variables: fc.oneof(
              fc.constant({ s: "SPACE", o: "ORG" }),
              fc.dictionary(fc.constantFrom("s", "o", ...PROTOTYPE_NAMES), hostileValue),
              hostileValue,
            ),
            operationName: fc.option(hostileString.filter((s) => s.length < 100)),
          },
          { requiredKeys: ["query"] },
        ),
      })
      .map((f) =>
        JSON.stringify(f)
          .replace(/"SPACE"/g, JSON.stringify(ids.spaceId))
          .replace(/"ORG"/g, JSON.stringify(ids.organizationId)),
      ),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ id: fc.oneof(fc.uuid(), fc.constantFrom(...PROTOTYPE_NAMES)), type: fc.constant("complete") })
      .map((f) => JSON.stringify(f)),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        type: fc.oneof(
          fc.constantFrom("ping", "pong", "connection_init", "next", "error", "complete", "__proto__", "constructor", ""),
          hostileString.filter((s) => s.length < 100),
        ),
        payload: fc.option(hostileValue),
      })
      .map((f) => JSON.stringify(f)),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.string({ maxLength: 100, unit: "binary" }),
      fc.constantFrom("{", "null", "[]", "1", '"x"', '{"__proto__":{"type":"subscribe"}}', "[".repeat(50_000)),
    ),
  },
);

/** Bytes of a client frame (RFC 6455 5.2): fin, reserved bits, opcode, masked or not, and its payload masked with a fixed key. */
function frameBytes(f: { fin: boolean; rsv: number; opcode: number; masked: boolean; payload: Uint8Array }): Uint8Array {
  const length = f.payload.length;
  const head = [(f.fin ? 0x80 : 0) | (f.rsv << 4) | f.opcode];
  if (length < 126) head.push((f.masked ? 0x80 : 0) | length);
  else head.push((f.masked ? 0x80 : 0) | 126, length >> 8, length & 0xff);
  const key = [0x11, 0x22, 0x33, 0x44];
  const payload = f.masked ? f.payload.map((b, i) => b ^ key[i % 4]!) : f.payload;
  return Buffer.concat([Buffer.from(head), Buffer.from(f.masked ? key : []), Buffer.from(payload)]);
}

/**
 * Bytes written on the socket beneath the client, past what its library would send: random bytes,
 * or frames with any fin, reserved bits and opcode (close frames aside: the server would answer
 * with the code they carry), masked or not, their payload invalid UTF-8 or not.
 */
const wireBytes = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 64 }),
  fc
    .record({
      fin: fc.boolean(),
      rsv: fc.integer({ min: 0, max: 7 }),
      opcode: fc.integer({ min: 0, max: 15 }).filter((op) => op !== 8),
      masked: fc.integer({ min: 0, max: 3 }).map((n) => n > 0),
      payload: fc.oneof(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom(Uint8Array.of(0xff, 0xfe), Uint8Array.of(0xc0, 0x80), Uint8Array.of(0xed, 0xa0, 0x80)),
      ),
    })
    .map(frameBytes),
);

const socketScript = fc.record({
  init: fc.oneof(
    { weight: 4, arbitrary: fc.constant<unknown>("token") },
    { weight: 2, arbitrary: fc.record({ authorization: fc.oneof(hostileValue, fc.constant("Bearer nope")) }) },
    { weight: 1, arbitrary: hostileValue },
    { weight: 1, arbitrary: fc.constant<unknown>("none") },
  ),
  frames: fc.array(frame, { minLength: 1, maxLength: 5 }),
  afterAck: fc.integer({ min: 0, max: 9 }).map((n) => n < 8),
  wire: fc.option(wireBytes, { freq: 3 }),
});

/** Close codes graphql-ws and this server use for a client's fault (or a normal end). */
const CLIENT_FAULT_CLOSES = new Set([1000, 1005, 4008, 4400, 4401, 4403, 4406, 4408, 4409, 4429, 4413]);

type SocketScript = { init: unknown; frames: string[]; afterAck: boolean; wire: Uint8Array | null };

/** What the server sent a socket when the client broke the protocol (ws's codes: protocol error, bad UTF-8, too big). */
const PROTOCOL_CLOSES = new Set([1002, 1007, 1009]);

function runSocket(script: SocketScript): Promise<string | null> {
  return new Promise((resolve) => {
    const ws = new WebSocket(t.url.replace(/^http/, "ws") + "/graphql", "graphql-transport-ws");
    let problem: string | null = null;
    const finish = () => resolve(problem);
    const timer = setTimeout(() => ws.terminate(), 1_500);
    const sendFrames = () => {
      for (const f of script.frames) ws.send(f);
      if (script.wire) (ws as unknown as { _socket: import("node:net").Socket })._socket.write(script.wire);
    };
    ws.on("open", () => {
      if (script.init === "token")
        ws.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${admin.token}` } }));
      else if (script.init !== "none") ws.send(JSON.stringify({ type: "connection_init", payload: script.init }) ?? "null");
      // Frames after the acknowledgement (a subscribe before it is refused, 4401), or at once.
      if (!script.afterAck || script.init === "none") sendFrames();
    });
    ws.on("message", (data) => {
      const text = data.toString();
      if (script.afterAck && text.includes('"connection_ack"')) sendFrames();
      if (text.includes(UNEXPECTED)) problem = `frame ${text.slice(0, 300)} after ${script.frames.map((f) => f.slice(0, 200)).join(" | ")}`;
    });
    ws.on("close", (code, reason) => {
      clearTimeout(timer);
      // 1006: terminated by this test's timer (the socket was still open: fine). 1009: a message
      // past MAX_BODY_BYTES, the client's fault when it sent one.
      const tooBig =
        code === 1009 &&
        [JSON.stringify({ type: "connection_init", payload: script.init }) ?? "", ...script.frames].some(
          (m) => Buffer.byteLength(m) > t.config.maxBodyBytes,
        );
      const brokeProtocol = !!script.wire && PROTOCOL_CLOSES.has(code);
      if (!CLIENT_FAULT_CLOSES.has(code) && code !== 1006 && !tooBig && !brokeProtocol)
        problem = `closed ${code} ${reason.toString().slice(0, 200)} after ${script.frames.map((f) => f.slice(0, 200)).join(" | ")}`;
      finish();
    });
    ws.on("error", () => undefined);
  });
}

// ─── The property ────────────────────────────────────────────────────────────────────────────

type Probe =
  | { kind: "graphql"; call: HttpCall; what: string }
  | { kind: "raw"; request: RawRequest }
  | { kind: "ws"; script: SocketScript };

function graphqlProbes(): fc.Arbitrary<Probe> {
  const fields: fc.Arbitrary<GraphQLCall>[] = [];
  for (const field of Object.values(schema.getQueryType()!.getFields())) fields.push(callsOf("query", field));
  for (const field of Object.values(schema.getMutationType()!.getFields()))
    if (!DESTRUCTIVE.test(field.name)) fields.push(callsOf("mutation", field));
  const call = fc.oneof(
    { weight: 8, arbitrary: fc.oneof(...fields) },
    { weight: 2, arbitrary: fc.record({ query: strangeDocument, variables: fc.constant({}) }) },
  );
  const transport = fc.constantFrom("post", "get", "post-odd", "post-malformed");
  return fc
    .tuple(
      call,
      transport,
      fc.option(
        fc.oneof(
          hostileString.filter((s) => s.length < 100),
          fc.constantFrom<unknown>(1, {}, []),
        ),
      ),
      hostileValue,
    )
    .map(([c, how, operationName, extra]): Probe => {
      const what = `${how} ${c.query.slice(0, 200)} ${JSON.stringify(c.variables)?.slice(0, 200)}`;
      switch (how) {
        case "get":
          return {
            kind: "graphql",
            what,
            call: { method: "GET", search: new URLSearchParams({ query: c.query, variables: JSON.stringify(c.variables) }).toString() },
          };
        case "post-odd":
          // Fields of the wrong type, hostile extensions and operation names.
          return {
            kind: "graphql",
            what,
            call: {
              method: "POST",
              contentType: "application/json",
              body: JSON.stringify({ query: c.query, variables: extra, operationName, extensions: extra }),
            },
          };
        case "post-malformed":
          return {
            kind: "graphql",
            what,
            call: {
              method: "POST",
              contentType: "application/json",
              body: JSON.stringify({ query: c.query, variables: c.variables }).slice(0, -1),
            },
          };
        default:
          return {
            kind: "graphql",
            what,
            call: {
              method: "POST",
              contentType: "application/json",
              body: JSON.stringify({ query: c.query, variables: c.variables, ...(operationName !== null ? { operationName } : {}) }),
            },
          };
      }
    });
}

async function runGraphql(call: HttpCall, what: string): Promise<string | null> {
  const res = await fetch(`${t.url}/graphql${call.search ? `?${call.search}` : ""}`, {
    method: call.method,
    headers: {
      authorization: `Bearer ${admin.token}`,
      accept: "application/json",
      ...(call.contentType ? { "content-type": call.contentType } : {}),
    },
    body: call.body,
  });
  const text = await res.text();
  const outcome = `${res.status}${/"data":\{"\w+":[{["\dtf]/.test(text) ? " data" : ""}${text.includes('"errors"') ? " errors" : ""}`;
  outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  if (res.status >= 500 || text.includes(UNEXPECTED)) return `${what} → ${res.status} ${text.slice(0, 300)}`;
  let messages: unknown[] = [];
  try {
    const body = JSON.parse(text);
    messages = body.errors?.map((e: { message?: unknown }) => e.message) ?? (body.error ? [body.error.message] : []);
  } catch {
    /* not JSON */
  }
  if (res.status >= 400 && res.status !== 413 && res.status !== 431 && res.status !== 414) {
    if (!messages.length || messages.some((m) => typeof m !== "string" || !m))
      return `${what} → ${res.status} without error messages: ${text.slice(0, 300)}`;
  }
  // What the client sent is echoed cut (core/errors.ts, boundEchoes), in a 200 with errors as in a 400.
  const long = messages.find((m) => typeof m === "string" && m.length > MAX_ERROR_MESSAGE) as string | undefined;
  if (long) return `${what} → ${res.status} with a message of ${long.length} characters: ${long.slice(0, 200)}`;
  return null;
}

describe("hostile input on the GraphQL, header and graphql-ws faces", () => {
  it("never answers 5xx or a masked error, closes sockets only for the client's faults, and keeps serving", async () => {
    const probes = fc.oneof(
      { weight: 6, arbitrary: graphqlProbes() },
      { weight: 2, arbitrary: rawRequest.map((request): Probe => ({ kind: "raw", request })) },
      { weight: 2, arbitrary: socketScript.map((script): Probe => ({ kind: "ws", script })) },
    );
    const counts: Record<string, number> = {};
    const found: string[] = [];
    const run = async (p: Probe): Promise<string | null> => {
      counts[p.kind] = (counts[p.kind] ?? 0) + 1;
      if (p.kind === "graphql") return runGraphql(p.call, p.what);
      if (p.kind === "ws") return runSocket(p.script);
      const res = await sendRaw(p.request);
      // 0: the server's HTTP parser dropped a request it could not read (a header it refuses).
      if (res.status >= 500 || res.text.includes(UNEXPECTED))
        return `${p.request.method} ${p.request.target} ${JSON.stringify(p.request.headers).slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
      return null;
    };
    // A rejection nobody handles would end a production process: name the probes in flight.
    const inFlight = new Set<string>();
    const unhandled: string[] = [];
    const onUnhandled = (reason: unknown) =>
      unhandled.push(`${JSON.stringify(reason)?.slice(0, 300)} while ${[...inFlight].join(" || ").slice(0, 3000)}`);
    process.on("unhandledRejection", onUnhandled);
    // No answer is a 5xx, so nothing the server logs as an error is right.
    const logged = errorsLogged();
    // graphql-ws writes what it takes for the server's own fault to standard error.
    const stderr = vi.spyOn(console, "error");
    const started = Date.now();
    const details = await fc.check(
      fc.asyncProperty(fc.array(probes, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const failures = (
          await Promise.all(
            batch.map(async (p) => {
              const label = JSON.stringify(p).slice(0, 400);
              inFlight.add(label);
              try {
                return await run(p);
              } finally {
                inFlight.delete(label);
              }
            }),
          )
        ).filter((f): f is string => f !== null);
        found.push(...failures);
        return failures.length === 0;
      }),
      { numRuns: Math.ceil(RUNS / BATCH), seed: SEED, endOnFailure: true },
    );
    process.off("unhandledRejection", onUnhandled);
    logged.stop();
    const internal = stderr.mock.calls.map((c) => String(c[0])).filter((m) => /Internal error/.test(m));
    stderr.mockRestore();
    expect(internal, "graphql-ws reported a client's input as an internal error").toEqual([]);
    expect(unhandled).toEqual([]);
    if (details.failed) throw new Error(`FUZZ_SEED=${details.seed} reproduces it:\n${[...new Set(found)].slice(0, 20).join("\n")}`);
    expect(logged.lines, "logged as errors while answering generated requests").toEqual([]);
    console.log(
      `[protocol-fuzz] ${JSON.stringify(counts)} in ${((Date.now() - started) / 1000).toFixed(1)} s (${t.gateway.db.kind}); GraphQL answers: ${JSON.stringify(outcomes)}`,
    );

    // Still serving, on every face, with the fixture's data intact.
    expect((await admin.get(`/v1/spaces/${ids.spaceId}/content/page/${ids.pageId}`)).status).toBe(200);
    const viewer = await admin.graphql(`query($id: String!) { space(spaceId: $id) { id } }`, { id: ids.spaceId });
    expect(viewer.data?.space?.id).toBe(ids.spaceId);
    const client = wsClient(t.url, admin.token);
    try {
      // The fuzz used these very documents with other variables and operation names: none of
      // that may decide this subscription's validation (yoga keeps validation results per document).
      const live = collect(client, `subscription($s: String!) { spaceUpdated(spaceId: $s) { id title } }`, { s: ids.spaceId }, 1);
      live.results.catch(() => undefined); // awaited below; a refusal fails there
      await live.ready;
      expect((await admin.patch(`/v1/spaces/${ids.spaceId}`, { title: "After the fuzz" })).status).toBe(200);
      expect((await live.results)[0].data.spaceUpdated.title).toBe("After the fuzz");
    } finally {
      await client.dispose();
    }
  });
});
