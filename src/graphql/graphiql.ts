import { shouldRenderGraphiQL, type GraphiQLOptions } from "graphql-yoga";
import { fixedAnswer } from "../server/precomputed-responses.js";
import { isGraphQLPath } from "../core/graphql-path.js";

/**
 * The query GraphiQL opens with: the product's hierarchy, from the caller's first organization
 * down to the comments of change requests (the same shape as README's nested query).
 */
export const GRAPHIQL_DEFAULT_QUERY = `# Paste an API token into the Authorization header below (Headers tab), then run the query.
# Create one with: npm run admin -- token-create --email you@example.com
query Nested {
  viewer {
    displayName
    organizations(first: 1) {
      nodes {
        title
        collections(first: 10) {
          nodes {
            title
            spaces(first: 10) {
              nodes {
                title
                changeRequests(first: 10) {
                  nodes {
                    number
                    subject
                    comments(first: 10) {
                      nodes { body { markdown } postedBy { displayName } }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}
`;

export const GRAPHIQL_HEADERS = JSON.stringify({ Authorization: "Bearer <paste token>" }, null, 2);

const options = {
  title: "Documentation API — GraphiQL",
  defaultQuery: GRAPHIQL_DEFAULT_QUERY,
  headers: GRAPHIQL_HEADERS,
  defaultHeaders: GRAPHIQL_HEADERS,
  defaultEditorToolsVisibility: "headers",
} satisfies GraphiQLOptions;

/**
 * GraphiQL at /graphql in a browser (a GET that accepts text/html, as yoga decides it), rendered
 * from `@graphql-yoga/render-graphiql`: its scripts, styles and editor workers are inlined in the
 * page, so it works without internet. The page is 9 MB: it is rendered and compressed once (a
 * fixed answer, server/precomputed-responses.ts) rather than by yoga at every request, where one
 * anonymous request cost about 150 ms of CPU with compression. Its module is loaded by the first
 * request for the page: it holds the page's scripts as strings, about 29 MB of heap that a server
 * nobody opens GraphiQL on kept from its start.
 */
export const graphiql = {
  wanted: (request: Request, url: URL) => isGraphQLPath(url.pathname) && shouldRenderGraphiQL(request),
  answer: fixedAnswer(async () => (await import("@graphql-yoga/render-graphiql")).renderGraphiQL(options), {
    "content-type": "text/html; charset=utf-8",
  }),
};
