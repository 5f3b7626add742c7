import { routes } from "../../rest/route.js";

/** GitBook's reader resolves every URL it serves here first (url-lookup.ts); not an operation of one site. */
export default routes("Published content", [
  {
    method: "POST",
    path: "/urls/published",
    field: "Query.publishedContentByUrl",
    auth: "optional",
    summary: "Resolve a published URL to its site, site space and page path, with a site token (no token needed)",
  },
]);
