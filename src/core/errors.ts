import { GraphQLError } from "graphql";

/**
 * Characters of one word of an error message a client is shown as they are. A longer word is the
 * client's own input echoed back (an id of a path, a key or a value of a body, a query parameter;
 * an id the server makes is about 25 characters long): the message keeps its start and says how
 * long it was, so a 16 KB path segment or a 20 KB key is not sent back in full.
 */
const MAX_ECHOED_WORD = 200;
/** Characters kept of a word cut by `boundEchoes`. */
const ECHO_KEPT = 64;
const LONG_WORD = new RegExp(`[^\\s"]{${MAX_ECHOED_WORD + 1},}`, "g");

/**
 * `message` with every word (a run of characters other than white space and double quotes, so a
 * quoted id is cut inside its quotes) longer than MAX_ECHOED_WORD cut to its first characters and
 * its length: `Space "xxxx…(5000 characters)" not found.`
 */
export function boundEchoes(message: string): string {
  if (message.length <= MAX_ECHOED_WORD) return message;
  return message.replace(LONG_WORD, (word) => {
    // Never half of a surrogate pair.
    const end = /[\ud800-\udbff]/.test(word[ECHO_KEPT - 1]!) ? ECHO_KEPT - 1 : ECHO_KEPT;
    return `${word.slice(0, end)}…(${word.length} characters)`;
  });
}

/**
 * An error a caller can act on. Its HTTP status travels in `extensions.code` (GraphQL clients)
 * and becomes `{ "error": { "code", "message" } }` on REST. Anything that is not an AppError is
 * a fault and reaches clients only as "Unexpected error.".
 */
export class AppError extends GraphQLError {
  constructor(
    public readonly status: 400 | 401 | 403 | 404 | 409 | 410 | 413 | 422 | 429 | 502 | 503 | 504,
    message: string,
  ) {
    super(boundEchoes(message), { extensions: { code: status } });
    this.name = "AppError";
  }
}

export const badInput = (message: string) => new AppError(400, message);
export const unauthorized = (message = "Authentication required: send an API token as 'Authorization: Bearer <token>'.") =>
  new AppError(401, message);
/** The 401 of a request that sent a token (or an Authorization header) that is not a live API token. */
export const INVALID_TOKEN_MESSAGE =
  "Invalid or revoked token: the API token sent in 'Authorization: Bearer <token>' is unknown, malformed or revoked.";
export const invalidToken = () => new AppError(401, INVALID_TOKEN_MESSAGE);
export const forbidden = (message: string) => new AppError(403, message);
export const notFound = (what: string) => new AppError(404, `${what} not found.`);
export const conflict = (message: string) => new AppError(409, message);

/**
 * A value a custom scalar refuses. As a GraphQLError (not a TypeError thrown by `parseValue`),
 * graphql reports it as the caller's mistake (`Variable "$x" got invalid value …; Expected type
 * "T". <message>`, a 400 on /v1) and error masking never takes it for a fault to log.
 */
export function invalidScalarValue(type: string, message: string): GraphQLError {
  return new GraphQLError(`Expected type "${type}". ${message}`);
}

/** Finds the AppError inside a GraphQL error wrapper, if any. */
export function appErrorOf(error: unknown): AppError | null {
  let current: any = error;
  for (let i = 0; i < 5 && current; i++) {
    if (current instanceof AppError) return current;
    current = current.originalError;
  }
  return null;
}
