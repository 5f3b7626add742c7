import {
  getNamedType,
  getOperationAST,
  getVariableValues,
  isAbstractType,
  isInputObjectType,
  isObjectType,
  typeFromAST,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type FragmentDefinitionNode,
  type GraphQLInputObjectType,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import type { Plugin } from "graphql-yoga";

/**
 * Runs the operations `enabled` picks compiled by graphql-jit, each document compiled once per
 * schema (the /v1 routes' operations are built once by the server, so they are compiled once).
 *
 * The variables are coerced by graphql's own `getVariableValues` first: a bad value is answered
 * with graphql's errors, word for word, and nothing runs (graphql-jit's own messages differ).
 * A document graphql-jit cannot compile (or whose compilation throws) runs through the usual
 * execution, and so does one whose compiled code would be too large: graphql-jit writes code for
 * each field once per object type it may be found on, so a selection nesting abstract types (a
 * site structure's sections and groups, each with their children) grows with the product of their
 * possible types at every level — `generatedFields` counts it, and past MAX_GENERATED_FIELDS the
 * compilation (gigabytes of source text for a few levels) is not attempted. Nor is that of a
 * document with a variable of a recursive input type (a site structure's items and their
 * `children`): graphql-jit unfolds the type's coercion into code, level after level.
 * test/server/rest-jit.property.test.ts compares the answers of both executions.
 */
/** Whether an input object type contains itself, directly or through other input types. */
function recursiveInput(type: GraphQLInputObjectType, path: Set<GraphQLInputObjectType> = new Set()): boolean {
  if (path.has(type)) return true;
  path.add(type);
  for (const field of Object.values(type.getFields())) {
    const named = getNamedType(field.type);
    if (isInputObjectType(named) && recursiveInput(named, path)) return true;
  }
  path.delete(type);
  return false;
}

/** Whether a variable of the operation has a recursive input type. */
export function recursiveVariables(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName);
  return (operation?.variableDefinitions ?? []).some((definition) => {
    const type = typeFromAST(schema, definition.type as never);
    const named = type && getNamedType(type);
    return !!named && isInputObjectType(named) && recursiveInput(named);
  });
}

/** Fields of generated code past which a document is not compiled (the /v1 operations need a few hundred). */
export const MAX_GENERATED_FIELDS = 5_000;

/**
 * How many fields graphql-jit would write code for: every field selected, once per object type it
 * is selected on (an abstract type's selection counted for each of its possible types). Counting
 * stops past `limit`.
 */
export function generatedFields(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  limit = MAX_GENERATED_FIELDS,
): number {
  const operation = getOperationAST(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  let count = 0;
  const visit = (type: GraphQLNamedType, selections: SelectionSetNode, depth: number): void => {
    if (count > limit || depth > 64) {
      count = limit + 1;
      return;
    }
    const objects = isAbstractType(type) ? schema.getPossibleTypes(type) : isObjectType(type) ? [type] : [];
    for (const object of objects) {
      for (const selection of selections.selections) {
        if (count > limit) return;
        if (selection.kind === Kind.FIELD) {
          count++;
          const field = object.getFields()[selection.name.value];
          if (field && selection.selectionSet) visit(getNamedType(field.type), selection.selectionSet, depth + 1);
        } else {
          const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments.get(selection.name.value)?.selectionSet;
          const on = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition : fragments.get(selection.name.value)?.typeCondition;
          const narrowed = on ? schema.getType(on.name.value) : object;
          if (!set || !narrowed) continue;
          if (narrowed !== object && !(isAbstractType(narrowed) && schema.isSubType(narrowed, object))) continue;
          visit(object, set, depth + 1);
        }
      }
    }
  };
  visit(root, operation.selectionSet, 0);
  return count;
}

export function useCompiledExecution(enabled: (args: ExecutionArgs) => boolean): Plugin {
  const compiled = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, CompiledQuery | null>>>();

  function compiledFor(args: ExecutionArgs): CompiledQuery | null {
    let bySchema = compiled.get(args.schema);
    if (!bySchema) compiled.set(args.schema, (bySchema = new WeakMap()));
    let byName = bySchema.get(args.document);
    if (!byName) bySchema.set(args.document, (byName = new Map()));
    const name = args.operationName ?? "";
    let query = byName.get(name);
    if (query === undefined) {
      try {
        if (recursiveVariables(args.schema, args.document, args.operationName)) throw new Error("a variable of a recursive input type");
        if (generatedFields(args.schema, args.document, args.operationName) > MAX_GENERATED_FIELDS) throw new Error("too large to compile");
        const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
        query = isCompiledQuery(result) ? result : null;
      } catch {
        query = null; // e.g. an input type graphql-jit cannot unfold: the usual execution runs it
      }
      byName.set(name, query);
    }
    return query;
  }

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!enabled(args)) return;
      setExecuteFn((args: ExecutionArgs) => {
        const query = compiledFor(args);
        if (!query) return executeFn(args);
        const operation = getOperationAST(args.document, args.operationName);
        const inputs = args.variableValues ?? {};
        const coerced = getVariableValues(args.schema, operation?.variableDefinitions ?? [], inputs, { maxErrors: 50 });
        if (coerced.errors) return { errors: coerced.errors };
        return query.query(args.rootValue, args.contextValue, inputs);
      });
    },
  };
}
