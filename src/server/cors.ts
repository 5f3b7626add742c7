import type { CORSOptions } from "@whatwg-node/server";

/**
 * Cross-origin access (CORS_ORIGINS). The API authenticates with bearer tokens, so no origin is
 * trusted unless the operator names it: a named origin gets its requests' answers with
 * credentials; `*` lets any origin read without credentials. What anyone may read anyway (the
 * OpenAPI document, published pages) is readable from any origin, without credentials.
 */
export function parseCorsOrigins(value: string | undefined): string[] {
  const entries = (value ?? "").split(/[\s,]+/).filter(Boolean);
  for (const entry of entries) {
    if (entry === "*") continue;
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      /* reported below */
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.hostname.includes("*") || url.origin !== entry.replace(/\/$/, "")) {
      throw new Error(`CORS_ORIGINS: "${entry}" is not an origin (scheme://host[:port], such as https://docs.example.com) nor *.`);
    }
  }
  return entries.map((e) => (e === "*" ? e : new URL(e).origin));
}

/** Paths whose answers are public: readable from any origin, without credentials. */
const PUBLIC_PATHS = [/^\/openapi\.json$/, /^\/sites\//];

export function isPublicPath(pathname: string): boolean {
  return PUBLIC_PATHS.some((p) => p.test(pathname));
}

/** Yoga's `cors` option: the CORS answer for a request, or false for none (a browser then refuses). */
export function corsPolicy(origins: readonly string[]): (request: Request) => CORSOptions {
  const named = new Set(origins.filter((o) => o !== "*"));
  const any = origins.includes("*");
  return (request) => {
    const origin = request.headers.get("origin");
    if (!origin) return false;
    if (named.has(origin)) return { origin: [origin], credentials: true, maxAge: 600 };
    if (any || isPublicPath(new URL(request.url).pathname)) return { origin: "*", credentials: false, maxAge: 600 };
    return false;
  };
}
