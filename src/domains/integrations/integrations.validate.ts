import { badInput } from "../../core/errors.js";
import { checkLength, checkPattern, checkUri } from "../../core/validate.js";

/** Input checks of the integrations area; each 400 names the field it rejects. */

export const NAME = /^[a-zA-Z0-9-_.]+$/;
export const NAME_MAX = 100;
export const TITLE_MAX = 100;
export const DESCRIPTION_MAX = 1000;
export const SUMMARY_MAX = 50_000;
export const SCRIPT_MAX = 5 * 1024 * 1024;
export const IMAGE_MAX_BYTES = 2 * 1024 * 1024;
export const CSP_MAX = 4096;
export const EXTERNAL_ID_MAX = 200;
const SCOPE = /^[a-z][a-z0-9-]*(:[a-z][a-z0-9-]*)+$/;
const CATEGORY = /^[a-z0-9][a-z0-9-_]*$/;
const SECRET_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
export const CONFIGURATION_PROPERTY_TYPES = ["string", "number", "integer", "boolean", "button"] as const;

export function checkName(field: string, value: string): void {
  checkLength(field, value, 1, NAME_MAX);
  checkPattern(field, value, NAME, "^[a-zA-Z0-9-_.]+$");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

/** Base64 content (a `data:…;base64,` prefix is accepted and dropped); returns the normalized text. */
export function checkBase64(field: string, value: string, maxBytes = IMAGE_MAX_BYTES): string {
  let text = value.trim();
  const dataUrl = /^data:[\w.+/-]+;base64,/i.exec(text);
  if (dataUrl) text = text.slice(dataUrl[0].length);
  text = text.replace(/\s+/g, "");
  if (!text || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw badInput(`${field} must be base64 content.`);
  const bytes = Buffer.from(text, "base64");
  if (bytes.length === 0) throw badInput(`${field} must be base64 content.`);
  if (bytes.length > maxBytes) throw badInput(`${field} must be at most ${maxBytes} bytes once decoded (got ${bytes.length}).`);
  return text;
}

export function checkStringList(
  field: string,
  values: string[],
  opts: { max: number; pattern?: RegExp; describe?: string; itemMax?: number },
): string[] {
  if (values.length > opts.max) throw badInput(`${field} must have at most ${opts.max} items (got ${values.length}).`);
  values.forEach((v, i) => {
    checkLength(`${field}[${i}]`, v, 1, opts.itemMax ?? 200);
    if (opts.pattern) checkPattern(`${field}[${i}]`, v, opts.pattern, opts.describe);
  });
  return [...new Set(values)];
}

export const checkScopes = (v: string[]) =>
  checkStringList("scopes", v, { max: 50, pattern: SCOPE, describe: "a scope such as space:content:read", itemMax: 100 });
export const checkCategories = (v: string[]) =>
  checkStringList("categories", v, { max: 10, pattern: CATEGORY, describe: "lowercase letters, digits, - and _", itemMax: 50 });
export const checkExternalIds = (v: string[]) => checkStringList("externalIds", v, { max: 100, itemMax: EXTERNAL_ID_MAX });

function checkUniqueIds(field: string, items: { id: string }[]): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    checkName(`${field}[${i}].id`, item.id);
    if (seen.has(item.id)) throw badInput(`${field}[${i}].id "${item.id}" is used twice.`);
    seen.add(item.id);
  });
}

export interface BlockInput {
  id: string;
  title: string;
  description?: string | null;
  icon?: string | null;
  urlUnfurl?: string[] | null;
  markdown?: { codeblock: string; body: string } | null;
}

export function checkBlocks(blocks: BlockInput[]) {
  if (blocks.length > 50) throw badInput(`blocks must have at most 50 items (got ${blocks.length}).`);
  checkUniqueIds("blocks", blocks);
  return blocks.map((b, i) => {
    checkLength(`blocks[${i}].title`, b.title, 1, TITLE_MAX);
    checkLength(`blocks[${i}].description`, b.description, 0, DESCRIPTION_MAX);
    checkLength(`blocks[${i}].icon`, b.icon, 1, 2048);
    const urlUnfurl = checkStringList(`blocks[${i}].urlUnfurl`, b.urlUnfurl ?? [], { max: 50, itemMax: 2048 });
    urlUnfurl.forEach((u, j) => {
      if (!unfurlHost(u)) throw badInput(`blocks[${i}].urlUnfurl[${j}] must be a URL or a domain.`);
    });
    if (b.markdown) {
      checkLength(`blocks[${i}].markdown.codeblock`, b.markdown.codeblock, 1, 100);
      checkLength(`blocks[${i}].markdown.body`, b.markdown.body, 0, 10_000);
    }
    return {
      id: b.id,
      title: b.title,
      ...(b.description != null ? { description: b.description } : {}),
      ...(b.icon != null ? { icon: b.icon } : {}),
      urlUnfurl,
      ...(b.markdown ? { markdown: { codeblock: b.markdown.codeblock, body: b.markdown.body } } : {}),
    };
  });
}

/** The host an unfurl entry applies to: `https://www.figma.com/file/` → www.figma.com, `figma.com/x` → figma.com. */
export function unfurlHost(entry: string): string | null {
  const text = entry.trim().toLowerCase();
  const host = text.includes("://")
    ? (() => {
        try {
          return new URL(text).hostname;
        } catch {
          return "";
        }
      })()
    : text.split("/")[0]!.replace(/^\*\./, "");
  return host && /^[a-z0-9-_.]+$/.test(host) ? host : null;
}

export interface ContentSourceInput {
  id: string;
  title: string;
  description?: string | null;
  icon?: string | null;
  configuration: { componentId: string };
}

export function checkContentSources(sources: ContentSourceInput[]) {
  if (sources.length > 50) throw badInput(`contentSources must have at most 50 items (got ${sources.length}).`);
  checkUniqueIds("contentSources", sources);
  return sources.map((s, i) => {
    checkLength(`contentSources[${i}].title`, s.title, 1, TITLE_MAX);
    checkLength(`contentSources[${i}].description`, s.description, 0, DESCRIPTION_MAX);
    checkLength(`contentSources[${i}].icon`, s.icon, 1, 2048);
    checkLength(`contentSources[${i}].configuration.componentId`, s.configuration.componentId, 1, 100);
    return {
      id: s.id,
      title: s.title,
      ...(s.description != null ? { description: s.description } : {}),
      ...(s.icon != null ? { icon: s.icon } : {}),
      configuration: { componentId: s.configuration.componentId },
    };
  });
}

export function checkExternalLinks(links: { url: string; label: string }[]) {
  if (links.length > 20) throw badInput(`externalLinks must have at most 20 items (got ${links.length}).`);
  return links.map((l, i) => {
    checkUri(`externalLinks[${i}].url`, l.url);
    checkLength(`externalLinks[${i}].label`, l.label, 1, TITLE_MAX);
    return { url: l.url, label: l.label };
  });
}

export interface ConfigurationSchemaInput {
  properties?: unknown;
  required?: string[] | null;
}

const PROPERTY_KEYS = new Set(["title", "description", "type", "default", "completion_url", "enum"]);

function checkConfigurationSchema(field: string, schema: ConfigurationSchemaInput) {
  const properties = schema.properties ?? {};
  if (!isObject(properties)) throw badInput(`${field}.properties must be an object mapping property names to definitions.`);
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, def] of Object.entries(properties)) {
    const where = `${field}.properties.${name}`;
    checkLength(`${field}.properties (a property name)`, name, 1, 100);
    if (!isObject(def)) throw badInput(`${where} must be an object.`);
    for (const key of Object.keys(def))
      if (!PROPERTY_KEYS.has(key)) throw badInput(`${where}.${key} is not a known field of a configuration property.`);
    if (typeof def.type !== "string" || !(CONFIGURATION_PROPERTY_TYPES as readonly string[]).includes(def.type)) {
      throw badInput(`${where}.type must be one of ${CONFIGURATION_PROPERTY_TYPES.join(", ")}.`);
    }
    for (const key of ["title", "description"] as const) {
      if (def[key] !== undefined && (typeof def[key] !== "string" || (def[key] as string).length > DESCRIPTION_MAX)) {
        throw badInput(`${where}.${key} must be a string of at most ${DESCRIPTION_MAX} characters.`);
      }
    }
    if (def.completion_url !== undefined) {
      if (typeof def.completion_url !== "string") throw badInput(`${where}.completion_url must be a string.`);
      checkUri(`${where}.completion_url`, def.completion_url);
    }
    if (def.enum !== undefined) {
      if (!Array.isArray(def.enum) || def.enum.some((v) => typeof v !== "string"))
        throw badInput(`${where}.enum must be an array of strings.`);
      checkStringList(`${where}.enum`, def.enum as string[], { max: 200 });
    }
    if (def.default !== undefined && def.default !== null && typeof def.default === "object") {
      throw badInput(`${where}.default must be a string, number or boolean.`);
    }
    out[name] = def;
  }
  const required = schema.required ?? [];
  required.forEach((r, i) => {
    if (!(r in out)) throw badInput(`${field}.required[${i}] "${r}" is not one of ${field}.properties.`);
  });
  return { properties: out, required: [...new Set(required)] };
}

export function checkConfigurations(value: Partial<Record<"account" | "space" | "site", ConfigurationSchemaInput | null>>) {
  const out: Record<string, unknown> = {};
  for (const key of ["account", "space", "site"] as const) {
    const schema = value[key];
    if (schema) out[key] = checkConfigurationSchema(`configurations.${key}`, schema);
  }
  return out;
}

export function checkSecrets(value: unknown): Record<string, string> {
  if (!isObject(value)) throw badInput("secrets must be an object mapping names to string values.");
  const entries = Object.entries(value);
  if (entries.length > 100) throw badInput(`secrets must have at most 100 entries (got ${entries.length}).`);
  for (const [key, v] of entries) {
    checkLength("secrets (a name)", key, 1, 100);
    checkPattern(`secrets.${key}`, key, SECRET_KEY, "a name of letters, digits, _, . and -, not starting with a digit");
    if (typeof v !== "string") throw badInput(`secrets.${key} must be a string.`);
    checkLength(`secrets.${key}`, v, 0, 10_000);
  }
  return value as Record<string, string>;
}

export function checkContentSecurityPolicy(value: string): string {
  checkLength("contentSecurityPolicy", value, 1, CSP_MAX);
  if (/[\r\n\0]/.test(value)) throw badInput("contentSecurityPolicy must be a single line (it is sent as an HTTP header).");
  return value.trim();
}

/** An installation's configuration: a JSON object; values of properties the integration declares must fit their type. */
export function checkConfiguration(
  field: string,
  value: unknown,
  schema?: { properties?: Record<string, any>; required?: string[] } | null,
): Record<string, unknown> {
  if (!isObject(value)) throw badInput(`${field} must be a JSON object.`);
  if (JSON.stringify(value).length > 100_000) throw badInput(`${field} must be at most 100000 characters as JSON.`);
  const properties = schema?.properties ?? {};
  for (const [name, v] of Object.entries(value)) {
    const def = properties[name];
    if (!def || v === null) continue;
    const where = `${field}.${name}`;
    if ((def.type === "string" || def.type === "button") && typeof v !== "string") throw badInput(`${where} must be a string.`);
    if (def.type === "number" && typeof v !== "number") throw badInput(`${where} must be a number.`);
    if (def.type === "integer" && !Number.isInteger(v)) throw badInput(`${where} must be an integer.`);
    if (def.type === "boolean" && typeof v !== "boolean") throw badInput(`${where} must be true or false.`);
    if (Array.isArray(def.enum) && !def.enum.includes(v)) throw badInput(`${where} must be one of ${def.enum.join(", ")}.`);
  }
  for (const name of schema?.required ?? []) {
    if (value[name] === undefined || value[name] === null || value[name] === "")
      throw badInput(`${field}.${name} is required by the integration.`);
  }
  return value;
}
