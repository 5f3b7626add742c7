import { builder } from "../../core/graph/builder.js";
import { latest } from "../../core/messaging/pubsub.js";
import { deleted, deletionPayload, type PayloadParent } from "../../core/graph/payloads.js";
import { stringScalar } from "../../core/graph/scalars.js";
import { argsWithNulls, type Context } from "../../core/context.js";
import { viewerMembership } from "../../core/access/access.js";
import type { Role } from "../../core/access/roles.js";
import {
  DefaultLevelEnum,
  GRAPH_ONLY,
  MergeRulesRef,
  listOf,
  pageArgs,
  permissionsOf,
  restOnly,
  urlsOf,
} from "../../core/graph/rest-fields.js";
import { ensureSpaceRevision } from "../content/revisions.js";
import { SPACE_PERMISSION_KEYS, spacePermissionsFor } from "./spaces.policy.js";
import * as service from "./spaces.service.js";
import { requireSpace, viewerSpaceRole, visibleSpaceWhere } from "./spaces.access.js";
import { invalidScalarValue } from "../../core/errors.js";

// ─── Enumerations and inputs ───────────────────────────────────────────────────────────────────

/**
 * Space visibility. The documented values contain `-`, which GraphQL enum values cannot, so it is
 * a string scalar whose JSON schema (and so the OpenAPI document) lists the documented values.
 */
export const SpaceVisibilityScalar = stringScalar("SpaceVisibility", {
  description:
    "Who can reach a space: public (anyone, indexed by search engines), unlisted (anyone, not indexed), " +
    "share-link (anyone holding a secret token in the URL), visitor-auth (anyone authenticated through a JWT), " +
    "in-collection (whoever can access the parent collection; only for spaces in a collection), private (authorized members).",
  extensions: { jsonSchema: { type: "string", enum: [...service.SPACE_VISIBILITIES] } },
  serialize: (value) => service.visibilityValue(String(value)),
  parseValue: (value) => {
    const text = String(value);
    if (!(service.SPACE_VISIBILITIES as readonly string[]).includes(text)) {
      throw invalidScalarValue("SpaceVisibility", `visibility must be one of ${service.SPACE_VISIBILITIES.join(", ")} (got "${text}")`);
    }
    return text;
  },
});

export const EditModeEnum = builder.enumType("SpaceEditMode", {
  values: {
    live: { description: "Directly editable." },
    locked: { description: "All edits are locked." },
  } as const,
});

export const ContentKindEnum = builder.enumType("ContentKind", {
  description: "The kind of an item of the content tree.",
  values: ["space", "collection"] as const,
});

const PositionTargetInput = builder.inputType("ContentPositionTargetInput", {
  description: "A sibling of the moved item: `{type: space, space: <id>}` or `{type: collection, collection: <id>}`.",
  fields: (t) => ({
    type: t.field({ type: ContentKindEnum, required: true }),
    space: t.string({ description: "Id of the sibling space, when `type` is space." }),
    collection: t.string({ description: "Id of the sibling collection, when `type` is collection." }),
  }),
});

/** Where a moved item goes among the collections and spaces of its (new) parent, which share one order. */
export const PositionInput = builder.inputType("ContentPositionInput", {
  description:
    "Where to put the item among the collections and spaces of its parent, which share one order: " +
    "`before` places it right before that sibling, `after` right after that one (with both, `after` must come first). " +
    "Without either, the item goes last.",
  fields: (t) => ({
    before: t.field({ type: PositionTargetInput }),
    after: t.field({ type: PositionTargetInput }),
  }),
});

// ─── Space ─────────────────────────────────────────────────────────────────────────────────────

const SpaceUrls = urlsOf("SpaceUrls", ["location", "app", "published", "public", "icon"] as const, ["published", "public", "icon"]);
const SpacePermissions = permissionsOf("SpacePermissions", SPACE_PERMISSION_KEYS);

const SpaceGitSync = builder
  .objectRef<{ repoName?: string; installationProvider?: string; integration?: string; url?: string; updatedAt?: Date }>("SpaceGitSync")
  .implement({
    description: "Git synchronization of a space (absent: Git Sync is not configured on this server).",
    fields: (t) => ({
      repoName: t.string({ nullable: true, resolve: (g) => g.repoName ?? null }),
      installationProvider: t.string({ nullable: true, resolve: (g) => g.installationProvider ?? null }),
      integration: t.string({ nullable: true, resolve: (g) => g.integration ?? null }),
      url: t.string({ nullable: true, resolve: (g) => g.url ?? null }),
      updatedAt: t.field({ type: "DateTime", nullable: true, resolve: (g) => g.updatedAt ?? null }),
    }),
  });

const SpaceVisitorAuth = builder.objectRef<{ backend: string }>("SpaceVisitorAuth").implement({
  description: "Visitor authentication of a space (absent: not configured).",
  fields: (t) => ({ backend: t.exposeString("backend") }),
});

export const SpaceRef = builder.prismaNode("Space", {
  id: { field: "id" },
  description: "A container of documentation content.",
  fields: (t) => ({
    object: t.string({ resolve: () => "space" }),
    title: t.exposeString("title"),
    emoji: t.string({ description: 'A Unicode character or hex codepoint; "" when the space has none.', resolve: (s) => s.emoji ?? "" }),
    visibility: t.field({ type: SpaceVisibilityScalar, resolve: (s) => service.visibilityValue(s.visibility) }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    deletedAt: t.expose("deletedAt", {
      type: "DateTime",
      nullable: true,
      description: "When the space was deleted; it can be restored for 7 days, then it is removed for good. Absent when not deleted.",
    }),
    editMode: t.field({ type: EditModeEnum, resolve: (s) => s.editMode }),
    urls: t.field({ type: SpaceUrls, resolve: (s, _a, ctx) => service.spaceUrls(ctx, s) }),
    organizationId: t.string({
      extensions: restOnly("organization"),
      description: "Id of the owning organization.",
      resolve: (s) => s.organizationId,
    }),
    parentId: t.string({
      nullable: true,
      extensions: restOnly("parent"),
      description: "Id of the parent collection; absent at the top level.",
      resolve: (s) => s.parentId,
    }),
    gitSync: t.field({ type: SpaceGitSync, nullable: true, resolve: () => null }),
    visitorAuth: t.field({ type: SpaceVisitorAuth, nullable: true, resolve: () => null }),
    revision: t.string({
      description: "Id of the active revision (a space starts with an initial, empty one).",
      // Synchronous once the space has a revision; the first read of one without creates it.
      resolve: (s, _a, ctx) => s.revisionId ?? ensureSpaceRevision(ctx, s),
    }),
    defaultLevel: t.field({
      type: DefaultLevelEnum,
      description: "Default role on the space's content; inherit when it inherits (from its collection, else the member's role).",
      resolve: (s) => s.defaultLevel ?? "inherit",
    }),
    mergeRules: t.field({
      type: MergeRulesRef,
      description: "Rules a change request must pass to be merged: a space inherits its organization's.",
      resolve: () => ({ type: "inherit" as const }),
    }),
    // The counts (commentsCount, changeRequestsCount…) are added by the comments and change-requests areas.
    permissions: t.field({
      type: SpacePermissions,
      resolve: async (s, _a, ctx) => {
        const [role, member] = await Promise.all([viewerSpaceRole(ctx).load(s), viewerMembership(ctx, s.organizationId)]);
        return spacePermissionsFor(role, s.editMode, (member?.role ?? null) as Role | null);
      },
    }),
    organization: t.relation("organization", { extensions: GRAPH_ONLY, description: "The organization the space belongs to." }),
  }),
});

export const SpaceList = listOf("SpaceList", SpaceRef);

builder.prismaObjectFields("Organization", (t) => ({
  spaces: t.relatedConnection("spaces", {
    description: "Spaces of the organization the caller can see (not deleted), oldest first.",
    cursor: "id",
    totalCount: true,
    query: (_args, ctx) => ({ where: visibleSpaceWhere(ctx), orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
  }),
}));

// ─── Operations ────────────────────────────────────────────────────────────────────────────────

builder.queryFields((t) => ({
  space: t.field({
    type: SpaceRef,
    description:
      "A space the caller has a role on. A deleted space is still returned (with `deletedAt`) until it is removed for good, 7 days after its deletion.",
    args: {
      spaceId: t.arg.string({ required: true }),
      shareKey: t.arg.string({ description: "Secret of a share-link space: the returned `urls.published` carries it." }),
    },
    resolve: (_r, args, ctx) => service.getSpace(ctx, args.spaceId, args.shareKey),
  }),
  organizationSpaces: t.field({
    type: SpaceList,
    description: "Spaces of an organization the caller can see, not deleted, oldest first.",
    args: { organizationId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => service.listOrganizationSpaces(ctx, args.organizationId, args),
  }),
}));

const SpaceDeletePayload = deletionPayload("SpaceDeletePayload", "space");

builder.mutationFields((t) => ({
  spaceCreate: t.field({
    type: SpaceRef,
    description:
      "Creates a space (needs the create role). It goes last under its parent; its visibility is in-collection inside a collection, private otherwise.",
    args: {
      organizationId: t.arg.string({ required: true }),
      title: t.arg.string({
        description: `Title, at most ${service.SPACE_TITLE_MAX} characters; "${service.SPACE_DEFAULT_TITLE}" when omitted.`,
      }),
      emoji: t.arg.string({ description: `A Unicode character (📚) or hex codepoint (1f4da), at most ${service.EMOJI_MAX} characters.` }),
      parent: t.arg.string({ description: "Id of the parent collection; the top level when omitted." }),
      editMode: t.arg({ type: EditModeEnum, description: "live (default) or locked." }),
    },
    resolve: (_r, args, ctx) => service.createSpace(ctx, args.organizationId, args),
  }),
  spaceUpdate: t.field({
    type: SpaceRef,
    description:
      "Changes a space: `title` and `emoji` need the edit role (admin while the space is locked), `editMode` and `defaultLevel` need admin. " +
      "Null clears `emoji` and `defaultLevel`. A deleted space must be restored first (409).",
    args: {
      spaceId: t.arg.string({ required: true }),
      editMode: t.arg({ type: EditModeEnum }),
      title: t.arg.string({ description: `At most ${service.SPACE_TITLE_MAX} characters.` }),
      defaultLevel: t.arg({
        type: DefaultLevelEnum,
        description: "Default role on the content; inherit (or null) makes the space inherit it again.",
      }),
      emoji: t.arg.string({
        description: `A Unicode character (📚) or hex codepoint (1f4da), at most ${service.EMOJI_MAX} characters; null removes it.`,
      }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { spaceId: id, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateSpace(ctx, id, patch as service.SpacePatch);
    },
  }),
  spaceDelete: t.field({
    type: SpaceDeletePayload,
    description:
      "Deletes a space (needs admin). It stays readable and restorable for 7 days, then it is removed for good. " +
      "Succeeds also when the space did not exist or was already deleted.",
    args: { spaceId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(service.deleteSpace(ctx, args.spaceId), args.spaceId),
  }),
  spaceDuplicate: t.field({
    type: SpaceRef,
    description:
      'Copies a space (needs the create role): title "<title> (copy)", same parent, emoji, visibility, edit mode, default level and grants, placed right after the original.',
    args: { spaceId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.duplicateSpace(ctx, args.spaceId),
  }),
  spaceRestore: t.field({
    type: SpaceRef,
    description:
      "Restores a space deleted less than 7 days ago (needs admin); after that it is gone (404). Restoring a space that is not deleted returns it unchanged.",
    args: { spaceId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.restoreSpace(ctx, args.spaceId),
  }),
  spaceMove: t.field({
    type: SpaceRef,
    description: "Moves a space (needs admin) under another collection of its organization and/or among its siblings.",
    args: {
      spaceId: t.arg.string({ required: true }),
      parent: t.arg.string({
        description: "Id of the new parent collection; null for the top level; omitted to stay in the current parent.",
      }),
      position: t.arg({ type: PositionInput }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const args = argsWithNulls(ctx, rawArgs);
      return service.moveSpace(ctx, args.spaceId, args);
    },
  }),
  spaceTransfer: t.field({
    type: SpaceRef,
    description:
      "Moves a space to another organization (admin of the space and of the target organization), into a collection, or both. " +
      "It goes last at the top level, or in `collection`. Grants of the old organization's teams are dropped.",
    args: {
      spaceId: t.arg.string({ required: true }),
      organization: t.arg.string({ required: true, description: "Id of the target organization (may be the current one)." }),
      collection: t.arg.string({ description: "Id of a collection of the target organization to put the space in." }),
    },
    resolve: (_r, args, ctx) => service.transferSpace(ctx, args.spaceId, args),
  }),
}));

builder.subscriptionFields((t) => ({
  spaceUpdated: t.field({
    type: SpaceRef,
    description:
      "The space each time it is changed, moved, transferred, deleted or restored. Subscribing needs a role on the space. " +
      "Changes in quick succession may arrive as one (the newest state); an older state never arrives after a newer one.",
    args: { spaceId: t.arg.string({ required: true }) },
    // Viewers with the same role on the space share one stream (graphql/streams/grouping.ts), when the selection cannot tell them apart;
    // a state stream: a subscriber behind receives the newest result alone.
    extensions: {
      streamAccess: async (args: { spaceId: string }, ctx: Context) => `space role ${(await requireSpace(ctx, args.spaceId)).role}`,
      streamLatest: true,
    },
    subscribe: async (_root, args, ctx) => {
      await requireSpace(ctx, args.spaceId);
      // A state stream: each event is read afresh, so a subscriber behind skips to the newest.
      return latest(ctx.pubsub.subscribe("space:updated", args.spaceId));
    },
    resolve: async (payload, _args, ctx) => {
      ctx.loaders.clear(); // each event is read afresh, like a new request
      return (await requireSpace(ctx, payload.spaceId)).space;
    },
  }),
}));

/** The space a deletion happened in, for deletion payloads. */
export const spaceParent: PayloadParent = {
  field: "space",
  type: SpaceRef,
  description: "The space it was deleted from.",
  load: (ctx, id) => ctx.prisma.space.findUnique({ where: { id } }),
};
