import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { errorResponse } from "./handler.js";
import { rawRoute, type RawRoute } from "./raw-routes.js";
import { fixedAnswer } from "../server/precomputed-responses.js";

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** Swagger UI's files, each read and encoded once (server/precomputed-responses.ts). */
const ASSETS = new Map(
  ["swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js"].map((name) => [
    name,
    fixedAnswer(() => fs.readFileSync(path.join(swaggerDir, name)), {
      "content-type": name.endsWith(".css") ? "text/css" : "application/javascript",
      "cache-control": "public, max-age=86400",
    }),
  ]),
);

/**
 * The API reference, raw routes without a token: `/openapi.json` (the document of /v1, as
 * `openAPIAnswer` answers it), `/docs` (the page) and `/docs/assets/{name}` (Swagger UI's files,
 * served from this server).
 */
export function docsRoutes(openAPIAnswer: (request: Request) => Promise<Response>): RawRoute[] {
  const page = fixedAnswer(docsPage, { "content-type": "text/html; charset=utf-8" });
  return [
    rawRoute({ methods: ["GET"], path: "/openapi.json", auth: "none", handler: (_services, _params, request) => openAPIAnswer(request) }),
    rawRoute({ methods: ["GET"], path: "/docs", auth: "none", handler: (_services, _params, request) => page(request) }),
    rawRoute({
      methods: ["GET"],
      path: "/docs/assets/{name}",
      auth: "none",
      handler: (_services, { name }, request) =>
        ASSETS.get(name)?.(request) ?? errorResponse({ error: { code: 404, message: "Not found." } }),
    }),
  ];
}

/** The browsable API reference: Swagger UI (served from this server) over /openapi.json. */
export function docsPage(): string {
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
  return html;
}
