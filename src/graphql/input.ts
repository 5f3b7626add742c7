import { GraphQLError, Kind, type DocumentNode, type ValueNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { checkInputValue, textProblem, tooDeep } from "../core/validate.js";
import { appErrorOf, badInput } from "../core/errors.js";

/**
 * What GraphQL operations take from their caller is checked like REST input (core/validate.ts
 * `checkInputValue`) before they run, over HTTP and graphql-ws alike: every string of the
 * variables and of the arguments written in the document must be storable text (no NUL, no lone
 * surrogate), and free-form JSON may nest at most MAX_JSON_DEPTH levels. A refusal is a 400
 * naming the variable or argument, before any resolver (or the database) sees the value.
 */
export function useInputChecks(maxJsonDepth: number): Plugin {
  // Documents whose written arguments passed: a document does not change, and the same one runs
  // again and again (yoga's parse cache, the /v1 routes' operations built once).
  const checked = new WeakSet<DocumentNode>();
  const refusal = (args: { document: DocumentNode; variableValues?: Record<string, unknown> | null }): GraphQLError | null => {
    try {
      for (const [name, value] of Object.entries(args.variableValues ?? {})) checkInputValue(`$${name}`, value, maxJsonDepth);
      if (!checked.has(args.document)) {
        checkLiterals(args.document, maxJsonDepth);
        checked.add(args.document);
      }
      return null;
    } catch (err) {
      const app = appErrorOf(err);
      if (!app) throw err;
      return new GraphQLError(app.message, { extensions: { code: app.status, http: { status: app.status } } });
    }
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = refusal(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = refusal(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}

/** The strings, object field names and nesting of the argument values written in a document. */
function checkLiterals(document: DocumentNode, maxDepth: number): void {
  const stack: [node: ValueNode, path: string, depth: number][] = [];
  const pushArguments = (node: any) => {
    for (const arg of node.arguments ?? []) stack.push([arg.value, arg.name.value, 0]);
  };
  // Arguments sit on fields and directives, anywhere in selection sets and fragments.
  const nodes: any[] = [...document.definitions];
  while (nodes.length) {
    const node = nodes.pop();
    pushArguments(node);
    for (const directive of node.directives ?? []) pushArguments(directive);
    for (const definition of node.variableDefinitions ?? [])
      if (definition.defaultValue) stack.push([definition.defaultValue, `$${definition.variable.name.value}`, 0]);
    if (node.selectionSet) nodes.push(...node.selectionSet.selections);
  }
  while (stack.length) {
    const [node, path, depth] = stack.pop()!;
    if (node.kind === Kind.STRING) {
      const problem = textProblem(node.value);
      if (problem) throw badInput(`${path} ${problem}.`);
    } else if (node.kind === Kind.LIST || node.kind === Kind.OBJECT) {
      if (depth >= maxDepth) throw tooDeep(path, maxDepth);
      if (node.kind === Kind.LIST) node.values.forEach((v, i) => stack.push([v, `${path}[${i}]`, depth + 1]));
      else for (const field of node.fields) stack.push([field.value, `${path}.${field.name.value}`, depth + 1]);
    }
  }
}
