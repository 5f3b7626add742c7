import { builder } from "./builder.js";

/**
 * Scalars under names of their own: string values GraphQL enums cannot spell (`share-link`,
 * `in-app`) and JSON values with a documented shape. The builder's scalar map names DateTime and
 * JSON only, so a scalar of another name is declared here, through the one cast, as one that
 * carries a string or one that carries any JSON value. Its `extensions.jsonSchema` is what the
 * OpenAPI document shows for it (rest/handler.ts inlines it wherever the scalar appears).
 */

export type StringScalarOptions = Parameters<typeof builder.scalarType<"String">>[1];
export type StringScalarRef = ReturnType<typeof builder.scalarType<"String">>;
export type JsonScalarOptions = Parameters<typeof builder.scalarType<"JSON">>[1];
export type JsonScalarRef = ReturnType<typeof builder.scalarType<"JSON">>;

/** A scalar named `name` whose values are strings. */
export function stringScalar(name: string, options: StringScalarOptions): StringScalarRef {
  return (builder.scalarType as (name: string, options: StringScalarOptions) => StringScalarRef)(name, options);
}

/** A scalar named `name` whose values are any JSON value. */
export function jsonScalar(name: string, options: JsonScalarOptions): JsonScalarRef {
  return (builder.scalarType as (name: string, options: JsonScalarOptions) => JsonScalarRef)(name, options);
}
