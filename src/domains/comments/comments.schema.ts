import type { Comment } from "../../generated/prisma/client.js";
import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { spaceParent } from "../spaces/spaces.schema.js";
import { argsWithNulls, type Context } from "../../core/context.js";
import { OrderEnum, listOf, pageArgs, permissionsOf, restName, urlsOf } from "../../core/graph/rest-fields.js";
import { UserRef } from "../users/users.schema.js";
import { MemberRef } from "../members/members.schema.js";
import { userById } from "../../core/graph/shared-loaders.js";
import { spaceById, viewerSpaceRole } from "../spaces/spaces.access.js";
import { COMMENT_PERMISSIONS, commentPermissions } from "./comments.policy.js";
import { toGitBookDocument } from "../content/gitbook-document.js";
import * as service from "./comments.service.js";

// ─── Enumerations and inputs ───────────────────────────────────────────────────────────────────

export const CommentFormatEnum = builder.enumType("CommentFormat", {
  description: "Output format of comment bodies.",
  values: {
    markdown: { description: "`body` holds `markdown` only (default)." },
    document: { description: "`body` also holds `document`, the markdown parsed into a structured document." },
  } as const,
});

export const CommentStatusEnum = builder.enumType("CommentStatus", { values: ["open", "resolved"] as const });

const CommentStatusFilterEnum = builder.enumType("CommentStatusFilter", {
  values: {
    open: { description: "Only comments that are not resolved." },
    resolved: { description: "Only resolved comments." },
    all: { description: "Every comment (default)." },
  } as const,
});

const CommentBodyInput = builder.inputType("CommentBodyInput", {
  fields: (t) => ({
    markdown: t.string({ required: true, description: `The text, in markdown: not blank, at most ${service.BODY_MAX} characters.` }),
  }),
});

const formatArgs = builder.args((t) => ({
  format: t.field({ type: CommentFormatEnum, description: "markdown (default) or document: adds `body.document`." }),
}));

// ─── Comment and comment reply ─────────────────────────────────────────────────────────────────

const CommentBody = builder.objectRef<{ markdown: string; format: service.CommentFormat }>("CommentBody").implement({
  fields: (t) => ({
    markdown: t.exposeString("markdown"),
    document: t.field({
      type: "JSON",
      nullable: true,
      description:
        "The markdown as GitBook's JSONDocument (the same derivation as page documents); present when format=document was asked for.",
      resolve: (b) => (b.format === "document" ? toGitBookDocument(b.markdown) : null),
    }),
  }),
});

const CommentTargetNode = builder.objectRef<{ id: string }>("CommentTargetNode").implement({
  fields: (t) => ({
    id: t.exposeString("id", { description: "Id of the node inside the page's document." }),
    preview: t.string({
      nullable: true,
      description: "Text of the node; absent: this server keeps page content as markdown, whose nodes it does not index.",
      resolve: () => null,
    }),
  }),
});

const CommentTargetPage = builder.objectRef<service.TargetPage>("CommentTargetPage").implement({
  description: "The page a comment is on, as it is in the current revision (as it was, when it has been removed since).",
  fields: (t) => ({
    id: t.exposeString("id"),
    title: t.exposeString("title", { nullable: true }),
    emoji: t.exposeString("emoji", { nullable: true }),
    icon: t.exposeString("icon", { nullable: true }),
    createdAt: t.field({ type: "DateTime", nullable: true, resolve: (p) => p.createdAt ?? null }),
    updatedAt: t.field({ type: "DateTime", nullable: true, resolve: (p) => p.updatedAt ?? null }),
    path: t.exposeString("path", { nullable: true }),
    outdated: t.exposeBoolean("outdated", {
      description: "True when the page changed or was removed since the revision the comment was made on.",
    }),
  }),
});

const CommentTarget = builder.objectRef<Comment>("CommentTarget").implement({
  description: "What a comment is about; the parts that do not apply are absent.",
  fields: (t) => ({
    node: t.field({ type: CommentTargetNode, nullable: true, resolve: (c) => (c.nodeId ? { id: c.nodeId } : null) }),
    changeRequest: t.string({
      nullable: true,
      description: "Id of the change request, for its comments.",
      resolve: (c) => c.changeRequestId,
    }),
    review: t.string({
      nullable: true,
      description: "Id of a review; absent: reviews are not stored by this server.",
      resolve: () => null,
    }),
    page: t.field({ type: CommentTargetPage, nullable: true, resolve: (c, _a, ctx) => service.targetPage(ctx, c) }),
    space: t.string({ description: "Id of the space.", resolve: (c) => c.spaceId }),
    revision: t.string({ nullable: true, description: "Id of the revision the comment was made on.", resolve: (c) => c.revisionId }),
  }),
});

const CommentReactionUser = builder.objectRef<{ userId: string; reactedAt: Date }>("CommentReactionUser").implement({
  fields: (t) => ({
    user: t.field({ type: UserRef, resolve: async (r, _a, ctx) => (await userById(ctx).load(r.userId))! }),
    reactedAt: t.expose("reactedAt", { type: "DateTime" }),
  }),
});

const CommentReaction = builder.objectRef<service.ReactionGroup>("CommentReaction").implement({
  description: "The reactions with one emoji: how many, and who reacted when (earliest first).",
  fields: (t) => ({
    emoji: t.exposeString("emoji"),
    count: t.exposeInt("count"),
    users: t.field({ type: [CommentReactionUser], resolve: (r) => r.users }),
  }),
});

const CommentUrls = urlsOf("CommentUrls", ["location"] as const);
const CommentPermissions = permissionsOf("CommentPermissions", COMMENT_PERMISSIONS);

async function roleOn(ctx: Context, spaceId: string) {
  const space = await spaceById(ctx).load(spaceId);
  return space ? viewerSpaceRole(ctx).load(space) : null;
}

type FieldsOf<T> = T extends (t: infer B) => unknown ? B : never;
type CommentFieldBuilder = FieldsOf<Parameters<typeof builder.prismaObjectFields<"Comment">>[1]>;

/** Fields a comment and a reply share. */
const sharedFields = (t: CommentFieldBuilder) => ({
  postedBy: t.field({ type: UserRef, resolve: async (c, _a, ctx) => (await userById(ctx).load(c.postedById))! }),
  postedAt: t.expose("postedAt", { type: "DateTime" }),
  editedAt: t.expose("editedAt", {
    type: "DateTime",
    nullable: true,
    description: "When the body was last changed; absent when never edited.",
  }),
  reactions: t.field({ type: [CommentReaction], resolve: (c, _a, ctx) => service.reactionsOf(ctx).load(c.id) }),
  body: t.field({
    type: CommentBody,
    resolve: (c) => ({ markdown: c.markdown, format: (c as service.CommentRow).format ?? "markdown" }),
  }),
  urls: t.field({ type: CommentUrls, resolve: (c, _a, ctx) => ({ location: ctx.urls.api(service.commentPath(c)) }) }),
  permissions: t.field({
    type: CommentPermissions,
    resolve: async (c, _a, ctx) => commentPermissions(await roleOn(ctx, c.spaceId), c, ctx.viewer.userId),
  }),
});

export const CommentReplyRef = builder.prismaNode("Comment", {
  variant: "CommentReply",
  id: { field: "id" },
  description: "A reply to a comment.",
  fields: (t) => ({
    object: t.string({ resolve: () => "comment-reply" }),
    ...sharedFields(t as unknown as CommentFieldBuilder),
  }),
});

const CommentReplier = builder.objectRef<service.Replier>("CommentReplier").implement({
  description: "A user who replied to a comment.",
  fields: (t) => ({
    user: t.field({ type: UserRef, resolve: async (r, _a, ctx) => (await userById(ctx).load(r.userId))! }),
    count: t.exposeInt("count", { description: "Number of their replies." }),
    updatedAt: t.expose("updatedAt", { type: "DateTime", description: "When they last replied." }),
  }),
});

export const CommentRef = builder.prismaNode("Comment", {
  id: { field: "id" },
  description: "A comment on a space or on a change request, optionally on a page and a node of it.",
  fields: (t) => ({
    object: t.string({ resolve: () => "comment" }),
    ...sharedFields(t),
    repliesCount: t.exposeInt("repliesCount", { extensions: restName("replies"), description: "Number of replies." }),
    repliers: t.field({
      type: [CommentReplier],
      description: "The users who replied, the most recent first.",
      resolve: (c, _a, ctx) => service.repliersOf(ctx).load(c.id),
    }),
    target: t.field({ type: CommentTarget, resolve: (c) => c }),
    status: t.field({ type: CommentStatusEnum, resolve: (c) => c.status }),
    resolvedAt: t.expose("resolvedAt", { type: "DateTime", nullable: true, description: "When it was resolved; absent while open." }),
    resolvedBy: t.field({
      type: UserRef,
      nullable: true,
      description: "Who resolved it; absent while open.",
      resolve: async (c, _a, ctx) => (c.resolvedById ? userById(ctx).load(c.resolvedById) : null),
    }),
    replies: t.relatedConnection("replies", {
      type: CommentReplyRef,
      cursor: "id",
      totalCount: true,
      description: "The replies, oldest first.",
      query: () => ({ orderBy: [{ postedAt: "asc" as const }, { id: "asc" as const }] }),
    }),
  }),
});

const CommentList = listOf("CommentList", CommentRef);
const CommentReplyList = listOf("CommentReplyList", CommentReplyRef);
const CommenterList = listOf("CommenterList", MemberRef);

// ─── The graph: the discussions of a space and of its change requests ──────────────────────────

const commentConnectionArgs = builder.args((t) => ({
  status: t.field({ type: CommentStatusFilterEnum, description: "open, resolved or all (default)." }),
  order: t.field({ type: OrderEnum, description: "By posting date, desc (default) or asc." }),
}));

/** The Prisma query of a comments connection: top-level comments, filtered and ordered by posting date. */
function commentConnectionQuery(
  args: { status?: service.CommentStatusFilter | null; order?: "asc" | "desc" | null },
  changeRequest: boolean,
) {
  const dir = args.order ?? "desc";
  return {
    where: {
      parentId: null,
      ...(changeRequest ? {} : { changeRequestId: null }),
      ...(args.status && args.status !== "all" ? { status: args.status } : {}),
    },
    orderBy: [{ postedAt: dir }, { id: dir }],
  };
}

builder.prismaObjectFields("Space", (t) => ({
  commentsCount: t.exposeInt("openCommentsCount", { extensions: restName("comments"), description: "Number of open comments." }),
  comments: t.relatedConnection("comments", {
    type: CommentRef,
    cursor: "id",
    totalCount: true,
    description: "Comments on the space itself (not those of its change requests), newest first. Each has its replies as `replies`.",
    args: commentConnectionArgs,
    query: (args) => commentConnectionQuery(args, false),
  }),
}));

// ChangeRequest is the prisma object of the change requests area (imported before this file).
builder.prismaObjectFields("ChangeRequest", (t) => ({
  comments: t.relatedConnection("comments", {
    type: CommentRef,
    cursor: "id",
    totalCount: true,
    description: "Comments on the change request, newest first. Each has its replies as `replies`.",
    args: commentConnectionArgs,
    query: (args) => commentConnectionQuery(args, true),
  }),
}));

// ─── Operations ────────────────────────────────────────────────────────────────────────────────

const spaceIdArgs = builder.args((t) => ({ spaceId: t.string({ required: true }) }));
const changeRequestArgs = builder.args((t) => ({
  spaceId: t.string({ required: true }),
  changeRequestId: t.string({ required: true, description: "Id of the change request, or its number in the space." }),
}));
const listFilterArgs = builder.args((t) => ({
  order: t.field({ type: OrderEnum, description: "By posting date: desc (default, newest first) or asc." }),
  status: t.field({ type: CommentStatusFilterEnum, description: "open, resolved or all (default)." }),
  pageId: t.string({ description: "Only comments on this page (by page id). Named pageId because `page` is the cursor." }),
  users: t.stringList({ description: "Only comments posted by these user ids (repeat the parameter, or separate ids with commas)." }),
}));
const createArgs = builder.args((t) => ({
  node: t.string({ description: `Id of the node of the page's document the comment is on, at most ${service.NODE_MAX} characters.` }),
  page: t.string({
    description: "Id of the page the comment is on: a page of the current revision (of the change request, for its comments).",
  }),
  body: t.field({ type: CommentBodyInput, required: true }),
}));
const reactionArgs = builder.args((t) => ({
  addedReactions: t.stringList({ description: `Emoji the caller reacts with (each at most ${service.EMOJI_MAX} characters).` }),
  removedReactions: t.stringList({ description: "Emoji whose reaction by the caller is withdrawn; wins over addedReactions." }),
}));
const bodyArgs = builder.args((t) => ({
  body: t.field({ type: CommentBodyInput, description: "New body; only its author may change it (sets editedAt)." }),
}));
const resolvedArgs = builder.args((t) => ({
  resolved: t.boolean({ description: "true resolves the comment (status resolved, resolvedAt, resolvedBy); false reopens it." }),
}));
const replyResolvedArgs = builder.args((t) => ({
  resolved: t.boolean({
    description: "true resolves the comment this reply answers (status resolved, resolvedAt, resolvedBy); false reopens it.",
  }),
}));

builder.queryFields((t) => ({
  spaceComments: t.field({
    type: CommentList,
    description: "Comments on a space (not on its change requests), newest first.",
    args: { ...spaceIdArgs, ...pageArgs, ...listFilterArgs, ...formatArgs },
    resolve: async (_r, args, ctx) => service.listComments(ctx, await service.spaceScope(ctx, args.spaceId), args),
  }),
  spaceComment: t.field({
    type: CommentRef,
    args: { ...spaceIdArgs, commentId: t.arg.string({ required: true }), ...formatArgs },
    resolve: async (_r, args, ctx) => service.getComment(ctx, await service.spaceScope(ctx, args.spaceId), args.commentId, args.format),
  }),
  spaceCommentReply: t.field({
    type: CommentReplyRef,
    args: { ...spaceIdArgs, commentId: t.arg.string({ required: true }), commentReplyId: t.arg.string({ required: true }), ...formatArgs },
    resolve: async (_r, args, ctx) =>
      service.getReply(ctx, await service.spaceScope(ctx, args.spaceId), args.commentId, args.commentReplyId, args.format),
  }),
  spaceCommenters: t.field({
    type: CommenterList,
    description: "Organization members who commented or replied on the space (not on its change requests), by join date.",
    args: { ...spaceIdArgs, ...pageArgs },
    resolve: async (_r, args, ctx) => service.listCommenters(ctx, await service.spaceScope(ctx, args.spaceId), args),
  }),
  changeRequestComments: t.field({
    type: CommentList,
    description: "Comments on a change request, newest first.",
    args: { ...changeRequestArgs, ...pageArgs, ...listFilterArgs, ...formatArgs },
    resolve: async (_r, args, ctx) =>
      service.listComments(ctx, await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId), args),
  }),
  changeRequestComment: t.field({
    type: CommentRef,
    args: { ...changeRequestArgs, commentId: t.arg.string({ required: true }), ...formatArgs },
    resolve: async (_r, args, ctx) =>
      service.getComment(ctx, await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId), args.commentId, args.format),
  }),
  changeRequestCommentReplies: t.field({
    type: CommentReplyList,
    description: "Replies to a comment of a change request, oldest first.",
    args: { ...changeRequestArgs, commentId: t.arg.string({ required: true }), ...pageArgs, ...formatArgs },
    resolve: async (_r, args, ctx) =>
      service.listReplies(ctx, await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId), args.commentId, args),
  }),
  changeRequestCommentReply: t.field({
    type: CommentReplyRef,
    args: {
      ...changeRequestArgs,
      commentId: t.arg.string({ required: true }),
      commentReplyId: t.arg.string({ required: true }),
      ...formatArgs,
    },
    resolve: async (_r, args, ctx) =>
      service.getReply(
        ctx,
        await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId),
        args.commentId,
        args.commentReplyId,
        args.format,
      ),
  }),
  changeRequestCommenters: t.field({
    type: CommenterList,
    description: "Organization members who commented or replied on the change request, by join date.",
    args: { ...changeRequestArgs, ...pageArgs },
    resolve: async (_r, args, ctx) =>
      service.listCommenters(ctx, await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId), args),
  }),
}));

const SpaceCommentDeletePayload = deletionPayload("SpaceCommentDeletePayload", "comment", spaceParent);
const SpaceCommentReplyDeletePayload = deletionPayload("SpaceCommentReplyDeletePayload", "reply", spaceParent);
const ChangeRequestCommentDeletePayload = deletionPayload("ChangeRequestCommentDeletePayload", "comment", spaceParent);
const ChangeRequestCommentReplyDeletePayload = deletionPayload("ChangeRequestCommentReplyDeletePayload", "reply", spaceParent);

builder.mutationFields((t) => ({
  spaceCommentCreate: t.field({
    type: CommentRef,
    description: "Posts a comment on a space (needs the comment role), optionally on a page of its active revision and a node of it.",
    args: { ...spaceIdArgs, ...createArgs },
    resolve: async (_r, args, ctx) => service.createComment(ctx, await service.spaceScope(ctx, args.spaceId), args),
  }),
  spaceCommentUpdate: t.field({
    type: CommentRef,
    description: "Resolves or reopens a comment, changes its body (author only), and adds or withdraws the caller's reactions.",
    args: { ...spaceIdArgs, commentId: t.arg.string({ required: true }), ...resolvedArgs, ...bodyArgs, ...reactionArgs },
    resolve: async (_r, rawArgs, ctx) => {
      const { spaceId, commentId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateComment(ctx, await service.spaceScope(ctx, spaceId), commentId, patch);
    },
  }),
  spaceCommentDelete: t.field({
    type: SpaceCommentDeletePayload,
    description: "Deletes a comment and its replies (its author or a space admin). Succeeds also when it did not exist.",
    args: { ...spaceIdArgs, commentId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(service.deleteComment(ctx, await service.spaceScope(ctx, args.spaceId), args.commentId), args.commentId, args.spaceId),
  }),
  spaceCommentReplyCreate: t.field({
    type: CommentReplyRef,
    description: "Replies to a comment of a space (needs the comment role).",
    args: { ...spaceIdArgs, commentId: t.arg.string({ required: true }), body: t.arg({ type: CommentBodyInput, required: true }) },
    resolve: async (_r, args, ctx) => service.createReply(ctx, await service.spaceScope(ctx, args.spaceId), args.commentId, args),
  }),
  spaceCommentReplyUpdate: t.field({
    type: CommentReplyRef,
    description: "Changes a reply's body (author only) and adds or withdraws the caller's reactions.",
    args: {
      ...spaceIdArgs,
      commentId: t.arg.string({ required: true }),
      commentReplyId: t.arg.string({ required: true }),
      ...bodyArgs,
      ...reactionArgs,
    },
    resolve: async (_r, rawArgs, ctx) => {
      const { spaceId, commentId, commentReplyId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateReply(ctx, await service.spaceScope(ctx, spaceId), commentId, commentReplyId, patch);
    },
  }),
  spaceCommentReplyDelete: t.field({
    type: SpaceCommentReplyDeletePayload,
    description: "Deletes a reply (its author or a space admin). Succeeds also when it did not exist.",
    args: { ...spaceIdArgs, commentId: t.arg.string({ required: true }), commentReplyId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(
        service.deleteReply(ctx, await service.spaceScope(ctx, args.spaceId), args.commentId, args.commentReplyId),
        args.commentReplyId,
        args.spaceId,
      ),
  }),
  changeRequestCommentCreate: t.field({
    type: CommentRef,
    description:
      "Posts a comment on a change request (needs the comment role), optionally on a page of its head revision and a node of it.",
    args: { ...changeRequestArgs, ...createArgs },
    resolve: async (_r, args, ctx) =>
      service.createComment(ctx, await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId), args),
  }),
  changeRequestCommentUpdate: t.field({
    type: CommentRef,
    description: "Resolves or reopens a comment, changes its body (author only), and adds or withdraws the caller's reactions.",
    args: { ...changeRequestArgs, commentId: t.arg.string({ required: true }), ...resolvedArgs, ...bodyArgs, ...reactionArgs },
    resolve: async (_r, rawArgs, ctx) => {
      const { spaceId, changeRequestId, commentId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateComment(ctx, await service.changeRequestScope(ctx, spaceId, changeRequestId), commentId, patch);
    },
  }),
  changeRequestCommentDelete: t.field({
    type: ChangeRequestCommentDeletePayload,
    description: "Deletes a comment and its replies (its author or a space admin). Succeeds also when it did not exist.",
    args: { ...changeRequestArgs, commentId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(
        service.deleteComment(ctx, await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId), args.commentId),
        args.commentId,
        args.spaceId,
      ),
  }),
  changeRequestCommentReplyCreate: t.field({
    type: CommentReplyRef,
    description: "Replies to a comment of a change request (needs the comment role).",
    args: {
      ...changeRequestArgs,
      commentId: t.arg.string({ required: true }),
      body: t.arg({ type: CommentBodyInput, required: true }),
      ...formatArgs,
    },
    resolve: async (_r, args, ctx) =>
      service.createReply(ctx, await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId), args.commentId, args),
  }),
  changeRequestCommentReplyUpdate: t.field({
    type: CommentReplyRef,
    description:
      "Changes a reply's body (author only), adds or withdraws the caller's reactions; `resolved` resolves or reopens the comment it answers.",
    args: {
      ...changeRequestArgs,
      commentId: t.arg.string({ required: true }),
      commentReplyId: t.arg.string({ required: true }),
      ...replyResolvedArgs,
      ...bodyArgs,
      ...reactionArgs,
    },
    resolve: async (_r, rawArgs, ctx) => {
      const { spaceId, changeRequestId, commentId, commentReplyId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateReply(ctx, await service.changeRequestScope(ctx, spaceId, changeRequestId), commentId, commentReplyId, patch);
    },
  }),
  changeRequestCommentReplyDelete: t.field({
    type: ChangeRequestCommentReplyDeletePayload,
    description: "Deletes a reply (its author or a space admin). Succeeds also when it did not exist.",
    args: { ...changeRequestArgs, commentId: t.arg.string({ required: true }), commentReplyId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(
        service.deleteReply(
          ctx,
          await service.changeRequestScope(ctx, args.spaceId, args.changeRequestId),
          args.commentId,
          args.commentReplyId,
        ),
        args.commentReplyId,
        args.spaceId,
      ),
  }),
}));
