import {
  defaultFieldResolver,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isObjectType,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import type { Context } from "../../core/context.js";

/** How a subscription field grades access to it: subscribers with equal grades (and selections that cannot tell viewers apart) share a stream. Throws when refused. */
export type StreamAccess = (args: Record<string, unknown>, ctx: Context) => Promise<string>;

/** The operation's one root selection when it is a field, with its schema definition; else null. */
function subscriptionField(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined) {
  const operation = getOperationAST(document, operationName);
  const selections = operation?.selectionSet.selections ?? [];
  const node = selections[0];
  if (operation?.operation !== "subscription" || selections.length !== 1 || node?.kind !== Kind.FIELD) return null;
  const field = schema.getSubscriptionType()?.getFields()[node.name.value];
  return field ? { node, field } : null;
}

/** Whether the subscription field is a state stream (`extensions.streamLatest`): a subscriber behind needs only the newest result. */
export function isStateStream(args: ExecutionArgs): boolean {
  return subscriptionField(args.schema, args.document, args.operationName)?.field.extensions?.streamLatest === true;
}

/** The subscription field's access grade, or null when the selection may depend on the viewer (or the field grades nothing). */
export async function accessGrade(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
  ctx: Context,
): Promise<string | null> {
  const subscribed = subscriptionField(schema, document, operationName);
  const grade = subscribed?.field.extensions?.streamAccess as StreamAccess | undefined;
  if (!subscribed || !grade) return null;
  const { node, field } = subscribed;
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  if (node.selectionSet && !viewerFree(schema, getNamedType(field.type), node.selectionSet, fragments, new Set())) return null;
  const args: Record<string, unknown> = {};
  for (const arg of node.arguments ?? []) {
    args[arg.name.value] = arg.value.kind === Kind.VARIABLE ? variables[arg.value.name.value] : valueOf(arg.value, variables);
  }
  return grade(args, { ...ctx, loaders: new Map() });
}

function valueOf(node: any, variables: Record<string, unknown>): unknown {
  switch (node.kind) {
    case Kind.VARIABLE:
      return variables[node.name.value];
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value);
    case Kind.LIST:
      return node.values.map((v: any) => valueOf(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f: any) => [f.name.value, valueOf(f.value, variables)]));
    case Kind.NULL:
      return null;
    default:
      return node.value;
  }
}

/** Whether every selected field reads only its parent and arguments, so the result is the same whoever asks. */
function viewerFree(
  schema: GraphQLSchema,
  type: ReturnType<typeof getNamedType>,
  selection: SelectionSetNode,
  fragments: Map<string, any>,
  visiting: Set<string>,
): boolean {
  const types = isObjectType(type) ? [type] : isAbstractType(type) ? schema.getPossibleTypes(type) : [];
  for (const s of selection.selections) {
    if (s.kind === Kind.FIELD) {
      if (s.name.value === "__typename") continue;
      for (const t of types) {
        const field = t.getFields()[s.name.value];
        if (!field) continue;
        if (
          !resolvesFromParent(
            field,
            t.getInterfaces().some((i) => i.name === "Node"),
          )
        )
          return false;
        if (s.selectionSet && !viewerFree(schema, getNamedType(field.type), s.selectionSet, fragments, visiting)) return false;
      }
    } else {
      const name = s.kind === Kind.FRAGMENT_SPREAD ? s.name.value : null;
      if (name && visiting.has(name)) continue;
      const fragment = name ? fragments.get(name) : s;
      if (!fragment) return false;
      const on = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
      if (!on) return false;
      if (!viewerFree(schema, on as any, fragment.selectionSet, fragments, name ? new Set([...visiting, name]) : visiting)) return false;
    }
  }
  return true;
}

/** Exposed fields, Node ids (row ids), and resolvers of at most (parent, args) that neither spread them nor read `arguments`. */
function resolvesFromParent(field: GraphQLField<unknown, unknown>, onNode: boolean): boolean {
  const ext = field.extensions as Record<string, unknown> | undefined;
  if (ext?.pothosExposedField) return true;
  if (onNode && field.name === "id") return true;
  const resolve = (ext?.pothosOriginalResolve ?? field.resolve) as ((...args: unknown[]) => unknown) | undefined;
  if (!resolve || resolve === defaultFieldResolver) return true;
  if (resolve.length > 2) return false;
  const source = Function.prototype.toString.call(resolve);
  const params = /^[^(=]*\(([^)]*)\)|^\s*(?:async\s+)?([\w$]+)\s*=>/.exec(source);
  if (!params) return false;
  return !(params[1] ?? "").includes("...") && !/\barguments\b/.test(source);
}
