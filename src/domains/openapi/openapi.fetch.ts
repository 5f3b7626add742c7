import type { Config } from "../../config.js";
import { outboundFetch, outboundRefusal } from "../../core/support/outbound.js";

/**
 * Bounded download of an OpenAPI source document: the whole exchange (headers and body) must end
 * within `timeoutMs`, and the body may not exceed `maxBytes`.
 */
export type ProcessErrorCode = "FETCH_ERROR" | "FETCH_TIMEOUT" | "FETCH_TOO_LARGE" | "PARSE_ERROR" | "VALIDATION_ERROR";

export const PROCESS_ERROR_CODES: Record<ProcessErrorCode, string> = {
  FETCH_ERROR: "The source URL could not be fetched: a network error, or an answer other than 2xx.",
  FETCH_TIMEOUT: "The source URL did not answer in time (headers and body together).",
  FETCH_TOO_LARGE: "The source document is larger than the size limit.",
  PARSE_ERROR: "The source document is not a JSON or YAML object.",
  VALIDATION_ERROR: "The document is not a valid OpenAPI 3.x or Swagger 2.0 definition.",
};

export class ProcessError extends Error {
  constructor(
    public readonly code: ProcessErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ProcessError";
  }
}

export interface FetchLimits {
  /** The outbound policy (core/support/outbound.ts). */
  config: Pick<Config, "outboundAllowedNetworks">;
  timeoutMs: number;
  maxBytes: number;
  /** Aborts the download early (the server is closing). */
  signal?: AbortSignal;
}

export async function fetchSource(url: string, limits: FetchLimits): Promise<string> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, limits.timeoutMs);
  const onStop = () => controller.abort();
  limits.signal?.addEventListener("abort", onStop);
  const failure = (err: unknown, what: string) =>
    timedOut
      ? new ProcessError("FETCH_TIMEOUT", `${url} did not answer within ${limits.timeoutMs} ms.`)
      : new ProcessError("FETCH_ERROR", `${what} ${url} failed: ${outboundRefusal(err) ?? (err as Error)?.message ?? err}`);
  try {
    let response: Response;
    try {
      response = await outboundFetch(limits.config, url, {
        signal: controller.signal,
        redirect: "follow",
        headers: { accept: "application/json, application/yaml, text/yaml, text/plain;q=0.9, */*;q=0.8" },
      });
    } catch (err) {
      throw failure(err, "fetching");
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new ProcessError("FETCH_ERROR", `${url} answered ${response.status} ${response.statusText}.`);
    }
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > limits.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new ProcessError("FETCH_TOO_LARGE", `${url} is ${declared} bytes; the limit is ${limits.maxBytes}.`);
    }
    if (!response.body) return "";
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      let part: ReadableStreamReadResult<Uint8Array>;
      try {
        part = await reader.read();
      } catch (err) {
        throw failure(err, "reading");
      }
      if (part.done) break;
      total += part.value.byteLength;
      if (total > limits.maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new ProcessError("FETCH_TOO_LARGE", `${url} is larger than the limit of ${limits.maxBytes} bytes.`);
      }
      chunks.push(part.value);
    }
    return new TextDecoder("utf-8").decode(Buffer.concat(chunks));
  } finally {
    clearTimeout(timer);
    limits.signal?.removeEventListener("abort", onStop);
  }
}
