import type { Collection, Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { membershipAccess, membershipRefusal, requireMembership, requireOrgRole, viewerMembership } from "../../core/access/access.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, forbidden, notFound } from "../../core/errors.js";
import { checkLength, checkOneOf, optionalId, requiredText } from "../../core/validate.js";
import { ROLES, atLeast, type Role } from "../../core/access/roles.js";
import { newId } from "../../core/ids.js";
import { endPosition, positionFor, publishSpaceUpdated, type PositionInput } from "../spaces/spaces.service.js";
import { requireTargetOrganizationAdmin, visibleSpaceWhere } from "../spaces/spaces.access.js";
import { collectionById, effectiveCollectionRole, requireTargetCollection, visibleCollectionWhere } from "./collections.access.js";

export const COLLECTION_TITLE_MAX = 50;
export const COLLECTION_DESCRIPTION_MAX = 100;

/** The caller's role on a collection (null: it does not exist for them). */
export async function viewerCollectionRole(
  ctx: Context,
  collection: Pick<Collection, "organizationId" | "defaultLevel">,
): Promise<Role | null> {
  const member = await viewerMembership(ctx, collection.organizationId);
  return effectiveCollectionRole({
    member: member && { role: member.role as Role | null },
    collectionDefaultLevel: collection.defaultLevel as Role | null,
  });
}

/** A collection the caller can see, with their role on it; 404 otherwise (strangers, guests, unknown ids). */
export async function requireCollection(ctx: Context, collectionId: string): Promise<{ collection: Collection; role: Role }> {
  const collection = await collectionById(ctx).load(collectionId);
  if (collection) {
    const refusal = membershipRefusal(collection.organizationId, await membershipAccess(ctx, collection.organizationId));
    if (refusal) throw refusal; // the organization's own answer (SSO), as on its routes
  }
  const role = collection ? await viewerCollectionRole(ctx, collection) : null;
  if (!collection || !role) throw notFound(`Collection "${collectionId}"`);
  return { collection, role };
}

function requireCollectionRole(role: Role, needed: Role, action: string): void {
  if (!atLeast(role, needed)) {
    throw forbidden(`Your role on this collection (${role}) does not allow you to ${action}; it needs ${needed}.`);
  }
}

/** Ids of the collections below `rootId` (children, their children, …), from one query. */
async function descendantIds(ctx: Context, organizationId: string, rootId: string): Promise<string[]> {
  const all = await ctx.prisma.collection.findMany({ where: { organizationId }, select: { id: true, parentId: true } });
  const children = new Map<string, string[]>();
  for (const c of all) if (c.parentId) children.set(c.parentId, [...(children.get(c.parentId) ?? []), c.id]);
  const out: string[] = [];
  const queue = [...(children.get(rootId) ?? [])];
  while (queue.length) {
    const id = queue.shift()!;
    if (out.includes(id)) continue;
    out.push(id);
    queue.push(...(children.get(id) ?? []));
  }
  return out;
}

function checkTitle(value: string | null | undefined): string {
  const title = requiredText("title", value);
  checkLength("title", title, 1, COLLECTION_TITLE_MAX);
  return title;
}

// ─── Reads ─────────────────────────────────────────────────────────────────────────────────────

export async function getCollection(ctx: Context, collectionId: string) {
  return (await requireCollection(ctx, collectionId)).collection;
}

/**
 * Collections of an organization the caller can see. `nested` true (default): every collection,
 * in creation order; false: only top-level ones, in their sidebar order.
 */
export async function listOrganizationCollections(ctx: Context, organizationId: string, args: PageArgs & { nested?: boolean | null }) {
  await requireMembership(ctx, organizationId);
  const nested = args.nested ?? true;
  return paginate({
    args,
    where: { AND: [{ organizationId, ...(nested ? {} : { parentId: null }) }, visibleCollectionWhere(ctx)] },
    order: nested
      ? [
          ["createdAt", "asc"],
          ["id", "asc"],
        ]
      : [
          ["position", "asc"],
          ["id", "asc"],
        ],
    from: ctx.prisma.collection,
  });
}

/** Spaces directly in a collection that the caller can see, not deleted, in their sidebar order. */
export async function listCollectionSpaces(ctx: Context, collectionId: string, args: PageArgs) {
  await requireCollection(ctx, collectionId);
  return paginate({
    args,
    where: { AND: [{ parentId: collectionId }, visibleSpaceWhere(ctx)] },
    order: [
      ["position", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.space,
  });
}

// ─── Writes ────────────────────────────────────────────────────────────────────────────────────

export async function createCollection(ctx: Context, organizationId: string, input: { title: string; parent?: string | null }) {
  await requireOrgRole(ctx, organizationId, "create", "create collections");
  const title = checkTitle(input.title);
  const parentId = optionalId("parent", input.parent) ?? null;
  if (parentId) await requireTargetCollection(ctx, organizationId, parentId, "parent");
  return ctx.prisma.collection.create({
    data: {
      id: newId("Collection"),
      organizationId,
      parentId,
      title,
      position: await endPosition(ctx.prisma, organizationId, parentId),
    },
  });
}

export interface CollectionPatch {
  title?: string | null;
  description?: string | null;
  defaultLevel?: Role | null;
}

export async function updateCollection(ctx: Context, collectionId: string, patch: CollectionPatch) {
  const { role } = await requireCollection(ctx, collectionId);
  requireCollectionRole(role, "admin", "change it");
  const data: P.CollectionUpdateInput = {};
  if (patch.title !== undefined) {
    if (patch.title === null) throw badInput("title cannot be null.");
    data.title = checkTitle(patch.title);
  }
  if (patch.description !== undefined) {
    const description = patch.description?.trim() || null;
    checkLength("description", description, 0, COLLECTION_DESCRIPTION_MAX);
    data.description = description;
  }
  if (patch.defaultLevel !== undefined) data.defaultLevel = checkOneOf("defaultLevel", patch.defaultLevel, ROLES) ?? null;
  const updated = await ctx.prisma.collection.update({ where: { id: collectionId }, data });
  collectionById(ctx).clear(collectionId).prime(collectionId, updated);
  return updated;
}

/**
 * Deletes a collection and every collection below it. Their spaces are kept: they move to the
 * top level of the organization, after its current items ("in-collection" visibility becomes
 * "private"). True also when the collection did not exist.
 */
export async function deleteCollection(ctx: Context, collectionId: string): Promise<boolean> {
  const collection = await collectionById(ctx).load(collectionId);
  if (!collection) return true;
  const { role } = await requireCollection(ctx, collectionId);
  requireCollectionRole(role, "admin", "delete it");
  const subtree = [collectionId, ...(await descendantIds(ctx, collection.organizationId, collectionId))];
  const inSubtree = { parentId: { in: subtree } };
  const moved = await ctx.prisma.space.findMany({ where: inSubtree, select: { id: true } });
  const [{ _min }, end] = await Promise.all([
    ctx.prisma.space.aggregate({ where: inSubtree, _min: { position: true } }),
    endPosition(ctx.prisma, collection.organizationId, null),
  ]);
  await ctx.prisma.$transaction([
    ctx.prisma.space.updateMany({ where: { ...inSubtree, visibility: "in_collection" }, data: { visibility: "private" } }),
    ctx.prisma.space.updateMany({ where: inSubtree, data: { parentId: null, position: { increment: end - (_min.position ?? 0) } } }),
    ctx.prisma.collection.delete({ where: { id: collectionId } }), // children go with it (ON DELETE CASCADE)
  ]);
  for (const id of subtree) collectionById(ctx).clear(id);
  publishSpaceUpdated(ctx, ...moved.map((s) => s.id));
  return true;
}

/** Moves a collection under another parent (`parent` null: the top level) and/or among its siblings. */
export async function moveCollection(
  ctx: Context,
  collectionId: string,
  args: { parent?: string | null; position?: PositionInput | null },
) {
  const { collection, role } = await requireCollection(ctx, collectionId);
  requireCollectionRole(role, "admin", "move it");
  const parentId = args.parent === undefined ? collection.parentId : optionalId("parent", args.parent);
  if (parentId && parentId !== collection.parentId) {
    if (parentId === collectionId || (await descendantIds(ctx, collection.organizationId, collectionId)).includes(parentId)) {
      throw badInput("parent: a collection cannot be moved into itself or into one of its descendants.");
    }
    await requireTargetCollection(ctx, collection.organizationId, parentId, "parent");
  }
  const position = await positionFor(ctx.prisma, {
    organizationId: collection.organizationId,
    parentId,
    movingId: collectionId,
    position: args.position,
  });
  const updated = await ctx.prisma.collection.update({ where: { id: collectionId }, data: { parentId, position } });
  collectionById(ctx).clear(collectionId).prime(collectionId, updated);
  return updated;
}

/**
 * Moves a collection, the collections below it and all their spaces (deleted ones included) to
 * another organization, at its top level. The caller must be an admin of both organizations.
 * Grants held by teams of the old organization are dropped. The same organization changes nothing.
 */
export async function transferCollection(ctx: Context, collectionId: string, args: { organization: string }) {
  const { collection } = await requireCollection(ctx, collectionId);
  await requireOrgRole(ctx, collection.organizationId, "admin", "transfer collections out of it");
  const target = args.organization.trim();
  if (target === collection.organizationId) return collection;
  await requireTargetOrganizationAdmin(ctx, target, "transfer collections into it");
  const subtree = [collectionId, ...(await descendantIds(ctx, collection.organizationId, collectionId))];
  const spaces = await ctx.prisma.space.findMany({ where: { parentId: { in: subtree } }, select: { id: true } });
  const spaceIds = spaces.map((s) => s.id);
  const position = await endPosition(ctx.prisma, target, null);
  const [updated] = await ctx.prisma.$transaction([
    ctx.prisma.collection.update({ where: { id: collectionId }, data: { organizationId: target, parentId: null, position } }),
    ctx.prisma.collection.updateMany({ where: { id: { in: subtree.slice(1) } }, data: { organizationId: target } }),
    ctx.prisma.space.updateMany({ where: { id: { in: spaceIds } }, data: { organizationId: target } }),
    ctx.prisma.spaceAccess.deleteMany({
      where: { spaceId: { in: spaceIds }, teamId: { not: null }, team: { organizationId: { not: target } } },
    }),
  ]);
  for (const id of subtree) collectionById(ctx).clear(id);
  publishSpaceUpdated(ctx, ...spaceIds);
  return updated;
}
