import Ajv from "ajv";
import jsep from "jsep";
import { badInput } from "../../core/errors.js";
import { checkLength } from "../../core/validate.js";

/**
 * Adaptive content: the site's visitor schema (a draft-07 JSON Schema of the claims a visitor
 * brings) and the `condition` expressions of sections and site spaces that read those claims.
 *
 * A condition is a small, safe expression language parsed with jsep and never run as code:
 * - `visitor.claims.<name>` (and deeper: `visitor.claims.unsigned.<name>`, `visitor.claims.plan.tier`),
 *   also written `visitor.claims["name"]`; only claims the schema declares;
 * - literals: strings, numbers, true, false, null;
 * - comparisons `===`, `!==`, `==`, `!=`, `<`, `<=`, `>`, `>=`; `&&`, `||`, `!`; parentheses.
 */

export const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
export const CONDITION_MAX = 1024;
/** Largest visitor schema accepted, as JSON text. */
export const SCHEMA_MAX_BYTES = 64 * 1024;
const MAX_CLAIM_DEPTH = 4;

export type JsonObject = Record<string, unknown>;
export type ClaimType = "boolean" | "string" | "number" | "integer" | "object";
const CLAIM_TYPES: readonly ClaimType[] = ["boolean", "string", "number", "integer", "object"];
const CLAIM_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The schema of a site that has not set one: only the (empty) unsigned claims. */
export function defaultAdaptiveSchema(): JsonObject {
  return {
    $schema: DRAFT_07,
    type: "object",
    properties: {
      unsigned: { type: "object", description: "Unsigned claims of the visitor.", properties: {}, additionalProperties: false },
    },
    additionalProperties: false,
  };
}

function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks a visitor schema for PUT …/adaptive-schema and returns it: a valid draft-07 schema of
 * `type: object`, `additionalProperties` false (or absent), whose `properties` are an `unsigned`
 * object (unsigned claims) and claims of type boolean, string, number, integer or object, each
 * with a description. Claim names are identifiers, so conditions can name them. 400 naming the
 * part that is wrong otherwise.
 */
export function checkAdaptiveSchema(value: unknown): JsonObject {
  if (!isPlainObject(value)) throw badInput("jsonSchema must be a JSON object.");
  if (JSON.stringify(value).length > SCHEMA_MAX_BYTES) {
    throw badInput(`jsonSchema must be at most ${SCHEMA_MAX_BYTES} bytes of JSON.`);
  }
  const declared = value.$schema;
  if (
    declared !== undefined &&
    (typeof declared !== "string" || declared.replace(/#$/, "").replace(/^https:/, "http:") !== DRAFT_07.replace(/#$/, ""))
  ) {
    throw badInput(`jsonSchema.$schema must be "${DRAFT_07}" (draft-07).`);
  }
  if (value.$id !== undefined && typeof value.$id !== "string") throw badInput("jsonSchema.$id must be a string.");
  const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true });
  if (!ajv.validateSchema(value)) {
    const e = ajv.errors?.[0];
    const where = e?.instancePath ? `jsonSchema${e.instancePath.replace(/\//g, ".")}` : "jsonSchema";
    throw badInput(`${where} is not valid draft-07 JSON Schema: ${e?.message ?? "invalid"}.`);
  }
  try {
    ajv.compile(value);
  } catch (err) {
    throw badInput(`jsonSchema cannot be compiled as draft-07 JSON Schema: ${(err as Error).message}`);
  }
  if (value.type !== "object") throw badInput('jsonSchema.type must be "object".');
  if (value.additionalProperties !== undefined && value.additionalProperties !== false) {
    throw badInput("jsonSchema.additionalProperties must be false: visitors bring only the claims the schema declares.");
  }
  const properties = value.properties ?? {};
  if (!isPlainObject(properties)) throw badInput("jsonSchema.properties must be an object.");
  for (const [name, prop] of Object.entries(properties)) {
    const path = `jsonSchema.properties.${name}`;
    if (!CLAIM_NAME.test(name))
      throw badInput(`${path}: a claim name must be an identifier (letters, digits, _ and $; not starting with a digit).`);
    if (!isPlainObject(prop)) throw badInput(`${path} must be an object (a JSON Schema of the claim).`);
    if (name === "unsigned") {
      if (prop.type !== "object") throw badInput(`${path}.type must be "object" (the unsigned claims of the visitor).`);
      checkClaimProperties(path, prop, 1, false);
      continue;
    }
    checkClaim(path, prop, 1, true);
  }
  return value;
}

function checkClaim(path: string, prop: JsonObject, depth: number, needsDescription: boolean): void {
  if (typeof prop.type !== "string" || !CLAIM_TYPES.includes(prop.type as ClaimType)) {
    throw badInput(`${path}.type must be one of ${CLAIM_TYPES.join(", ")}.`);
  }
  if (needsDescription && (typeof prop.description !== "string" || !prop.description.trim())) {
    throw badInput(`${path}.description is required: it says what the claim means (condition templates use it).`);
  }
  if (prop.type === "object") checkClaimProperties(path, prop, depth + 1, false);
}

function checkClaimProperties(path: string, prop: JsonObject, depth: number, needsDescription: boolean): void {
  if (depth > MAX_CLAIM_DEPTH) throw badInput(`${path}: claims nest at most ${MAX_CLAIM_DEPTH} levels deep.`);
  const properties = prop.properties ?? {};
  if (!isPlainObject(properties)) throw badInput(`${path}.properties must be an object.`);
  for (const [name, child] of Object.entries(properties)) {
    const childPath = `${path}.properties.${name}`;
    if (!CLAIM_NAME.test(name))
      throw badInput(`${childPath}: a claim name must be an identifier (letters, digits, _ and $; not starting with a digit).`);
    if (!isPlainObject(child)) throw badInput(`${childPath} must be an object (a JSON Schema of the claim).`);
    checkClaim(childPath, child, depth, needsDescription);
  }
}

export interface Claim {
  /** Path below `visitor.claims`, such as `isBetaUser` or `unsigned.language`. */
  path: string;
  type: ClaimType;
  description?: string;
  enum?: unknown[];
}

/** Every claim a schema declares, depth first, in declaration order. */
export function claimsOf(schema: JsonObject): Claim[] {
  const out: Claim[] = [];
  const walk = (prefix: string, props: unknown) => {
    if (!isPlainObject(props)) return;
    for (const [name, prop] of Object.entries(props)) {
      if (!isPlainObject(prop)) continue;
      const path = prefix ? `${prefix}.${name}` : name;
      out.push({
        path,
        type: (CLAIM_TYPES as readonly unknown[]).includes(prop.type) ? (prop.type as ClaimType) : "object",
        description: typeof prop.description === "string" ? prop.description : undefined,
        enum: Array.isArray(prop.enum) ? prop.enum : undefined,
      });
      walk(path, prop.properties);
    }
  };
  walk("", schema.properties);
  return out;
}

/** Condition templates for GET …/adaptive-schema/template-conditions: one or more per scalar claim. */
export function templateConditions(schema: JsonObject): { description: string; condition: string }[] {
  const items: { description: string; condition: string }[] = [];
  for (const claim of claimsOf(schema)) {
    const ref = `visitor.claims.${claim.path}`;
    const what = claim.description?.trim() || claim.path;
    if (claim.type === "boolean") {
      items.push({ description: what, condition: `${ref} === true` });
    } else if (claim.type === "string") {
      const values = claim.enum?.filter((v) => typeof v === "string") as string[] | undefined;
      if (values?.length)
        for (const v of values) items.push({ description: `${what}: ${v}`, condition: `${ref} === ${JSON.stringify(v)}` });
      else items.push({ description: `${what}: a given value`, condition: `${ref} === "value"` });
    } else if (claim.type === "number" || claim.type === "integer") {
      items.push({ description: `${what}: more than a given number`, condition: `${ref} > 0` });
    }
  }
  return items;
}

// ─── Conditions ────────────────────────────────────────────────────────────────────────────────

type Node = jsep.Expression;
const COMPARISONS = new Set(["===", "!==", "==", "!=", "<", "<=", ">", ">="]);
const LOGICAL = new Set(["&&", "||"]);

function parse(field: string, expression: string): Node {
  try {
    return jsep(expression);
  } catch (err) {
    throw badInput(`${field} is not a valid expression: ${(err as Error).message}.`);
  }
}

/** `visitor.claims.a.b` → ["visitor", "claims", "a", "b"]; null when it is not such a chain. */
function memberChain(node: Node): string[] | null {
  if (node.type === "Identifier") return [String(node.name)];
  if (node.type !== "MemberExpression") return null;
  const object = memberChain(node.object as Node);
  if (!object) return null;
  const property = node.property as Node;
  if (!node.computed && property.type === "Identifier") return [...object, String(property.name)];
  if (node.computed && property.type === "Literal" && typeof property.value === "string") return [...object, property.value];
  return null;
}

/**
 * Checks a `condition` when it is saved: length 1..1024, valid syntax, only the safe subset, and
 * every `visitor.claims.*` it reads declared by the site's visitor schema. Returns it unchanged.
 */
export function checkCondition(field: string, expression: string, schema: JsonObject): string {
  checkLength(field, expression, 1, CONDITION_MAX);
  if (!expression.trim()) throw badInput(`${field} cannot be blank: send null to remove it.`);
  const known = new Set(claimsOf(schema).map((c) => c.path));
  const visit = (node: Node): void => {
    switch (node.type) {
      case "Literal": {
        const v = node.value;
        if (v !== null && !["string", "number", "boolean"].includes(typeof v))
          throw badInput(`${field}: only string, number, boolean and null literals are allowed.`);
        return;
      }
      case "Identifier":
      case "MemberExpression": {
        const chain = memberChain(node);
        if (!chain || chain[0] !== "visitor" || chain[1] !== "claims" || chain.length < 3) {
          throw badInput(
            `${field}: conditions read visitor claims as visitor.claims.<name>; "${expression.slice(0, 80)}" reads something else.`,
          );
        }
        const path = chain.slice(2).join(".");
        if (!known.has(path))
          throw badInput(`${field}: unknown claim visitor.claims.${path} (the site's adaptive schema does not declare it).`);
        return;
      }
      case "BinaryExpression":
      case "LogicalExpression": {
        const op = String(node.operator);
        if (!COMPARISONS.has(op) && !LOGICAL.has(op))
          throw badInput(`${field}: the operator ${op} is not allowed (use ===, !==, ==, !=, <, <=, >, >=, &&, ||, !).`);
        visit(node.left as Node);
        visit(node.right as Node);
        return;
      }
      case "UnaryExpression": {
        const op = String(node.operator);
        const arg = node.argument as Node;
        if (op === "-" && arg.type === "Literal" && typeof arg.value === "number") return;
        if (op !== "!") throw badInput(`${field}: the operator ${op} is not allowed (use !).`);
        visit(arg);
        return;
      }
      default:
        throw badInput(`${field}: ${node.type} is not allowed in conditions (only visitor.claims.*, literals, comparisons, &&, || and !).`);
    }
  };
  visit(parse(field, expression));
  return expression;
}

const parsed = new Map<string, Node | null>();
function parseCached(expression: string): Node | null {
  let node = parsed.get(expression);
  if (node === undefined) {
    try {
      node = jsep(expression);
    } catch {
      node = null;
    }
    if (parsed.size > 5000) parsed.clear();
    parsed.set(expression, node);
  }
  return node;
}

const NO_CLAIMS = Symbol("no claims");

function readsClaims(node: Node): boolean {
  if (node.type === "Identifier" || node.type === "MemberExpression") return true;
  for (const key of ["left", "right", "argument"]) {
    const child = node[key];
    if (child && typeof child === "object" && "type" in (child as object) && readsClaims(child as Node)) return true;
  }
  return false;
}

/** Reads a claim by its path, own properties only. */
function readClaim(claims: JsonObject, path: string[]): unknown {
  let current: unknown = claims;
  for (const key of path) {
    if (!isPlainObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

function isPrimitive(v: unknown): boolean {
  return v === null || v === undefined || ["string", "number", "boolean"].includes(typeof v);
}

/**
 * Whether a visitor with these claims sees an item with this condition. No condition: shown.
 * A visitor without claims (null) does not see items whose condition reads a claim. An
 * expression that cannot be evaluated hides the item.
 */
export function evaluateCondition(expression: string | null | undefined, claims: JsonObject | null): boolean {
  if (expression === null || expression === undefined) return true;
  const node = parseCached(expression);
  if (!node) return false;
  if (!claims && readsClaims(node)) return false;
  const evaluate = (n: Node): unknown => {
    switch (n.type) {
      case "Literal":
        return n.value;
      case "Identifier":
      case "MemberExpression": {
        const chain = memberChain(n);
        if (!chain || chain[0] !== "visitor" || chain[1] !== "claims") throw new Error("unsupported");
        if (!claims) throw NO_CLAIMS;
        return readClaim(claims, chain.slice(2));
      }
      case "UnaryExpression": {
        const v = evaluate(n.argument as Node);
        if (n.operator === "!") return !v;
        if (n.operator === "-" && typeof v === "number") return -v;
        throw new Error("unsupported");
      }
      case "BinaryExpression":
      case "LogicalExpression": {
        const op = String(n.operator);
        if (op === "&&") return evaluate(n.left as Node) && evaluate(n.right as Node);
        if (op === "||") return evaluate(n.left as Node) || evaluate(n.right as Node);
        const a = evaluate(n.left as Node);
        const b = evaluate(n.right as Node);
        switch (op) {
          case "===":
            return a === b;
          case "!==":
            return a !== b;
          case "==":
            // biome-ignore lint/suspicious/noDoubleEquals: the adaptive expressions compare primitives loosely, as JavaScript does
            return isPrimitive(a) && isPrimitive(b) ? a == b : a === b;
          case "!=":
            // biome-ignore lint/suspicious/noDoubleEquals: the adaptive expressions compare primitives loosely, as JavaScript does
            return isPrimitive(a) && isPrimitive(b) ? a != b : a !== b;
        }
        const comparable = (typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string");
        if (!comparable) return false;
        const x = a as number | string;
        const y = b as number | string;
        if (op === "<") return x < y;
        if (op === "<=") return x <= y;
        if (op === ">") return x > y;
        if (op === ">=") return x >= y;
        throw new Error("unsupported");
      }
      default:
        throw new Error("unsupported");
    }
  };
  try {
    return Boolean(evaluate(node));
  } catch {
    return false;
  }
}
