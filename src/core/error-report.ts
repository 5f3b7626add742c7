import { GraphQLError } from "graphql";
import { appErrorOf } from "./errors.js";
import { log as logger } from "./logger.js";

/** Logs a fault in full (with the request id of the request it happened in). */
function logUnexpected(err: unknown): void {
  logger.error({ err }, "unexpected error");
}

export interface ErrorBody {
  error: { code: number; message: string };
}

/** A fault: logged in full on the server, shown to clients only as this message. */
export const UNEXPECTED = "Unexpected error.";

/**
 * Decides what a client learns of an error: an AppError keeps its status and message; a GraphQL
 * request error (a variable of the wrong type, a missing argument) is a 400 with its message;
 * anything else is a masked 500.
 */
export function reportError(error: unknown, log: (err: unknown) => void = logUnexpected): ErrorBody {
  const app = appErrorOf(error);
  if (app) return { error: { code: app.status, message: app.message } };
  if (error instanceof GraphQLError && !error.path) {
    return { error: { code: 400, message: error.message.replace(/^Variable "\$(\w+)"/, 'Parameter "$1"') } };
  }
  const http = (error as any)?.extensions?.http?.status;
  if (typeof http === "number" && http >= 400 && http < 500) {
    return { error: { code: http, message: (error as Error).message } };
  }
  log(error);
  return { error: { code: 500, message: UNEXPECTED } };
}

/** The error that decides the status when several were raised: the most severe client error. */
export function pickError(errors: readonly unknown[], log?: (err: unknown) => void): ErrorBody {
  const reports = errors.map((e) => reportError(e, log));
  return reports.find((r) => r.error.code >= 500) ?? reports.sort((a, b) => b.error.code - a.error.code)[0]!;
}
