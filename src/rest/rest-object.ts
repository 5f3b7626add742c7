import {
  execute,
  getNamedType,
  isObjectType,
  parse,
  type DocumentNode,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
} from "graphql";
import type { Context } from "../core/context.js";
import { isGraphOnly } from "./schema-projection.js";
import { shapeForRest } from "./shape.js";

/**
 * Objects read through the graph as their /v1 route answers them: the selection of every field
 * of the REST projection (schema-projection.ts `isGraphOnly` leaves the others out), shaped as
 * REST answers are (shape.ts). For fields whose /v1 form embeds another object on request
 * (an integration's space installation with `expand=true`).
 */

const restQueries = new WeakMap<GraphQLSchema, Map<string, DocumentNode | null>>();

/** The selection of every field a REST client gets of a type (graph-only fields left out). */
function restSelection(type: GraphQLObjectType, depth = 0): string {
  const parts: string[] = [];
  for (const field of Object.values(type.getFields())) {
    if (isGraphOnly(field as any)) continue;
    const named = getNamedType(field.type);
    if (isObjectType(named)) {
      if (depth >= 3) continue;
      parts.push(`${field.name} { ${restSelection(named, depth + 1)} }`);
    } else parts.push(field.name);
  }
  return parts.join(" ");
}

/**
 * An object exactly as its REST read answers it (`Query.space` for GET /v1/spaces/{spaceId},
 * `Query.site` for GET /v1/orgs/{organizationId}/sites/{siteId}), read through the graph with the
 * caller's rights; null when the caller cannot read it.
 */
export async function restObject(
  ctx: Context,
  info: GraphQLResolveInfo,
  fieldName: string,
  args: Record<string, string>,
): Promise<unknown> {
  const schema = info.schema;
  let queries = restQueries.get(schema);
  if (!queries) restQueries.set(schema, (queries = new Map()));
  let query = queries.get(fieldName);
  if (query === undefined) {
    const field = schema.getQueryType()?.getFields()[fieldName];
    const type = field && getNamedType(field.type);
    const names = Object.keys(args);
    query =
      field && isObjectType(type) && names.every((n) => field.args.some((a) => a.name === n))
        ? parse(
            `query (${names.map((n) => `$${n}: String!`).join(", ")}) { object: ${fieldName}(${names.map((n) => `${n}: $${n}`).join(", ")}) { ${restSelection(type)} } }`,
          )
        : null;
    queries.set(fieldName, query);
  }
  if (!query) return null;
  const result = await execute({ schema, document: query, contextValue: ctx, variableValues: args });
  const object = (result.data as any)?.object;
  if (result.errors?.length || !object) return null;
  return shapeForRest(object, schema.getQueryType()!.getFields()[fieldName]!.type);
}
