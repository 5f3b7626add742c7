import { getNamedType, isListType, isNonNullType, isObjectType, isUnionType, type GraphQLOutputType } from "graphql";

/**
 * Gives a GraphQL result the documented REST shape: an absent optional field is omitted rather
 * than sent as null, except fields marked `keepNull` whose documented value may be null.
 */
export function shapeForRest(value: unknown, type: GraphQLOutputType): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return shapeForRest(value, type.ofType);
  if (isListType(type)) return (value as unknown[]).map((item) => shapeForRest(item, type.ofType));
  let named = getNamedType(type);
  if (isUnionType(named) && typeof value === "object") {
    // A union value is shaped as the member type whose fields hold all of its keys.
    const keys = Object.keys(value as object);
    named = named.getTypes().find((member) => keys.every((k) => k in member.getFields())) ?? named;
  }
  if (!isObjectType(named) || typeof value !== "object") return value;
  const fields = named.getFields();
  const out: Record<string, unknown> = {};
  for (const [key, fieldValue] of Object.entries(value as Record<string, unknown>)) {
    const field = fields[key];
    if (fieldValue === null) {
      if (field?.extensions?.keepNull) out[key] = null;
      continue;
    }
    out[key] = field ? shapeForRest(fieldValue, field.type) : fieldValue;
  }
  return out;
}
