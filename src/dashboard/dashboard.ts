import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { rawRoute, type RawRoute } from "../rest/raw-routes.js";
import { fixedAnswer } from "../server/precomputed-responses.js";

/**
 * The live event dashboard: a plain HTML page and script (no build step) that read an
 * integration's recent events over REST and follow new ones and status changes over graphql-ws,
 * with the browser builds of graphql-ws and uPlot (the chart of events per minute) served from
 * node_modules: the page loads nothing from elsewhere. The token is typed into the page.
 *
 *   GET /dashboard                 the page
 *   GET /dashboard/app.js          its script
 *   GET /dashboard/graphql-ws.js   graphql-ws UMD build (global `graphqlWs`)
 *   GET /dashboard/uplot.js        uPlot IIFE build (global `uPlot`)
 *   GET /dashboard/uplot.css       uPlot's style sheet
 *
 * Raw routes (src/rest/raw-routes.ts) without a token; other paths under /dashboard are not
 * served (they fall through to the gateway's 404).
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const graphqlWsUmd = path.join(path.dirname(require.resolve("graphql-ws/package.json")), "umd", "graphql-ws.min.js");
const uplotDist = path.join(path.dirname(require.resolve("uplot/package.json")), "dist");

const FILES: Record<string, { file: string; type: string }> = {
  "/dashboard": { file: path.join(here, "page.html"), type: "text/html; charset=utf-8" },
  "/dashboard/app.js": { file: path.join(here, "app.js"), type: "application/javascript; charset=utf-8" },
  "/dashboard/graphql-ws.js": { file: graphqlWsUmd, type: "application/javascript; charset=utf-8" },
  "/dashboard/uplot.js": { file: path.join(uplotDist, "uPlot.iife.min.js"), type: "application/javascript; charset=utf-8" },
  "/dashboard/uplot.css": { file: path.join(uplotDist, "uPlot.min.css"), type: "text/css; charset=utf-8" },
};

/** Each file read and encoded once (server/precomputed-responses.ts), with the page's own policy. */
function serve(entry: { file: string; type: string }): (request: Request) => Promise<Response> {
  return fixedAnswer(() => fs.readFileSync(entry.file), {
    "content-type": entry.type,
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'self'; connect-src 'self' ws: wss:; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
  });
}

export const dashboardRoutes: RawRoute[] = Object.entries(FILES).map(([route, entry]) => {
  const answer = serve(entry);
  return rawRoute({ methods: ["GET"], path: route, auth: "none", handler: (_services, _params, request) => answer(request) });
});
