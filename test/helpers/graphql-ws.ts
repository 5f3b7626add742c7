import WebSocket from "ws";
import { createClient, type Client } from "graphql-ws";

/**
 * A graphql-ws client of the gateway at `url` (its http:// address), sending `token` as the
 * connection's authorization (none when null). It connects on its first subscription and never
 * retries, so a refused connection shows as it is.
 */
export function wsClient(url: string, token: string | null): Client {
  return createClient({
    url: url.replace(/^http/, "ws") + "/graphql",
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
  });
}

export interface Collected {
  /** Resolves a moment after the server acknowledged the connection: the subscription is live by then. */
  ready: Promise<void>;
  /** The first `count` results (fewer if the server completes first); rejects with the errors of a refused subscription. */
  results: Promise<any[]>;
}

/** Subscribes with `client` and collects the first `count` results. */
export function collect(client: Client, query: string, variables: Record<string, unknown>, count: number): Collected {
  const results: any[] = [];
  let markReady!: () => void;
  const ready = new Promise<void>((r) => (markReady = r));
  const done = new Promise<any[]>((resolve, reject) => {
    const stop = client.subscribe(
      { query, variables },
      {
        next: (value) => {
          results.push(value);
          if (results.length === count) {
            stop();
            resolve(results);
          }
        },
        error: reject,
        complete: () => resolve(results),
      },
    );
    // The server registers the subscription right after the acknowledgement: give it a moment.
    client.on("connected", () => setTimeout(markReady, 150));
  });
  return { ready, results: done };
}

/** What a subscription answers first: its first result, or the errors it was refused with. */
export function firstOutcome(client: Client, query: string, variables: Record<string, unknown>): Promise<unknown> {
  return collect(client, query, variables, 1).results.then(
    (results) => results,
    (errors) => errors,
  );
}

export interface EventStream {
  response: Response;
  /**
   * Reads the stream up to the first event whose data mentions `field`, closes the stream and
   * returns that event's data, parsed.
   */
  firstEventWith(field: string): Promise<any>;
  close(): void;
}

/** Opens a subscription over server-sent events: POST /graphql with Accept: text/event-stream. */
export async function sseSubscribe(url: string, token: string, query: string, variables: Record<string, unknown>): Promise<EventStream> {
  const controller = new AbortController();
  const response = await fetch(`${url}/graphql`, {
    method: "POST",
    signal: controller.signal,
    headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const close = () => controller.abort();
  return {
    response,
    close,
    async firstEventWith(field) {
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      // A data line counts once its end arrived: an event may come in several chunks.
      const found = () =>
        text
          .slice(0, text.lastIndexOf("\n") + 1)
          .split("\n")
          .find((l) => l.startsWith("data:") && l.includes(field));
      let line = found();
      try {
        while (!line) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
          line = found();
        }
      } finally {
        close();
      }
      if (!line) throw new Error(`The event stream ended without an event about ${field}:\n${text}`);
      return JSON.parse(line.slice(5));
    },
  };
}
