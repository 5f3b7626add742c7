import LZString from "lz-string";
import type { Context } from "../../core/context.js";
import { AppError, badInput, conflict } from "../../core/errors.js";
import { checkLength } from "../../core/validate.js";
import { callIntegration } from "../../events/exchange.js";
import { dispatchTarget } from "../../events/record.js";
import { viewerMembership } from "../../core/access/access.js";
import { requireIntegration } from "./integrations.service.js";

/** A render request: what the caller asks the integration to render. */
export interface RenderRequest {
  componentId: string;
  props?: unknown;
  state?: unknown;
  context?: unknown;
  action?: unknown;
}

export interface ContentKitConfirm {
  title: string;
  text: string;
  confirm: string;
  style?: string;
}
export interface ContentKitButton {
  type: "button";
  style?: string;
  onPress: Record<string, unknown>;
  icon?: string;
  trailingIcon?: string;
  label?: string;
  tooltip?: string;
  confirm?: ContentKitConfirm;
  disabled?: boolean;
}
export interface ContentKitControl {
  icon?: string;
  label: string;
  onPress: Record<string, unknown>;
  confirm?: ContentKitConfirm;
}
export interface ContentKitOutput {
  type: "element";
  element: { type: "block"; children: ContentKitButton[]; controls?: ContentKitControl[] };
  state: Record<string, unknown>;
  props: Record<string, unknown>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

/** Decodes the GET form: `request` is the JSON render request compressed with LZ-string's compressToEncodedURIComponent. */
export function decodeRenderRequest(request: string): RenderRequest {
  checkLength("request", request, 1, 64 * 1024);
  let text: string | null = null;
  try {
    text = LZString.decompressFromEncodedURIComponent(request);
  } catch {
    text = null;
  }
  if (!text) throw badInput("request must be a JSON render request compressed with LZ-string (compressToEncodedURIComponent).");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw badInput(`request does not hold valid JSON once decompressed: ${(err as Error).message}`);
  }
  if (!isObject(parsed)) throw badInput("request must hold a JSON object once decompressed.");
  for (const key of Object.keys(parsed)) {
    if (!["componentId", "props", "state", "context", "action"].includes(key))
      throw badInput(`request.${key} is not a known field of a render request.`);
  }
  if (typeof parsed.componentId !== "string") throw badInput("request.componentId is required and must be a string.");
  return parsed as unknown as RenderRequest;
}

function checkRenderRequest(req: RenderRequest, prefix: string): void {
  checkLength(`${prefix}componentId`, req.componentId, 1, 100);
  for (const key of ["props", "state", "context"] as const) {
    if (req[key] !== undefined && req[key] !== null && !isObject(req[key])) throw badInput(`${prefix}${key} must be a JSON object.`);
  }
  if (req.action !== undefined && req.action !== null && !isObject(req.action)) throw badInput(`${prefix}action must be a JSON object.`);
}

// ─── Output validation ─────────────────────────────────────────────────────────────────────────

class Invalid extends Error {}

function fail(path: string, message: string): never {
  throw new Invalid(`${path} ${message}`);
}
function onlyKeys(path: string, value: Record<string, unknown>, keys: string[]): void {
  for (const key of Object.keys(value)) if (!keys.includes(key)) fail(`${path}.${key}`, "is not part of the documented output");
}
function optString(path: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") fail(path, "must be a string");
  return value;
}
function reqString(path: string, value: unknown): string {
  if (typeof value !== "string") fail(path, "must be a string");
  return value;
}
function action(path: string, value: unknown): Record<string, unknown> {
  if (!isObject(value)) fail(path, "must be an action object");
  return value;
}
function confirmOf(path: string, value: unknown): ContentKitConfirm | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) fail(path, "must be an object");
  onlyKeys(path, value, ["title", "text", "confirm", "style"]);
  const style = optString(`${path}.style`, value.style);
  return {
    title: reqString(`${path}.title`, value.title),
    text: reqString(`${path}.text`, value.text),
    confirm: reqString(`${path}.confirm`, value.confirm),
    ...(style !== undefined ? { style } : {}),
  };
}
function clean<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
function button(path: string, value: unknown): ContentKitButton {
  if (!isObject(value)) fail(path, "must be an object");
  if (value.type !== "button") fail(`${path}.type`, `must be "button" (the only documented child element)`);
  onlyKeys(path, value, ["type", "style", "onPress", "icon", "trailingIcon", "label", "tooltip", "confirm", "disabled"]);
  if (value.disabled !== undefined && value.disabled !== null && typeof value.disabled !== "boolean")
    fail(`${path}.disabled`, "must be a boolean");
  return clean({
    type: "button" as const,
    style: optString(`${path}.style`, value.style),
    onPress: action(`${path}.onPress`, value.onPress),
    icon: optString(`${path}.icon`, value.icon),
    trailingIcon: optString(`${path}.trailingIcon`, value.trailingIcon),
    label: optString(`${path}.label`, value.label),
    tooltip: optString(`${path}.tooltip`, value.tooltip),
    confirm: confirmOf(`${path}.confirm`, value.confirm),
    disabled: (value.disabled ?? undefined) as boolean | undefined,
  });
}
function control(path: string, value: unknown): ContentKitControl {
  if (!isObject(value)) fail(path, "must be an object");
  onlyKeys(path, value, ["icon", "label", "onPress", "confirm"]);
  return clean({
    icon: optString(`${path}.icon`, value.icon),
    label: reqString(`${path}.label`, value.label),
    onPress: action(`${path}.onPress`, value.onPress),
    confirm: confirmOf(`${path}.confirm`, value.confirm),
  });
}

/** Checks an integration's answer against the documented ContentKit render output; throws Invalid naming the first wrong path. */
export function validateContentKit(value: unknown): ContentKitOutput {
  if (!isObject(value)) fail("output", "must be a JSON object");
  onlyKeys("output", value, ["type", "element", "state", "props"]);
  if (value.type !== "element") fail("output.type", 'must be "element"');
  const element = value.element;
  if (!isObject(element)) fail("output.element", "must be an object");
  onlyKeys("output.element", element, ["type", "children", "controls"]);
  if (element.type !== "block") fail("output.element.type", 'must be "block"');
  if (!Array.isArray(element.children)) fail("output.element.children", "must be an array");
  const children = element.children.map((c, i) => button(`output.element.children[${i}]`, c));
  let controls: ContentKitControl[] | undefined;
  if (element.controls !== undefined && element.controls !== null) {
    if (!Array.isArray(element.controls)) fail("output.element.controls", "must be an array");
    controls = element.controls.map((c, i) => control(`output.element.controls[${i}]`, c));
  }
  const state = value.state ?? {};
  const props = value.props ?? {};
  if (!isObject(state)) fail("output.state", "must be an object");
  if (!isObject(props)) fail("output.props", "must be an object");
  return { type: "element", element: clean({ type: "block" as const, children, controls }), state, props };
}

// ─── Rendering ─────────────────────────────────────────────────────────────────────────────────

/**
 * Asks the integration to render a component: a signed POST (see events/signing.ts) of
 * `{type: "ui_render", componentId, props, state, context, action}` to its development tunnel
 * URL, with its content security policy in a `content-security-policy` header; the answer must be
 * ContentKit render output (else 502). Each render is recorded as a block_fetch event with its
 * outcome and trace (events/exchange.ts).
 */
export async function render(ctx: Context, integrationName: string, req: RenderRequest, prefix = ""): Promise<ContentKitOutput> {
  checkRenderRequest(req, prefix);
  const { integration } = await requireIntegration(ctx, integrationName);
  const member = await viewerMembership(ctx, integration.ownerId);
  const target = dispatchTarget(integration, member ? integration.ownerId : null);
  if ("skip" in target) {
    throw conflict(
      integration.devTunnelUrl
        ? `Integration "${integrationName}" cannot render for you: its development mode forwards only requests of its owner organization (all = false).`
        : `Integration "${integrationName}" has no endpoint to render with: development mode is off (PUT /v1/integrations/${integrationName}/dev with a tunnelUrl).`,
    );
  }
  const body = JSON.stringify({
    type: "ui_render",
    componentId: req.componentId,
    props: req.props ?? {},
    state: req.state ?? {},
    context: req.context ?? {},
    ...(req.action ? { action: req.action } : {}),
  });
  if (integration.contentSecurityPolicy) ctx.response.headers["content-security-policy"] = integration.contentSecurityPolicy; // on the answer too
  const call = await callIntegration(ctx, {
    integration,
    installation: null,
    type: "block_fetch",
    fields: { componentId: req.componentId },
    url: target.url,
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", "user-agent": "docs-api-gateway/integration-render" },
    body,
    what: `the render request of component "${req.componentId}"`,
    timeoutMs: ctx.config.integrationDeliveryTimeoutMs,
  });
  const failed = async (message: string): Promise<never> => {
    await call.finish("failed", message);
    throw new AppError(502, `Integration "${integrationName}" ${message}.`);
  };
  if (!call.response)
    return failed(
      `did not answer the render request${call.failure!.timedOut ? ` within ${ctx.config.integrationDeliveryTimeoutMs} ms` : `: ${call.failure!.message}`}`,
    );
  const res = call.response;
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    return failed(`did not finish its answer to the render request: ${(err as Error).message}`);
  }
  if (!res.ok) return failed(`answered the render request with HTTP ${res.status}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return failed("answered the render request with something that is not JSON");
  }
  let output: ContentKitOutput;
  try {
    output = validateContentKit(json);
  } catch (err) {
    if (err instanceof Invalid) return failed(`answered with invalid ContentKit output: ${err.message}`);
    throw err;
  }
  await call.finish("success", `Rendered: HTTP ${res.status} with valid ContentKit output`);
  return output;
}
