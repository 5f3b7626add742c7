import compression from "compression";
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
 * The ETag of a REST GET names the answer's content, whichever coding carries it: a client's
 * `If-None-Match` is answered 304 whether it received it compressed or not.
 */
export function withCompression(
  app: (req: IncomingMessage, res: ServerResponse) => unknown,
): (req: IncomingMessage, res: ServerResponse) => void {
  const compress = compression({ threshold: COMPRESS_FROM, filter: (_req, res) => compressible(res.getHeader("content-type")) });
  return (req, res) => compress(req as never, res as never, () => void app(req, res));
}

/** Smallest body compressed, in bytes: below it the coding saves less than it costs. */
export const COMPRESS_FROM = 1024;

const COMPRESSIBLE = /^(application\/(json|graphql-response\+json|javascript|yaml|x-yaml)|text\/(html|css|javascript|plain|yaml))\s*(;|$)/i;

function compressible(type: ReturnType<ServerResponse["getHeader"]>): boolean {
  return typeof type === "string" && COMPRESSIBLE.test(type);
}
