import zlib from "node:zlib";
import { promisify } from "node:util";
import Negotiator from "negotiator";
import { COMPRESS_FROM, compressible } from "./compression.js";
import { Answer, etagOf, notModified } from "./responses.js";
import { lazy } from "../core/support/lazy.js";

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/** The codings made ahead, in the compression middleware's order of preference. */
const CODINGS = ["br", "gzip"] as const;
type Coding = (typeof CODINGS)[number];

interface Made {
  bytes: Buffer;
  etag: string;
  /** Each coding's bytes, made once when first asked (a coding that failed is made again by the next request asking for it). */
  coded: Record<Coding, () => Promise<Buffer>>;
}

/**
 * An answer whose bytes are fixed for the life of the process — the OpenAPI document, the API
 * reference's and the dashboard's files, the icon — made once instead of at every request.
 *
 * Built and encoded once (when first asked): a strong ETag (the SHA-1 of the bytes), and for
 * compressible types of COMPRESS_FROM bytes or more their br and gzip codings, each compressed
 * once at a high level off the event loop, chosen from `Accept-Encoding` by the same negotiator
 * as the compression middleware (which leaves an answer already encoded as it is, and makes a
 * coded answer's tag weak). `If-None-Match` naming the tag (weak comparison) answers 304 without
 * a body. HEAD is answered as GET (the node server sends no body).
 *
 * Without it the OpenAPI document was serialized, and Swagger UI's bundle read from disk and
 * compressed, at every request: within the rate limit, a core's worth for a few anonymous clients.
 */
export function fixedAnswer(
  make: () => Buffer | string | Promise<Buffer | string>,
  headers: Record<string, string>,
): (request: Request) => Promise<Response> {
  // Made once, by the first request (those arriving meanwhile wait for it); a failure is not
  // kept: the next request makes it again.
  const making = lazy(() => Promise.resolve().then(make).then(prepare));
  const codes = compressible(headers["content-type"]);
  return async (request) => {
    const made = await making();
    const common = { ...headers, etag: made.etag, vary: "Accept-Encoding" };
    const unchanged = notModified(request, made.etag, common);
    if (unchanged) return unchanged;
    const coding = codes && made.bytes.length >= COMPRESS_FROM ? negotiated(request) : undefined;
    if (!coding) return new Answer(made.bytes as BodyInit, { headers: common });
    const bytes = await made.coded[coding]();
    return new Answer(bytes as BodyInit, { headers: { ...common, "content-encoding": coding } });
  };
}

function prepare(content: Buffer | string): Made {
  const bytes = typeof content === "string" ? Buffer.from(content) : content;
  return { bytes, etag: etagOf(bytes), coded: { br: lazy(() => encode(bytes, "br")), gzip: lazy(() => encode(bytes, "gzip")) } };
}

function encode(bytes: Buffer, coding: Coding): Promise<Buffer> {
  return coding === "br"
    ? brotli(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } })
    : gzip(bytes, { level: 9 });
}

/** The coding the client prefers among those made ahead, or undefined (identity; or deflate, which the middleware makes). */
function negotiated(request: Request): Coding | undefined {
  const accept = request.headers.get("accept-encoding");
  if (!accept) return undefined;
  // negotiator 0.6 takes the preferred codings too (as the middleware calls it); its types lag.
  const negotiator = new Negotiator({ headers: { "accept-encoding": accept } }) as unknown as {
    encoding(available: string[], preferred: string[]): string | undefined;
  };
  const chosen = negotiator.encoding(["br", "gzip", "deflate", "identity"], [...CODINGS]);
  return (CODINGS as readonly string[]).includes(chosen ?? "") ? (chosen as Coding) : undefined;
}
