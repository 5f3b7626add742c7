import type { Collection, Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { viewerMemberWhere, viewerMembership } from "../../core/access/access.js";
import { byKeys, defineSharedLoader } from "../../core/graph/loaders.js";
import { badInput, forbidden } from "../../core/errors.js";
import { atLeast, type Role } from "../../core/access/roles.js";

/**
 * Who reaches which collection: the caller's role on one (organization admins administer every
 * collection; other members who are not guests get its `defaultLevel`, else their organization
 * role; guests none), what that role allows, the collection loader, the SQL filter of visible
 * collections and the guard of content put into a collection. Spaces read a parent collection's
 * level through it (spaces.access.ts); it imports no domain, so every domain can import it.
 */

/** A collection's role for a member: admins administer; others get its defaultLevel or their role. */
export function effectiveCollectionRole(input: {
  member: { role: Role | null } | null | undefined;
  collectionDefaultLevel: Role | null;
}): Role | null {
  const { member } = input;
  if (!member) return null;
  if (member.role === "admin") return "admin";
  if (member.role === null) return null;
  return input.collectionDefaultLevel ?? member.role;
}

export const COLLECTION_PERMISSIONS = ["view", "admin", "viewInviteLinks", "create"] as const;

/** The Collection `permissions` object of a role: `create` lets the caller put spaces and collections into it. */
export function collectionPermissions(role: Role | null) {
  return {
    view: atLeast(role, "read"),
    admin: atLeast(role, "admin"),
    viewInviteLinks: atLeast(role, "admin"),
    create: atLeast(role, "create"),
  };
}

export const collectionById = defineSharedLoader<string, Collection | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.collection.findMany({ where: { id: { in: [...ids] } } }), (c) => c.id),
);

/** Prisma filter for the collections the caller can see (effectiveCollectionRole ≠ null: members who are not guests). */
export function visibleCollectionWhere(ctx: Context): P.CollectionWhereInput {
  return { organization: { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } } };
}

/**
 * A collection of `organizationId` that the caller may put content into, given as the body
 * field `field`: 400 naming the field when it does not exist there, 403 without `create` on it.
 */
export async function requireTargetCollection(
  ctx: Context,
  organizationId: string,
  collectionId: string,
  field: string,
): Promise<Collection> {
  const collection = await collectionById(ctx).load(collectionId);
  if (!collection || collection.organizationId !== organizationId) {
    throw badInput(`${field}: collection "${collectionId}" does not exist in organization "${organizationId}".`);
  }
  const member = await viewerMembership(ctx, organizationId);
  const role = effectiveCollectionRole({
    member: member && { role: member.role as Role | null },
    collectionDefaultLevel: collection.defaultLevel as Role | null,
  });
  if (!role) throw badInput(`${field}: collection "${collectionId}" does not exist in organization "${organizationId}".`);
  if (!collectionPermissions(role).create) {
    throw forbidden(
      `Your role on collection "${collectionId}" (${role}) does not allow you to add content to it (${field}); it needs create.`,
    );
  }
  return collection;
}
