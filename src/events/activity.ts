import type { Prisma, PrismaClient } from "../generated/prisma/client.js";
import type { Context } from "../core/context.js";
import { SCOPE_BY_ACTIVITY } from "./messages.js";
import type { SpaceActivity } from "../core/messaging/topics.js";

export type { SpaceActivity };
import type { AccessCache } from "../core/access/access-cache.js";
import {
  announceEvents,
  prepareEvents,
  writeEvents,
  type EventIntegration,
  type NewIntegrationEvent,
  type PreparedEvents,
} from "./record.js";

type Db = PrismaClient | Prisma.TransactionClient;

/** What to tell listeners once the transaction that recorded an activity has committed. */
export type Announcement = () => void;

/**
 * Records an activity of a space inside the transaction `tx` of the write that caused it: every
 * domain that changes space content, change requests or comments calls this in its transaction,
 * and the integration events of the installations whose scopes cover the activity (see
 * SCOPE_BY_ACTIVITY in ./messages.ts) are stored there too — so an event exists exactly when its
 * change does, and a failure to record rolls the change back. Returns the announcement (live
 * dashboards, `space:activity`, the dispatchers) to make after the commit, never before.
 */
export async function recordSpaceActivity(
  tx: Db,
  ctx: Pick<Context, "pubsub" | "viewer" | "prisma" | "accessCache">,
  activity: SpaceActivity,
  organizationId?: string,
): Promise<Announcement> {
  const { prepared, announce } = await prepareSpaceActivity(tx, ctx, activity, organizationId);
  await writeEvents(tx, prepared);
  return announce;
}

/**
 * An activity's integration events, for a write that stores them in its own statement (with
 * eventWrites, ./record.ts), and the announcement to make once that statement committed.
 */
export async function prepareSpaceActivity(
  db: Db,
  ctx: Pick<Context, "pubsub" | "viewer" | "prisma" | "accessCache">,
  activity: SpaceActivity,
  organizationId?: string,
): Promise<{ prepared: PreparedEvents; announce: Announcement }> {
  const prepared = await prepareActivityEvents(db, ctx.accessCache, activity, organizationId);
  const message = { ...activity, actorId: ctx.viewer.userId, at: new Date().toISOString() };
  const announce = () => {
    ctx.pubsub.publish("space:activity", message);
    announceEvents(ctx, prepared);
  };
  return { prepared, announce };
}

/**
 * Runs `store`, a write of a space's activity in one statement of its own (no transaction), in
 * the space's announcement queue: when it stored the activity (returned its announcement), the
 * announcement is made after those of the activities queued before it. The write must not
 * commit while another write of the space holds its row lock (it takes the lock without
 * waiting): then the order the queue was taken in is the order of the commits.
 */
export async function storeInTurn(spaceId: string, store: () => Promise<Announcement | null>): Promise<boolean> {
  const turn = takeTurn(spaceId);
  try {
    const announce = await store();
    if (!announce) return false;
    await turn.previous;
    announce();
    return true;
  } finally {
    turn.done();
  }
}

/**
 * Runs `write` in one transaction with a `record` function that records space activities in it
 * (recordSpaceActivity); once it committed, announces them. A write that fails records nothing.
 *
 * Announcements of one space leave this process in the order their activities were recorded:
 * content writes record under the space's lock (withSpaceLock), so that is the order they
 * committed in, and a live subscriber of an integration sees a burst of edits in that order even
 * when a write's post-commit work (cache invalidation) is slower than the next write.
 */
export async function inTransactionWithActivity<T>(
  ctx: Pick<Context, "pubsub" | "viewer" | "prisma" | "accessCache">,
  write: (tx: Prisma.TransactionClient, record: (activity: SpaceActivity, organizationId?: string) => Promise<void>) => Promise<T>,
  options?: { maxWait?: number; timeout?: number },
): Promise<T> {
  let announcements: { announce?: Announcement; turn: Turn }[] = [];
  try {
    const result = await ctx.prisma.$transaction(async (tx) => {
      // A transaction the client replays starts over.
      for (const a of announcements) a.turn.done();
      announcements = [];
      return write(tx, async (activity, organizationId) => {
        const entry: (typeof announcements)[number] = { turn: takeTurn(activity.spaceId) };
        announcements.push(entry);
        entry.announce = await recordSpaceActivity(tx, ctx, activity, organizationId);
      });
    }, options);
    for (const { announce, turn } of announcements) {
      await turn.previous;
      try {
        announce?.();
      } finally {
        turn.done();
      }
    }
    return result;
  } finally {
    for (const a of announcements) a.turn.done();
  }
}

/** A place in the queue of a space's announcements: wait for `previous`, announce, then `done`. */
interface Turn {
  previous: Promise<void>;
  done: () => void;
}

const announcing = new Map<string, Promise<void>>();

function takeTurn(spaceId: string): Turn {
  const previous = announcing.get(spaceId) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  announcing.set(spaceId, mine);
  void mine.then(() => {
    if (announcing.get(spaceId) === mine) announcing.delete(spaceId);
  });
  return { previous, done };
}

/** Payload fields of an activity's event: the activity without its type; a change request's new status is `changeRequestStatus`. */
export function activityPayload(activity: SpaceActivity): Record<string, unknown> {
  const { type: _type, ...rest } = activity as SpaceActivity & { status?: string };
  if ("status" in rest) {
    const { status, ...others } = rest;
    return { ...others, changeRequestStatus: status };
  }
  return rest;
}

/** An active installation as recording activity needs it (kept in the access cache per organization). */
interface ActiveInstallation {
  id: string;
  organizationId: string;
  spaceSelection: string;
  integration: EventIntegration & { scopes: string[] };
  /** The spaces installed (active), when spaceSelection is not `all`. */
  spaceIds: string[];
}

/** The active installations of an organization, read with `db` (the write's transaction). */
async function readActiveInstallations(db: Db, organizationId: string): Promise<ActiveInstallation[]> {
  const rows = await db.integrationInstallation.findMany({
    where: { organizationId, status: "active" },
    orderBy: { id: "asc" },
    select: {
      id: true,
      organizationId: true,
      spaceSelection: true,
      integration: { select: { id: true, ownerId: true, devTunnelUrl: true, devAll: true, scopes: true } },
      spaces: { where: { status: "active" }, select: { spaceId: true } },
    },
  });
  return rows.map(({ spaces, ...inst }) => ({ ...inst, spaceIds: inst.spaceSelection === "all" ? [] : spaces.map((s) => s.spaceId) }));
}

/**
 * The events of an activity: one per active installation of the space's organization whose
 * integration lists the activity's scope and that covers the space (space_selection `all`, or
 * the space installed). The space's organization and the organization's installations come from
 * the access cache (core/access/access-cache.ts), which drops them once a write that may change them
 * has committed (here and, through the pub/sub, in the other gateway processes); on a miss they
 * are read with `db` (the write's transaction), or given as `known` by a caller that holds the
 * space's row (read under its lock in the same transaction). So in the steady state recording
 * costs no read.
 */
export async function prepareActivityEvents(db: Db, cache: AccessCache, activity: SpaceActivity, known?: string): Promise<PreparedEvents> {
  const scope = SCOPE_BY_ACTIVITY[activity.type];
  const organizationId = await cache.spaceOrganization(
    activity.spaceId,
    async () =>
      known ?? (await db.space.findUnique({ where: { id: activity.spaceId }, select: { organizationId: true } }))?.organizationId ?? null,
  );
  if (!organizationId) return prepareEvents([]);
  const installations = await cache.installationsOf(organizationId, () => readActiveInstallations(db, organizationId));
  const fields = activityPayload(activity);
  const events: NewIntegrationEvent[] = installations
    .filter(
      (inst) => inst.integration.scopes.includes(scope) && (inst.spaceSelection === "all" || inst.spaceIds.includes(activity.spaceId)),
    )
    .map((inst) => ({
      integration: {
        id: inst.integration.id,
        ownerId: inst.integration.ownerId,
        devTunnelUrl: inst.integration.devTunnelUrl,
        devAll: inst.integration.devAll,
      },
      installation: { id: inst.id, organizationId: inst.organizationId },
      type: activity.type,
      fields,
    }));
  return prepareEvents(events);
}
