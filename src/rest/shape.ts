import { isListType, isNonNullType, isObjectType, isUnionType, type GraphQLObjectType, type GraphQLOutputType } from "graphql";

/**
 * Gives a GraphQL result the documented REST shape: an absent optional field is omitted rather
 * than sent as null, except fields marked `keepNull` whose documented value may be null.
 */
export function shapeForRest(value: unknown, type: GraphQLOutputType): unknown {
  return shaperOf(type)(value);
}

type Shaper = (value: unknown) => unknown;

const identity: Shaper = (value) => value;

/**
 * The shaping of each type, worked out once per type from the schema (a list of 50 objects walks
 * the same fields 50 times): per object field, whether a null stays and how its value is shaped.
 */
const shapers = new WeakMap<object, Shaper>();

function shaperOf(type: GraphQLOutputType): Shaper {
  let shaper = shapers.get(type);
  if (shaper) return shaper;
  // Set before the inner types are worked out: a type may contain itself (a page's children).
  let inner: Shaper = identity;
  shaper = (value) => inner(value);
  shapers.set(type, shaper);
  inner = buildShaper(type);
  return shaper;
}

function buildShaper(type: GraphQLOutputType): Shaper {
  if (isNonNullType(type)) return shaperOf(type.ofType);
  if (isListType(type)) {
    const item = shaperOf(type.ofType);
    return (value) => (value === null || value === undefined ? value : (value as unknown[]).map(item));
  }
  if (isUnionType(type)) {
    const members = type.getTypes().map((member) => ({ member, keys: member.getFields(), shape: shaperOf(member) }));
    return (value) => {
      if (value === null || value === undefined || typeof value !== "object") return value;
      // A union value is shaped as the member type whose fields hold all of its keys.
      const keys = Object.keys(value);
      const found = members.find((m) => keys.every((k) => k in m.keys));
      return found ? found.shape(value) : value;
    };
  }
  if (isObjectType(type)) return objectShaper(type);
  return identity;
}

function objectShaper(type: GraphQLObjectType): Shaper {
  let fields: Map<string, { keepNull: boolean; shape: Shaper }> | undefined;
  return (value) => {
    if (value === null || value === undefined || typeof value !== "object") return value;
    fields ??= new Map(
      Object.entries(type.getFields()).map(([name, field]) => [
        name,
        { keepNull: !!field.extensions?.keepNull, shape: shaperOf(field.type) },
      ]),
    );
    const out: Record<string, unknown> = {};
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const fieldValue = (value as Record<string, unknown>)[key];
      const field = fields.get(key);
      if (fieldValue === null) {
        if (field?.keepNull) out[key] = null;
        continue;
      }
      out[key] = field ? field.shape(fieldValue) : fieldValue;
    }
    return out;
  };
}
