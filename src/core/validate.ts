import { badInput } from "./errors.js";

/** Input checks shared by every domain; each names the field it rejects. */
export function checkLength(field: string, value: string | null | undefined, min: number, max: number): void {
  if (value === null || value === undefined) return;
  const length = [...value].length;
  if (length < min) throw badInput(`${field} must be at least ${min} character${min === 1 ? "" : "s"} long.`);
  if (length > max) throw badInput(`${field} must be at most ${max} characters long (got ${length}).`);
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

/** Trims a required title-like string and rejects blank ones. */
export function requiredText(field: string, value: string | null | undefined): string {
  const text = value?.trim();
  if (!text) throw badInput(`${field} is required.`);
  return text;
}
