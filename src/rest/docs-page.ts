import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { errorResponse } from "./handler.js";
import { rawRoute, type RawRoute } from "./raw-routes.js";

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const SWAGGER_ASSETS = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js"]);

/**
 * The API reference, raw routes without a token: `/openapi.json` (the document of /v1),
 * `/docs` (the page) and `/docs/assets/{name}` (Swagger UI's files, served from this server).
 */
export function docsRoutes(openAPIDocument: () => unknown): RawRoute[] {
  return [
    rawRoute({ methods: ["GET"], path: "/openapi.json", auth: "none", handler: () => Response.json(openAPIDocument()) }),
    rawRoute({ methods: ["GET"], path: "/docs", auth: "none", handler: () => docsPage() }),
    rawRoute({ methods: ["GET"], path: "/docs/assets/{name}", auth: "none", handler: (_services, { name }) => serveAsset(name) }),
  ];
}

function serveAsset(name: string): Response {
  if (!SWAGGER_ASSETS.has(name)) return errorResponse({ error: { code: 404, message: "Not found." } });
  const type = name.endsWith(".css") ? "text/css" : "application/javascript";
  return new Response(fs.readFileSync(path.join(swaggerDir, name)), { headers: { "content-type": type, "cache-control": "public, max-age=86400" } });
}

/** The browsable API reference: Swagger UI (served from this server) over /openapi.json. */
export function docsPage(): Response {
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Documentation API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#reference", deepLinking: true, persistAuthorization: true });
  </script>
</body>
</html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}
