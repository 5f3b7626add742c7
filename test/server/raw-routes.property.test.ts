import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRawRoute, createRawRouter, rawRoute, type RawMethod, type RawRoute } from "../../src/rest/raw-routes.js";
import { rawRouteTable } from "../../src/rest/table.js";
import type { Services } from "../../src/core/context.js";

/**
 * The raw router tries only the routes of a request's first path segment (src/rest/raw-routes.ts):
 * for any method and path — built from the gateway's own route patterns with random segments in
 * their parameters, trailing slashes, other first segments, percent-escapes, prototype names — it
 * answers exactly as trying every route of the table in order would: the same route, or 405 with
 * the same `allow`, or nothing.
 */
const METHODS: RawMethod[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

// The gateway's raw route patterns and methods, and a few shapes it does not use (yet): a parameter
// as the first segment, a first segment that mixes text and a parameter, the root.
const patterns: { path: string; methods: RawRoute["methods"] }[] = [
  ...rawRouteTable.map((r) => ({ path: r.path, methods: r.methods })),
  { path: "/healthz", methods: ["GET"] },
  { path: "/docs/assets/{name}", methods: ["GET"] },
  { path: "/_admin/command", methods: "*" },
  { path: "/{tenant}/sso/{id}", methods: ["POST"] },
  { path: "/pre-{id}", methods: ["GET"] },
  { path: "/", methods: ["GET"] },
];
const routes = patterns.map((p, i) => rawRoute({ methods: p.methods, path: p.path, auth: "none", handler: () => new Response(String(i)) }));

/** What trying every route in order answers: the index of the route, 405 with its allow header, or null. */
function scan(method: string, pathname: string): string | null {
  const allowed = new Set<string>();
  for (const [i, entry] of routes.map(compileRawRoute).entries()) {
    if (!entry.regex.test(pathname)) continue;
    if (entry.methods === "*" || entry.methods.has(method)) return String(i);
    for (const m of entry.methods) allowed.add(m);
  }
  return allowed.size ? `405 ${METHODS.filter((m) => allowed.has(m)).join(", ")}` : null;
}

const segment = fc.oneof(
  fc.constantFrom("v1", "spaces", "sso", "saml", "dashboard", "integrations", "assets", "public", "docs", "healthz", "__proto__", "constructor", "pre-1", "", "%2F", "%41"),
  fc.stringMatching(/^[A-Za-z0-9._~-]{1,12}$/),
);

/** A path from a pattern: each parameter replaced by one segment (or several, for {name*}), maybe a trailing slash. */
const fromPattern = fc
  .tuple(fc.constantFrom(...patterns.map((p) => p.path)), fc.array(fc.array(segment, { minLength: 1, maxLength: 3 }), { minLength: 8, maxLength: 8 }), fc.boolean())
  .map(([pattern, fills, slash]) => {
    let i = 0;
    const path = pattern.replace(/\{(\w+)(\*)?\}/g, (_m, _name, star) => {
      const fill = fills[i++ % fills.length]!;
      return star ? fill.map((s) => `/${s}`).join("") : fill[0] || "x";
    });
    return slash && !path.endsWith("/") ? `${path}/` : path;
  });
const anyPath = fc.array(segment, { minLength: 0, maxLength: 6 }).map((segments) => `/${segments.join("/")}`);

describe("raw routes by first segment", () => {
  it("answer as a scan of every route in order", async () => {
    const router = createRawRouter({} as Services, routes);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...METHODS), fc.oneof(fromPattern, anyPath), async (method, path) => {
        const url = new URL(`http://gateway.test${path}`);
        const answer = await router(new Request(url, { method }), url);
        const got = !answer ? null : answer.status === 405 ? `405 ${answer.headers.get("allow")}` : answer.status === 200 ? await answer.text() : `${answer.status}`;
        expect(got).toBe(scan(method, url.pathname));
      }),
      { numRuns: 2000 },
    );
  });
});
