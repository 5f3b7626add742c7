import type { IncomingMessage } from "node:http";

/**
 * What the request log line and the metrics say about a request, noted while it is handled: the
 * node request (src/server/http.ts) creates them, the gateway's code fills them through the
 * fetch `Request` it sees (src/server/requests.ts links the two).
 */
export interface RequestNotes {
  /** X-Request-Id as sent (when it is a reasonable id), else generated; echoed in the answer. */
  id: string;
  /** The route pattern that served it (`/v1/spaces/{spaceId}`, `/graphql`), `*` when none did. */
  route: string;
  /** The client address: the connection's, or behind TRUST_PROXY proxies the X-Forwarded-For entry the outermost one wrote (server/http.ts clientAddressOf). */
  clientAddress: string;
  /** The authenticated user, when there was one (never the token). */
  viewer?: string;
  /** The GraphQL operation name (on /graphql), or the graph field a /v1 route runs. */
  operation?: string;
  /** Start time (performance.now()). */
  start: number;
}

const NOTES = Symbol("requestNotes");
export const notesOfFetchRequest = new WeakMap<Request, RequestNotes>();

export function attachNotes(req: IncomingMessage, notes: RequestNotes): void {
  (req as any)[NOTES] = notes;
}

export function notesOfNodeRequest(req: IncomingMessage): RequestNotes | undefined {
  return (req as any)[NOTES];
}

/** The notes of a request the gateway is handling; undefined for one made in-process (a test calling a router directly). */
export function notesOf(request: Request | undefined): RequestNotes | undefined {
  return request ? notesOfFetchRequest.get(request) : undefined;
}

/** Records who is calling (core/context.ts calls it whenever a request's caller is known). */
export function noteViewer(request: Request | undefined, userId: string): void {
  const notes = notesOf(request);
  if (notes && userId) notes.viewer = userId;
}

export function noteOperation(request: Request | undefined, name: string | undefined): void {
  const notes = notesOf(request);
  if (notes && name) notes.operation = name;
}
