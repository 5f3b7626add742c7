import { type GraphQLSchema, isInputObjectType, isObjectType } from "graphql";
import type { RouteDef } from "./route.js";

const STATUS_NOTE: Record<number, string> = {
  200: "Done on something that already existed.",
  201: "Created.",
};

/** Error statuses every operation may answer, and those only some routes declare (`errors`). */
const EXTRA_ERROR_STATUSES: Record<string, string> = {
  "413":
    "The request body is larger than this operation accepts (MAX_BODY_BYTES; the file upload route has its own, larger bound). Answered as soon as the count passes it, before authentication.",
  "502": "A service the operation calls did not answer, failed, or answered something invalid.",
  "507":
    "The server's storage is (almost) full: nothing was written; send the request again once space is freed. Reads go on (STORAGE_RESERVE_BYTES).",
};

const ERROR_STATUSES: Record<string, string> = {
  "400": "Bad input: the message names the parameter or field that was wrong.",
  "401": "No API token, or an unknown or revoked one.",
  "403": "The caller's role does not allow this action.",
  "404": "Not found, or not visible to the caller.",
  "409": "Conflicts with the current state.",
  "429": "Rate limit exceeded (RATE_LIMIT_PER_MINUTE per token): `Retry-After` gives the seconds to wait.",
  "500": "Unexpected error: nothing about its cause is disclosed; the server logs it.",
  "503":
    "The database could not be reached for a moment (a lost connection), or the server already holds as many request bodies as it may (MAX_BUFFERED_BODY_BYTES): `Retry-After` gives the seconds to wait before sending the request again.",
};

function toOasPath(path: string): string {
  return `/v1${path}`;
}

/**
 * Completes the document sofa-api derived from the REST projection: documented paths and
 * success codes, empty 204 bodies, the error shape, bearer authentication, and `nullable`
 * on fields whose documented value may be null.
 */
const ETAG_NOTE =
  "A validator of this answer, computed from its body: send it back in `If-None-Match` to be answered 304 while the answer is the same.";

export function finishOpenAPI(doc: any, schema: GraphQLSchema, table: RouteDef[], publicUrl: string): any {
  const byKey = new Map(table.map((r) => [`${r.method.toLowerCase()} ${r.path}`, r]));
  const paths: Record<string, any> = {};
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(item)) {
      const route = byKey.get(`${method} ${path}`);
      if (!route) continue; // sofa's own webhook routes are not part of this API
      const status = String(route.status ?? 200);
      const success = op.responses?.[status] ?? op.responses?.["200"];
      const responses: Record<string, any> = {};
      responses[status] =
        status === "204"
          ? { description: "Done; the body is empty (also when the target did not exist)." }
          : { description: success?.description || "Success", content: success?.content };
      for (const other of route.statuses ?? []) responses[String(other)] = { ...responses[status], description: STATUS_NOTE[other] };
      if (route.method === "GET" && status === "200") {
        responses["200"] = { ...responses["200"], headers: { ETag: { description: ETAG_NOTE, schema: { type: "string" } } } };
        responses["304"] = {
          description: "Not modified: the request's `If-None-Match` names this answer's `ETag`; the body is empty.",
          headers: { ETag: { description: ETAG_NOTE, schema: { type: "string" } } },
        };
      }
      const hasBody = route.method === "POST" || route.method === "PUT" || route.method === "PATCH";
      // An operation that takes a body may be answered 413 by the body bound (rest/body-limit.ts);
      // one that writes, 507 by the storage (core/db/storage-guard.ts, or PostgreSQL's disk_full).
      const writes = route.method !== "GET";
      for (const code of [
        ...Object.keys(ERROR_STATUSES),
        ...(hasBody ? ["413"] : []),
        ...(writes ? ["507"] : []),
        ...(route.errors ?? []).map(String),
      ]) {
        responses[code] = { $ref: `#/components/responses/E${code}` };
      }
      const [, fieldName] = route.field.split(".");
      // sofa lists every argument as a query parameter and, on writes, in the body as well:
      // path placeholders stay parameters, a write's other arguments live in its JSON body.
      // sofa-api places an argument in the path when the path merely contains `:name` (so `page`
      // in `/page/{pageId}`): a parameter is a path parameter only when its own placeholder is there.
      const parameters = (op.parameters ?? []).map((p: any) =>
        p.in === "path" && !path.includes(`{${p.name}}`) ? { ...p, in: "query" } : p,
      );
      // A write's arguments named in the route's `query` stay query parameters.
      const params = parameters.filter((p: any) => p.in === "path" || !hasBody || (p.in === "query" && route.query?.includes(p.name)));
      let requestBody: any;
      const bodySchema = op.requestBody?.content?.["application/json"]?.schema;
      if (hasBody && bodySchema) {
        const pathNames = new Set(params.map((p: any) => p.name));
        const properties = Object.fromEntries(Object.entries<any>(bodySchema.properties ?? {}).filter(([k]) => !pathNames.has(k)));
        const required = (bodySchema.required ?? []).filter((k: string) => !pathNames.has(k));
        requestBody = {
          required: required.length > 0,
          content: {
            "application/json": {
              schema: { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false },
            },
          },
        };
      }
      paths[toOasPath(path)] ??= {};
      paths[toOasPath(path)][method] = {
        ...op,
        operationId: fieldName,
        summary: route.summary ?? op.summary ?? undefined,
        tags: [route.tag],
        ...(route.auth === "optional" ? { security: [{}, { bearerAuth: [] }] } : {}),
        parameters: params,
        requestBody,
        responses,
      };
    }
  }
  const schemas = doc.components?.schemas ?? {};
  for (const type of Object.values(schema.getTypeMap())) {
    if ((!isObjectType(type) && !isInputObjectType(type)) || !schemas[type.name]?.properties) continue;
    // A response carries exactly the documented fields; an input takes only its known fields.
    schemas[type.name].additionalProperties = false;
    // Fields marked keepNull: a response may send null, an input may take null (it means something).
    for (const field of Object.values<any>(type.getFields())) {
      const prop = schemas[type.name].properties[field.name];
      if (!prop || !field.extensions?.keepNull) continue;
      if (prop.$ref) {
        schemas[type.name].properties[field.name] = { anyOf: [{ $ref: prop.$ref }, { type: "null" }] };
      } else {
        prop.type = [prop.type, "null"];
        if (Array.isArray(prop.enum)) prop.enum = [...prop.enum, null];
      }
    }
  }
  schemas.Error = {
    type: "object",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: { code: { type: "integer" }, message: { type: "string" } },
      },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "Documentation API",
      version: "1.0.0",
      description:
        "REST face of the documentation platform's graph. Every operation takes `Authorization: Bearer <API token>`. " +
        "Lists answer `{ next?: { page }, count, items }`; pass `next.page` as `page` for the next page. " +
        "Every answer carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (UTC epoch seconds); " +
        "past the limit the answer is 429 with `Retry-After`.",
    },
    servers: [{ url: publicUrl }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "An API token." } },
      responses: Object.fromEntries(
        Object.entries({ ...ERROR_STATUSES, ...EXTRA_ERROR_STATUSES }).map(([code, description]) => [
          `E${code}`,
          { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
        ]),
      ),
    },
  };
}
