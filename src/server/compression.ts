import compression from "compression";
import onHeaders from "on-headers";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Answers compressed for clients that accept it (`Accept-Encoding`: br, gzip or deflate, chosen
 * by the `compression` middleware's negotiation, q-values included), with `Vary: Accept-Encoding`:
 * JSON (REST, GraphQL, the OpenAPI document), HTML, CSS, JavaScript and YAML bodies of at least
 * COMPRESS_FROM bytes. Never a stream whose parts must reach the client as they are written —
 * server-sent events (subscriptions), multipart answers (@defer/@stream) — nor an answer whose
 * `Cache-Control` says `no-transform`. A client that sends no `Accept-Encoding` gets the bytes as
 * they are, at the cost of the negotiation only.
 *
 * A compressed answer's ETag is made weak (`W/"…"`): the same content, other bytes than the plain
 * answer's, which keeps the strong tag (RFC 9110 8.8.1). `If-None-Match` compares weakly, so a
 * client is answered 304 with either tag.
 */
export function withCompression(
  app: (req: IncomingMessage, res: ServerResponse) => unknown,
): (req: IncomingMessage, res: ServerResponse) => void {
  const compress = compression({ threshold: COMPRESS_FROM, filter: (_req, res) => compressible(res.getHeader("content-type")) });
  return (req, res) => {
    if (!req.headers["accept-encoding"]) {
      // Nothing will be compressed (the middleware sends identity without the header): of its
      // work only the Vary it adds remains, without its negotiation and stream wrapping — about
      // a tenth of an answer from the response cache.
      onHeaders(res, () => varyWhenCompressible(res));
      return void app(req, res);
    }
    // Registered before the middleware's own listener, so it runs after it: the coding is chosen.
    onHeaders(res, () => weakenWhenEncoded(res));
    compress(req as never, res as never, () => void app(req, res));
  };
}

const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;

/** `Vary: Accept-Encoding` on the answers the middleware would compress for a client that asked (as it adds it). */
function varyWhenCompressible(res: ServerResponse): void {
  if (!compressible(res.getHeader("content-type")) || NO_TRANSFORM.test(String(res.getHeader("cache-control") ?? ""))) return;
  const vary = res.getHeader("vary");
  if (!vary) res.setHeader("vary", "Accept-Encoding");
  else if (!/(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(String(vary))) res.setHeader("vary", `${vary}, Accept-Encoding`);
}

/** Smallest body compressed, in bytes: below it the coding saves less than it costs. */
export const COMPRESS_FROM = 1024;

const COMPRESSIBLE = /^(application\/(json|graphql-response\+json|javascript|yaml|x-yaml)|text\/(html|css|javascript|plain|yaml))\s*(;|$)/i;

export function compressible(type: ReturnType<ServerResponse["getHeader"]>): boolean {
  return typeof type === "string" && COMPRESSIBLE.test(type);
}

function weakenWhenEncoded(res: ServerResponse): void {
  const coding = res.getHeader("content-encoding");
  const etag = res.getHeader("etag");
  if (!coding || coding === "identity" || coding === "none" || typeof etag !== "string" || etag.startsWith("W/")) return;
  res.setHeader("etag", `W/${etag}`);
}
