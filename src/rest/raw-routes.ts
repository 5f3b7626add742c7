import type { Context, Services } from "../core/context.js";
import { authenticateRequest } from "../core/access/auth.js";
import { badInput, forbidden } from "../core/errors.js";
import { queryEncodingProblem, textProblem } from "../core/validate.js";
import { readBodyLimited } from "./body-limit.js";
import { errorAnswer, methodNotAllowed } from "./handler.js";

/**
 * Raw routes: the HTTP routes that do not answer JSON through the /v1 REST generator (bytes,
 * pages, redirects, SAML, forwarded requests). Each area exports its routes; the gateway's routing
 * (src/server.ts) mounts them all in one table, before /v1. This module does what they share:
 *
 * - Matching. `path` is a pattern of literal text and named parameters:
 *   `{name}` is one non-empty segment, given to the handler percent-decoded (a bad encoding
 *   answers 400); `{name*}` is the rest of a path — nothing or `/`-prefixed segments, so
 *   `/public{path*}` matches `/public`, `/public/` and `/public/a/b` — given as it was sent (still
 *   percent-encoded, fit to be forwarded); it is lazy: in `/a{x*}/b{y*}`, `x` ends at the first
 *   `/b`. A pattern that does not end with `{name*}` also matches with one trailing slash.
 *   The first route whose pattern and method match answers.
 * - Methods. GET serves HEAD too; `"*"` takes every method (the handler decides). A path that
 *   matches a route only with other methods answers 405 with `allow`; a path that matches no
 *   route is not answered here (the gateway goes on to /v1, then to GraphQL's 404).
 * - Authentication, the same as on /v1 (core/access/auth.ts `authenticateRequest`), before the path is
 *   decoded: "required" takes a live bearer token, else 401 with `www-authenticate: Bearer`;
 *   "optional" takes a request without an Authorization header as the anonymous viewer and
 *   refuses a bad token all the same; "none" does not look at the header, and its handler
 *   receives the services instead of a context.
 * - Errors. An AppError thrown by a handler answers the documented `{ error: { code, message } }`
 *   with its status; anything else is reported and answered 500 "Unexpected error.".
 */

export type RawMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/** The parameter names of a path pattern: "/a/{b}/c{d*}" → "b" | "d". */
export type RawParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? (Name extends `${infer Wildcard}*` ? Wildcard : Name) | RawParamNames<Rest>
  : never;

/** The parameters of a matched path, by name (see the module comment for their decoding). */
export type RawParams<P extends string = string> = string extends P
  ? Readonly<Record<string, string>>
  : { readonly [K in RawParamNames<P>]: string };

type Answer = Response | Promise<Response>;

interface RawRouteBase<P extends string> {
  /** The methods served (GET serves HEAD too), or "*" for every method. */
  methods: readonly RawMethod[] | "*";
  path: P;
  /**
   * Counted by the API rate limit (server/rate-limit.ts) like /v1 and /graphql: a route outside
   * them that reads the database or does real work for any caller (routes under /v1 always are).
   */
  rateLimited?: true;
}

export type RawRoute<P extends string = string> =
  | (RawRouteBase<P> & {
      auth: "none";
      handler(services: Services, params: RawParams<P>, request: Request, url: URL): Answer;
    })
  | (RawRouteBase<P> & {
      auth: "required" | "optional";
      /** `ctx.viewer` is the caller; on an "optional" route it may be the anonymous viewer. */
      handler(ctx: Context, params: RawParams<P>, request: Request, url: URL): Answer;
    });

/** Declares a raw route, typing its handler's params from its path pattern. */
export function rawRoute<P extends string>(route: RawRoute<P>): RawRoute {
  return route as unknown as RawRoute;
}

interface CompiledRoute {
  route: RawRoute;
  regex: RegExp;
  params: { name: string; wildcard: boolean }[];
  methods: ReadonlySet<string> | "*";
}

const PARAM = /\{(\w+)(\*)?\}/g;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function compileRawRoute(route: RawRoute): CompiledRoute {
  const pattern = route.path;
  if (!pattern.startsWith("/")) throw new Error(`Raw route "${pattern}": a path pattern starts with "/".`);
  const params: CompiledRoute["params"] = [];
  let source = "";
  let last = 0;
  const literal = (text: string) => {
    if (/[{}]/.test(text)) throw new Error(`Raw route "${pattern}": a parameter is written {name} or {name*}.`);
    return escapeRegex(text);
  };
  for (const m of pattern.matchAll(PARAM)) {
    const name = m[1]!;
    const wildcard = m[2] === "*";
    if (params.some((p) => p.name === name)) throw new Error(`Raw route "${pattern}": parameter {${name}} appears twice.`);
    source += literal(pattern.slice(last, m.index));
    // A segment is never empty; the rest of a path is nothing or "/"-prefixed segments, lazily.
    source += wildcard ? "((?:/[^/]*)*?)" : "([^/]+)";
    params.push({ name, wildcard });
    last = m.index! + m[0].length;
  }
  const tail = pattern.slice(last);
  source += literal(tail);
  const endsWithWildcard = tail === "" && params.at(-1)?.wildcard === true;
  const regex = new RegExp(`^${source}${endsWithWildcard ? "" : "/?"}$`);
  let methods: CompiledRoute["methods"] = "*";
  if (route.methods !== "*") {
    const set = new Set<string>(route.methods);
    if (set.has("GET")) set.add("HEAD");
    methods = set;
  }
  return { route, regex, params, methods };
}

function decodeSegment(name: string, raw: string): string {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    throw badInput(`The path segment "${raw.slice(0, 100)}" is not valid percent-encoding.`);
  }
  const problem = textProblem(value);
  if (problem) throw badInput(`${name} ${problem}.`);
  return value;
}

/** Query parameters are storable text too (they reach the database as ids and filters). */
function checkQuery(url: URL): void {
  const encoding = queryEncodingProblem(url.search);
  if (encoding) throw encoding;
  for (const [name, value] of url.searchParams) {
    const problem = textProblem(name) ?? textProblem(value);
    if (problem) throw badInput(`${textProblem(name) ? "A query parameter name" : name} ${problem}.`);
  }
}

function paramsOf(entry: CompiledRoute, match: RegExpExecArray): Record<string, string> {
  const params: Record<string, string> = {};
  entry.params.forEach((p, i) => {
    const raw = match[i + 1] ?? "";
    params[p.name] = p.wildcard ? raw : decodeSegment(p.name, raw);
  });
  return params;
}

/**
 * The router of a table of raw routes: answers a request one of them matches (405 for a known
 * path with another method), or undefined when none does.
 */
export function createRawRouter(services: Services, routes: readonly RawRoute[]) {
  const table = routes.map(compileRawRoute);

  async function answer(entry: CompiledRoute, match: RegExpExecArray, request: Request, url: URL): Promise<Response> {
    const { route } = entry;
    try {
      if (route.auth === "none") {
        checkQuery(url);
        return await route.handler(services, paramsOf(entry, match), request, url);
      }
      const ctx = await authenticateRequest(services, request, route.auth);
      // A site token only reads (as on /v1 and /graphql: core/access/auth.ts useSiteTokensReadOnly).
      if (ctx.viewer.content && request.method !== "GET" && request.method !== "HEAD") {
        throw forbidden("A site token only reads published content: this write needs an API token.");
      }
      checkQuery(url);
      return await route.handler(ctx, paramsOf(entry, match), request, url);
    } catch (err) {
      return errorAnswer(err, route.auth !== "none");
    }
  }

  async function routeRaw(request: Request, url: URL = new URL(request.url)): Promise<Response | undefined> {
    const method = request.method.toUpperCase();
    let matched = false;
    for (const entry of table) {
      const match = entry.regex.exec(url.pathname);
      if (!match) continue;
      if (entry.methods === "*" || entry.methods.has(method)) return answer(entry, match, request, url);
      matched = true;
    }
    return matched ? methodNotAllowed(request.method, url.pathname, methodsOf(url.pathname) ?? []) : undefined;
  }

  /** The methods the routes matching a path serve; undefined when none matches, or one serves every method. */
  function methodsOf(pathname: string): Set<string> | undefined {
    let allowed: Set<string> | undefined;
    for (const entry of table) {
      if (!entry.regex.test(pathname)) continue;
      if (entry.methods === "*") return undefined;
      allowed ??= new Set();
      for (const m of entry.methods) allowed.add(m);
    }
    return allowed;
  }

  return Object.assign(routeRaw, { methodsOf });
}

/**
 * Reads a raw route's request body, at most `maxBytes` of it (else 413, without reading the
 * rest). The gateway already bounds every body by MAX_BODY_BYTES (rest/body-limit.ts); a route
 * may bound its own lower.
 */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Buffer> {
  return readBodyLimited(request, maxBytes);
}
