import type { ChangeRequest, Comment, Prisma as P, Space } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { byKeys, defineLoader, defineSharedLoader } from "../../core/graph/loaders.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, forbidden, notFound } from "../../core/errors.js";
import { checkLength } from "../../core/validate.js";
import { isReferenceGone, isRowGone } from "../../core/db/db-faults.js";
import { newId } from "../../core/ids.js";
import type { Role } from "../../core/access/roles.js";
import { inTransactionWithActivity } from "../../events/activity.js";
import { requireNotDeleted, requireSpace, requireSpaceAction, spaceById } from "../spaces/spaces.access.js";
import { entry, flattenTree, pageTree, readContent, type StoredPage } from "../content/model.js";
import { canDelete, canEditBody } from "./comments.policy.js";

// ─── Values and limits ─────────────────────────────────────────────────────────────────────────

export const COMMENT_FORMATS = ["markdown", "document"] as const;
export type CommentFormat = (typeof COMMENT_FORMATS)[number];
export const COMMENT_STATUS_FILTERS = ["open", "resolved", "all"] as const;
export type CommentStatusFilter = (typeof COMMENT_STATUS_FILTERS)[number];
export type Order = "asc" | "desc";

export const BODY_MAX = 10_000;
export const NODE_MAX = 256;
export const EMOJI_MAX = 32;
export const REACTIONS_MAX = 50;
const USERS_FILTER_MAX = 100;

/** A comment or reply row, with the output format its reader asked for (markdown when absent). */
export type CommentRow = Comment & { format?: CommentFormat };

export function withFormat<T extends Comment>(row: T, format: CommentFormat | null | undefined): T & { format: CommentFormat } {
  return Object.assign(row, { format: format ?? "markdown" });
}

// ─── Scopes: a space's own discussion, or a change request's ────────────────────────────────

/** Where comments live, with the caller's role on the space. */
export interface CommentScope {
  space: Space;
  role: Role;
  changeRequest: ChangeRequest | null;
}

/** The comments of a space itself (not of its change requests); 404 for spaces the caller has no role on. */
export async function spaceScope(ctx: Context, spaceId: string): Promise<CommentScope> {
  const { space, role } = await requireSpace(ctx, spaceId);
  return { space, role, changeRequest: null };
}

/**
 * A change request of a space given by its id or by its number (digits only), read-only.
 * Null when the space has no such change request.
 */
export async function findChangeRequest(ctx: Context, spaceId: string, idOrNumber: string): Promise<ChangeRequest | null> {
  const ref = idOrNumber.trim();
  if (/^\d{1,9}$/.test(ref)) {
    const byNumber = await ctx.prisma.changeRequest.findFirst({ where: { spaceId, number: Number(ref) } });
    if (byNumber) changeRequestById(ctx).prime(byNumber.id, byNumber);
    return byNumber;
  }
  const changeRequest = await changeRequestById(ctx).load(ref);
  return changeRequest?.spaceId === spaceId ? changeRequest : null;
}

/** The comments of a change request, addressed by id or number inside its space. */
export async function changeRequestScope(ctx: Context, spaceId: string, changeRequestId: string): Promise<CommentScope> {
  const { space, role } = await requireSpace(ctx, spaceId);
  const changeRequest = await findChangeRequest(ctx, spaceId, changeRequestId);
  if (!changeRequest) throw notFound(`Change request "${changeRequestId}" of space "${spaceId}"`);
  return { space, role, changeRequest };
}

function scopeWhere(scope: CommentScope) {
  return { spaceId: scope.space.id, changeRequestId: scope.changeRequest?.id ?? null };
}

/** The revision comments of this scope are made on now: the change request's head, else the space's active revision. */
function headRevision(scope: CommentScope): string | null {
  return scope.changeRequest ? scope.changeRequest.revisionId : scope.space.revisionId;
}

/** API path of a comment or reply (the `urls.location` of both). */
export function commentPath(comment: Pick<Comment, "id" | "spaceId" | "changeRequestId" | "parentId">): string {
  const base = comment.changeRequestId
    ? `/spaces/${comment.spaceId}/change-requests/${comment.changeRequestId}/comments`
    : `/spaces/${comment.spaceId}/comments`;
  return comment.parentId ? `${base}/${comment.parentId}/replies/${comment.id}` : `${base}/${comment.id}`;
}

// ─── Loaders ───────────────────────────────────────────────────────────────────────────────────

export const changeRequestById = defineSharedLoader<string, ChangeRequest | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.changeRequest.findMany({ where: { id: { in: [...ids] } } }), (c) => c.id),
);

interface RevisionPages {
  pages: Record<string, StoredPage>;
  paths: Map<string, string>;
}

/** The pages of each revision, with their paths (computed once per revision and request). */
const revisionPages = defineLoader<string, RevisionPages | null>(async (ids, ctx) => {
  const rows = await ctx.prisma.revision.findMany({ where: { id: { in: [...ids] } }, select: { id: true, content: true } });
  const found = new Map(
    rows.map((r) => {
      const content = readContent(r.content);
      return [r.id, { pages: content.pages, paths: new Map(flattenTree(pageTree(content)).map((p) => [p.id, p.path])) }];
    }),
  );
  return ids.map((id) => found.get(id) ?? null);
});

/** Who replied to a comment: per author, their number of replies and the time of their latest, latest first. */
export interface Replier {
  userId: string;
  count: number;
  updatedAt: Date;
}

export const repliersOf = defineSharedLoader<string, Replier[]>(async (ids, prisma) => {
  const rows = await prisma.comment.groupBy({
    by: ["parentId", "postedById"],
    where: { parentId: { in: [...ids] } },
    _count: { _all: true },
    _max: { postedAt: true },
  });
  const byParent = new Map<string, Replier[]>();
  for (const r of rows) {
    const list = byParent.get(r.parentId!) ?? [];
    list.push({ userId: r.postedById, count: r._count._all, updatedAt: r._max.postedAt! });
    byParent.set(r.parentId!, list);
  }
  return ids.map((id) =>
    (byParent.get(id) ?? []).sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || a.userId.localeCompare(b.userId)),
  );
});

// The counts of open comments (Space, ChangeRequest) and of replies (Comment) are columns the
// database keeps in the transaction of every comment write (prisma/schema.prisma).

export interface ReactionGroup {
  emoji: string;
  count: number;
  users: { userId: string; reactedAt: Date }[];
}

/** The reactions of each comment or reply, one group per emoji: groups by first reaction, users by reaction time. */
export const reactionsOf = defineSharedLoader<string, ReactionGroup[]>(async (ids, prisma) => {
  const rows = await prisma.commentReaction.findMany({
    where: { commentId: { in: [...ids] } },
    orderBy: [{ reactedAt: "asc" }, { emoji: "asc" }, { userId: "asc" }],
  });
  const byComment = new Map<string, Map<string, ReactionGroup>>();
  for (const r of rows) {
    const groups = byComment.get(r.commentId) ?? new Map<string, ReactionGroup>();
    byComment.set(r.commentId, groups);
    const group = groups.get(r.emoji) ?? { emoji: r.emoji, count: 0, users: [] };
    groups.set(r.emoji, group);
    group.count++;
    group.users.push({ userId: r.userId, reactedAt: r.reactedAt });
  }
  return ids.map((id) => [...(byComment.get(id)?.values() ?? [])]);
});

// ─── Target ────────────────────────────────────────────────────────────────────────────────────

export interface TargetPage {
  id: string;
  title?: string;
  emoji?: string;
  icon?: string;
  createdAt?: string;
  updatedAt?: string;
  path?: string;
  outdated: boolean;
}

const samePage = (a: StoredPage, b: StoredPage) => a.updatedAt === b.updatedAt && a.title === b.title && a.markdown === b.markdown;

/**
 * The page a comment targets, as it is now (as it was when the page is gone). `outdated` is
 * true when the page changed or disappeared since the revision the comment was made on.
 */
export async function targetPage(ctx: Context, comment: Comment): Promise<TargetPage | null> {
  if (!comment.pageId) return null;
  const head = comment.changeRequestId
    ? (await changeRequestById(ctx).load(comment.changeRequestId))?.revisionId
    : (await spaceById(ctx).load(comment.spaceId))?.revisionId;
  const [then, now] = await Promise.all([
    comment.revisionId ? revisionPages(ctx).load(comment.revisionId) : null,
    head ? revisionPages(ctx).load(head) : null,
  ]);
  const before = then ? entry(then.pages, comment.pageId) : undefined;
  const current = now ? entry(now.pages, comment.pageId) : undefined;
  const shown = current ? { page: current, paths: now!.paths } : before ? { page: before, paths: then!.paths } : null;
  const outdated = !current || (head !== comment.revisionId && (!before || !samePage(before, current)));
  if (!shown) return { id: comment.pageId, outdated };
  const { page, paths } = shown;
  return {
    id: page.id,
    title: page.title,
    emoji: page.emoji || undefined,
    icon: page.icon || undefined,
    createdAt: page.createdAt,
    updatedAt: page.updatedAt,
    path: paths.get(page.id),
    outdated,
  };
}

// ─── Input checks ──────────────────────────────────────────────────────────────────────────────

/** A comment body: `{markdown}` with non-blank markdown of at most BODY_MAX characters. */
export function checkBody(body: { markdown?: string | null } | null | undefined): string {
  if (body === null || body === undefined) throw badInput("body is required: send {markdown}.");
  const markdown = body.markdown;
  if (markdown === null || markdown === undefined) throw badInput("body.markdown is required.");
  if (!markdown.trim()) throw badInput("body.markdown cannot be blank.");
  checkLength("body.markdown", markdown, 1, BODY_MAX);
  return markdown;
}

/** A list of reaction emoji: each one non-blank, without spaces, at most EMOJI_MAX characters. */
export function checkReactions(field: string, values: string[] | null | undefined): string[] {
  if (values === null || values === undefined) return [];
  if (values.length > REACTIONS_MAX) throw badInput(`${field} holds at most ${REACTIONS_MAX} emoji (got ${values.length}).`);
  const emoji = values.map((value, i) => {
    const e = value.trim();
    if (!e) throw badInput(`${field}[${i}] cannot be blank.`);
    if (/\s/.test(e)) throw badInput(`${field}[${i}] must be one emoji without spaces (got "${value}").`);
    checkLength(`${field}[${i}]`, e, 1, EMOJI_MAX);
    return e;
  });
  return [...new Set(emoji)];
}

/** The `users` filter: ids given repeated or comma separated. */
function userFilter(users: string[] | null | undefined): string[] | undefined {
  if (!users) return undefined;
  const ids = [
    ...new Set(
      users
        .flatMap((u) => u.split(","))
        .map((u) => u.trim())
        .filter(Boolean),
    ),
  ];
  if (ids.length > USERS_FILTER_MAX) throw badInput(`users holds at most ${USERS_FILTER_MAX} user ids (got ${ids.length}).`);
  return ids.length ? ids : undefined;
}

// ─── Reads ─────────────────────────────────────────────────────────────────────────────────────

export interface CommentListArgs extends PageArgs {
  order?: Order | null;
  status?: CommentStatusFilter | null;
  pageId?: string | null;
  users?: string[] | null;
  format?: CommentFormat | null;
}

/** Top-level comments of a scope, newest first unless `order` is asc. */
export async function listComments(ctx: Context, scope: CommentScope, args: CommentListArgs) {
  const users = userFilter(args.users);
  const pageId = args.pageId?.trim();
  const where: P.CommentWhereInput = {
    ...scopeWhere(scope),
    parentId: null,
    ...(args.status && args.status !== "all" ? { status: args.status } : {}),
    ...(pageId ? { pageId } : {}),
    ...(users ? { postedById: { in: users } } : {}),
  };
  const dir = args.order ?? "desc";
  const page = await paginate({
    args,
    where,
    order: [
      ["postedAt", dir],
      ["id", dir],
    ],
    from: ctx.prisma.comment,
  });
  return { ...page, items: page.items.map((c) => withFormat(c, args.format)) };
}

async function findComment(ctx: Context, scope: CommentScope, commentId: string): Promise<Comment | null> {
  return ctx.prisma.comment.findFirst({ where: { id: commentId, ...scopeWhere(scope), parentId: null } });
}

async function requireComment(ctx: Context, scope: CommentScope, commentId: string): Promise<Comment> {
  const comment = await findComment(ctx, scope, commentId);
  if (!comment) throw notFound(`Comment "${commentId}"`);
  return comment;
}

async function findReply(ctx: Context, scope: CommentScope, commentId: string, replyId: string): Promise<Comment | null> {
  return ctx.prisma.comment.findFirst({ where: { id: replyId, parentId: commentId, ...scopeWhere(scope) } });
}

async function requireReply(ctx: Context, scope: CommentScope, commentId: string, replyId: string): Promise<Comment> {
  const reply = await findReply(ctx, scope, commentId, replyId);
  if (reply) return reply;
  await requireComment(ctx, scope, commentId); // says which of the two is missing
  throw notFound(`Reply "${replyId}" of comment "${commentId}"`);
}

export async function getComment(ctx: Context, scope: CommentScope, commentId: string, format?: CommentFormat | null) {
  return withFormat(await requireComment(ctx, scope, commentId), format);
}

export async function getReply(ctx: Context, scope: CommentScope, commentId: string, replyId: string, format?: CommentFormat | null) {
  return withFormat(await requireReply(ctx, scope, commentId, replyId), format);
}

/** Replies of a comment, oldest first (the order of the conversation). */
export async function listReplies(
  ctx: Context,
  scope: CommentScope,
  commentId: string,
  args: PageArgs & { format?: CommentFormat | null },
) {
  await requireComment(ctx, scope, commentId);
  const page = await paginate({
    args,
    where: { parentId: commentId },
    order: [
      ["postedAt", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.comment,
  });
  return { ...page, items: page.items.map((c) => withFormat(c, args.format)) };
}

/** Organization members who posted a comment or a reply in the scope, by join date. */
export async function listCommenters(ctx: Context, scope: CommentScope, args: PageArgs) {
  return paginate({
    args,
    where: { organizationId: scope.space.organizationId, user: { comments: { some: scopeWhere(scope) } } },
    order: [
      ["joinedAt", "asc"],
      ["userId", "asc"],
    ],
    from: ctx.prisma.member,
  });
}

// ─── Writes ────────────────────────────────────────────────────────────────────────────────────

function requireCommenting(scope: CommentScope, action: string): void {
  requireSpaceAction(scope.space, scope.role, "comment", action);
  requireNotDeleted(scope.space);
}

export interface CommentInput {
  node?: string | null;
  page?: string | null;
  body?: { markdown?: string | null } | null;
}

/** Posts a comment on the scope, optionally on a page of its current revision and a node of that page. */
export async function createComment(ctx: Context, scope: CommentScope, input: CommentInput) {
  requireCommenting(scope, "comment on it");
  const markdown = checkBody(input.body);
  const revisionId = headRevision(scope);
  const where = scope.changeRequest ? `change request "${scope.changeRequest.id}"` : `space "${scope.space.id}"`;
  const pageId = input.page?.trim() || null;
  if (pageId) {
    const pages = revisionId ? await revisionPages(ctx).load(revisionId) : null;
    if (!pages) throw badInput(`page: ${where} has no content yet, so it has no page "${pageId}".`);
    if (!entry(pages.pages, pageId)) throw badInput(`page: "${pageId}" is not a page of the current revision of ${where}.`);
  }
  const nodeId = input.node?.trim() || null;
  checkLength("node", nodeId, 1, NODE_MAX);
  // The comment and its activity are stored together (events/activity.ts).
  const comment = await inTransactionWithActivity(ctx, async (tx, record) => {
    const comment = await tx.comment.create({
      data: {
        id: newId("Comment"),
        ...scopeWhere(scope),
        pageId,
        nodeId,
        revisionId,
        markdown,
        postedById: ctx.viewer.userId,
      },
    });
    await record({
      type: "comment_posted",
      spaceId: scope.space.id,
      commentId: comment.id,
      ...(scope.changeRequest ? { changeRequestId: scope.changeRequest.id } : {}),
    });
    return comment;
  });
  return asNew(ctx, comment);
}

/**
 * A comment or reply just stored, as its answer shows it: without reactions nor replies yet. The
 * request's loaders are told so, instead of asking the database (two statements less per post).
 */
function asNew<T extends { id: string }>(ctx: Context, comment: T): T {
  reactionsOf(ctx).prime(comment.id, []);
  repliersOf(ctx).prime(comment.id, []);
  return comment;
}

export async function createReply(
  ctx: Context,
  scope: CommentScope,
  commentId: string,
  input: { body?: { markdown?: string | null } | null; format?: CommentFormat | null },
) {
  const parent = await requireComment(ctx, scope, commentId);
  requireCommenting(scope, "reply to comments");
  const markdown = checkBody(input.body);
  const reply = await inTransactionWithActivity(ctx, async (tx, record) => {
    const created = await tx.comment.create({
      data: {
        id: newId("CommentReply"),
        ...scopeWhere(scope),
        parentId: parent.id,
        markdown,
        postedById: ctx.viewer.userId,
      },
    });
    await record({
      type: "comment_posted",
      spaceId: scope.space.id,
      commentId: created.id,
      replyTo: parent.id,
      ...(scope.changeRequest ? { changeRequestId: scope.changeRequest.id } : {}),
    });
    return created;
  }).catch((err) => {
    // The comment was deleted between the check above and the insert: say so as a GET would.
    if (isReferenceGone(err)) throw notFound(`Comment "${commentId}"`);
    throw err;
  });
  return withFormat(asNew(ctx, reply), input.format);
}

export interface CommentPatch {
  resolved?: boolean | null;
  body?: { markdown?: string | null } | null;
  addedReactions?: string[] | null;
  removedReactions?: string[] | null;
}

function notNull<T>(field: string, value: T | null | undefined): T | undefined {
  if (value === null) throw badInput(`${field} cannot be null.`);
  return value;
}

/**
 * Applies a PUT to a comment or a reply: `body` (author only; sets editedAt), `resolved` (on the
 * comment, or on a reply's comment), and the caller's reactions (added first, then removed: an
 * emoji in both ends up removed). Every check runs before anything is written.
 */
async function applyPatch(ctx: Context, scope: CommentScope, row: Comment, thread: Comment, patch: CommentPatch): Promise<Comment> {
  const kind = row.parentId ? "reply" : "comment";
  requireCommenting(scope, `change ${kind}s`);
  const userId = ctx.viewer.userId;
  const writes: P.PrismaPromise<unknown>[] = [];

  const body = notNull("body", patch.body);
  if (body !== undefined) {
    if (!canEditBody(scope.role, row, userId)) throw forbidden(`Only the author of a ${kind} can change its body.`);
    writes.push(ctx.prisma.comment.update({ where: { id: row.id }, data: { markdown: checkBody(body), editedAt: new Date() } }));
  }
  const resolved = notNull("resolved", patch.resolved);
  if (resolved === true && thread.status !== "resolved") {
    writes.push(
      ctx.prisma.comment.update({ where: { id: thread.id }, data: { status: "resolved", resolvedAt: new Date(), resolvedById: userId } }),
    );
  } else if (resolved === false && thread.status !== "open") {
    writes.push(ctx.prisma.comment.update({ where: { id: thread.id }, data: { status: "open", resolvedAt: null, resolvedById: null } }));
  }
  const added = checkReactions("addedReactions", patch.addedReactions);
  const removed = checkReactions("removedReactions", patch.removedReactions);
  if (added.length) {
    writes.push(
      ctx.prisma.commentReaction.createMany({ data: added.map((emoji) => ({ commentId: row.id, userId, emoji })), skipDuplicates: true }),
    );
  }
  if (removed.length) {
    writes.push(ctx.prisma.commentReaction.deleteMany({ where: { commentId: row.id, userId, emoji: { in: removed } } }));
  }
  if (!writes.length) return row;
  try {
    await ctx.prisma.$transaction(writes);
    return await ctx.prisma.comment.findUniqueOrThrow({ where: { id: row.id } });
  } catch (err) {
    // Deleted by another request after the lookup: answered as a lookup after the delete would be.
    if (isRowGone(err) || isReferenceGone(err)) throw notFound(`${kind === "reply" ? "Reply" : "Comment"} "${row.id}"`);
    throw err;
  }
}

export async function updateComment(ctx: Context, scope: CommentScope, commentId: string, patch: CommentPatch) {
  const comment = await requireComment(ctx, scope, commentId);
  return applyPatch(ctx, scope, comment, comment, patch);
}

/** Changes a reply; `resolved` (change request replies) resolves or reopens the comment it answers. */
export async function updateReply(ctx: Context, scope: CommentScope, commentId: string, replyId: string, patch: CommentPatch) {
  const reply = await requireReply(ctx, scope, commentId, replyId);
  const thread = patch.resolved === undefined || patch.resolved === null ? reply : await requireComment(ctx, scope, commentId);
  return applyPatch(ctx, scope, reply, thread, patch);
}

/** Deletes a comment with its replies (author or space admin). True also when it did not exist. */
export async function deleteComment(ctx: Context, scope: CommentScope, commentId: string): Promise<boolean> {
  const comment = await findComment(ctx, scope, commentId);
  return comment ? deleteRow(ctx, scope, comment) : true;
}

export async function deleteReply(ctx: Context, scope: CommentScope, commentId: string, replyId: string): Promise<boolean> {
  const reply = await findReply(ctx, scope, commentId, replyId);
  return reply ? deleteRow(ctx, scope, reply) : true;
}

async function deleteRow(ctx: Context, scope: CommentScope, row: Comment): Promise<boolean> {
  const kind = row.parentId ? "reply" : "comment";
  if (!canDelete(scope.role, row, ctx.viewer.userId)) {
    throw forbidden(`Only the author of a ${kind} or an admin of the space can delete it; your role on this space is ${scope.role}.`);
  }
  requireNotDeleted(scope.space);
  // Replies and reactions go with it (foreign keys cascade).
  await ctx.prisma.comment.deleteMany({ where: { id: row.id } });
  return true;
}
