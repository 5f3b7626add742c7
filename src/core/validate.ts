import { badInput, type AppError } from "./errors.js";

/**
 * The number of characters (Unicode code points) of `value`, counted without copying it; past
 * `stopAfter` the count stops (the result is then `stopAfter + 1`).
 */
export function codePointLength(value: string, stopAfter = Infinity): number {
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    // Each code unit but the low half of a surrogate pair starts a code point.
    const unit = value.charCodeAt(i);
    if (unit < 0xdc00 || unit > 0xdfff || i === 0 || !isHighSurrogate(value.charCodeAt(i - 1))) {
      if (++count > stopAfter) return count;
    }
  }
  return count;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** The first `max` characters (code points) of `value`, without splitting a surrogate pair. */
export function sliceCodePoints(value: string, max: number): string {
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const starts = unit < 0xdc00 || unit > 0xdfff || i === 0 || !isHighSurrogate(value.charCodeAt(i - 1));
    if (starts && ++count > max) return value.slice(0, i);
  }
  return value;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with a string as stored text (PostgreSQL text cannot hold NUL; lone surrogates are not Unicode), or null. */
export function textProblem(value: string): string | null {
  if (value.includes("\u0000")) return "cannot contain NUL characters (\\u0000)";
  if (LONE_SURROGATE.test(value)) return "is not valid Unicode text: it holds a lone UTF-16 surrogate";
  return null;
}

/**
 * The refusal of a query string (`url.search`) holding a name or value whose percent-encoding is
 * not UTF-8 (`%E9`, `%ZZ`), or null. URLSearchParams would read such a value as U+FFFD: a
 * search for `caf%E9` would look for other text than the one sent, and find nothing.
 */
export function queryEncodingProblem(search: string): AppError | null {
  for (const part of search.replace(/^\?/, "").split("&")) {
    if (!part.includes("%")) continue;
    const [name = "", value = ""] = part.split(/=(.*)/s);
    for (const [text, what] of [
      [name, "A query parameter name"],
      [value, decodedName(name)],
    ] as const) {
      try {
        decodeURIComponent(text.replace(/\+/g, " "));
      } catch {
        return badInput(`${what}: "${text.slice(0, 100)}" is not valid percent-encoded UTF-8.`);
      }
    }
  }
  return null;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, " ")).slice(0, 100);
  } catch {
    return name.slice(0, 100);
  }
}

/** The refusal of a value nested deeper than MAX_JSON_DEPTH. */
export function tooDeep(field: string, maxDepth: number) {
  return badInput(`${field} is nested too deeply: at most ${maxDepth} levels of objects and arrays (MAX_JSON_DEPTH).`);
}

/**
 * Checks a value a request sent (a path or query parameter, a JSON body, GraphQL variables and
 * arguments) before anything uses it: every string and object key must be storable text
 * (`textProblem`), and objects and arrays may nest at most `maxDepth` levels (MAX_JSON_DEPTH).
 * Throws a 400 naming the field (`configuration.items[2].name`). Iterative: no input is deep
 * enough to exhaust the stack.
 */
export function checkInputValue(field: string, value: unknown, maxDepth: number): void {
  const stack: [value: unknown, path: string, depth: number][] = [[value, field, 0]];
  while (stack.length) {
    const [current, path, depth] = stack.pop()!;
    if (typeof current === "string") {
      const problem = textProblem(current);
      if (problem) throw badInput(`${path || "The value"} ${problem}.`);
      continue;
    }
    if (!current || typeof current !== "object") continue;
    if (depth >= maxDepth) throw tooDeep(path || "The value", maxDepth);
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${path}[${i}]`, depth + 1]);
      continue;
    }
    for (const [key, item] of Object.entries(current)) {
      const at = path ? `${path}.${key}` : key;
      const problem = textProblem(key);
      if (problem) throw badInput(`The field name ${JSON.stringify(key)} in ${path || "the body"} ${problem}.`);
      stack.push([item, at, depth + 1]);
    }
  }
}

/** Input checks shared by every domain; each names the field it rejects. */
export function checkLength(field: string, value: string | null | undefined, min: number, max: number): void {
  if (value === null || value === undefined) return;
  const length = codePointLength(value, max);
  if (length < min) throw badInput(`${field} must be at least ${min} character${min === 1 ? "" : "s"} long.`);
  if (length > max)
    throw badInput(
      `${field} must be at most ${max} characters long (got ${value.length > 4 * max ? `more than ${max}` : codePointLength(value)}).`,
    );
}

export function checkPattern(field: string, value: string | null | undefined, pattern: RegExp, description?: string): void {
  if (value === null || value === undefined) return;
  if (!pattern.test(value)) throw badInput(`${field} must match ${description ?? pattern.source}.`);
}

export function checkUri(field: string, value: string | null | undefined, max = 2048): void {
  if (value === null || value === undefined) return;
  checkLength(field, value, 1, max);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badInput(`${field} must be an absolute URI.`);
  }
  if (!/^https?:$/.test(url.protocol)) throw badInput(`${field} must be an http or https URI.`);
}

export function checkOneOf<T extends string>(field: string, value: string | null | undefined, allowed: readonly T[]): T | undefined {
  if (value === null || value === undefined) return undefined;
  if (!allowed.includes(value as T)) throw badInput(`${field} must be one of ${allowed.join(", ")} (got "${value}").`);
  return value as T;
}

/**
 * An optional reference to another object by id: undefined and null pass through; an empty or
 * blank string is a 400 (it would otherwise be taken as "no reference" by one check and stored
 * as an id by the next).
 */
export function optionalId<T extends string | null | undefined>(field: string, value: T): T {
  if (typeof value === "string" && !value.trim()) throw badInput(`${field} cannot be empty: give an id, or null for none.`);
  return value;
}

/** Trims a required title-like string and rejects blank ones. */
export function requiredText(field: string, value: string | null | undefined): string {
  const text = value?.trim();
  if (!text) throw badInput(`${field} is required.`);
  return text;
}
