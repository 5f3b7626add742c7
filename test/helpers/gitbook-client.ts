import { GitBookAPI, GitBookAPIError } from "@gitbook/api";
import type { TestGateway } from "./gateway.js";

/**
 * GitBook's own client (`@gitbook/api`) pointed at a started gateway, as GitBook's reader builds
 * it (`new GitBookAPI({endpoint, authToken})`; no token: a visitor). Every answer it receives is
 * checked on its way back against this server's /openapi.json and GitBook's schema for the
 * operation (t.openapi, which test/gitbook-allowlist.ts informs).
 */
export function gitbookClient(t: TestGateway, authToken?: string): GitBookAPI {
  return new GitBookAPI({
    endpoint: t.url,
    ...(authToken ? { authToken } : {}),
    serviceBinding: {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const res = await fetch(input, init);
        const url = new URL(typeof input === "string" || input instanceof URL ? input.toString() : input.url);
        const text = await res.clone().text();
        t.openapi.check((init?.method ?? "GET").toUpperCase(), url.pathname, res.status, text ? JSON.parse(text) : undefined, text);
        return res;
      },
    } as any,
  });
}

/** The HTTP status and message a call of the client failed with (it must fail). */
export async function failure(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof GitBookAPIError)) throw new Error(`expected a GitBookAPIError, got ${err === null ? "success" : String(err)}`);
  return { code: err.code, message: err.message };
}
