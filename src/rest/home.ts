import type { Plugin } from "graphql-yoga";
import type { Config } from "../config.js";
import { errorResponse } from "./handler.js";
import { rawRoute, type RawRoute } from "./raw-routes.js";
import { fixedAnswer } from "../server/precomputed-responses.js";

/**
 * The front door of the server, raw routes without a token:
 *
 *   GET /             a small page linking what this server serves (JSON when the client asks for JSON)
 *   GET /favicon.ico  the server's icon
 *
 * and `useJsonNotFound`, which gives a path no route answers the documented error body instead of
 * an empty 404.
 */

/** What the server serves, as the landing page lists it. */
const LINKS: readonly { path: string; title: string; about: string }[] = [
  { path: "/docs", title: "API reference", about: "every /v1 operation, with “Try it out” (paste a token under Authorize)" },
  { path: "/graphql", title: "GraphQL", about: "the same graph for GraphQL clients; graphql-ws subscriptions on the same path" },
  { path: "/dashboard", title: "Event dashboard", about: "an integration’s events, live" },
  { path: "/openapi.json", title: "OpenAPI document", about: "the REST contract of /v1, for code generators" },
  { path: "/healthz", title: "Health", about: "answers while the process is up" },
  { path: "/readyz", title: "Readiness", about: "answers 200 when the database (and Redis, when configured) is reachable" },
];

// 32×32 ICO holding one PNG: a white page on a blue rounded square.
const FAVICON = Buffer.from(
  "AAABAAEAICAAAAEAIACUAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAFtJREFUeNpjYMAB9KNf/acmZiAGUNtSkhxDL8uxOoLelmM4YmQ7gBiF5AKiHDHqgCHnAGqqHY2C0TQwGgWjaWA0CoZPGhiNgqHtgNFW8aBwwIB3zQZF53SguucAq27EwuANb0UAAAAASUVORK5CYII=",
  "base64",
);

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Whether the client prefers JSON to HTML (an `Accept` naming application/json and not text/html). */
function wantsJson(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("application/json") && !accept.includes("text/html");
}

function landingPage(config: Config, request: Request): Response {
  const base = config.publicUrl;
  if (wantsJson(request)) {
    return Response.json({
      name: "Documentation API",
      links: Object.fromEntries(LINKS.map((l) => [l.path.slice(1), `${base}${l.path}`])),
      rest: `${base}/v1`,
    });
  }
  const items = LINKS.map(
    (l) =>
      `      <li><a href="${escapeHtml(l.path)}">${escapeHtml(l.title)}</a> <code>${escapeHtml(l.path)}</code> — ${escapeHtml(l.about)}</li>`,
  ).join("\n");
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Documentation API</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="/favicon.ico">
  <style>
    body { font: 15px/1.5 system-ui, sans-serif; max-width: 46em; margin: 2em auto; padding: 0 1em; color: #1d2330; }
    code, pre { font: 13px ui-monospace, monospace; background: #f3f4f6; border-radius: 4px; }
    code { padding: 1px 4px; } pre { padding: 10px 12px; overflow-x: auto; }
    li { margin: 4px 0; }
  </style>
</head>
<body>
  <h1>Documentation API</h1>
  <p>The REST API lives under <code>/v1</code>; every operation takes <code>Authorization: Bearer &lt;token&gt;</code>.</p>
  <ul>
${items}
  </ul>
  <h2>First token</h2>
  <p>On the machine that runs this server, in its folder (with the same <code>DATA_DIR</code> or <code>DATABASE_URL</code>):</p>
  <pre>npm run admin -- bootstrap --email you@example.com --org "Acme Docs"
export TOKEN=dapi_…   # the "token" of the last line printed
curl -H "Authorization: Bearer $TOKEN" ${escapeHtml(base)}/v1/orgs</pre>
</body>
</html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8", "x-content-type-options": "nosniff" } });
}

export function homeRoutes(config: Config): RawRoute[] {
  const icon = fixedAnswer(() => FAVICON, { "content-type": "image/x-icon", "cache-control": "public, max-age=86400" });
  return [
    rawRoute({ methods: ["GET"], path: "/", auth: "none", handler: (_services, _params, request) => landingPage(config, request) }),
    rawRoute({ methods: ["GET"], path: "/favicon.ico", auth: "none", handler: (_services, _params, request) => icon(request) }),
  ];
}

/**
 * A path that no route answers (outside /v1 and /graphql, which answer their own errors) gets
 * the documented error body: GraphQL Yoga's answer there is a 404 without a body or content type.
 */
export function useJsonNotFound(): Plugin {
  return {
    onResponse({ request, response, setResponse }) {
      if (response.status !== 404 || response.headers.get("content-type")) return;
      setResponse(noRoute(request.method, new URL(request.url).pathname));
    },
  };
}

/** The 404 of a path that no route answers. */
export function noRoute(method: string, pathname: string): Response {
  return errorResponse({
    error: { code: 404, message: `No route ${method} ${pathname}: see / for what this server serves (the REST API is under /v1).` },
  });
}
