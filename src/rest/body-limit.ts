import type { IncomingMessage, ServerResponse } from "node:http";
import { AsyncResource } from "node:async_hooks";
import { isUtf8 } from "node:buffer";
import { uploadBodyBytes, type Config } from "../config.js";
import { AppError, badInput } from "../core/errors.js";
import { RETRY_AFTER_SECONDS } from "../core/db/db-faults.js";
import { errorBodyFor } from "../core/error-report.js";
import type { RouteDef } from "./route.js";

/**
 * One bound for every request body, whatever answers it (/v1, /graphql, raw routes, SAML, the
 * integrations' public endpoints, the admin channel): `MAX_BODY_BYTES`, or the larger
 * upload bound on the routes marked `upload` (the file's bytes travel base64-encoded in JSON).
 *
 * The HTTP server reads each body before anything else runs — before routing, parsing and
 * authentication — counting bytes as they arrive (`withBodyLimit`): a declared Content-Length
 * past the bound is answered 413 at once without reading, a streamed body as soon as the count
 * passes it. Readers further on (`readBodyLimited`: the REST handler, raw routes) bound what
 * they read too, so requests given to the Fetch entry point directly are bounded the same way.
 *
 * A JSON body must be UTF-8 (RFC 8259 8.1): bytes that are not are answered 400 naming where
 * they are, never decoded into replacement characters and stored as the client's text. The
 * server checks every body sent as JSON (`application/json`, `…+json`) or as a GraphQL document
 * (`application/graphql`) as it reads it; the REST handler decodes its bodies strictly
 * (`utf8Text`) whatever their declared type.
 */

/** A body the server cannot hold now: the bodies under way already hold MAX_BUFFERED_BODY_BYTES. */
export class ServerBusy extends AppError {
  constructor() {
    super(503, "The server is receiving too many request bodies at once (MAX_BUFFERED_BODY_BYTES); try again in a moment.");
  }
}

export class BodyTooLarge extends AppError {
  constructor(readonly limit: number) {
    super(
      413,
      `The request body is larger than ${limit} bytes, the most this route accepts (MAX_BODY_BYTES${limit > 1 << 20 ? " or the upload bound" : ""}).`,
    );
  }
}

const DIGITS = /^\d+$/;

/**
 * Reads a request's body, at most `maxBytes` of it: throws BodyTooLarge (413) as soon as more
 * arrives, or at once when the declared Content-Length is larger, and a 400 for a malformed
 * Content-Length.
 */
export async function readBodyLimited(request: Request, maxBytes: number): Promise<Buffer> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!DIGITS.test(declared.trim())) throw badInput("The Content-Length header must be a single non-negative integer.");
    if (Number(declared) > maxBytes) throw new BodyTooLarge(maxBytes);
  }
  if (!request.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      size += part.value.byteLength;
      if (size > maxBytes) throw new BodyTooLarge(maxBytes);
      chunks.push(part.value);
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  }
  return Buffer.concat(chunks, size);
}

/** Decodes a body that must be UTF-8 text (a leading byte order mark is dropped), else a 400 naming the first bad byte. */
export function utf8Text(bytes: Uint8Array, what = "The request body"): string {
  if (isUtf8(bytes)) return STRICT_UTF8.decode(bytes);
  throw notUtf8(bytes, what);
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

function notUtf8(bytes: Uint8Array, what: string): AppError {
  const { at, truncated } = firstBadSequence(bytes);
  const byte = `byte ${at} (0x${bytes[at]!.toString(16).toUpperCase().padStart(2, "0")})`;
  const where = truncated
    ? `it ends in the middle of the UTF-8 character that ${byte} starts`
    : `${byte} does not start a well-formed UTF-8 character`;
  return badInput(`${what} is not valid UTF-8, which JSON requires: ${where}.`);
}

/**
 * Where the first ill-formed sequence starts (RFC 3629: no overlong forms, surrogates or code
 * points past U+10FFFF), and whether it is a character the body ends in the middle of.
 */
function firstBadSequence(bytes: Uint8Array): { at: number; truncated: boolean } {
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (!length) return { at: i, truncated: false };
    // The second byte's range depends on the first.
    const low = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const high = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k];
      if (c === undefined) return { at: i, truncated: true };
      if (c < (k === 1 ? low : 0x80) || c > (k === 1 ? high : 0xbf)) return { at: i, truncated: false };
    }
    i += length;
  }
  return { at: 0, truncated: false };
}

/** Media types whose bodies are UTF-8 text: `application/json`, `application/<anything>+json`, and GraphQL documents (`application/graphql`). */
const UTF8_BODY = /^application\/(([\w.-]+\+)?json|graphql)\s*(;|$)/i;

/** The body bound of a request: the upload bound on upload routes, MAX_BODY_BYTES elsewhere. */
export function bodyLimits(config: Config, table: readonly RouteDef[]) {
  const uploads = table
    .filter((r) => r.upload)
    .map((r) => ({ method: r.method, regex: new RegExp("^/v1" + r.path.replace(/\{[^}]+\}/g, "[^/]+") + "/?$") }));
  return (method: string, pathname: string): number =>
    uploads.some((u) => u.method === method && u.regex.test(pathname)) ? uploadBodyBytes(config) : config.maxBodyBytes;
}

const NO_BODY = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Wraps the Node request listener (the gateway's HTTP face) so that a request reaches it only
 * with its whole body read, within the bound `limitFor` gives its method and path. The bytes are
 * handed on as the request's body (`req.body`, which the Fetch adapter under yoga takes as is).
 *
 * Past the bound, the answer is 413 at once, with `connection: close`; then up to `lingerBytes`
 * more of what the client is still sending are read and dropped, so that it gets to read the
 * answer (closing at once would reset the connection under it), and the connection is closed
 * when the body ends or `lingerMs` after the answer.
 */
export function withBodyLimit(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
  opts: { limitFor: (method: string, pathname: string) => number; lingerBytes: number; lingerMs: number; maxBufferedBytes?: number },
): (req: IncomingMessage, res: ServerResponse) => void {
  // Bytes of bodies held by requests under way, all together: each is read whole before anything
  // else (authentication included), so without a budget many slow or large bodies at once
  // (an upload's bound is 14 MB) could hold any amount of memory.
  const budget = opts.maxBufferedBytes ?? Infinity;
  let held = 0;
  return (req, res) => {
    const method = req.method ?? "GET";
    if (NO_BODY.has(method)) return listener(req, res);
    // Go on in the caller's async context (request-scoped logging), not the socket's.
    const proceed = AsyncResource.bind(() => listener(req, res));
    const pathname = pathOf(req);
    const limit = opts.limitFor(method, pathname);
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > limit) return refuse(req, res, new BodyTooLarge(limit), opts);
    const chunks: Buffer[] = [];
    let size = 0;
    // What this request holds of the budget, given back when its answer is done or its connection gone.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held -= size;
    };
    res.once("close", release);
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > limit) {
        stop();
        release();
        chunks.length = 0;
        return refuse(req, res, new BodyTooLarge(limit), opts);
      }
      if (held + chunk.length > budget) {
        stop();
        release();
        chunks.length = 0;
        return refuse(req, res, new ServerBusy(), opts);
      }
      size += chunk.length;
      held += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      if (size) {
        const body = Buffer.concat(chunks, size);
        if (UTF8_BODY.test(req.headers["content-type"] ?? "") && !isUtf8(body))
          return refuse(req, res, notUtf8(body, "The request body"), opts);
        (req as IncomingMessage & { body?: Buffer }).body = body;
      }
      proceed();
    };
    const onError = () => stop();
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  };
}

/** A request's path ("/" when its URL cannot be read: the listener answers a bad URL). */
function pathOf(req: IncomingMessage): string {
  try {
    return new URL(req.url ?? "/", "http://gateway").pathname;
  } catch {
    return "/";
  }
}

function refuse(req: IncomingMessage, res: ServerResponse, err: AppError, opts: { lingerBytes: number; lingerMs: number }): void {
  req.pause();
  const complete = req.complete;
  if (!complete) {
    // The connection is not reused (the client is told so), but it is only half-closed after the
    // answer: Node would close it whole, and unread bytes would reset it before the client read
    // the answer. The rest is read and dropped, within `lingerBytes` and `lingerMs`.
    const socket = req.socket;
    socket.destroySoon = () => void socket.end();
    let dropped = 0;
    const timer = setTimeout(() => socket.destroy(), opts.lingerMs);
    timer.unref();
    req.once("end", () => {
      clearTimeout(timer);
      socket.destroy();
    });
    req.on("data", (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > opts.lingerBytes) req.pause();
    });
  }
  res.writeHead(err.status, {
    "content-type": "application/json; charset=utf-8",
    ...(err.status === 503 ? { "retry-after": String(RETRY_AFTER_SECONDS) } : {}),
    ...(complete ? {} : { connection: "close" }),
  });
  res.end(JSON.stringify(errorBodyFor(pathOf(req), err.status, err.message)));
  if (!complete) req.resume();
}
