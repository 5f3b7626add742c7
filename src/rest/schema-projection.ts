import {
  GraphQLBoolean,
  GraphQLNonNull,
  GraphQLSchema,
  Kind,
  defaultFieldResolver,
  getNamedType,
  isInputObjectType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  isScalarType,
  parse,
  printType,
  type FieldNode,
  type GraphQLFieldConfig,
  type GraphQLType,
} from "graphql";
import { mapSchema, MapperKind } from "@graphql-tools/utils";
import type { RouteDef } from "./route.js";

/** True for fields that exist to walk the graph and have no place in a /v1 shape. */
export function isGraphOnly(field: GraphQLFieldConfig<any, any>): boolean {
  if (field.extensions?.graphOnly) return true;
  if (field.args && Object.keys(field.args).length > 0) return true;
  return getNamedType(field.type).name.endsWith("Connection");
}

/**
 * A field marked `extensions: { restType: "<Scalar>" }` is served on /v1 as that scalar (same
 * resolver, same nullability): a recursive object (a page tree) cannot be selected to any depth
 * by the generated operations, so its REST form is JSON that the scalar serializes, described by
 * the scalar's `extensions.jsonSchema` (which may `$ref` the object's own component).
 */
function withRestType(schema: GraphQLSchema, config: GraphQLFieldConfig<any, any>): GraphQLFieldConfig<any, any> {
  const name = config.extensions?.restType;
  if (typeof name !== "string") return config;
  const scalar = schema.getType(name);
  if (!isScalarType(scalar)) throw new Error(`restType "${name}" is not a scalar of the schema`);
  return { ...config, type: isNonNullType(config.type) ? new GraphQLNonNull(scalar) : scalar };
}

/**
 * A field the graph names by its own rule (`commentsCount`) is served under its documented name
 * (`comments`); the resolver still reads the value it read under the graph's name.
 */
function withRestName(
  fieldName: string,
  config: GraphQLFieldConfig<any, any>,
): GraphQLFieldConfig<any, any> | [string, GraphQLFieldConfig<any, any>] {
  const name = config.extensions?.restName;
  if (typeof name !== "string" || name === fieldName) return config;
  const resolve = config.resolve ?? defaultFieldResolver;
  return [name, { ...config, resolve: (source, args, ctx, info) => resolve(source, args, ctx, { ...info, fieldName }) }];
}

/**
 * The arguments the graph names by its own rule (`spaceSelection`) are taken under their
 * documented names (`space_selection`, their `restName`); the resolver still receives them under
 * the graph's names, and a REST body's explicit `null` for one as the graph's name's null.
 */
function withRestArgNames(config: GraphQLFieldConfig<any, any>): GraphQLFieldConfig<any, any> {
  const renamed = Object.entries(config.args ?? {}).flatMap(([name, arg]) => {
    const restName = arg.extensions?.restName;
    return typeof restName === "string" && restName !== name ? [[name, restName] as const] : [];
  });
  if (renamed.length === 0) return config;
  const restNames = new Map(renamed);
  const args = Object.fromEntries(Object.entries(config.args!).map(([name, arg]) => [restNames.get(name) ?? name, arg]));
  const resolve = config.resolve ?? defaultFieldResolver;
  return {
    ...config,
    args,
    resolve: (source, restArgs, ctx, info) => {
      const graphArgs: Record<string, unknown> = { ...restArgs };
      for (const [name, restName] of renamed) {
        if (restName in graphArgs) graphArgs[name] = graphArgs[restName];
        else if ((ctx as { explicitNulls?: Set<string> })?.explicitNulls?.has(restName)) graphArgs[name] = null;
        delete graphArgs[restName];
      }
      return resolve(source, graphArgs, ctx, info);
    },
  };
}

/**
 * The graph served at /graphql: every field but those kept only for the documented /v1 shapes
 * (`restOnly`), which the graph serves as related objects and connections instead. A to-one
 * relation asked only for its `id` (`organization { id }`) is answered from the foreign key of
 * the row it hangs on, without loading the related row.
 */
export function graphSchema(schema: GraphQLSchema): GraphQLSchema {
  const mapped = mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (config) => (config.extensions?.restOnly ? null : withIdFromForeignKey(config)),
  });
  // The scalars /v1 serves recursive objects as (`restType`) name nothing of the graph: left out of it.
  const restTypes = new Set<string>();
  const named = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields()))
      if (typeof field.extensions?.restType === "string") restTypes.add(field.extensions.restType);
  }
  for (const type of Object.values(mapped.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) continue;
    for (const field of Object.values<{ type: GraphQLType; args?: readonly { type: GraphQLType }[] }>(type.getFields())) {
      named.add(getNamedType(field.type).name);
      for (const arg of field.args ?? []) named.add(getNamedType(arg.type).name);
    }
  }
  const unused = [...restTypes].filter((name) => !named.has(name));
  if (unused.length === 0) return mapped;
  const config = mapped.toConfig();
  return new GraphQLSchema({ ...config, types: config.types.filter((type) => !unused.includes(type.name)) });
}

/**
 * A Prisma to-one relation (`t.relation`) whose foreign key is one column of its row: when the
 * selection under it is only `id` (and `__typename`), its value is `{ id: <foreign key> }` (null
 * when the key is), which is what the related row would answer; any other selection loads the row.
 * Every relation of the schema references its target's `id` (prisma/schema.prisma).
 */
function withIdFromForeignKey(config: GraphQLFieldConfig<any, any>): GraphQLFieldConfig<any, any> {
  const relation = config.extensions?.pothosPrismaRelationField as { isList?: boolean; relationFromFields?: readonly string[] } | undefined;
  if (!relation || relation.isList || relation.relationFromFields?.length !== 1 || !config.resolve) return config;
  const key = relation.relationFromFields[0]!;
  const resolve = config.resolve;
  return {
    ...config,
    resolve: (parent, args, context, info) => {
      if (parent && typeof parent === "object" && key in parent && onlyIdSelected(info.fieldNodes)) {
        const id = (parent as Record<string, unknown>)[key];
        return id === null || id === undefined ? null : { id };
      }
      return resolve(parent, args, context, info);
    },
  };
}

/** Whether every node of a field selects only `id` or `__typename`, plainly (no fragments, arguments or directives). */
function onlyIdSelected(nodes: readonly FieldNode[]): boolean {
  for (const node of nodes) {
    if (node.directives?.length || !node.selectionSet) return false;
    for (const selection of node.selectionSet.selections) {
      if (selection.kind !== Kind.FIELD || selection.directives?.length || selection.arguments?.length || selection.selectionSet)
        return false;
      if (selection.name.value !== "id" && selection.name.value !== "__typename") return false;
    }
  }
  return true;
}

/**
 * The REST face of the graph: the same types and resolvers, keeping only the root fields named
 * in the route table and, on objects, only the fields of the documented shapes. sofa-api builds
 * each route's operation from this projection, selecting every field it keeps.
 */
export function projectRestSchema(schema: GraphQLSchema, table: RouteDef[]): GraphQLSchema {
  const wanted = new Set(table.map((r) => r.field));
  const empty = new Set(table.filter((r) => r.status === 204).map((r) => r.field));
  const rootNames = new Map<string, string>([
    [schema.getQueryType()?.name ?? "Query", "Query"],
    [schema.getMutationType()?.name ?? "Mutation", "Mutation"],
  ]);
  const projected = mapSchema(schema, {
    [MapperKind.ROOT_FIELD]: (config, fieldName, typeName) => {
      const root = rootNames.get(typeName);
      const field = `${root}.${fieldName}` as RouteDef["field"];
      if (!root || !wanted.has(field)) return null;
      const named = withRestArgNames(config);
      // A route answering 204 has no body: its field's graph payload is served as a Boolean.
      if (empty.has(field) && !isScalarType(getNamedType(config.type))) {
        const resolve = named.resolve ?? defaultFieldResolver;
        return {
          ...named,
          type: new GraphQLNonNull(GraphQLBoolean),
          resolve: async (...a: Parameters<typeof resolve>) => (await resolve(...a), true),
        };
      }
      return named;
    },
    [MapperKind.OBJECT_FIELD]: (config, fieldName, typeName) => {
      if (rootNames.has(typeName) || typeName === "Subscription") return config;
      if (isGraphOnly(config)) return null;
      return withRestName(fieldName, withRestType(schema, config));
    },
    [MapperKind.SUBSCRIPTION_ROOT_FIELD]: () => null,
  });
  // The types the kept fields reach from the roots, and only those: the schema constructor collects
  // them (pruneSchema's second pass over the whole graph cost a fifth of a start-up), plus the
  // objects that implement a reached interface.
  const config = { ...projected.toConfig(), subscription: undefined };
  const reached = new GraphQLSchema({ ...config, types: [] });
  const implementations = Object.values(projected.getTypeMap()).filter(
    (t) => isObjectType(t) && !reached.getType(t.name) && t.getInterfaces().some((i) => reached.getType(i.name)),
  );
  const pruned = implementations.length ? new GraphQLSchema({ ...config, types: implementations }) : reached;
  for (const route of table) {
    const [root, name] = route.field.split(".") as [string, string];
    const type = root === "Query" ? pruned.getQueryType() : pruned.getMutationType();
    if (!type || !isObjectType(type) || !type.getFields()[name]) {
      throw new Error(`route ${route.method} ${route.path} names ${route.field}, which the schema does not have`);
    }
  }
  // sofa-api reads field and argument descriptions from the root types' AST nodes and, when a
  // type has none (a schema built in code), prints and parses the whole root type again for every
  // variable of every operation: seconds at each start. Parse each root type once instead.
  for (const type of [pruned.getQueryType(), pruned.getMutationType()]) {
    if (type && !type.astNode) (type as { astNode: unknown }).astNode = parse(printType(type)).definitions[0];
  }
  return pruned;
}
