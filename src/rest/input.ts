import Ajv, { type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { badInput } from "../core/errors.js";
import { checkInputValue, queryEncodingProblem, textProblem } from "../core/validate.js";
import type { RouteDef } from "./route.js";

interface CompiledRoute {
  route: RouteDef;
  regex: RegExp;
  /** The body's validator, compiled on the route's first call (compiling all of them made the first request after a start wait). */
  body?: () => ValidateFunction;
  /** The body's schema as the document publishes it (for the example of a 400). */
  bodySchema?: any;
  query: Map<string, { type: string; required: boolean; items?: string }>;
}

function describe(error: ErrorObject, root: string): string {
  const path = error.instancePath.replace(/^\//, "").replace(/\//g, ".");
  if (error.keyword === "required") {
    const missing = (error.params as any).missingProperty;
    return `${path ? `${path}.` : ""}${missing} is required.`;
  }
  if (error.keyword === "additionalProperties") {
    const extra = (error.params as any).additionalProperty;
    return `${path ? `${path}.` : ""}${extra} is not a known field of this ${root}.`;
  }
  if (error.keyword === "enum") {
    return `${path || root} must be one of ${(error.params as any).allowedValues.filter((v: unknown) => v !== null).join(", ")}.`;
  }
  return `${path || root} ${error.message}.`;
}

/** A minimal value of a schema of the document: its required fields, with placeholder values. */
function exampleOf(schema: any, doc: any, depth = 0): unknown {
  const ref = typeof schema?.$ref === "string" ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref) : null;
  if (ref) schema = doc.components?.schemas?.[ref[1]!];
  if (!schema || depth > 4) return "…";
  if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null);
  switch (schema.type) {
    case "object": {
      const required: string[] = schema.required ?? [];
      return Object.fromEntries(required.map((name) => [name, exampleOf(schema.properties?.[name], doc, depth + 1)]));
    }
    case "array":
      return [exampleOf(schema.items, doc, depth + 1)];
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return true;
    default:
      return "…";
  }
}

/**
 * The shape a body field expects, when it is an object: a wrong `body` of a comment answers
 * `… (expected {"body": {"markdown": "…"}})`.
 */
function expectedShape(error: ErrorObject, root: any, doc: any): string {
  const field = error.instancePath.split("/")[1] ?? (error.keyword === "required" ? (error.params as any).missingProperty : undefined);
  let schema = field ? root?.properties?.[field] : undefined;
  const ref = typeof schema?.$ref === "string" ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref) : null;
  if (ref) schema = doc.components?.schemas?.[ref[1]!];
  if (schema?.type !== "object") return "";
  return ` (expected ${JSON.stringify({ [field!]: exampleOf(schema, doc) })})`;
}

/**
 * Checks a request's query parameters and JSON body against the published OpenAPI document
 * before anything runs, so a wrong type or an unknown field is a 400 that names it.
 */
export function createInputValidator(doc: any, table: RouteDef[], opts: { maxJsonDepth: number }) {
  const ajv = new Ajv({ strict: false, allErrors: false });
  addFormats(ajv);
  ajv.addSchema({ components: doc.components }, "doc");
  const compiled: CompiledRoute[] = table.map((route) => {
    const op = doc.paths[`/v1${route.path}`]?.[route.method.toLowerCase()];
    const regex = new RegExp("^/v1" + route.path.replace(/\{[^}]+\}/g, "[^/]+") + "/?$");
    const query = new Map<string, { type: string; required: boolean; items?: string }>();
    for (const p of op?.parameters ?? []) {
      if (p.in === "query") query.set(p.name, { type: p.schema?.type ?? "string", required: !!p.required, items: p.schema?.items?.type });
    }
    const schema = op?.requestBody?.content?.["application/json"]?.schema;
    let validate: ValidateFunction | undefined;
    const body = schema
      ? () => (validate ??= ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"doc#/components/'))))
      : undefined;
    return { route, regex, body, bodySchema: schema, query };
  });
  // Literal segments first, so /versions/latest wins over /versions/{versionId}.
  compiled.sort((a, b) => b.route.path.replace(/\{[^}]+\}/g, "").length - a.route.path.replace(/\{[^}]+\}/g, "").length);

  const byRoute = new Map(compiled.map((c) => [c.route, c]));
  // Candidates by method and number of path segments (a route's regex matches that many only), in the order above.
  const candidates = new Map<string, CompiledRoute[]>();
  const keyOf = (method: string, pathname: string) => `${method} ${pathname.split("/").length}`;
  for (const c of compiled) {
    const key = keyOf(c.route.method, `/v1${c.route.path}`);
    candidates.set(key, [...(candidates.get(key) ?? []), c]);
  }

  /** The route a request addresses, or null. */
  function route(method: string, pathname: string): RouteDef | null {
    return (
      candidates.get(keyOf(method, pathname.endsWith("/") ? pathname.slice(0, -1) : pathname))?.find((c) => c.regex.test(pathname))
        ?.route ?? null
    );
  }

  /** The methods of the routes whose path matches `pathname` (none: no route has that path). */
  function methodsOf(pathname: string): string[] {
    return [...new Set(compiled.filter((c) => c.regex.test(pathname)).map((c) => c.route.method))];
  }

  /**
   * Throws a 400 naming the first path parameter, query parameter or body field that does not fit
   * the document, or is not storable text (NUL, lone surrogates), or nests too deeply.
   */
  function check(route: RouteDef, url: URL, body: Record<string, unknown> | null): void {
    const match = byRoute.get(route)!;
    const { searchParams } = url;
    const template = `/v1${route.path}`.split("/");
    url.pathname.split("/").forEach((segment, i) => {
      const param = /^\{(\w+)\}$/.exec(template[i] ?? "")?.[1];
      if (!param) return;
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        throw badInput(`${param}: the path segment "${segment.slice(0, 100)}" is not valid percent-encoded UTF-8.`);
      }
      const problem = textProblem(value);
      if (problem) throw badInput(`${param} ${problem}.`);
    });
    const encoding = queryEncodingProblem(url.search);
    if (encoding) throw encoding;
    for (const [name, value] of searchParams) {
      const problem = textProblem(name) ?? textProblem(value);
      if (problem) throw badInput(`${textProblem(name) ? "A query parameter name" : name} ${problem}.`);
    }
    if (body) checkInputValue("", body, opts.maxJsonDepth);
    for (const [name, value] of searchParams) {
      const spec = match.query.get(name);
      if (!spec) continue; // unknown query parameters are ignored, as browsers and proxies add some
      const kind = spec.type === "array" ? spec.items : spec.type;
      if (kind === "integer" && !/^-?\d+$/.test(value)) throw badInput(`${name} must be an integer (got "${value}").`);
      if (kind === "number" && Number.isNaN(Number(value))) throw badInput(`${name} must be a number (got "${value}").`);
      if (kind === "boolean" && value !== "true" && value !== "false") throw badInput(`${name} must be true or false (got "${value}").`);
    }
    for (const [name, spec] of match.query) {
      if (spec.required && !searchParams.has(name)) throw badInput(`${name} is required.`);
    }
    if (match.body) {
      // Explicit nulls mean "clear this value"; the resolver decides whether that is allowed.
      const present = Object.fromEntries(Object.entries(body ?? {}).filter(([, v]) => v !== null));
      const validate = match.body();
      if (!validate(present)) {
        const error = validate.errors![0]!;
        throw badInput(describe(error, "body").replace(/\.$/, expectedShape(error, match.bodySchema, doc) + "."));
      }
    }
  }

  return { route, methodsOf, check };
}
