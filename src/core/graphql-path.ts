/** Where GraphQL is served: over HTTP and, with graphql-ws, over WebSocket. */
export const GRAPHQL_PATH = "/graphql";

/**
 * Whether a request path is the GraphQL endpoint: `/graphql`, or `/graphql/` (yoga serves both).
 * Every check of "is this GraphQL" (the rate limit, route names in logs and metrics, error bodies,
 * GraphiQL, OPTIONS) asks this, and any other path is not served as GraphQL (server.ts `routing`).
 */
export function isGraphQLPath(pathname: string): boolean {
  return pathname === GRAPHQL_PATH || pathname === `${GRAPHQL_PATH}/`;
}
