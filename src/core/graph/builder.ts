import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import ComplexityPlugin from "@pothos/plugin-complexity";
import { getNamedType, isLeafType, isListType, isNonNullType, type GraphQLField } from "graphql";
import type PrismaTypes from "../../generated/pothos-types.js";
import { getDatamodel } from "../../generated/pothos-types.js";
import type { Context } from "../context.js";
import { typeOfId } from "../ids.js";
import { AppError, invalidScalarValue } from "../errors.js";
import { isoString } from "../support/dates.js";
import { DEFAULT_LIMIT, MAX_LIMIT } from "./pagination.js";

/** Most items one page of a Relay connection may hold. */
export const MAX_CONNECTION_SIZE = 100;
/** Items of a connection's page when the query names neither `first` nor `last`. */
export const DEFAULT_CONNECTION_SIZE = 20;
/** Items a list without a size argument is counted for. */
const UNSIZED_LIST = 10;

/** The nodes one field may fetch and how many times what is selected under it counts (see `complexity` below). */
function fieldCost(
  args: Record<string, unknown>,
  _ctx: unknown,
  field: GraphQLField<unknown, any, any>,
): { field: number; multiplier: number } {
  const named = getNamedType(field.type);
  if (isLeafType(named)) return { field: 0, multiplier: 1 };
  const argNames = new Set(field.args.map((a) => a.name));
  if (argNames.has("first") || argNames.has("last")) {
    for (const name of ["first", "last"] as const) {
      const n = args[name];
      if (typeof n === "number" && (n < 0 || n > MAX_CONNECTION_SIZE)) {
        throw new AppError(400, `${name} on ${field.name} must be between 0 and ${MAX_CONNECTION_SIZE} (got ${n}).`);
      }
    }
    const sizes = [args.first, args.last].filter((v): v is number => typeof v === "number");
    const size = sizes.length ? Math.min(...sizes) : DEFAULT_CONNECTION_SIZE;
    return { field: size, multiplier: size };
  }
  if (argNames.has("limit")) {
    const size = typeof args.limit === "number" && args.limit > 0 ? Math.min(args.limit, MAX_LIMIT) : DEFAULT_LIMIT;
    return { field: size, multiplier: size };
  }
  if (Array.isArray(args.ids)) return { field: args.ids.length, multiplier: args.ids.length };
  if (field.name === "edges" && named.name.endsWith("Edge")) return { field: 0, multiplier: 1 };
  if ((field.name === "node" || field.name === "nodes") && field.args.length === 0) return { field: 0, multiplier: 1 };
  if (field.name === "pageInfo" && named.name === "PageInfo") return { field: 0, multiplier: 1 };
  const type = isNonNullType(field.type) ? field.type.ofType : field.type;
  return isListType(type) ? { field: UNSIZED_LIST, multiplier: UNSIZED_LIST } : { field: 1, multiplier: 1 };
}

/**
 * The one schema builder: plugins, context and scalars; it defines no domain types.
 *
 * A field whose resolver reads its rows through a domain service (access checks first) is a plain
 * `t.field` of the Prisma object's ref, not a `t.prismaField`: the latter plans a Prisma query from
 * the selection on every call (about 15 µs for a space), for the resolver to use — and a service
 * does not. Relations selected under it are loaded by the Prisma plugin as for any other parent.
 */
export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [PrismaPlugin, RelayPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  // What a GraphQL document may fetch, in nodes, computed from its shape and arguments (variables
  // included) before any resolver runs (src/graphql/limits.ts sums it and applies the limit), in
  // the spirit of GitHub's node limit: scalars and enums cost nothing; an object costs 1; a
  // connection or list costs the items it may return (`first`/`last`, else the connection's
  // default page; `limit`, else the list's default; the number of `ids`; else 10) and what is
  // selected under it counts once per item. A connection's `edges`, `node`, `nodes` and `pageInfo`
  // are part of the connection: they cost nothing of their own.
  complexity: { fieldComplexity: fieldCost },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    maxConnectionSize: MAX_CONNECTION_SIZE,
    defaultConnectionSize: DEFAULT_CONNECTION_SIZE,
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: "omit",
    // GitHub's shortcut beside `edges { node }`: `collections(first: 10) { nodes { title } }`.
    nodesOnConnection: true,
    cursorType: "String",
    // Stored ids already name their type (see core/ids.ts): global ids are the plain ids.
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (globalID) => ({ typename: typeOfId(globalID) ?? "Unknown", id: globalID }),
    // node(id) and nodes(ids) are src/graphql/nodes.schema.ts: each type's read rule decides.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});

builder.scalarType("DateTime", {
  description: "ISO 8601 date-time string.",
  extensions: { jsonSchema: { type: "string", format: "date-time" } },
  serialize: (value) => (value instanceof Date ? isoString(value) : String(value)),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (Number.isNaN(date.getTime())) throw invalidScalarValue("DateTime", `"${value}" is not an ISO 8601 date-time`);
    return date;
  },
});

builder.scalarType("JSON", {
  description: "Any JSON value.",
  extensions: { jsonSchema: {} },
  serialize: (value) => value,
  parseValue: (value) => value,
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
