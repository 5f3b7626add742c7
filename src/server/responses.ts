import crypto from "node:crypto";
import { Response as ServerResponse } from "@whatwg-node/fetch";

/**
 * What every answer the server makes itself shares: its Response class and its validators.
 *
 * `Answer` is the server's own Response (yoga's fetch API, @whatwg-node/fetch), which the node
 * adapter writes to the socket as it is, with its length; the global one (undici's) would check
 * the text for lone surrogates, encode it into a stream and send it from there, chunked: a third
 * of the work of answering a list from the cache, and a length nobody knows before the end (the
 * compression of server/compression.ts would then take a small error for a large answer).
 */
export const Answer = ServerResponse as unknown as typeof Response;

/**
 * A strong validator of a body: its SHA-1, which tells answers apart as well as a validator needs
 * (it guards no secret) in less than half of SHA-256's time.
 */
export function etagOf(body: Uint8Array): string {
  return `"${crypto.hash("sha1", body, "base64url")}"`;
}

/** Whether an `If-None-Match` header names `etag` (weak comparison: `W/` is ignored; `*` names any). */
export function noneMatch(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

/**
 * The 304 of a request whose `If-None-Match` names `etag`, or null: the answer's headers without
 * its representation's type and length (RFC 9110 15.4.5), no body.
 */
export function notModified(request: Request, etag: string | null, headers: HeadersInit): Response | null {
  if (!etag || !noneMatch(request.headers.get("if-none-match"), etag)) return null;
  const kept = new Headers(headers);
  for (const name of ["content-type", "content-length", "content-encoding"]) kept.delete(name);
  return new Answer(null, { status: 304, headers: kept });
}
