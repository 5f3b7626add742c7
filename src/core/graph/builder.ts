import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import ComplexityPlugin from "@pothos/plugin-complexity";
import { getNamedType, isListType, isNonNullType } from "graphql";
import type PrismaTypes from "../../generated/pothos-types.js";
import { getDatamodel } from "../../generated/pothos-types.js";
import type { Context } from "../context.js";
import { typeOfId } from "../ids.js";
import { AppError, invalidScalarValue } from "../errors.js";
import { isoString } from "../support/dates.js";

/** Most items one page of a Relay connection may hold. */
export const MAX_CONNECTION_SIZE = 100;

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
  // The cost of a GraphQL document, computed from its shape and arguments (variables included)
  // before any resolver runs (src/graphql/limits.ts applies the limit): a field costs 1, and what
  // is selected under a connection or list counts once per requested item (`first`/`last`/`limit`,
  // the number of `ids`, else 10 for plain lists). A connection's `edges`, `node` and `nodes`
  // wrappers cost nothing of their own.
  complexity: {
    fieldComplexity: (args: Record<string, unknown>, _ctx, field) => {
      for (const name of ["first", "last"] as const) {
        const n = args[name];
        if (typeof n === "number" && (n < 0 || n > MAX_CONNECTION_SIZE)) {
          throw new AppError(400, `${name} on ${field.name} must be between 0 and ${MAX_CONNECTION_SIZE} (got ${n}).`);
        }
      }
      const size = [args.first, args.last, args.limit].find((v) => typeof v === "number") as number | undefined;
      if (size !== undefined) return { field: 1, multiplier: Math.max(1, size) };
      if (Array.isArray(args.ids)) return { field: 1, multiplier: Math.max(1, args.ids.length) };
      const named = getNamedType(field.type).name;
      if (field.name === "edges" && named.endsWith("Edge")) return { field: 0, multiplier: 1 };
      if ((field.name === "node" || field.name === "nodes") && Object.keys(args).length === 0) return { field: 0, multiplier: 1 };
      const type = isNonNullType(field.type) ? field.type.ofType : field.type;
      return { field: 1, multiplier: isListType(type) ? 10 : 1 };
    },
  },
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    maxConnectionSize: MAX_CONNECTION_SIZE,
    defaultConnectionSize: 20,
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
