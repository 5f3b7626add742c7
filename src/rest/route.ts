/** One documented operation: its method and path under /v1, the graph field behind it, its success code. */
export interface RouteDef {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path under /v1 as the spec writes it, with `{param}` placeholders. */
  path: string;
  /** The root field that serves it, `Query.x` or `Mutation.y`. */
  field: `Query.${string}` | `Mutation.${string}`;
  /** Success status; deletes answer 204 with an empty body. Defaults to 200. */
  status?: 200 | 201 | 204;
  /** Other success statuses a resolver may choose through `ctx.response.status` (same body). */
  statuses?: (200 | 201)[];
  /** Error statuses beyond the common ones (e.g. 502 when an upstream the route calls fails). */
  errors?: 502[];
  /** Section of the API reference it belongs to. */
  tag: string;
  summary?: string;
  /** "optional": anonymous callers are served too (published content for visitors). */
  auth?: "required" | "optional";
  /** Arguments of a write read from the query string, not the body (`?compat=false`). */
  query?: string[];
  /** A file upload: its body may be as large as the upload bound instead of MAX_BODY_BYTES (rest/body-limit.ts). */
  upload?: true;
}

export function routes(tag: string, defs: Omit<RouteDef, "tag">[]): RouteDef[] {
  return defs.map((d) => ({ ...d, tag }));
}
