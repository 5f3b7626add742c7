import { shouldRenderGraphiQL, type GraphiQLOptions } from "graphql-yoga";
import { fixedAnswer } from "../server/precomputed-responses.js";
import { isGraphQLPath } from "../core/graphql-path.js";

/**
 * The query GraphiQL opens with: the product's hierarchy, from the caller's first organization
 * down to the comments of change requests (the same shape as README's nested query).
 */
export const GRAPHIQL_DEFAULT_QUERY = `# Paste an API token in Headers below:
#   "Authorization": "Bearer <token>"
# (npm run admin -- token-create
#    --email you@example.com)
# then run the query: ▶ or Ctrl+Enter.
query Nested {
  viewer {
    id
    displayName
    organizations(first: 1) {
      nodes {
        id
        title
        collections(first: 10) {
          nodes {
            id
            title
            spaces(first: 10) {
              nodes {
                id
                title
                changeRequests(first: 10) {
                  nodes {
                    id
                    number
                    subject
                    comments(first: 10) {
                      nodes {
                        id
                        body { markdown }
                        postedBy {
                          id
                          displayName
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

/** Where the page keeps the last API token pasted, for the browser session. */
export const GRAPHIQL_TOKEN_KEY = "docs-api:authorization";

/**
 * The page's token handling, run before GraphiQL renders (it wraps `fetch`, through which GraphiQL
 * sends everything to this endpoint):
 * - nothing is sent with the placeholder (or without a token): the schema's introspection waits
 *   for a token (the graph answers nobody without one), an operation is answered on the page;
 * - a token pasted in the Headers tab is kept in sessionStorage (as are GraphiQL's tabs: a token
 *   does not outlive the browser session) and used by requests that have none (a new tab);
 * - pasting a new token fetches the schema again (GraphiQL's Shift-Ctrl-R), so Docs and Explorer fill.
 */
const TOKEN_SCRIPT = `(() => {
  const KEY = ${JSON.stringify(GRAPHIQL_TOKEN_KEY)};
  const isToken = (v) => typeof v === "string" && /^Bearer\\s+[^\\s<>]+$/i.test(v.trim());
  const stored = () => { const v = sessionStorage.getItem(KEY); return isToken(v) ? v : null; };
  const waiting = [];
  const realFetch = window.fetch.bind(window);
  const NO_TOKEN = JSON.stringify({ errors: [{ message: 'No API token yet: paste one in the Headers tab, as "Authorization": "Bearer <token>".' }] });
  window.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    if (url.origin !== location.origin || url.pathname !== location.pathname) return realFetch(input, init);
    const headers = new Headers((init && init.headers) || (input instanceof Request ? input.headers : undefined));
    if (isToken(headers.get("authorization"))) return realFetch(input, init);
    const send = (token) => { headers.set("authorization", token); return realFetch(input, { ...init, headers }); };
    const token = stored();
    if (token) return send(token);
    const body = init && typeof init.body === "string" ? init.body : "";
    if (body.includes("__schema")) return new Promise((resolve, reject) => waiting.push((t) => send(t).then(resolve, reject)));
    return Promise.resolve(new Response(NO_TOKEN, { status: 200, headers: { "content-type": "application/json" } }));
  };
  let timer;
  const onEditHeaders = (text) => {
    let value;
    try {
      const parsed = JSON.parse(text || "{}");
      value = Object.entries(parsed).find(([name]) => name.toLowerCase() === "authorization")?.[1];
    } catch { return; }
    if (!isToken(value) || value.trim() === stored()) return;
    sessionStorage.setItem(KEY, value.trim());
    clearTimeout(timer);
    timer = setTimeout(() => {
      const pending = waiting.splice(0);
      if (pending.length) for (const go of pending) go(stored());
      else window.dispatchEvent(new KeyboardEvent("keydown", { key: "R", ctrlKey: true, shiftKey: true }));
    }, 300);
  };
  window.docsApiGraphiQL = (root, opts) =>
    YogaGraphiQL.renderYogaGraphiQL(root, { ...opts, storage: window.sessionStorage, onEditHeaders });
})();`;

const RENDER_CALL = "YogaGraphiQL.renderYogaGraphiQL(";

/** Yoga's page, with TOKEN_SCRIPT in its head and its render call going through it. */
function withTokenHandling(html: string): string {
  const call = html.lastIndexOf(RENDER_CALL);
  const head = html.indexOf("</head>");
  if (call < 0 || head < 0 || head > call) throw new Error("GraphiQL's page changed shape: its token handling cannot be added");
  const rendered = `${html.slice(0, call)}window.docsApiGraphiQL(${html.slice(call + RENDER_CALL.length)}`;
  return `${rendered.slice(0, head)}<script>${TOKEN_SCRIPT}</script>${rendered.slice(head)}`;
}

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
  answer: fixedAnswer(async () => withTokenHandling((await import("@graphql-yoga/render-graphiql")).renderGraphiQL(options)), {
    "content-type": "text/html; charset=utf-8",
  }),
};
