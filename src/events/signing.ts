import crypto from "node:crypto";

/**
 * Requests the gateway sends to an integration (event deliveries and render requests) are signed:
 *
 *   x-signature-timestamp: <milliseconds since the epoch when the request was signed>
 *   x-signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw request body>" keyed with the integration's signing secret>
 *
 * The receiver recomputes the HMAC over the timestamp header, a dot and the exact bytes of the
 * body, compares in constant time, and may refuse timestamps that are too old (replays).
 * Owner admins read the secret with GET /v1/integrations/{integrationName}/signing-secret and
 * rotate it with POST on the same path.
 */
export const SIGNATURE_HEADER = "x-signature";
export const TIMESTAMP_HEADER = "x-signature-timestamp";

export function newSigningSecret(): string {
  return "whsec_" + crypto.randomBytes(32).toString("base64url");
}

export function signature(secret: string, timestamp: string, body: string | Uint8Array): string {
  return "sha256=" + crypto.createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/** The signature headers of a request body (text, or the exact bytes of a forwarded body). */
export function signedHeaders(secret: string, body: string | Uint8Array, now = Date.now()): Record<string, string> {
  const timestamp = String(now);
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signature(secret, timestamp, body) };
}

/** Checks a received request's signature (for receivers written in TypeScript, and for tests). */
export function verifySignature(
  secret: string,
  body: string | Uint8Array,
  headers: { signature?: string | null; timestamp?: string | null },
  maxAgeMs = 5 * 60_000,
  now = Date.now(),
): boolean {
  if (!headers.signature || !headers.timestamp) return false;
  const ts = Number(headers.timestamp);
  if (!Number.isFinite(ts) || Math.abs(now - ts) > maxAgeMs) return false;
  const expected = Buffer.from(signature(secret, headers.timestamp, body));
  const given = Buffer.from(headers.signature);
  return expected.length === given.length && crypto.timingSafeEqual(expected, given);
}
