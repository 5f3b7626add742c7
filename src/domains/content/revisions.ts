import { Prisma, type ChangeRequest, type Revision, type Space } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { byKeys, defineLoader } from "../../core/graph/loaders.js";
import { conflict, forbidden, notFound } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import type { Role } from "../../core/access/roles.js";
import { requireNotDeleted, requireSpace, requireSpaceAction, spaceById } from "../spaces/spaces.access.js";
import { canOnSpace, type EditMode } from "../spaces/spaces.policy.js";
import { inTransactionWithActivity, prepareSpaceActivity, storeInTurn, type SpaceActivity } from "../../events/activity.js";
import { eventWrites } from "../../events/record.js";
import { isLockBusy } from "../../core/db/db-faults.js";

type RecordActivity = (activity: SpaceActivity) => Promise<void>;
import { emptyContent, flattenTree, pageTree, readContent, type PageTreeNode, type RevisionContent } from "./model.js";
import { plainText, sectionsOf } from "./markdown.js";

/**
 * Revisions: immutable snapshots of a space's (or a change request's) content.
 *
 * A space's active revision is Space.revisionId, a change request's is ChangeRequest.revisionId.
 * Every change writes a new Revision whose parents are the revision it started from and moves
 * the pointer in the same transaction. Writes to a space's content, to its change requests'
 * content, its change request numbers and its merges hold the space's row lock (withSpaceLock)
 * from reading the head to moving it: concurrent compatible writes wait for each other and all
 * land; only a true content conflict (a merge whose sides changed the same lines) answers 409.
 * The pointer moves on the condition that it did not move meanwhile all the same, and a write
 * that finds it moved is replayed (retryWhenMoved), so a writer that skipped the lock cannot be lost.
 * An edit of a space's content or of a change request's first tries to land in one statement
 * that takes the lock without waiting for it (commitAtOnce); when it cannot, it takes the path above.
 */

/** What a revision was made by. */
export const REVISION_TYPES = ["initial", "edits", "merge", "update", "import"] as const;
export type RevisionType = (typeof REVISION_TYPES)[number];

export const revisionById = defineLoader<string, Revision | null>(async (ids, ctx) =>
  byKeys(ids, await ctx.prisma.revision.findMany({ where: { id: { in: [...ids] } } }), (r) => r.id),
);

const parsed = new WeakMap<object, RevisionContent>();
/** The content of a revision row, parsed once per row object. */
export function contentOf(revision: Revision | null): RevisionContent {
  if (!revision) return emptyContent();
  let content = parsed.get(revision);
  if (!content) {
    content = readContent(revision.content);
    parsed.set(revision, content);
  }
  return content;
}

/**
 * The stored content of revisions this process wrote, by revision id, so that the next change of
 * the same scope starts from it without reading it back. Revisions are immutable and their ids
 * never reused: an entry can only ever answer for the row it copies, whichever head a change
 * starts from (read under the space's lock, or as the request found it). Each entry is the
 * content as the database returns it (JSON, object keys in jsonb's order), frozen; bounded, the
 * oldest go first.
 */
const writtenContent = new Map<string, { content: unknown; size: number }>();
const WRITTEN_CONTENT_ENTRIES = 64;
/** Their JSON text in all (UTF-16 code units), and the most one may have: larger ones are read back. */
const WRITTEN_CONTENT_TOTAL = 32 * 1024 * 1024;
const WRITTEN_CONTENT_ONE = 4 * 1024 * 1024;
let writtenSize = 0;

/** JSON `value` with object keys in jsonb's order (shorter keys first, then by their UTF-8 bytes), frozen. */
function asJsonb(value: unknown): unknown {
  if (Array.isArray(value)) return Object.freeze(value.map(asJsonb));
  if (!value || typeof value !== "object") return value;
  const keys = Object.keys(value).sort(
    (a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = asJsonb((value as Record<string, unknown>)[key]);
  return Object.freeze(out);
}

function rememberContent(revisionId: string, content: RevisionContent): void {
  const json = JSON.stringify(content);
  if (json.length > WRITTEN_CONTENT_ONE) return;
  writtenContent.set(revisionId, { content: asJsonb(JSON.parse(json)), size: json.length });
  writtenSize += json.length;
  while (writtenContent.size > WRITTEN_CONTENT_ENTRIES || writtenSize > WRITTEN_CONTENT_TOTAL) {
    const [oldest, { size }] = writtenContent.entries().next().value!;
    writtenContent.delete(oldest);
    writtenSize -= size;
  }
}

/** The stored content of revision `id`: from what this process wrote, else read with `tx`. */
async function storedContent(tx: Prisma.TransactionClient, id: string): Promise<unknown> {
  const written = writtenContent.get(id);
  if (written !== undefined) return written.content;
  return (await tx.revision.findUniqueOrThrow({ where: { id }, select: { content: true } })).content;
}

// ─── Scopes: the space's content or a change request's ───────────────────────────────────────

export const CHANGE_REQUEST_STATUSES = ["draft", "open", "merged", "archived"] as const;
export type ChangeRequestStatus = (typeof CHANGE_REQUEST_STATUSES)[number];
/** Statuses in which a change request's content can still change. */
export const EDITABLE_STATUSES: ChangeRequestStatus[] = ["draft", "open"];

/**
 * A change request of a space by id or by number (`12` or `cr_…`); 404 naming it otherwise.
 * Read fresh from the database: callers decide on its status and head.
 */
export async function findChangeRequest(ctx: Context, spaceId: string, idOrNumber: string): Promise<ChangeRequest> {
  const key = idOrNumber.trim();
  let cr: ChangeRequest | null = null;
  if (/^\d{1,9}$/.test(key))
    cr = await ctx.prisma.changeRequest.findUnique({ where: { spaceId_number: { spaceId, number: Number(key) } } });
  else cr = await ctx.prisma.changeRequest.findFirst({ where: { id: key, spaceId } });
  if (!cr) throw notFound(`Change request "${idOrNumber}" in space "${spaceId}"`);
  return cr;
}

export interface ContentScope {
  space: Space;
  role: Role;
  /** Set when the scope is a change request's content. */
  changeRequest: ChangeRequest | null;
}

/** The space (and change request) for a read: any role on the space reads its content. */
export async function readScope(ctx: Context, spaceId: string, changeRequestId?: string | null): Promise<ContentScope> {
  const { space, role } = await requireSpace(ctx, spaceId);
  const changeRequest = changeRequestId ? await findChangeRequest(ctx, spaceId, changeRequestId) : null;
  return { space, role, changeRequest };
}

/**
 * The space (and change request) for a content edit: the edit role; the space not deleted; a
 * space's own content only while its editMode is live; a change request's while draft or open
 * (change requests stay editable in a locked space: that is how locked content changes).
 */
export async function editScope(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  action: string,
): Promise<ContentScope> {
  const scope = await readScope(ctx, spaceId, changeRequestId);
  requireSpaceAction(scope.space, scope.role, "proposeChanges", action);
  requireNotDeleted(scope.space);
  if (scope.changeRequest) requireEditableChangeRequest(scope.changeRequest);
  else if (!canOnSpace(scope.role, scope.space.editMode as EditMode, "edit")) {
    throw forbidden(
      `Space "${spaceId}" is locked (editMode locked): its content cannot be edited directly. ` +
        `Propose the change in a change request, or ask an admin to set editMode to live.`,
    );
  }
  return scope;
}

export function requireEditableChangeRequest(cr: ChangeRequest): void {
  if (!EDITABLE_STATUSES.includes(cr.status as ChangeRequestStatus)) {
    throw conflict(`Change request #${cr.number} is ${cr.status}: only draft and open change requests can change.`);
  }
}

/** The id of a scope's active revision (a space without content gets its initial, empty revision). */
export async function scopeRevisionId(ctx: Context, scope: ContentScope): Promise<string> {
  if (scope.changeRequest) return scope.changeRequest.revisionId;
  return ensureSpaceRevision(ctx, scope.space);
}

/** The active revision row and content of a scope. */
export async function scopeRevision(ctx: Context, scope: ContentScope): Promise<{ revision: Revision; content: RevisionContent }> {
  const id = await scopeRevisionId(ctx, scope);
  const revision = await revisionById(ctx).load(id);
  if (!revision) throw notFound(`Revision "${id}"`);
  return { revision, content: contentOf(revision) };
}

/**
 * The space's active revision id. A space starts without content (revisionId null); its first
 * read or write that needs a revision creates the initial, empty one.
 */
export async function ensureSpaceRevision(ctx: Context, space: Pick<Space, "id" | "revisionId">): Promise<string> {
  if (space.revisionId) return space.revisionId;
  const id = newId("Revision");
  const created = await ctx.prisma
    .$transaction(async (tx) => {
      await tx.revision.create({
        data: { id, spaceId: space.id, parents: [], type: "initial", content: emptyContent() as any, createdById: ctx.viewer.userId },
      });
      const { count } = await tx.space.updateMany({ where: { id: space.id, revisionId: null }, data: { revisionId: id } });
      if (count === 0) throw new Moved();
      return id;
    }, TX_OPTIONS)
    .catch((err) => {
      if (err instanceof Moved) return null;
      throw err;
    });
  spaceById(ctx).clear(space.id);
  if (created) return created;
  const fresh = await ctx.prisma.space.findUniqueOrThrow({ where: { id: space.id }, select: { revisionId: true } });
  return fresh.revisionId!;
}

/**
 * The head of a space read under its lock (withSpaceLock), creating the initial, empty revision
 * when the space has none yet.
 */
export async function lockedSpaceHead(
  tx: Prisma.TransactionClient,
  space: Pick<Space, "id" | "revisionId">,
  userId: string,
): Promise<string> {
  if (space.revisionId) return space.revisionId;
  const id = newId("Revision");
  await tx.revision.create({
    data: { id, spaceId: space.id, parents: [], type: "initial", content: emptyContent() as any, createdById: userId },
  });
  await tx.space.update({ where: { id: space.id }, data: { revisionId: id } });
  return id;
}

// ─── Serializing the writes of a space ───────────────────────────────────────────────────────

/** Every column of Space, in the order of the model's fields (a row as `findUnique` returns it). */
const SPACE_COLUMNS = Prisma.raw(
  Object.values(Prisma.SpaceScalarFieldEnum)
    .map((c) => `"${c}"`)
    .join(", "),
);

/**
 * Runs `write` in a transaction that first takes the space's row lock (`FOR NO KEY UPDATE`: rows
 * that merely reference the space, such as comments, are not held up) and hands it the space as
 * the lock found it. Every statement of `write` must go through `tx`: the embedded database has
 * one connection, which the transaction holds until it ends. 404 when the space is gone.
 */
export async function withSpaceLock<T>(
  ctx: Context,
  spaceId: string,
  write: (tx: Prisma.TransactionClient, space: Space, record: RecordActivity) => Promise<T>,
): Promise<T> {
  // Space activity is recorded in the same transaction (events/activity.ts), announced after it.
  const result = await inTransactionWithActivity(
    ctx,
    async (tx, record) => {
      // The row as the lock found it, in the statement that takes the lock.
      const [space] = await tx.$queryRaw<Space[]>`SELECT ${SPACE_COLUMNS} FROM "Space" WHERE "id" = ${spaceId} FOR NO KEY UPDATE`;
      if (!space) throw notFound(`Space "${spaceId}"`);
      // The space's organization, as the lock found it, for the events of its activity (no second read).
      return write(tx, space, (activity) => record(activity, activity.spaceId === space.id ? space.organizationId : undefined));
    },
    TX_OPTIONS,
  );
  spaceById(ctx).clear(spaceId);
  return result;
}

// ─── Writing a change ────────────────────────────────────────────────────────────────────────

/** Thrown inside a write's transaction when a compare-and-set finds that a head moved meanwhile. */
export class Moved extends Error {}

/**
 * Writes of one space queue on its lock inside their transaction, and on the embedded database
 * every transaction waits for the one connection: both bounds cover that wait. Past them the
 * request answers 503 (core/db/db-faults.ts).
 */
export const TX_OPTIONS = { maxWait: 30_000, timeout: 30_000 };
export const ATTEMPTS = 8;

/** A short, growing, randomized pause before replaying a change that lost a race. */
function backoff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (attempt + 1)));
}

/**
 * Optimistic writes: `attempt` reads the current heads, computes, and writes in a transaction
 * whose compare-and-set updates throw Moved when another write landed meanwhile; it is then
 * replayed (after `onMoved`, which may throw to stop) following a short backoff, at most ATTEMPTS
 * times, after which the caller gets 409 `tooBusy`.
 */
export async function retryWhenMoved<T>(tooBusy: string, attempt: () => Promise<T>, onMoved?: () => Promise<void>): Promise<T> {
  for (let n = 0; n < ATTEMPTS; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof Moved)) throw err;
      await onMoved?.();
      await backoff(n);
    }
  }
  throw conflict(tooBusy);
}

export interface ChangeResult<T> {
  revisionId: string;
  previousRevisionId: string;
  content: RevisionContent;
  value: T;
}

/**
 * Applies `change` to the scope's current content and stores the result as a new revision that
 * becomes the scope's active one. `change` edits the copy it receives in place and may throw an
 * AppError; it is replayed on the new head when another change landed meanwhile, so it must
 * depend only on its input.
 */
export async function commitChange<T>(
  ctx: Context,
  scope: ContentScope,
  type: RevisionType,
  change: (draft: RevisionContent) => T,
): Promise<ChangeResult<T>> {
  const result = (await commitAtOnce(ctx, scope, type, change)) ?? (await commitUnderLock(ctx, scope, type, change));
  // Committed: the next change of this scope starts from it.
  rememberContent(result.revisionId, result.content);
  return result;
}

/**
 * A change stored in one statement, without a transaction: from the head (the space's, or the
 * change request's) as the request found it, the new revision, the head's compare-and-set to it,
 * then for a space's own content the search rows of the pages it changed, for a change request's
 * its contributor (the editor, with the time of the edit), and the integration events of the
 * activity, each part writing only when the compare-and-set did (a single statement is atomic:
 * all of it or none).
 * The space's row lock is taken without waiting, as every write of the space's content or of
 * its change requests takes it: when another write holds it, when the head moved since the
 * request read it, or when the change request was merged or closed meanwhile, nothing is written
 * and null is answered, and the change is made under the lock (commitUnderLock) like every
 * other, which decides. A write in the steady state is then one statement, one round trip, where
 * the locked path costs five (seven for a change request) and a transaction.
 */
async function commitAtOnce<T>(
  ctx: Context,
  scope: ContentScope,
  type: RevisionType,
  change: (draft: RevisionContent) => T,
): Promise<ChangeResult<T> | null> {
  const { space, changeRequest } = scope;
  const head = changeRequest ? changeRequest.revisionId : space.revisionId;
  if (!head || space.deletedAt) return null;
  const stored = await storedContent(ctx.prisma, head);
  const draft = readContent(structuredClone(stored));
  const value = change(draft);
  const id = newId("Revision");
  const activity: SpaceActivity = {
    type: "space_content_updated",
    spaceId: space.id,
    revisionId: id,
    ...(changeRequest ? { changeRequestId: changeRequest.id } : {}),
  };
  const { prepared, announce } = await prepareSpaceActivity(ctx.prisma, ctx, activity, space.organizationId);
  const written = Prisma.sql`EXISTS (SELECT 1 FROM "head")`;
  const moved = {
    spaceId: space.id,
    changeRequestId: changeRequest?.id,
    head,
    id,
    type,
    draft,
    userId: ctx.viewer.userId,
    locked: Prisma.sql`EXISTS (SELECT 1 FROM "locked")`,
  };
  // A space's own head must still be the one the change started from; a change request's is compared on its own row.
  const sameHead = changeRequest ? Prisma.empty : Prisma.sql` AND "revisionId" = ${head}`;
  const done = await storeInTurn(space.id, async () => {
    try {
      const [row] = await ctx.prisma.$queryRaw<{ stored: number }[]>`
        WITH "locked" AS (
          SELECT "id" FROM "public"."Space"
            WHERE "id" = ${space.id}${sameHead} AND "organizationId" = ${space.organizationId} AND "deletedAt" IS NULL
            FOR NO KEY UPDATE NOWAIT),
        ${movedHead(moved)},
        ${changeRequest ? contributorWrite(changeRequest.id, ctx.viewer.userId) : searchWrites(space.id, id, draft, { onlyWhen: written, base: readContent(stored) })}${prepared.rows.length ? Prisma.sql`, ${eventWrites(prepared, written)}` : Prisma.empty}
        SELECT count(*)::int AS "stored" FROM "head"`;
      if (row?.stored === 1) return announce;
    } catch (err) {
      if (!isLockBusy(err)) throw err;
    }
    return null;
  });
  spaceById(ctx).clear(space.id);
  return done ? { revisionId: id, previousRevisionId: head, content: draft, value } : null;
}

/** A change made under the space's row lock (withSpaceLock), replayed when a head moved meanwhile. */
async function commitUnderLock<T>(
  ctx: Context,
  scope: ContentScope,
  type: RevisionType,
  change: (draft: RevisionContent) => T,
): Promise<ChangeResult<T>> {
  return retryWhenMoved(
    "The content changed too often while this change was being applied; retry it.",
    () =>
      withSpaceLock(ctx, scope.space.id, async (tx, space, record) => {
        let head: string;
        if (scope.changeRequest) {
          const cr = await tx.changeRequest.findUniqueOrThrow({ where: { id: scope.changeRequest.id } });
          requireEditableChangeRequest(cr); // merged or archived meanwhile: no more edits
          head = cr.revisionId;
        } else {
          head = await lockedSpaceHead(tx, space, ctx.viewer.userId);
        }
        const draft = readContent(structuredClone(await storedContent(tx, head)));
        const value = change(draft);
        const id = newId("Revision");
        if (scope.changeRequest) {
          await tx.revision.create({
            data: {
              id,
              spaceId: scope.space.id,
              changeRequestId: scope.changeRequest.id,
              parents: [head],
              type,
              content: draft as any,
              createdById: ctx.viewer.userId,
            },
          });
          const { count } = await tx.changeRequest.updateMany({
            where: { id: scope.changeRequest.id, revisionId: head, status: { in: EDITABLE_STATUSES } },
            data: { revisionId: id },
          });
          if (count === 0) throw new Moved();
          await tx.changeRequestContributor.upsert({
            where: { changeRequestId_userId: { changeRequestId: scope.changeRequest.id, userId: ctx.viewer.userId } },
            create: { changeRequestId: scope.changeRequest.id, userId: ctx.viewer.userId },
            update: { lastEditAt: new Date() },
          });
        } else {
          // The revision and the space's compare-and-set to it in one statement (a round trip less);
          // when the head moved meanwhile, nothing is written and the transaction is rolled back by Moved.
          const [row] = await tx.$queryRaw<{ stored: number }[]>`
            WITH ${movedHead({ spaceId: scope.space.id, head, id, type, draft, userId: ctx.viewer.userId })}
            SELECT count(*)::int AS "stored" FROM "head"`;
          if (row?.stored !== 1) throw new Moved();
          await indexSpaceRevision(tx, scope.space.id, id, draft);
        }
        await record({
          type: "space_content_updated",
          spaceId: scope.space.id,
          revisionId: id,
          ...(scope.changeRequest ? { changeRequestId: scope.changeRequest.id } : {}),
        });
        return { revisionId: id, previousRevisionId: head, content: draft, value };
      }),
    // A change request that was merged or closed meanwhile takes no more edits.
    async () => {
      if (scope.changeRequest)
        requireEditableChangeRequest(await ctx.prisma.changeRequest.findUniqueOrThrow({ where: { id: scope.changeRequest.id } }));
    },
  );
}

/**
 * A new revision and the compare-and-set of its head to it, as two parts of a WITH statement:
 * `"head"` moves the head (the space's, or with `changeRequestId` the change request's, while it
 * is draft or open) when it is still `head` (and `locked` holds, when given), answering the row's
 * id; `"revision"` stores the revision only then.
 */
function movedHead(w: {
  spaceId: string;
  changeRequestId?: string;
  head: string;
  id: string;
  type: RevisionType;
  draft: RevisionContent;
  userId: string;
  locked?: Prisma.Sql;
}): Prisma.Sql {
  const now = new Date().toISOString();
  const locked = w.locked ? Prisma.sql` AND ${w.locked}` : Prisma.empty;
  const head = w.changeRequestId
    ? Prisma.sql`
      UPDATE "public"."ChangeRequest" SET "revisionId" = ${w.id}, "updatedAt" = ${now}::timestamp(3)
        WHERE "public"."ChangeRequest"."id" = ${w.changeRequestId} AND "public"."ChangeRequest"."spaceId" = ${w.spaceId}
          AND "public"."ChangeRequest"."revisionId" = ${w.head} AND "public"."ChangeRequest"."status"::text IN (${Prisma.join(EDITABLE_STATUSES)})${locked}
        RETURNING "public"."ChangeRequest"."id"`
    : Prisma.sql`
      UPDATE "public"."Space" SET "revisionId" = ${w.id}, "updatedAt" = ${now}::timestamp(3)
        WHERE "public"."Space"."id" = ${w.spaceId} AND "public"."Space"."revisionId" = ${w.head}${locked}
        RETURNING "public"."Space"."id"`;
  return Prisma.sql`
    "head" AS (${head}),
    "revision" AS (
      INSERT INTO "public"."Revision" ("id", "spaceId", "changeRequestId", "parents", "type", "content", "createdById", "createdAt")
      SELECT ${w.id}, ${w.spaceId}, ${w.changeRequestId ?? null}, ${[w.head]}::text[], ${w.type}, ${JSON.stringify(w.draft)}::jsonb, ${w.userId}, ${now}::timestamp(3) FROM "head")`;
}

/** The editor of a change request as its contributor, with the time of this edit: a part of the WITH statement of movedHead, written only when the head moved. */
function contributorWrite(changeRequestId: string, userId: string): Prisma.Sql {
  return Prisma.sql`
    "contributor" AS (
      INSERT INTO "public"."ChangeRequestContributor" ("changeRequestId", "userId", "lastEditAt")
      SELECT ${changeRequestId}, ${userId}, ${new Date().toISOString()}::timestamp(3) FROM "head"
      ON CONFLICT ("changeRequestId", "userId") DO UPDATE SET "lastEditAt" = EXCLUDED."lastEditAt")`;
}

// ─── Search index ────────────────────────────────────────────────────────────────────────────

export interface IndexedSection {
  id: string;
  title: string;
  path: string;
  body: string;
}

/**
 * Rebuilds the PageSearch rows of a space from its (new) active revision: one row per document
 * page with its title, path, plain text, and sections split at headings, in one statement
 * (searchWrites).
 */
export async function indexSpaceRevision(
  tx: Prisma.TransactionClient,
  spaceId: string,
  revisionId: string,
  content: RevisionContent,
): Promise<void> {
  await tx.$executeRaw`WITH ${searchWrites(spaceId, revisionId, content)} SELECT 1`;
}

/** The pages of a revision that search indexes: its document pages not marked noIndex, with their paths. */
function indexedPages(content: RevisionContent): PageTreeNode[] {
  return flattenTree(pageTree(content)).filter((p) => p.type === "document" && !p.noIndex);
}

/** Whether a page's search row differs from the one made from `before` (what the row is made from: title, path, description, markdown). */
const rowChanged = (page: PageTreeNode, before: PageTreeNode | undefined) =>
  !before ||
  before.title !== page.title ||
  before.path !== page.path ||
  before.description !== page.description ||
  before.markdown !== page.markdown;

/**
 * The search rows of a revision as two data-modifying parts of a WITH statement (`"gone" AS (…),
 * "indexed" AS (…)`): the rows of pages no longer indexed are deleted, the others upserted,
 * passed as one JSON parameter; each part only when `onlyWhen` holds (an SQL condition), if given.
 * With `base`, the content the space's rows were made from (the head the write moves from, under
 * its compare-and-set), only the pages whose row changes are upserted: an edit of one page of a
 * large space parses one page's markdown, not all of them (a row keeps the revision it was last
 * written from).
 */
function searchWrites(
  spaceId: string,
  revisionId: string,
  content: RevisionContent,
  opts: { onlyWhen?: Prisma.Sql; base?: RevisionContent } = {},
): Prisma.Sql {
  const pages = indexedPages(content);
  const before = opts.base ? new Map(indexedPages(opts.base).map((p) => [p.id, p])) : null;
  const rows = pages
    .filter((page) => !before || rowChanged(page, before.get(page.id)))
    .map((page) => {
      const sections: IndexedSection[] = sectionsOf(page.markdown).map((s) => ({
        id: s.anchor || page.id,
        title: s.anchor ? s.title : page.title,
        path: s.anchor ? `${page.path}#${s.anchor}` : page.path,
        body: s.body,
      }));
      return {
        spaceId,
        pageId: page.id,
        revisionId,
        title: page.title,
        path: page.path,
        sections: sections as any,
        body: [page.description ?? "", plainText(page.markdown)].filter(Boolean).join("\n"),
      };
    });
  const and = opts.onlyWhen ? Prisma.sql`AND ${opts.onlyWhen}` : Prisma.empty;
  const where = opts.onlyWhen ? Prisma.sql`WHERE ${opts.onlyWhen}` : Prisma.empty;
  return Prisma.sql`
    "gone" AS (
      DELETE FROM "PageSearch" WHERE "spaceId" = ${spaceId} AND NOT ("pageId" = ANY(${pages.map((p) => p.id)}::text[])) ${and}),
    "indexed" AS (
      INSERT INTO "PageSearch" ("spaceId", "pageId", "revisionId", "title", "path", "sections", "body")
      SELECT "spaceId", "pageId", "revisionId", "title", "path", "sections", "body"
        FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
          AS r("spaceId" text, "pageId" text, "revisionId" text, "title" text, "path" text, "sections" jsonb, "body" text) ${where}
      ON CONFLICT ("spaceId", "pageId") DO UPDATE SET "revisionId" = EXCLUDED."revisionId", "title" = EXCLUDED."title",
        "path" = EXCLUDED."path", "sections" = EXCLUDED."sections", "body" = EXCLUDED."body")`;
}

/**
 * Gives `targetSpaceId` (a space without content yet, e.g. a duplicate) a copy of the source
 * space's active content as its first revision (type "initial", no parents), indexed for search.
 * For the spaces area's duplicate operation; returns the new revision id, or null when the
 * source has no content.
 */
export async function copySpaceContent(ctx: Context, sourceSpaceId: string, targetSpaceId: string): Promise<string | null> {
  const source = await ctx.prisma.space.findUnique({ where: { id: sourceSpaceId }, select: { revisionId: true } });
  if (!source?.revisionId) return null;
  const revision = await ctx.prisma.revision.findUniqueOrThrow({ where: { id: source.revisionId } });
  const content = readContent(revision.content);
  const id = newId("Revision");
  await ctx.prisma.$transaction(async (tx) => {
    await tx.revision.create({
      data: { id, spaceId: targetSpaceId, parents: [], type: "initial", content: content as any, createdById: ctx.viewer.userId },
    });
    const { count } = await tx.space.updateMany({ where: { id: targetSpaceId, revisionId: null }, data: { revisionId: id } });
    if (count === 0) throw conflict(`Space "${targetSpaceId}" already has content.`);
    await indexSpaceRevision(tx, targetSpaceId, id, content);
    // The copy's content names its files by id: it gets its own copy of their bytes, so that it
    // keeps them when the source space is deleted.
    const fileIds = Object.keys(content.files);
    if (fileIds.length) {
      await tx.$executeRaw`
        INSERT INTO "FileBlob" ("id", "spaceId", "name", "contentType", "size", "width", "height", "data", "createdAt")
        SELECT "id", ${targetSpaceId}, "name", "contentType", "size", "width", "height", "data", "createdAt"
          FROM "FileBlob" WHERE "spaceId" = ${sourceSpaceId} AND "id" IN (${Prisma.join(fileIds)})`;
    }
  }, TX_OPTIONS);
  spaceById(ctx).clear(targetSpaceId);
  return id;
}
