import type { ObjectRef } from "@pothos/core";
import { builder } from "./builder.js";
import type { Context } from "../context.js";

/** What a deletion answers on the graph: the id it deleted (also when nothing was there) and the parent it left. */
export interface Deleted {
  deletedId: string;
  parentId?: string | null;
}

/** The parent a deletion payload names, loaded by id (the caller just acted in it). */
export interface PayloadParent {
  field: string;
  type: ObjectRef<any, any>;
  description: string;
  load: (ctx: Context, id: string) => Promise<unknown>;
}

/**
 * The payload type of a deletion (`SpaceDeletePayload`): `deletedId`, and the parent object when
 * one is useful to a client updating its cache. On /v1 the same mutation answers 204 with an empty
 * body (src/rest/schema-projection.ts serves the REST face of such a field as a Boolean).
 */
export function deletionPayload(name: string, what: string, parent?: PayloadParent) {
  return builder.objectRef<Deleted>(name).implement({
    description: `What ${name.replace(/Payload$/, "")} answers: the id of the deleted ${what}.`,
    fields: (t) => ({
      deletedId: t.id({ description: `Id of the deleted ${what} (also when it did not exist).`, resolve: (p) => p.deletedId }),
      ...(parent
        ? {
            [parent.field]: t.field({
              type: parent.type,
              nullable: true,
              description: parent.description,
              resolve: (p: Deleted, _a: unknown, ctx: Context) => (p.parentId ? (parent.load(ctx, p.parentId) as any) : null),
            }),
          }
        : {}),
    }),
  });
}

/** Runs a deletion, then answers its payload. */
export async function deleted(run: Promise<unknown>, deletedId: string, parentId?: string | null): Promise<Deleted> {
  await run;
  return { deletedId, parentId: parentId ?? null };
}
