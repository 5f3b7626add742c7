import type { ChangeRequest, Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { badInput, conflict, forbidden, notFound } from "../../core/errors.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { checkLength } from "../../core/validate.js";
import { newId } from "../../core/ids.js";
import { publishSpaceUpdated } from "../spaces/spaces.service.js";
import { requireNotDeleted, requireSpace, requireSpaceAction, spaceById } from "../spaces/spaces.access.js";
import { entry, mergeContents, readContent, type MergeConflict } from "../content/model.js";
import {
  CHANGE_REQUEST_STATUSES,
  EDITABLE_STATUSES,
  Moved,
  findChangeRequest,
  indexSpaceRevision,
  lockedSpaceHead,
  readScope,
  retryWhenMoved,
  scopeRevision,
  withSpaceLock,
  type ChangeRequestStatus,
} from "../content/revisions.js";

/**
 * Change requests: proposed edits to a space, made on their own line of revisions and merged
 * into the space's content later.
 *
 * - Created as `draft` from the space's active revision (`revisionInitial`, also its first head).
 * - PATCH `status`: draft ↔ open, draft/open → archived, archived → draft/open (reopened);
 *   `merged` only through POST …/merge, and a merged change request no longer changes.
 * - Its base is the space revision it last caught up with: `revisionMergedAncestor` (set by
 *   POST …/update) or else `revisionInitial`. `outdated` is true while the space's active revision
 *   differs from that base (draft and open change requests only).
 * - Merge and update are three-way merges (content/model.ts mergeContents) from that base;
 *   conflicts answer 409 naming the pages and lines, and nothing is written.
 */

export const SUBJECT_MAX = 250;

// ─── Loaders ─────────────────────────────────────────────────────────────────────────────────

/** True when the space's content moved past the change request's base (draft and open only). */
export async function isOutdated(ctx: Context, cr: ChangeRequest): Promise<boolean> {
  if (!EDITABLE_STATUSES.includes(cr.status as ChangeRequestStatus)) return false;
  const space = await spaceById(ctx).load(cr.spaceId);
  if (!space?.revisionId) return false;
  return space.revisionId !== (cr.revisionMergedAncestor ?? cr.revisionInitial);
}

export function changeRequestUrls(ctx: Context, cr: Pick<ChangeRequest, "id" | "spaceId" | "number">) {
  return {
    app: ctx.urls.app(`/s/${cr.spaceId}/~/changes/${cr.number}`),
    location: ctx.urls.api(`/spaces/${cr.spaceId}/change-requests/${cr.id}`),
  };
}

// ─── Reads ───────────────────────────────────────────────────────────────────────────────────

export interface ListFilter extends PageArgs {
  status?: ChangeRequestStatus | null;
  creator?: string | null;
  contributor?: string | null;
}

/** Change requests of a space, newest first: `status` (default open), `creator`, `contributor`. */
export async function listChangeRequests(ctx: Context, spaceId: string, filter: ListFilter) {
  await requireSpace(ctx, spaceId);
  const status = filter.status ?? "open";
  const where: P.ChangeRequestWhereInput = { spaceId, status };
  if (filter.creator) where.createdById = filter.creator;
  if (filter.contributor) {
    where.OR = [{ createdById: filter.contributor }, { contributors: { some: { userId: filter.contributor } } }];
  }
  return paginate({
    args: filter,
    where,
    order: [["number", "desc"]],
    from: ctx.prisma.changeRequest,
  });
}

export async function getChangeRequest(ctx: Context, spaceId: string, changeRequestId: string) {
  await requireSpace(ctx, spaceId);
  return findChangeRequest(ctx, spaceId, changeRequestId);
}

// ─── Writes ──────────────────────────────────────────────────────────────────────────────────

function checkSubject(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const subject = value.trim();
  checkLength("subject", subject, 0, SUBJECT_MAX);
  return subject || null;
}

export async function createChangeRequest(ctx: Context, spaceId: string, input: { subject?: string | null; agentTaskId?: string | null }) {
  const { space, role } = await requireSpace(ctx, spaceId);
  requireSpaceAction(space, role, "proposeChanges", "create change requests");
  requireNotDeleted(space);
  const subject = checkSubject(input.subject) ?? null;
  if (input.agentTaskId !== undefined && input.agentTaskId !== null) checkLength("agentTaskId", input.agentTaskId, 1, 200);
  // Numbers are taken under the space's lock: change requests created at once get 1, 2, 3 … in turn.
  const cr = await withSpaceLock(ctx, spaceId, async (tx, locked, record) => {
    const base = await lockedSpaceHead(tx, locked, ctx.viewer.userId);
    const last = await tx.changeRequest.aggregate({ where: { spaceId }, _max: { number: true } });
    const created = await tx.changeRequest.create({
      data: {
        id: newId("ChangeRequest"),
        spaceId,
        number: (last._max.number ?? 0) + 1,
        status: "draft",
        subject,
        agentTaskId: input.agentTaskId ?? null,
        createdById: ctx.viewer.userId,
        revisionId: base,
        revisionInitial: base,
      },
    });
    // Its author is its first contributor (a write of its own: a nested create would read the change request back).
    await tx.changeRequestContributor.create({ data: { changeRequestId: created.id, userId: ctx.viewer.userId } });
    await record({ type: "change_request_opened", spaceId, changeRequestId: created.id });
    return created;
  });
  publishSpaceUpdated(ctx, spaceId);
  return cr;
}

const TRANSITIONS: Record<ChangeRequestStatus, ChangeRequestStatus[]> = {
  draft: ["open", "archived"],
  open: ["draft", "archived"],
  archived: ["draft", "open"],
  merged: [],
};

export async function updateChangeRequest(
  ctx: Context,
  spaceId: string,
  changeRequestId: string,
  patch: { subject?: string | null; status?: ChangeRequestStatus | null },
) {
  const { space, role } = await requireSpace(ctx, spaceId);
  const cr = await findChangeRequest(ctx, spaceId, changeRequestId);
  if (patch.subject !== undefined && cr.createdById !== ctx.viewer.userId)
    requireSpaceAction(space, role, "proposeChanges", "change the subject of change requests");
  if (patch.status !== undefined) requireSpaceAction(space, role, "proposeChanges", "change the status of change requests");
  requireNotDeleted(space);
  const subject = patch.subject === undefined ? undefined : checkSubject(patch.subject);
  if (patch.status !== undefined) {
    if (patch.status === null) throw badInput("status cannot be null: use draft, open or archived.");
    if (!CHANGE_REQUEST_STATUSES.includes(patch.status))
      throw badInput(`status must be one of draft, open, archived (got "${patch.status}").`);
    if (patch.status === "merged" && cr.status !== "merged")
      throw badInput("status cannot be set to merged: merge the change request with POST …/merge.");
  }
  // Decided on the change request as it is under the space's lock: a merge or status change sent
  // at the same time lands first or after this one, never in between; the same PATCH twice is fine.
  const outcome = await withSpaceLock(ctx, spaceId, async (tx, _space, record) => {
    const current = await tx.changeRequest.findUniqueOrThrow({ where: { id: cr.id } });
    const data: P.ChangeRequestUpdateInput = {};
    if (subject !== undefined) data.subject = subject;
    let statusChanged = false;
    if (patch.status !== undefined && patch.status !== null && patch.status !== current.status) {
      const from = current.status as ChangeRequestStatus;
      if (patch.status === "merged") throw badInput("status cannot be set to merged: merge the change request with POST …/merge.");
      if (!TRANSITIONS[from].includes(patch.status))
        throw conflict(`Change request #${current.number} is ${from}: its status can no longer change.`);
      data.status = patch.status;
      statusChanged = true;
    }
    if (current.status === "merged" && subject !== undefined)
      throw conflict(`Change request #${current.number} is merged: it can no longer change.`);
    if (!Object.keys(data).length) return { updated: current, statusChanged };
    const updated = await tx.changeRequest.update({ where: { id: cr.id }, data });
    if (statusChanged) await record({ type: "change_request_status_updated", spaceId, changeRequestId: cr.id, status: updated.status });
    return { updated, statusChanged };
  });
  if (outcome.statusChanged) publishSpaceUpdated(ctx, spaceId);
  return outcome.updated;
}

// ─── Merge and update ────────────────────────────────────────────────────────────────────────

function quote(lines: string[]): string {
  const text = lines.join("\n").trim();
  if (!text) return "(nothing)";
  return `"${text.length > 120 ? `${text.slice(0, 117)}...` : text}"`;
}

const CONFLICT_KINDS: Record<MergeConflict["kind"], string> = {
  page: "page",
  file: "file",
  variable: "variable",
  reusableContent: "reusable content",
};

/** A sentence per conflict, naming the page (title) and, for text, the lines on each side. */
export function describeConflicts(conflicts: MergeConflict[], labels: { ours: string; theirs: string }): string {
  return conflicts
    .map((c) => {
      const what = `${CONFLICT_KINDS[c.kind]} "${c.title ?? c.id}"`;
      if (c.field === "deleted") return `${what} was deleted on one side and changed on the other`;
      if (c.field === "markdown" && c.hunks?.length) {
        const hunks = c.hunks.map((h) => `line ${h.line}: ${labels.ours} has ${quote(h.ours)}, ${labels.theirs} has ${quote(h.theirs)}`);
        return `${what}: the same lines changed on both sides (${hunks.join("; ")})`;
      }
      return `${what}: ${c.field === "parentId" ? "its place in the tree" : c.field} changed on both sides`;
    })
    .join("; ");
}

async function contentsOf(tx: P.TransactionClient, ids: string[]) {
  const rows = await tx.revision.findMany({ where: { id: { in: ids } } });
  const byId = new Map(rows.map((r) => [r.id, readContent(r.content)]));
  return ids.map((id) => {
    const content = byId.get(id);
    if (!content) throw notFound(`Revision "${id}"`);
    return content;
  });
}

export interface MergeOutcome {
  revision: string;
  result: "merge" | "update";
}

/**
 * Merges a change request into the space: three-way merge of the space's active revision and
 * the change request's head from its base; the result becomes the space's revision (parents:
 * the space's revision and the change request's head) and the change request is merged.
 */
export async function mergeChangeRequest(ctx: Context, spaceId: string, changeRequestId: string): Promise<MergeOutcome> {
  const { space, role } = await requireSpace(ctx, spaceId);
  requireSpaceAction(space, role, "merge", "merge change requests");
  requireNotDeleted(space);
  const { id: changeRequestRowId } = await findChangeRequest(ctx, spaceId, changeRequestId);
  return retryWhenMoved("The space or the change request changed too often during the merge; retry.", async () => {
    // Under the space's lock: merges, content edits and updates of this space land one after the
    // other, each on the result of the one before; only a true conflict of content answers 409.
    const { id } = await withSpaceLock(ctx, spaceId, async (tx, fresh, record) => {
      const cr = await tx.changeRequest.findUniqueOrThrow({ where: { id: changeRequestRowId } });
      if (!EDITABLE_STATUSES.includes(cr.status as ChangeRequestStatus)) {
        throw conflict(`Change request #${cr.number} is ${cr.status}: only draft and open change requests can be merged.`);
      }
      if (fresh.editMode === "locked") throw forbidden(`Space "${spaceId}" is locked (editMode locked): change requests cannot be merged.`);
      const mainId = await lockedSpaceHead(tx, fresh, ctx.viewer.userId);
      const baseId = cr.revisionMergedAncestor ?? cr.revisionInitial;
      const [base, main, head] = await contentsOf(tx, [baseId, mainId, cr.revisionId]);
      const merged = mergeContents(base!, main!, head!);
      if (merged.conflicts.length) {
        throw conflict(
          `Change request #${cr.number} cannot be merged: it conflicts with the space's content — ` +
            `${describeConflicts(merged.conflicts, { ours: "the space", theirs: "the change request" })}. ` +
            `Bring the space's changes into it (POST /v1/spaces/${spaceId}/change-requests/${cr.number}/update), resolve the conflicts in the change request, then merge again.`,
        );
      }
      const id = newId("Revision");
      await tx.revision.create({
        data: {
          id,
          spaceId,
          parents: [mainId, cr.revisionId],
          type: "merge",
          message: `Merge change request #${cr.number}`,
          content: merged.content as any,
          createdById: ctx.viewer.userId,
        },
      });
      const movedSpace = await tx.space.updateMany({ where: { id: spaceId, revisionId: mainId }, data: { revisionId: id } });
      if (movedSpace.count === 0) throw new Moved();
      const movedCr = await tx.changeRequest.updateMany({
        where: { id: cr.id, revisionId: cr.revisionId, status: { in: EDITABLE_STATUSES } },
        data: { status: "merged", revisionMerged: id, mergedAt: new Date(), mergedById: ctx.viewer.userId },
      });
      if (movedCr.count === 0) throw new Moved();
      await indexSpaceRevision(tx, spaceId, id, merged.content);
      await record({ type: "change_request_merged", spaceId, changeRequestId: cr.id, revisionId: id });
      await record({ type: "space_content_updated", spaceId, revisionId: id });
      return { id, cr };
    });
    publishSpaceUpdated(ctx, spaceId);
    return { revision: id, result: "merge" as const };
  });
}

/**
 * Brings the space's changes into a change request: three-way merge of its head and the space's
 * active revision from its base; the result becomes its head (parents: its head and the space's
 * revision) and the space's revision its new base (`revisionMergedAncestor`). Already up to date:
 * nothing is written and its head is returned.
 */
export async function updateChangeRequestFromMain(ctx: Context, spaceId: string, changeRequestId: string): Promise<MergeOutcome> {
  const { space, role } = await requireSpace(ctx, spaceId);
  requireSpaceAction(space, role, "proposeChanges", "update change requests");
  requireNotDeleted(space);
  const { id: changeRequestRowId } = await findChangeRequest(ctx, spaceId, changeRequestId);
  return retryWhenMoved("The change request changed too often during the update; retry.", async () => {
    const outcome = await withSpaceLock(ctx, spaceId, async (tx, fresh, record) => {
      const cr = await tx.changeRequest.findUniqueOrThrow({ where: { id: changeRequestRowId } });
      if (cr.status === "merged") throw conflict(`Change request #${cr.number} is merged: it can no longer be updated.`);
      const mainId = await lockedSpaceHead(tx, fresh, ctx.viewer.userId);
      const baseId = cr.revisionMergedAncestor ?? cr.revisionInitial;
      if (mainId === baseId) return { id: cr.revisionId, cr, written: false };
      const [base, head, main] = await contentsOf(tx, [baseId, cr.revisionId, mainId]);
      const merged = mergeContents(base!, head!, main!);
      if (merged.conflicts.length) {
        throw conflict(
          `Change request #${cr.number} cannot be updated: the space's changes conflict with it — ` +
            `${describeConflicts(merged.conflicts, { ours: "the change request", theirs: "the space" })}. ` +
            `Edit the change request so that these lines match the space's content (or no longer overlap), then update again.`,
        );
      }
      const id = newId("Revision");
      await tx.revision.create({
        data: {
          id,
          spaceId,
          changeRequestId: cr.id,
          parents: [cr.revisionId, mainId],
          type: "update",
          message: `Update change request #${cr.number} from the space`,
          content: merged.content as any,
          createdById: ctx.viewer.userId,
        },
      });
      const moved = await tx.changeRequest.updateMany({
        where: { id: cr.id, revisionId: cr.revisionId, status: cr.status },
        data: { revisionId: id, revisionMergedAncestor: mainId },
      });
      if (moved.count === 0) throw new Moved();
      await record({ type: "space_content_updated", spaceId, revisionId: id, changeRequestId: cr.id });
      return { id, cr, written: true };
    });
    return { revision: outcome.id, result: "update" as const };
  });
}

// ─── PDF ─────────────────────────────────────────────────────────────────────────────────────

/** Where the change request's content is served as a PDF (`pageId`: only that page). */
export async function changeRequestPdf(ctx: Context, spaceId: string, changeRequestId: string, pageId?: string | null) {
  const scope = await readScope(ctx, spaceId, changeRequestId);
  if (pageId) {
    const { content } = await scopeRevision(ctx, scope);
    if (!entry(content.pages, pageId)) throw notFound(`Page "${pageId}"`);
  }
  const cr = scope.changeRequest!;
  const url = ctx.urls.api(`/spaces/${spaceId}/change-requests/${cr.id}/pdf/download`);
  return { url: pageId ? `${url}?pageId=${encodeURIComponent(pageId)}` : url };
}
