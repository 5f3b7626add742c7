import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { argsWithNulls } from "../../core/context.js";
import { GRAPH_ONLY, KEEP_NULL, RoleEnum, listOf, pageArgs, permissionsOf, restOnly, urlsOf } from "../../core/graph/rest-fields.js";
import { visibleSpaceWhere } from "../spaces/spaces.access.js";
import { COLLECTION_PERMISSIONS, collectionById, collectionPermissions, visibleCollectionWhere } from "./collections.access.js";
import { PositionInput, SpaceList, SpaceRef } from "../spaces/spaces.schema.js";
import * as service from "./collections.service.js";

const CollectionUrls = urlsOf("CollectionUrls", ["location", "app"] as const);
const CollectionPermissions = permissionsOf("CollectionPermissions", COLLECTION_PERMISSIONS);

export const CollectionRef = builder.prismaNode("Collection", {
  id: { field: "id" },
  description: "A grouping of spaces (and of other collections).",
  fields: (t) => ({
    object: t.string({ resolve: () => "collection" }),
    title: t.exposeString("title", { description: `At most ${service.COLLECTION_TITLE_MAX} characters.` }),
    description: t.exposeString("description", {
      nullable: true,
      description: `At most ${service.COLLECTION_DESCRIPTION_MAX} characters; absent when empty.`,
    }),
    organizationId: t.string({
      extensions: restOnly("organization"),
      description: "Id of the owning organization.",
      resolve: (c) => c.organizationId,
    }),
    parentId: t.string({
      nullable: true,
      extensions: restOnly("parent"),
      description: "Id of the parent collection; absent at the top level.",
      resolve: (c) => c.parentId,
    }),
    defaultLevel: t.field({
      type: RoleEnum,
      nullable: true,
      extensions: KEEP_NULL,
      description: "Default role of members on the collection and the spaces that inherit it; null: their organization role.",
      resolve: (c) => c.defaultLevel,
    }),
    urls: t.field({ type: CollectionUrls, resolve: (c, _a, ctx) => ctx.urls.collection(c.id) }),
    permissions: t.field({
      type: CollectionPermissions,
      resolve: async (c, _a, ctx) => collectionPermissions(await service.viewerCollectionRole(ctx, c)),
    }),
    spaces: t.relatedConnection("spaces", {
      description: "Spaces directly in the collection that the caller can see (not deleted), in their order.",
      cursor: "id",
      totalCount: true,
      query: (_args, ctx) => ({ where: visibleSpaceWhere(ctx), orderBy: [{ position: "asc" }, { id: "asc" }] }),
    }),
    children: t.relatedConnection("children", {
      description: "Collections directly in the collection, in their order.",
      cursor: "id",
      totalCount: true,
      query: (_args, ctx) => ({ where: visibleCollectionWhere(ctx), orderBy: [{ position: "asc" }, { id: "asc" }] }),
    }),
    parent: t.relation("parent", {
      nullable: true,
      extensions: GRAPH_ONLY,
      description: "The parent collection; absent at the top level.",
    }),
    organization: t.relation("organization", { extensions: GRAPH_ONLY, description: "The organization the collection belongs to." }),
  }),
});

const CollectionList = listOf("CollectionList", CollectionRef);

builder.prismaObjectFields("Organization", (t) => ({
  collections: t.relatedConnection("collections", {
    description:
      "Collections of the organization: all of them in creation order (nested, the default), or only the top-level ones in their order.",
    cursor: "id",
    totalCount: true,
    args: { nested: t.arg.boolean({ defaultValue: true, description: "false: only the top-level collections." }) },
    query: (args, ctx) => ({
      where: { ...visibleCollectionWhere(ctx), ...(args.nested === false ? { parentId: null } : {}) },
      orderBy: args.nested === false ? [{ position: "asc" }, { id: "asc" }] : [{ createdAt: "asc" }, { id: "asc" }],
    }),
  }),
}));

// The parent collection of a space, when the caller can see it (guests see no collection).
builder.objectField(SpaceRef, "parent", (t) =>
  t.field({
    type: CollectionRef,
    nullable: true,
    extensions: GRAPH_ONLY,
    description: "The collection the space is in.",
    resolve: async (space, _a, ctx) => {
      const collection = space.parentId ? await collectionById(ctx).load(space.parentId) : null;
      return collection && (await service.viewerCollectionRole(ctx, collection)) ? collection : null;
    },
  }),
);

// ─── Operations ────────────────────────────────────────────────────────────────────────────────

builder.queryFields((t) => ({
  collection: t.field({
    type: CollectionRef,
    description: "A collection of an organization the caller is a member of (guests see none).",
    args: { collectionId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getCollection(ctx, args.collectionId),
  }),
  collectionSpaces: t.field({
    type: SpaceList,
    description: "Spaces directly in a collection that the caller can see, not deleted, in their order.",
    args: { collectionId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => service.listCollectionSpaces(ctx, args.collectionId, args),
  }),
  organizationCollections: t.field({
    type: CollectionList,
    description:
      "Collections of an organization: every one in creation order (nested, the default), or only the top-level ones in their order.",
    args: {
      organizationId: t.arg.string({ required: true }),
      ...pageArgs,
      nested: t.arg.boolean({
        defaultValue: true,
        description: "List nested collections too (default true); false lists only top-level ones.",
      }),
    },
    resolve: (_r, args, ctx) => service.listOrganizationCollections(ctx, args.organizationId, args),
  }),
}));

const CollectionDeletePayload = deletionPayload("CollectionDeletePayload", "collection");

builder.mutationFields((t) => ({
  collectionCreate: t.field({
    type: CollectionRef,
    description: "Creates a collection (needs the create role, and create on the parent collection). It goes last under its parent.",
    args: {
      organizationId: t.arg.string({ required: true }),
      title: t.arg.string({ required: true, description: `At most ${service.COLLECTION_TITLE_MAX} characters.` }),
      parent: t.arg.string({ description: "Id of the parent collection; the top level when omitted." }),
    },
    resolve: (_r, args, ctx) => service.createCollection(ctx, args.organizationId, args),
  }),
  collectionUpdate: t.field({
    type: CollectionRef,
    description: "Changes a collection (needs admin on it). Null clears `description` and `defaultLevel`.",
    args: {
      collectionId: t.arg.string({ required: true }),
      title: t.arg.string({ description: `At most ${service.COLLECTION_TITLE_MAX} characters.` }),
      description: t.arg.string({ description: `At most ${service.COLLECTION_DESCRIPTION_MAX} characters; null or empty clears it.` }),
      defaultLevel: t.arg({ type: RoleEnum, description: "Default role on the collection; null: members keep their organization role." }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { collectionId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateCollection(ctx, collectionId, patch as service.CollectionPatch);
    },
  }),
  collectionDelete: t.field({
    type: CollectionDeletePayload,
    description:
      "Deletes a collection (needs admin on it) and every collection below it. Their spaces are not deleted: they move to the " +
      'top level of the organization, after its current items ("in-collection" visibility becomes "private"). Succeeds also when it did not exist.',
    args: { collectionId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(service.deleteCollection(ctx, args.collectionId), args.collectionId),
  }),
  collectionMove: t.field({
    type: CollectionRef,
    description: "Moves a collection (needs admin on it) under another collection of its organization and/or among its siblings.",
    args: {
      collectionId: t.arg.string({ required: true }),
      parent: t.arg.string({
        description:
          "Id of the new parent collection (not the collection itself nor one below it); null for the top level; omitted to stay.",
      }),
      position: t.arg({ type: PositionInput }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const args = argsWithNulls(ctx, rawArgs);
      return service.moveCollection(ctx, args.collectionId, args);
    },
  }),
  collectionTransfer: t.field({
    type: CollectionRef,
    description:
      "Moves a collection, the collections below it and all their spaces to the top level of another organization. " +
      "The caller must be an admin of both organizations. Grants of the old organization's teams are dropped.",
    args: {
      collectionId: t.arg.string({ required: true }),
      organization: t.arg.string({ required: true, description: "Id of the target organization." }),
    },
    resolve: (_r, args, ctx) => service.transferCollection(ctx, args.collectionId, args),
  }),
}));
