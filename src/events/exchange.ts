import type { Integration } from "../generated/prisma/client.js";
import type { Config } from "../config.js";
import { newId } from "../core/ids.js";
import { outboundFetch, outboundRefusal } from "../core/support/outbound.js";
import { reportError } from "../core/error-report.js";
import { CSP_EVENT_TYPES, type IntegrationEventType } from "./messages.js";
import { recordIntegrationEvents, type EventServices } from "./record.js";
import { signedHeaders } from "./signing.js";

/**
 * The headers every request the gateway sends to an integration carries: the event it belongs to,
 * the signature of its body (see signing.ts) and, for script-fetch and block-fetch events, the
 * integration's content security policy.
 */
export function integrationRequestHeaders(
  integration: Pick<Integration, "signingSecret" | "contentSecurityPolicy">,
  event: { id: string; type: string },
  body: string | Uint8Array,
): Record<string, string> {
  const headers: Record<string, string> = {
    "x-integration-event-id": event.id,
    "x-integration-event-type": event.type,
    ...signedHeaders(integration.signingSecret, body),
  };
  if (CSP_EVENT_TYPES.has(event.type) && integration.contentSecurityPolicy)
    headers["content-security-policy"] = integration.contentSecurityPolicy;
  return headers;
}

export interface IntegrationCall {
  integration: Pick<Integration, "id" | "ownerId" | "devTunnelUrl" | "devAll" | "signingSecret" | "contentSecurityPolicy">;
  installation: { id: string; organizationId: string } | null;
  type: Extract<IntegrationEventType, "script_fetch" | "block_fetch">;
  /** Payload fields of the recorded event. */
  fields: Record<string, unknown>;
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
  /** What the request is, for the trace ("render request for component x", "GET /callback"). */
  what: string;
  /**
   * How long the integration has to answer: until its response headers when `streamBody` (the
   * caller relays the body as it comes, however long it takes), else until `finish` (the caller
   * reads the whole body first).
   */
  timeoutMs: number;
  streamBody?: boolean;
}

export interface CallResult {
  /** The integration's answer (its body not yet read), absent when it did not answer. */
  response?: Response;
  /** Why there is no answer: "timeout" or a network error's description. */
  failure?: { timedOut: boolean; message: string };
  /** Records the exchange as an event with its final status and trace (at most once; never throws). */
  finish(status: "success" | "failed", message: string): Promise<void>;
}

/**
 * Sends a request the gateway makes on behalf of a caller to the integration's endpoint (its
 * development tunnel) and answers synchronously: a render (block_fetch) or a request to one of its
 * public endpoints (script_fetch). The exchange is recorded as an event of the integration with the
 * caller-decided outcome and a trace of what happened, so that it shows in the event lists, the
 * live streams and the dashboard; such events are never queued for delivery.
 */
export async function callIntegration(
  services: EventServices & { config: Pick<Config, "outboundAllowedNetworks"> },
  call: IntegrationCall,
): Promise<CallResult> {
  const id = newId("IntegrationEvent");
  const started = new Date();
  const logs: { level: string; message: string; timestamp: Date }[] = [
    { level: "info", message: `Forwarded ${call.what} to ${call.url}.`, timestamp: new Date(started.getTime() + 1) },
  ];
  const body = call.body ?? "";
  const headers = { ...call.headers, ...integrationRequestHeaders(call.integration, { id, type: call.type }, body) };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no answer within ${call.timeoutMs} ms`, "TimeoutError"));
  }, call.timeoutMs);
  let finished = false;
  const finish = async (status: "success" | "failed", message: string) => {
    clearTimeout(timer);
    if (finished) return;
    finished = true;
    logs.push({
      level: status === "success" ? "info" : "error",
      message: `${message} (${Date.now() - started.getTime()} ms).`,
      timestamp: new Date(Math.max(Date.now(), started.getTime() + 2)),
    });
    try {
      await recordIntegrationEvents(
        services,
        [
          {
            id,
            integration: call.integration,
            installation: call.installation,
            type: call.type,
            fields: call.fields,
            outcome: { status, logs },
          },
        ],
        started,
      );
    } catch (err) {
      reportError(err); // the caller still gets the integration's answer
    }
  };
  try {
    const response = await outboundFetch(services.config, call.url, {
      method: call.method,
      headers,
      body: call.method === "GET" || call.method === "HEAD" ? undefined : (body as BodyInit),
      signal: controller.signal,
      redirect: "manual",
    });
    if (call.streamBody) clearTimeout(timer);
    return { response, finish };
  } catch (err) {
    clearTimeout(timer);
    const cause = (err as any)?.cause;
    const message = timedOut
      ? `no answer within ${call.timeoutMs} ms`
      : (outboundRefusal(err) ?? cause?.code ?? (err as Error)?.message ?? String(err));
    return { failure: { timedOut, message }, finish };
  }
}
