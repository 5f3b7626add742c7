import { AsyncLocalStorage } from "node:async_hooks";
import { createRequire } from "node:module";
import { pino, stdSerializers, stdTimeFunctions, type DestinationStream, type Logger } from "pino";
import { operations, type Config } from "../config.js";

export type { Logger };

/**
 * The request being handled (src/server/request-log.ts runs each request inside it): every line
 * logged meanwhile — an unexpected error reported deep in a resolver included — carries its `reqId`.
 */
export const requestScope = new AsyncLocalStorage<{ reqId: string }>();

export interface LoggerSettings {
  level: Config["logLevel"];
  format: Config["logFormat"];
  /** Where lines go (tests capture them); standard output by default. */
  destination?: DestinationStream;
}

/** A pino logger: JSON lines (or pretty ones for people), ISO timestamps, the request id when there is one. */
export function createLogger(settings: LoggerSettings): Logger {
  const destination =
    settings.destination ??
    (settings.format === "pretty"
      ? // Loaded only for pretty lines (CommonJS: `require` is synchronous): JSON logging skips its modules.
        (createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty"))({
          colorize: Boolean(process.stdout.isTTY),
          sync: true,
          ignore: "pid,hostname",
          translateTime: "SYS:HH:MM:ss.l",
        })
      : pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level: settings.level,
      timestamp: stdTimeFunctions.isoTime,
      serializers: { err: stdSerializers.err },
      mixin(object) {
        const scope = requestScope.getStore();
        // A line that names its request itself (the request's own line) keeps that id, once.
        return scope && !("reqId" in object) ? { reqId: scope.reqId } : {};
      },
    },
    destination,
  );
}

/**
 * The process's logger, for what happens outside a gateway's request log (start-up, background
 * work, unexpected errors). Set from LOG_LEVEL and LOG_FORMAT; `configureLogging` replaces it
 * (`log` is a live binding: importers see the new one).
 */
export let log: Logger = createLogger(settingsOf(operations(process.env)));

export function configureLogging(config: Pick<Config, "logLevel" | "logFormat">): Logger {
  log = createLogger(settingsOf(config));
  return log;
}

function settingsOf(config: Pick<Config, "logLevel" | "logFormat">): LoggerSettings {
  return { level: config.logLevel, format: config.logFormat };
}
