import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin from "@pothos/plugin-relay";
import type PrismaTypes from "../generated/pothos-types.js";
import { getDatamodel } from "../generated/pothos-types.js";
import type { Context } from "./context.js";
import { typeOfId } from "./ids.js";

/** The one schema builder: plugins, context and scalars; it defines no domain types. */
export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    maxConnectionSize: 100,
    defaultConnectionSize: 20,
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: "omit",
    cursorType: "String",
    // Stored ids already name their type (see core/ids.ts): global ids are the plain ids.
    encodeGlobalID: (_typename, id) => String(id),
    decodeGlobalID: (globalID) => ({ typename: typeOfId(globalID) ?? "Unknown", id: globalID }),
    // Entry points check membership; a generic node(id) lookup would bypass them.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});

builder.scalarType("DateTime", {
  description: "ISO 8601 date-time string.",
  extensions: { jsonSchema: { type: "string", format: "date-time" } },
  serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new TypeError(`"${value}" is not an ISO 8601 date-time`);
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
