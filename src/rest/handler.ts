import crypto from "node:crypto";
import { execute, isScalarType, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode, type FieldNode } from "graphql";
import { useSofa } from "sofa-api";
import type { RouteDef } from "./route.js";
import { projectRestSchema } from "./project.js";
import { shapeForRest } from "./shape.js";
import { finishOpenAPI } from "./openapi.js";
import { createInputValidator } from "./input.js";
import { readBodyLimited } from "./body-limit.js";
import { pickError, reportError, type ErrorBody } from "../core/error-report.js";
import { RETRY_AFTER_SECONDS } from "../core/db-faults.js";
import { badInput } from "../core/errors.js";
import type { Context } from "../core/context.js";

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
  /** The response cache's side of GET answers (src/server/response-cache.ts). */
  cache?: {
    lookupRest(request: Request, url: URL): Promise<Response | null>;
    keepRest(request: Request, url: URL, response: Response): Promise<Response>;
  };
}

type PromiseOrValue<T> = T | Promise<T>;

export function errorResponse(body: ErrorBody, headers: Record<string, string> = {}): Response {
  // A 503 (the database out of reach for a moment) tells when to try again.
  const retry: Record<string, string> = body.error.code === 503 && !Object.keys(headers).some((h) => h.toLowerCase() === "retry-after") ? { "retry-after": String(RETRY_AFTER_SECONDS) } : {};
  return new Response(JSON.stringify(body), {
    status: body.error.code,
    headers: { "content-type": "application/json; charset=utf-8", ...retry, ...headers },
  });
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
async function readBody(request: Request, maxBytes: number): Promise<{ text: string; nulls: Set<string>; json: Record<string, unknown> | null }> {
  const text = (await readBodyLimited(request, maxBytes)).toString("utf8");
  const nulls = new Set<string>();
  if (!text.trim()) return { text: "", nulls, json: null };
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
  return { text, nulls, json: parsed as Record<string, unknown> };
}

/**
 * The /v1 face of the graph. sofa-api turns each route of the table into a GraphQL operation
 * over the REST projection of the schema; this wrapper adds what the documented contract needs
 * around it: authentication first, JSON parsing with clear 400s, explicit nulls, the documented
 * error body, empty 204 answers, and the finished OpenAPI document.
 */
export function createRestHandler(opts: RestOptions) {
  const restSchema = projectRestSchema(opts.schema, opts.table);
  const routeConfig = Object.fromEntries(
    opts.table.map((r) => [
      r.field,
      { method: r.method, path: r.path.replace(/\{(\w+)\}/g, ":$1"), responseStatus: r.status ?? 200, tags: [r.tag], description: r.summary },
    ]),
  );

  const run = opts.execute ?? execute;
  const restExecute = async (args: ExecutionArgs) => {
    const result = await run(args);
    if (result.errors?.length || !result.data) return result;
    const op = args.document.definitions[0] as OperationDefinitionNode;
    const field = (op.selectionSet.selections[0] as FieldNode).name.value;
    const root = op.operation === "query" ? restSchema.getQueryType()! : restSchema.getMutationType()!;
    const type = root.getFields()[field]!.type;
    return { ...result, data: { ...result.data, [field]: shapeForRest(result.data[field], type) } };
  };

  const router = useSofa({
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
    execute: restExecute as any,
    context: ({ request, ...server }: any) => server.context,
    errorHandler: ((errors: readonly unknown[]) => errorResponse(pickError(errors))) as any,
    openAPI: { endpoint: INTERNAL_DOC } as any,
    swaggerUI: { endpoint: "" } as any,
  });

  let openapi: any;
  const openAPIDocument = () =>
    (openapi ??= finishOpenAPI((router as any).openAPIDocument, restSchema, opts.table, opts.publicUrl));
  let validator: ReturnType<typeof createInputValidator> | undefined;

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // A trailing slash names the same operation: /v1/orgs/ is /v1/orgs.
    if (url.pathname.length > 4 && url.pathname.endsWith("/")) url.pathname = url.pathname.replace(/\/+$/, "");
    if (url.pathname === "/v1/openapi.json" && request.method === "GET") return Response.json(openAPIDocument());
    if (url.pathname.startsWith("/v1/webhook") || url.pathname.startsWith("/v1/__sofa")) {
      return errorResponse({ error: { code: 404, message: `No operation ${request.method} ${url.pathname}.` } });
    }
    try {
      // A kept answer of this URL for these credentials (only 200s of valid requests are kept).
      const kept = request.method === "GET" ? await opts.cache?.lookupRest(request, url) : null;
      if (kept) return notModified(kept, request);
      const { text, nulls, json } =
        request.method === "GET" || request.method === "HEAD" || request.method === "DELETE"
          ? { text: "", nulls: new Set<string>(), json: null }
          : await readBody(request, opts.bodyLimit(request.method, url.pathname));
      validator ??= createInputValidator(openAPIDocument(), opts.table, { maxJsonDepth: opts.maxJsonDepth });
      const route = validator.route(request.method, url.pathname);
      if (!route) {
        return errorResponse({ error: { code: 404, message: `No operation ${request.method} ${url.pathname}.` } });
      }
      const context = await opts.context(request, nulls, route.auth === "optional");
      context.rest = true;
      validator.check(route, url, json);
      const forwarded = new Request(url, {
        method: request.method,
        headers: request.headers,
        body: text ? text : undefined,
      });
      const response = await router.fetch(forwarded, { context } as any);
      const answer = await withETag(withResolverChoices(await finishResponse(response, request, url), route, context), request);
      return notModified(opts.cache && request.method === "GET" ? await opts.cache.keepRest(request, url, answer) : answer, request);
    } catch (err) {
      return errorAnswer(err);
    }
  }

  /**
   * A successful GET answers an `ETag` computed from its body (so it is right whatever changed the
   * answer: the data, the caller's rights, the server's version), and 304 without a body when the
   * request's `If-None-Match` names it.
   */
  async function withETag(response: Response, request: Request): Promise<Response> {
    if (request.method !== "GET" || response.status !== 200) return response;
    const body = new Uint8Array(await response.arrayBuffer());
    const etag = `"${crypto.createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;
    const headers = new Headers(response.headers);
    headers.set("etag", etag);
    return new Response(body, { status: 200, headers });
  }

  /** The 304 of a GET whose `If-None-Match` names the answer's ETag; else the answer. */
  function notModified(response: Response, request: Request): Response {
    const etag = response.headers.get("etag");
    if (request.method !== "GET" || response.status !== 200 || !etag || !noneMatch(request.headers.get("if-none-match"), etag)) return response;
    const headers = new Headers(response.headers);
    for (const name of ["content-type", "content-length"]) headers.delete(name);
    return new Response(null, { status: 304, headers });
  }

  /** Applies the status (among those the route documents) and headers its resolver chose. */
  function withResolverChoices(response: Response, route: RouteDef, context: Context): Response {
    const { status, headers } = context.response;
    const chosen = status && response.ok && response.status !== 204 && route.statuses?.includes(status as 200 | 201) ? status : response.status;
    if (chosen === response.status && Object.keys(headers).length === 0) return response;
    const merged = new Headers(response.headers);
    if (response.ok) for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return new Response(response.body, { status: chosen, headers: merged });
  }

  async function finishResponse(response: Response, request: Request, url: URL): Promise<Response> {
    if (response.status === 204) return new Response(null, { status: 204 });
    if (response.ok) return response;
    const text = await response.text();
    let body: any = null;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (body?.error?.code) return errorResponse(body);
    if (response.status === 404) {
      return errorResponse({ error: { code: 404, message: `No operation ${request.method} ${url.pathname}.` } });
    }
    if (response.status === 405) {
      return errorResponse({ error: { code: 405, message: `Method ${request.method} is not allowed on ${url.pathname}.` } });
    }
    if (response.status < 500 && Array.isArray(body?.errors) && body.errors.length) {
      // Validation errors of the router: `{ name: "query", path: "/limit", message }`.
      const first = body.errors[0];
      const where = first.path ? String(first.path).replace(/^\//, "") : first.name;
      return errorResponse({ error: { code: response.status, message: `${where ? `${where}: ` : ""}${first.message}` } });
    }
    return errorResponse(response.status < 500 ? { error: { code: response.status, message: text || response.statusText } } : reportError(new Error(text)));
  }

  return { handle, openAPIDocument, restSchema };
}

/** Whether an `If-None-Match` header names `etag` (weak comparison: `W/` is ignored; `*` names any). */
function noneMatch(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}
