import { getOperationAST, getVariableValues, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from "graphql";
import { compileQuery, isCompiledQuery, type CompiledQuery } from "graphql-jit";
import type { Plugin } from "graphql-yoga";

/**
 * Runs the operations `enabled` picks compiled by graphql-jit, each document compiled once per
 * schema (the /v1 routes' operations are built once by the server, so they are compiled once).
 *
 * The variables are coerced by graphql's own `getVariableValues` first: a bad value is answered
 * with graphql's errors, word for word, and nothing runs (graphql-jit's own messages differ).
 * A document graphql-jit cannot compile (or whose compilation throws) runs through the usual execution.
 * test/server/rest-jit.property.test.ts compares the answers of both executions.
 */
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
