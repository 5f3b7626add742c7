/** Where the REST API is served: /v1 and every path under it (the REST handler answers them all, 404s included). */
export const REST_PREFIX = "/v1";

/**
 * Whether a request path is the REST API's: routing hands it to the REST handler, the rate limit
 * counts it, route names and OPTIONS read its routes from the REST table.
 */
export function isRestPath(pathname: string): boolean {
  return pathname === REST_PREFIX || pathname.startsWith(`${REST_PREFIX}/`);
}
