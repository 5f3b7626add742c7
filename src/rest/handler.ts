import {
  execute,
  GraphQLBoolean,
  GraphQLError,
  isInputObjectType,
  isScalarType,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLOutputType,
  type GraphQLSchema,
  type TypeNode,
} from "graphql";
import { buildOperationNodeForField } from "@graphql-tools/utils";
import qs from "qs";
import { createSofa, useSofa } from "sofa-api";
import type { RouteDef } from "./route.js";
import { projectRestSchema } from "./schema-projection.js";
import { shapeForRest } from "./shape.js";
import { finishOpenAPI } from "./openapi.js";
import { createInputValidator } from "./input.js";
import { readBodyLimited, utf8Text } from "./body-limit.js";
import { fixedAnswer } from "../server/precomputed-responses.js";
import { Answer, etagOf, notModified as notModifiedAnswer } from "../server/responses.js";
import { pickError, reportError, type ErrorBody } from "../core/error-report.js";
import { RETRY_AFTER_SECONDS } from "../core/db/db-faults.js";
import { badInput, boundEchoes } from "../core/errors.js";
import type { Context } from "../core/context.js";
import { Flights } from "./request-coalescing.js";
import { credentialsOf } from "../core/access/auth.js";
import { noteViewer, notesOf } from "../core/support/request-notes.js";

const INTERNAL_DOC = "/__sofa/openapi.json";

export interface RestOptions {
  schema: GraphQLSchema;
  table: RouteDef[];
  publicUrl: string;
  /**
   * Builds the resolver context of a REST call: throws AppError(401) without a valid token,
   * unless the route takes anonymous callers (then the viewer is anonymous).
   */
  context: (request: Request, explicitNulls: Set<string>, allowAnonymous: boolean) => Promise<Context>;
  /** The body bound of a request (rest/body-limit.ts `bodyLimits`). */
  bodyLimit: (method: string, pathname: string) => number;
  /** Deepest nesting of objects and arrays in a body (MAX_JSON_DEPTH). */
  maxJsonDepth: number;
  /**
   * Runs a route's operation: the gateway's envelop `execute` (yoga's plugins see /v1 operations
   * as they see /graphql ones); graphql's `execute` when absent.
   */
  execute?: (args: ExecutionArgs) => PromiseOrValue<ExecutionResult>;
  /**
   * Request coalescing (REQUEST_COALESCING): GETs of the same URL with the same credentials that
   * arrive together share one answer, made after all of them arrived (rest/request-coalescing.ts).
   */
  coalesce?: boolean;
  /** The response cache's side of GET answers (src/server/response-cache.ts). */
  cache?: {
    /** The answer kept for this URL and these credentials, or null. */
    lookupRest(request: Request, url: URL): Promise<KeptAnswer | null>;
    /** Keeps a GET's 200 answer, when its request allows it (it wrote nothing, read nothing outside). */
    keepRest(request: Request, url: URL, answer: KeptAnswer): Promise<void>;
  };
}

/** A GET's 200 answer as the response cache keeps it: its headers (the ETag among them) and its body (text, or its UTF-8 bytes). */
export interface KeptAnswer {
  headers: [string, string][];
  body: string | Buffer;
}

type PromiseOrValue<T> = T | Promise<T>;

/**
 * Longest a GET waits for the identical one under way to land before its own answer is made
 * anyway (rest/request-coalescing.ts): answers take a few milliseconds; a slow one does not hold the next.
 */
const COALESCE_MAX_WAIT_MS = 20;

/** An answer as the GETs of a flight share it, and the caller it was made for. */
interface SharedAnswer {
  status: number;
  headers: [string, string][];
  body: Buffer | null;
  viewer: string | undefined;
}

/** What a GET's answer depends on besides the server's state: its URL (path and query) and its caller's credentials. */
function readKey(request: Request, url: URL): string {
  return `${url.pathname}${url.search}\u0000${credentialsOf(request)}`;
}

export function errorResponse(body: ErrorBody, headers: Record<string, string> = {}): Response {
  // Every REST error body is made here: a message that quotes a path or a value as sent (graphql's,
  // yoga's, the 404 and 405 of unknown paths) quotes it cut (core/errors.ts, boundEchoes).
  body = { ...body, error: { ...body.error, message: boundEchoes(body.error.message) } };
  // A 503 (the database out of reach for a moment) tells when to try again.
  const retry: Record<string, string> =
    body.error.code === 503 && !Object.keys(headers).some((h) => h.toLowerCase() === "retry-after")
      ? { "retry-after": String(RETRY_AFTER_SECONDS) }
      : {};
  return new Answer(JSON.stringify(body), {
    status: body.error.code,
    headers: { "content-type": "application/json; charset=utf-8", ...retry, ...headers },
  });
}

/** HTTP methods in the order an `Allow` header lists them. */
const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/**
 * The `allow` of a path whose routes serve `allowed` (RFC 9110 10.2.1): HEAD with GET (a GET route
 * serves HEAD too), and OPTIONS, which every path answers.
 */
export function allowHeader(allowed: Iterable<string>): string {
  const methods = new Set(allowed);
  if (methods.has("GET")) methods.add("HEAD");
  methods.add("OPTIONS");
  return METHOD_ORDER.filter((m) => methods.has(m)).join(", ");
}

/** The 405 of a path that other methods serve (RFC 9110 15.5.6), with their `allow`. */
export function methodNotAllowed(method: string, pathname: string, allowed: Iterable<string>): Response {
  return errorResponse(
    { error: { code: 405, message: `Method ${method} is not allowed on ${pathname}.` } },
    { allow: allowHeader(allowed) },
  );
}

/**
 * The answer of a failed request: an AppError keeps its status and message, anything else is
 * reported and masked as a 500 (core/error-report.ts). On routes that take a bearer token, a 401
 * says so with `www-authenticate: Bearer`.
 */
export function errorAnswer(err: unknown, bearer = true): Response {
  const body = reportError(err);
  return errorResponse(body, bearer && body.error.code === 401 ? { "www-authenticate": "Bearer" } : {});
}

/** Reads a JSON request body once, at most `maxBytes` of it (else 413): malformed JSON or a non-object is a 400. */
async function readBody(request: Request, maxBytes: number): Promise<{ nulls: Set<string>; json: Record<string, unknown> | null }> {
  const text = utf8Text(await readBodyLimited(request, maxBytes));
  const nulls = new Set<string>();
  if (!text.trim()) return { nulls, json: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw badInput(`The request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw badInput("The request body must be a JSON object.");
  }
  for (const [key, value] of Object.entries(parsed)) if (value === null) nulls.add(key);
  return { nulls, json: parsed as Record<string, unknown> };
}

/**
 * The /v1 face of the graph. sofa-api turns each route of the table into a GraphQL operation
 * over the REST projection of the schema (and publishes the OpenAPI document of them); this
 * handler runs those operations itself, each built once per route, and adds what the documented
 * contract needs around them: authentication first, JSON parsing with clear 400s, explicit nulls,
 * the documented error body, empty 204 answers, ETags, and the finished OpenAPI document.
 */
export function createRestHandler(opts: RestOptions) {
  const restSchema = projectRestSchema(opts.schema, opts.table);
  const routeConfig = Object.fromEntries(
    opts.table.map((r) => [
      r.field,
      {
        method: r.method,
        path: r.path.replace(/\{(\w+)\}/g, ":$1"),
        responseStatus: r.status ?? 200,
        tags: [r.tag],
        description: r.summary,
      },
    ]),
  );
  const sofaConfig = {
    basePath: "/v1",
    schema: restSchema,
    routes: routeConfig as any,
    depthLimit: 2,
    // Scalars that carry a JSON schema (string enumerations GraphQL enums cannot spell, JSON objects)
    // are inlined wherever they appear, arguments included: a $ref would name a missing component.
    customScalars: Object.fromEntries(
      Object.values(restSchema.getTypeMap())
        .filter((t) => isScalarType(t) && t.extensions?.jsonSchema)
        .map((t) => [t.name, t.extensions.jsonSchema]),
    ),
    openAPI: { endpoint: INTERNAL_DOC } as any,
    swaggerUI: { endpoint: "" } as any,
  };
  // sofa's router is built for its OpenAPI document; requests are answered by `operations` below.
  const router = useSofa(sofaConfig);
  const operations = createRouteOperations(restSchema, createSofa(sofaConfig));
  const run = opts.execute ?? execute;
  const flights = opts.coalesce ? new Flights<SharedAnswer>(COALESCE_MAX_WAIT_MS) : undefined;

  let openapi: any;
  const openAPIDocument = () => (openapi ??= finishOpenAPI((router as any).openAPIDocument, restSchema, opts.table, opts.publicUrl));
  /** The OpenAPI document as it is answered, encoded once (`/v1/openapi.json`, and `/openapi.json` in rest/docs-page.ts). */
  const openAPIAnswer = fixedAnswer(() => JSON.stringify(openAPIDocument()), {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-cache",
  });
  let validator: ReturnType<typeof createInputValidator> | undefined;
  const inputValidator = () => (validator ??= createInputValidator(openAPIDocument(), opts.table, { maxJsonDepth: opts.maxJsonDepth }));

  /** The methods that /v1 routes serve on a path (none where no route is): its `allow`. */
  function methodsOf(pathname: string): string[] {
    const path = withoutTrailingSlash(pathname);
    if (path === "/v1/openapi.json") return ["GET"];
    return unrouted(path) ? [] : inputValidator().methodsOf(path);
  }

  /**
   * Answers a /v1 request; `parsed` is its URL when the caller has already read it (it is not
   * changed). HEAD is answered as GET (the node server sends its headers, the length among them,
   * without the body); a path that other methods serve answers 405 with `allow`.
   */
  async function handle(request: Request, parsed?: URL): Promise<Response> {
    let url = parsed ?? new URL(request.url);
    if (url.pathname !== withoutTrailingSlash(url.pathname)) {
      url = new URL(url.href);
      url.pathname = withoutTrailingSlash(url.pathname);
    }
    const method = request.method === "HEAD" ? "GET" : request.method;
    if (url.pathname === "/v1/openapi.json")
      return method === "GET" ? openAPIAnswer(request) : methodNotAllowed(request.method, url.pathname, ["GET"]);
    if (unrouted(url.pathname)) return noOperation(request.method, url.pathname);
    try {
      // A kept answer of this URL for these credentials (only 200s of valid requests are kept).
      const kept = method === "GET" ? await opts.cache?.lookupRest(request, url) : null;
      if (kept) return notModified(new Answer(kept.body as BodyInit, { status: 200, headers: kept.headers }), request);
      if (method !== "GET" || !flights) return notModified(await answerRequest(request, url, method), request);
      // Identical GETs arriving together share one answer (rest/request-coalescing.ts), each its own 304.
      const shared = await flights.join(readKey(request, url), () => sharedAnswer(request, url));
      if (shared.viewer) noteViewer(request, shared.viewer);
      return notModified(new Answer(shared.body as BodyInit | null, { status: shared.status, headers: shared.headers }), request);
    } catch (err) {
      return errorAnswer(err);
    }
  }

  /** A GET's answer as the requests of its flight share it: its status, headers and bytes, and the caller noted for the log. */
  async function sharedAnswer(request: Request, url: URL): Promise<SharedAnswer> {
    const response = await answerRequest(request, url, "GET");
    const body = response.body ? Buffer.from(await response.arrayBuffer()) : null;
    return { status: response.status, headers: [...response.headers], body, viewer: notesOf(request)?.viewer };
  }

  /** Answers a /v1 request (a GET's 200 without regard to its If-None-Match): its body read, its caller authenticated, its operation run. */
  async function answerRequest(request: Request, url: URL, method: string): Promise<Response> {
    try {
      const { nulls, json } =
        method === "GET" || method === "DELETE"
          ? { nulls: new Set<string>(), json: null }
          : await readBody(request, opts.bodyLimit(request.method, url.pathname));
      const validator = inputValidator();
      const route = validator.route(method, url.pathname);
      if (!route) {
        const allowed = validator.methodsOf(url.pathname);
        if (allowed.length) return methodNotAllowed(request.method, url.pathname, allowed);
        return noOperation(request.method, url.pathname);
      }
      const context = await opts.context(request, nulls, route.auth === "optional");
      context.rest = true;
      validator.check(route, url, json);
      const cache = method === "GET" ? opts.cache : undefined;
      const keep = cache && ((answer: KeptAnswer) => cache.keepRest(request, url, answer));
      return await answerOf(operations.of(route), url, json, context, request, keep);
    } catch (err) {
      return errorAnswer(err);
    }
  }

  /**
   * Runs a route's operation and makes its answer: the documented shape of the field's value with
   * the route's status (or one its resolver chose among those the route documents) and the
   * headers the resolver chose; a GET's 200 carries an `ETag` computed from its body (so it is
   * right whatever changed the answer: the data, the caller's rights, the server's version), and
   * is handed to `keep` (the response cache) before it is sent.
   * A failed operation answers the documented error body of its most severe error.
   */
  async function answerOf(
    operation: RouteOperation,
    url: URL,
    body: Record<string, unknown> | null,
    context: Context,
    request: Request,
    keep?: (answer: KeptAnswer) => Promise<void>,
  ): Promise<Response> {
    let result: ExecutionResult;
    try {
      const variableValues = operation.variables(url, body ?? {});
      result = await run({
        schema: restSchema,
        document: operation.document,
        contextValue: context,
        variableValues,
        operationName: operation.name,
      });
    } catch (err) {
      return errorResponse(pickError([err]));
    }
    if (result.errors?.length) return errorResponse(pickError(result.errors));
    const { route } = operation;
    const { status: chosen, headers: chosenHeaders } = context.response;
    if (route.status === 204) return new Response(null, { status: 204, headers: chosenHeaders });
    const text = JSON.stringify(
      shapeForRest((result.data as Record<string, unknown> | null | undefined)?.[operation.field], operation.type) ?? null,
    );
    const status = chosen && route.statuses?.includes(chosen as 200 | 201) ? chosen : (route.status ?? 200);
    const headers: Record<string, string> = { "content-type": JSON_TYPE };
    for (const name in chosenHeaders) headers[name.toLowerCase()] = chosenHeaders[name]!;
    if (!READS.has(request.method) || status !== 200) return new Answer(text, { status, headers });
    // Encoded once: the ETag is the hash of the bytes sent.
    const bytes = Buffer.from(text);
    headers.etag = etagOf(bytes);
    await keep?.({ headers: Object.entries(headers), body: text });
    return new Answer(bytes as BodyInit, { status, headers });
  }

  /** The 304 of a GET (or HEAD) whose `If-None-Match` names the answer's ETag; else the answer. */
  function notModified(response: Response, request: Request): Response {
    if (!READS.has(request.method) || response.status !== 200) return response;
    return notModifiedAnswer(request, response.headers.get("etag"), response.headers) ?? response;
  }

  return { handle, methodsOf, openAPIDocument, openAPIAnswer, restSchema, coalesced: flights?.stats };
}

/** The 404 of a path under /v1 that no operation serves. */
export function noOperation(method: string, pathname: string): Response {
  return errorResponse({ error: { code: 404, message: `No operation ${method} ${pathname}.` } });
}

/** A trailing slash names the same operation: /v1/orgs/ is /v1/orgs. */
function withoutTrailingSlash(pathname: string): string {
  return pathname.length > 4 && pathname.endsWith("/") ? pathname.replace(/\/+$/, "") : pathname;
}

/** Paths under /v1 that sofa-api would serve on its own, and the gateway does not. */
function unrouted(pathname: string): boolean {
  return pathname.startsWith("/v1/webhook") || pathname.startsWith("/v1/__sofa");
}

const JSON_TYPE = "application/json; charset=utf-8";

/** The methods that read a route's answer: GET, and HEAD (its headers alone). */
export const READS: ReadonlySet<string> = new Set(["GET", "HEAD"]);

/** A route's GraphQL operation, built once: its document and how its variables are read from a request. */
interface RouteOperation {
  route: RouteDef;
  document: DocumentNode;
  name: string | undefined;
  /** The root field it selects, and that field's type in the REST schema (for the shaping). */
  field: string;
  type: GraphQLOutputType;
  /** The operation's variables: path parameters, then the query string, then the JSON body. */
  variables(url: URL, body: Record<string, unknown>): Record<string, unknown>;
}

/**
 * The operation of each route, as sofa-api builds it (same document, same variables from the
 * path, the query string and the body), made on a route's first call and kept.
 */
function createRouteOperations(schema: GraphQLSchema, sofa: { models: string[]; ignore: string[]; depthLimit: number }) {
  const built = new Map<RouteDef, RouteOperation>();

  function build(route: RouteDef): RouteOperation {
    const [root, field] = route.field.split(".") as ["Query" | "Mutation", string];
    const rootType = root === "Query" ? schema.getQueryType()! : schema.getMutationType()!;
    const node = buildOperationNodeForField({
      kind: root === "Query" ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION,
      schema,
      field,
      models: sofa.models,
      ignore: sofa.ignore,
      circularReferenceDepth: sofa.depthLimit,
    });
    const template = `/v1${route.path}`.split("/");
    const inputs = (node.variableDefinitions ?? []).map((definition) => {
      const name = definition.variable.name.value;
      return { name, segment: template.indexOf(`{${name}}`), read: variableReader(schema, definition.type) };
    });
    const fromQuery = inputs.some((input) => input.segment < 0);
    return {
      route,
      document: { kind: Kind.DOCUMENT, definitions: [node] },
      name: node.name?.value,
      field,
      type: rootType.getFields()[field]!.type,
      variables(url, body) {
        const segments = url.pathname.split("/");
        const query = fromQuery && url.search.length > 1 ? qs.parse(url.search.slice(1)) : EMPTY;
        const values: Record<string, unknown> = {};
        for (const input of inputs) {
          try {
            // As sofa-api reads them: a path parameter (decoded), else the query's value unless empty, else the body's.
            const raw =
              input.segment >= 0
                ? decodeURIComponent(segments[input.segment]!)
                : (query as Record<string, unknown>)[input.name] || body[input.name];
            if (raw === null || raw === undefined) continue;
            const value = input.read(raw);
            if (value !== undefined) values[input.name] = value;
          } catch (err) {
            // Named: `?limit=1&limit=2` is "limit: Int cannot represent non-integer value: [\"1\", \"2\"]".
            const message = (err as Error)?.message || String(err);
            throw new GraphQLError(`${input.name}: ${message}`, { extensions: { http: { status: 400 } } });
          }
        }
        return values;
      },
    };
  }

  return {
    of(route: RouteDef): RouteOperation {
      let operation = built.get(route);
      if (!operation) built.set(route, (operation = build(route)));
      return operation;
    },
  };
}

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * Turns a value of the path, the query string or the body into a variable's value as sofa-api
 * does: a scalar through its `serialize` ("true"/true for Boolean), an input object parsed from
 * JSON text when it is a string, a list item by item (a single value is a list of one).
 */
function variableReader(schema: GraphQLSchema, type: TypeNode): (value: unknown) => unknown {
  if (type.kind === Kind.NON_NULL_TYPE) return variableReader(schema, type.type);
  if (type.kind === Kind.LIST_TYPE) {
    const item = variableReader(schema, type.type);
    return (value) => (Array.isArray(value) ? value : [value]).map(item);
  }
  const named = schema.getType(type.name.value);
  if (isScalarType(named)) {
    if (named.name === GraphQLBoolean.name) return (value) => named.serialize(value === "true" || value === true);
    return (value) => named.serialize(value);
  }
  if (isInputObjectType(named)) return (value) => (value && typeof value === "object" ? value : JSON.parse(value as string));
  return (value) => value;
}
