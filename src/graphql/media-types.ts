import type { Plugin } from "graphql-yoga";

/**
 * Yoga answers 406 with an empty body when no media type the client accepts can carry the answer
 * (a subscription asked for as `application/json`, a query asked for as `text/html`). This names
 * what was wrong and what would work, in a GraphQL error body; the `accept` header yoga sets
 * (the media types it could have answered with) stays.
 */
export function useNotAcceptableExplained(): Plugin {
  return {
    onResponse({ request, response, setResponse }) {
      if (response.status !== 406 || response.headers.get("content-type")) return;
      const asked = request.headers.get("accept") || "(none)";
      const possible = response.headers
        .get("accept")
        ?.split(/;\s*charset=utf-8,?\s*/)
        .filter(Boolean)
        .join(", ");
      const message =
        `The Accept header (${asked.slice(0, 200)}) names no media type this answer can be sent as` +
        (possible ? `; this one can be sent as: ${possible}` : "") +
        ". Subscriptions and @defer/@stream answer as text/event-stream or multipart/mixed (or over graphql-ws), queries and mutations as application/graphql-response+json or application/json.";
      const headers = new Headers(response.headers);
      headers.set("content-type", "application/json; charset=utf-8");
      setResponse(
        new Response(JSON.stringify({ errors: [{ message, extensions: { code: "NOT_ACCEPTABLE" } }] }), { status: 406, headers }),
      );
    },
  };
}
