import { badInput } from "./errors.js";

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

/** Input checks shared by every domain; each names the field it rejects. */
export function checkLength(field: string, value: string | null | undefined, min: number, max: number): void {
  if (value === null || value === undefined) return;
  const length = codePointLength(value, max);
  if (length < min) throw badInput(`${field} must be at least ${min} character${min === 1 ? "" : "s"} long.`);
  if (length > max) throw badInput(`${field} must be at most ${max} characters long (got ${value.length > 4 * max ? `more than ${max}` : codePointLength(value)}).`);
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
