import type { IncomingMessage } from "node:http";
import type { Plugin } from "graphql-yoga";
import { getOperationAST, type DocumentNode } from "graphql";
import { compileRawRoute, type RawRoute } from "../rest/raw-routes.js";
import { notesOf, notesOfFetchRequest, notesOfNodeRequest } from "../core/support/request-notes.js";
import type { RouteDef } from "../rest/route.js";
import { GRAPHQL_PATH, isGraphQLPath } from "../core/graphql-path.js";
import { isRestPath } from "../rest/prefix.js";

/**
 * Names the route pattern of a request from the gateway's routes: raw routes (their own
 * patterns), the /v1 table, /graphql. Unknown paths are `*`, unknown /v1 paths `/v1/*`: label
 * values stay few whatever clients send.
 */
export type RouteNamer = (method: string, pathname: string) => { route: string; operation?: string };

export function createRouteNamer(raw: readonly RawRoute[], rest: readonly RouteDef[]): RouteNamer {
  const compiled = raw.map((route) => ({ regex: compileRawRoute(route).regex, name: route.path }));
  const v1 = rest.map((def) => ({
    method: def.method,
    regex: new RegExp(`^/v1${def.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{(\w+)\\?\}/g, "[^/]+")}/?$`),
    name: `/v1${def.path}`,
    field: def.field,
  }));
  return (method, pathname) => {
    if (isGraphQLPath(pathname)) return { route: GRAPHQL_PATH };
    if (isRestPath(pathname)) {
      const m = method === "HEAD" ? "GET" : method;
      const def = v1.find((r) => r.method === m && r.regex.test(pathname));
      if (def) return { route: def.name, operation: def.field };
      return { route: v1.find((r) => r.regex.test(pathname))?.name ?? "/v1/*" };
    }
    return { route: compiled.find((r) => r.regex.test(pathname))?.name ?? "*" };
  };
}

/**
 * The yoga plugin that links yoga's fetch `Request` to the node request's notes, names its route,
 * and notes the GraphQL operation name once the document is parsed.
 */
export function useRequestNotes(routeName: RouteNamer): Plugin {
  const noteDocument = ({ args }: { args: { contextValue: unknown; document: DocumentNode; operationName?: string | null } }) => {
    const request = (args.contextValue as { request?: Request } | undefined)?.request;
    const notes = notesOf(request);
    if (!notes || notes.operation) return;
    const op = getOperationAST(args.document, args.operationName);
    notes.operation = op?.name?.value ?? (op ? `anonymous ${op.operation}` : undefined);
  };
  return {
    onRequest({ request, url, serverContext }) {
      const req = (serverContext as { req?: IncomingMessage } | undefined)?.req;
      const notes = req && notesOfNodeRequest(req);
      if (!notes) return;
      notesOfFetchRequest.set(request, notes);
      const named = routeName(request.method, url.pathname);
      notes.route = named.route;
      notes.operation = named.operation;
    },
    onExecute: noteDocument,
    onSubscribe: noteDocument,
  };
}
