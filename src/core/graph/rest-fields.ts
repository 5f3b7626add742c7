import type { ObjectRef } from "@pothos/core";
import { builder } from "./builder.js";
import type { ListPage } from "./pagination.js";

/**
 * Field extensions read by the REST layer:
 * - `keepNull`: the documented value may be null (a guest's `role`), so null is sent, not omitted;
 * - `graphOnly`: a field for walking the graph (connections, related objects), left out of /v1 shapes;
 * - `restName`: the documented name of the field in /v1 shapes, when the graph's naming rule
 *   names it otherwise (`commentsCount` is `comments` on /v1); on an argument of a root field,
 *   its name in /v1 requests (`spaceSelection` is `space_selection`);
 * - `restOnly`: a field of the documented shapes that the graph serves otherwise (a raw id beside
 *   the related object, an embedded list beside its connection): left out of /graphql.
 */
export const KEEP_NULL = { keepNull: true } as const;
export const GRAPH_ONLY = { graphOnly: true } as const;
/** A field named by the graph's rule, served on /v1 under its documented name. */
export const restName = (name: string) => ({ restName: name }) as const;
/** A field of the /v1 shapes only, under its documented name (see `restName`). */
export const restOnly = (name: string) => ({ restOnly: true, restName: name }) as const;

export const ListNext = builder.objectRef<{ page: string }>("ListNext").implement({
  description: "Where the next page of a list starts.",
  fields: (t) => ({ page: t.exposeString("page", { description: "Cursor to pass as the `page` query parameter." }) }),
});

/** The documented list envelope `{ next?: { page }, count, items }` around an item type. */
export function listOf<T>(name: string, item: ObjectRef<any, T>) {
  return builder.objectRef<ListPage<T>>(name).implement({
    fields: (t) => ({
      // The list's field counts its `limit` items (core/graph/builder.ts): its envelope costs nothing more.
      next: t.field({ type: ListNext, nullable: true, complexity: 0, resolve: (p) => p.next }),
      count: t.exposeInt("count", { description: "Number of items matching the query, over all pages." }),
      items: t.field({ type: [item], complexity: { field: 0, multiplier: 1 }, resolve: (p) => p.items }),
    }),
  });
}

/** An object of booleans saying what the caller may do (`permissions`). */
export function permissionsOf<K extends string>(name: string, keys: readonly K[]) {
  return builder.objectRef<Record<K, boolean>>(name).implement({
    fields: (t) => Object.fromEntries(keys.map((k) => [k, t.boolean({ resolve: (p) => Boolean(p[k]) })])) as any,
  });
}

/** An object of absolute links (`urls`); keys listed in `optional` may be absent. */
export function urlsOf<K extends string>(name: string, keys: readonly K[], optional: readonly K[] = []) {
  return builder.objectRef<Partial<Record<K, string>>>(name).implement({
    fields: (t) =>
      Object.fromEntries(
        keys.map((k) => [
          k,
          optional.includes(k) ? t.string({ nullable: true, resolve: (p) => p[k] ?? null }) : t.string({ resolve: (p) => p[k] ?? "" }),
        ]),
      ) as any,
  });
}

/** `page` and `limit`, the query parameters of every list operation: `args: { ...pageArgs }`. */
export const pageArgs = builder.args((t) => ({
  page: t.string({ description: "Cursor of the page to fetch (the `next.page` of the previous page)." }),
  limit: t.int({ description: "Number of results per page, at most 1000." }),
}));

/** The roles, most powerful first, as enumeration values of the graph. */
const ROLE_VALUES = {
  admin: { description: "Administer content, create and delete spaces." },
  create: { description: "Create content." },
  review: { description: "Review content." },
  edit: { description: "Edit live or through change requests." },
  comment: { description: "Access content and discussions." },
  read: { description: "Access content, no update." },
} as const;

export const RoleEnum = builder.enumType("Role", { values: ROLE_VALUES });

export const DefaultLevelEnum = builder.enumType("DefaultLevel", {
  description: "Default role on a piece of content: a Role, or inherit (from the parent collection, else the member's role).",
  values: { ...ROLE_VALUES, inherit: { description: "No default of its own: inherited." } } as const,
});

export const MergeRulesTypeEnum = builder.enumType("MergeRulesType", {
  values: {
    inherit: { description: "The rules of the organization apply." },
    none: { description: "No rule beyond the role: members who may merge (review role and up) merge without review." },
  } as const,
});

/**
 * Merge rules of an organization or a space. This server has no configurable merge rules: an
 * organization's are `none` (merging takes the review role on the space, nothing else) and a
 * space inherits them.
 */
export const MergeRulesRef = builder.objectRef<{ type: "inherit" | "none" }>("MergeRules").implement({
  description: "Rules a change request must pass before it can be merged.",
  fields: (t) => ({ type: t.field({ type: MergeRulesTypeEnum, resolve: (r) => r.type }) }),
});

export const TeamRoleEnum = builder.enumType("TeamMemberRole", {
  values: { owner: { description: "Can manage team members." }, member: {} } as const,
});

export const OrderEnum = builder.enumType("Order", { values: ["asc", "desc"] as const });
