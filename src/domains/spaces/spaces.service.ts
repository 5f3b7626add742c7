import { Prisma, type Prisma as P, type PrismaClient, type Space } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership, requireOrgRole } from "../../core/access/access.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput } from "../../core/errors.js";
import { checkLength, checkOneOf, checkPattern, optionalId } from "../../core/validate.js";
import { ROLES, type Role } from "../../core/access/roles.js";
import { copySpaceContent } from "../content/revisions.js";
import { emptyContent } from "../content/model.js";
import { newId } from "../../core/ids.js";
import {
  isExpired,
  requireNotDeleted,
  requireSpace,
  requireSpaceAction,
  requireTargetOrganizationAdmin,
  spaceById,
  visibleSpaceWhereIn,
} from "./spaces.access.js";
import { requireTargetCollection } from "../collections/collections.access.js";

// ─── Values and limits ─────────────────────────────────────────────────────────────────────────

/** Space visibility as the spec writes it (the Prisma enum keys use `_` where these use `-`). */
export const SPACE_VISIBILITIES = ["public", "unlisted", "share-link", "visitor-auth", "in-collection", "private"] as const;
export type SpaceVisibility = (typeof SPACE_VISIBILITIES)[number];
export const EDIT_MODES = ["live", "locked"] as const;
export type EditMode = (typeof EDIT_MODES)[number];

export const SPACE_TITLE_MAX = 100;
export const SPACE_DEFAULT_TITLE = "Untitled";
export const EMOJI_MAX = 32;
const COPY_SUFFIX = " (copy)";

/** The documented visibility value of a stored one (`share_link` → `share-link`). */
export function visibilityValue(stored: string): SpaceVisibility {
  return stored.replace(/_/g, "-") as SpaceVisibility;
}

/** Visibilities under which anyone can open the published content without signing in. */
const OPEN_VISIBILITIES = new Set<SpaceVisibility>(["public", "unlisted"]);

/** A space with, when it was read with one, the `shareKey` that resolves share-link URLs. */
export type SpaceView = Space & { shareKey?: string };

/**
 * The `published`, `public` and `icon` links of a space. `published` exists for spaces published
 * to visitors (public, unlisted, visitor-auth, and share-link when read with a `shareKey`);
 * `public` only for those anyone can open (public, unlisted); `icon` only when there is an emoji.
 */
export function spaceUrls(ctx: Context, space: SpaceView) {
  const visibility = visibilityValue(space.visibility);
  const published = ctx.urls.app(`/published/${space.id}`);
  const urls: { location: string; app: string; published?: string; public?: string; icon?: string } = ctx.urls.space(space.id);
  if (OPEN_VISIBILITIES.has(visibility) || visibility === "visitor-auth") urls.published = published;
  if (visibility === "share-link" && space.shareKey) urls.published = `${published}?share=${encodeURIComponent(space.shareKey)}`;
  if (OPEN_VISIBILITIES.has(visibility)) urls.public = published;
  if (space.emoji) urls.icon = ctx.urls.app(`/emoji/${emojiCodepoints(space.emoji)}.svg`);
  return urls;
}

const HEX_CODEPOINTS = /^(?:u\+)?[0-9a-f]{2,6}(?:[-_ ](?:u\+)?[0-9a-f]{2,6})*$/i;

/** `1f4da` for a hex emoji, the codepoints of a character emoji (without variation selectors). */
export function emojiCodepoints(emoji: string): string {
  if (HEX_CODEPOINTS.test(emoji)) return emoji.toLowerCase();
  return [...emoji]
    .map((c) => c.codePointAt(0)!.toString(16))
    .filter((hex) => hex !== "fe0f")
    .join("-");
}

/**
 * Checks an `emoji`: one Unicode character (a single grapheme, such as 📚 or 👩‍💻) or hex
 * codepoints (`1f4da`, `U+1F4DA`, `1f469-200d-1f4bb`), at most 32 characters. Hex is stored
 * lowercase without `U+`; an empty string or null means no emoji.
 */
export function checkEmoji(value: string | null | undefined): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const emoji = value.trim();
  if (!emoji) return null;
  checkLength("emoji", emoji, 1, EMOJI_MAX);
  if (HEX_CODEPOINTS.test(emoji)) {
    const points = emoji.toLowerCase().replace(/u\+/g, "").split(/[-_ ]/);
    if (points.some((p) => parseInt(p, 16) > 0x10ffff)) throw badInput(`emoji: "${value}" is not a valid Unicode codepoint.`);
    return points.join("-");
  }
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(emoji)];
  if (graphemes.length !== 1 || /[\p{Cc}\s]/u.test(emoji)) {
    throw badInput(`emoji must be a single Unicode character (such as 📚) or a hex codepoint (such as 1f4da); got "${value}".`);
  }
  return emoji;
}

/** Trims a space title; null is refused, blank is refused, at most SPACE_TITLE_MAX characters. */
export function checkSpaceTitle(value: string | null | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === null) throw badInput("title cannot be null.");
  const title = value.trim();
  if (!title) throw badInput("title cannot be blank.");
  checkLength("title", title, 1, SPACE_TITLE_MAX);
  return title;
}

/** Tells subscribers of `spaceUpdated` that spaces changed. */
export function publishSpaceUpdated(ctx: Context, ...spaceIds: string[]): void {
  for (const spaceId of new Set(spaceIds)) ctx.pubsub.publish("space:updated", spaceId, { spaceId });
}

// ─── Ordering: collections and spaces under one parent share one order ───────────────────────

export interface PositionTarget {
  type: "space" | "collection";
  space?: string | null;
  collection?: string | null;
}
export interface PositionInput {
  before?: PositionTarget | null;
  after?: PositionTarget | null;
}

interface Sibling {
  kind: "space" | "collection";
  id: string;
  position: number;
}

type Db = PrismaClient | P.TransactionClient;

/** Collections and spaces (not deleted) directly under `parentId` (null: the top level), in order. */
async function siblingsOf(db: Db, organizationId: string, parentId: string | null, excludeId: string | null): Promise<Sibling[]> {
  const [collections, spaces] = await Promise.all([
    db.collection.findMany({ where: { organizationId, parentId }, select: { id: true, position: true } }),
    db.space.findMany({ where: { organizationId, parentId, deletedAt: null }, select: { id: true, position: true } }),
  ]);
  return [...collections.map((c) => ({ kind: "collection" as const, ...c })), ...spaces.map((s) => ({ kind: "space" as const, ...s }))]
    .filter((s) => s.id !== excludeId)
    .sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Position after every item under `parentId`: where new and moved-in items go by default. */
export async function endPosition(db: Db, organizationId: string, parentId: string | null): Promise<number> {
  // The last position of the collections and of the spaces, in one statement (one round trip).
  const under = parentId === null ? Prisma.sql`"parentId" IS NULL` : Prisma.sql`"parentId" = ${parentId}`;
  const [row] = await db.$queryRaw<{ max: number }[]>`
    SELECT GREATEST(
      COALESCE((SELECT MAX("position") FROM "public"."Collection" WHERE "organizationId" = ${organizationId} AND ${under}), 0),
      COALESCE((SELECT MAX("position") FROM "public"."Space" WHERE "organizationId" = ${organizationId} AND ${under}), 0))::float8 AS "max"`;
  return Math.floor(row?.max ?? 0) + 1;
}

function findSibling(siblings: Sibling[], target: PositionTarget, field: string, movingId: string): number {
  const id = target.type === "space" ? target.space : target.collection;
  if (!id) throw badInput(`${field}.${target.type} is required when ${field}.type is "${target.type}".`);
  if (id === movingId) throw badInput(`${field}: an item cannot be placed next to itself.`);
  const index = siblings.findIndex((s) => s.id === id && s.kind === target.type);
  if (index < 0) throw badInput(`${field}: ${target.type} "${id}" is not an item of the target parent.`);
  return index;
}

/** Renumbers the siblings 1024 apart (when repeated moves leave no room between two of them). */
async function spreadPositions(db: Db, siblings: Sibling[]): Promise<void> {
  await Promise.all(
    siblings.map((s, i) => {
      s.position = (i + 1) * 1024;
      return s.kind === "space"
        ? db.space.update({ where: { id: s.id }, data: { position: s.position } })
        : db.collection.update({ where: { id: s.id }, data: { position: s.position } });
    }),
  );
}

/**
 * The `position` value that puts `movingId` where `position` says under `parentId`:
 * `after: X` places it right after X, `before: Y` right before Y; with both, X must come before
 * Y and it goes right after X. Without either it goes last. Neighbours are looked up among the
 * target parent's items (400 naming `position.before` / `position.after` when not there).
 */
export async function positionFor(
  db: Db,
  opts: { organizationId: string; parentId: string | null; movingId: string; position?: PositionInput | null },
): Promise<number> {
  const { before, after } = opts.position ?? {};
  if (!before && !after) return endPosition(db, opts.organizationId, opts.parentId);
  const siblings = await siblingsOf(db, opts.organizationId, opts.parentId, opts.movingId);
  const afterIndex = after ? findSibling(siblings, after, "position.after", opts.movingId) : -1;
  const beforeIndex = before ? findSibling(siblings, before, "position.before", opts.movingId) : -1;
  if (after && before && afterIndex >= beforeIndex) {
    throw badInput("position: the `after` item must come before the `before` item.");
  }
  const lower = after ? afterIndex : beforeIndex - 1;
  const between = () => {
    const low = lower >= 0 ? siblings[lower]!.position : null;
    const high = lower + 1 < siblings.length ? siblings[lower + 1]!.position : null;
    if (low === null) return high! - 1;
    if (high === null) return low + 1;
    const mid = (low + high) / 2;
    return low < mid && mid < high ? mid : null;
  };
  let value = between();
  if (value === null) {
    await spreadPositions(db, siblings);
    value = between()!;
  }
  return value;
}

// ─── Reads ─────────────────────────────────────────────────────────────────────────────────────

export async function getSpace(ctx: Context, spaceId: string, shareKey?: string | null): Promise<SpaceView> {
  if (shareKey !== undefined && shareKey !== null) {
    checkLength("shareKey", shareKey, 1, 256);
    checkPattern("shareKey", shareKey, /^[A-Za-z0-9_-]+$/, "letters, digits, - and _");
  }
  const { space } = await requireSpace(ctx, spaceId);
  return shareKey ? { ...space, shareKey } : space;
}

/** The organization's spaces the caller can see, not deleted, oldest first. */
export async function listOrganizationSpaces(ctx: Context, organizationId: string, args: PageArgs) {
  const member = await requireMembership(ctx, organizationId);
  return paginate({
    args,
    where: visibleSpaceWhereIn(ctx, organizationId, member),
    order: [
      ["createdAt", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.space,
  });
}

// ─── Writes ────────────────────────────────────────────────────────────────────────────────────

export interface SpaceInput {
  title?: string | null;
  emoji?: string | null;
  parent?: string | null;
  editMode?: EditMode | null;
}

export async function createSpace(ctx: Context, organizationId: string, input: SpaceInput) {
  await requireOrgRole(ctx, organizationId, "create", "create spaces");
  const title = input.title === undefined || input.title === null ? SPACE_DEFAULT_TITLE : checkSpaceTitle(input.title)!;
  const emoji = checkEmoji(input.emoji) ?? null;
  const editMode = checkOneOf("editMode", input.editMode, EDIT_MODES) ?? "live";
  const parentId = optionalId("parent", input.parent) ?? null;
  if (parentId) await requireTargetCollection(ctx, organizationId, parentId, "parent");
  // A space starts with its initial, empty revision, created with it.
  const id = newId("Space");
  const revisionId = newId("Revision");
  const [space] = await ctx.prisma.$transaction([
    ctx.prisma.space.create({
      data: {
        id,
        organizationId,
        parentId,
        title,
        emoji,
        editMode,
        visibility: parentId ? "in_collection" : "private",
        position: await endPosition(ctx.prisma, organizationId, parentId),
        revisionId,
      },
    }),
    ctx.prisma.revision.create({
      data: {
        id: revisionId,
        spaceId: id,
        parents: [],
        type: "initial",
        content: emptyContent() as object,
        createdById: ctx.viewer.userId,
      },
    }),
  ]);
  return space;
}

export interface SpacePatch {
  title?: string | null;
  emoji?: string | null;
  editMode?: EditMode | null;
  defaultLevel?: Role | "inherit" | null;
}

export async function updateSpace(ctx: Context, spaceId: string, patch: SpacePatch) {
  const { space, role } = await requireSpace(ctx, spaceId);
  if (patch.editMode !== undefined) requireSpaceAction(space, role, "administer", "change its editMode");
  if (patch.defaultLevel !== undefined) requireSpaceAction(space, role, "administer", "change its defaultLevel");
  // Title and emoji are edits: refused while the space is locked, to admins too (unlock first,
  // in the same request: a PATCH setting editMode live is checked against the new mode).
  const mode = (patch.editMode ?? space.editMode) as EditMode;
  if (patch.title !== undefined) requireSpaceAction({ ...space, editMode: mode }, role, "edit", "change its title");
  if (patch.emoji !== undefined) requireSpaceAction({ ...space, editMode: mode }, role, "edit", "change its emoji");
  requireNotDeleted(space);
  const data: P.SpaceUpdateInput = {};
  if (patch.title !== undefined) data.title = checkSpaceTitle(patch.title);
  if (patch.emoji !== undefined) data.emoji = checkEmoji(patch.emoji);
  if (patch.editMode !== undefined) {
    if (patch.editMode === null) throw badInput("editMode cannot be null: use live or locked.");
    data.editMode = checkOneOf("editMode", patch.editMode, EDIT_MODES);
  }
  if (patch.defaultLevel !== undefined) {
    data.defaultLevel = patch.defaultLevel === "inherit" ? null : (checkOneOf("defaultLevel", patch.defaultLevel, ROLES) ?? null);
  }
  const updated = await ctx.prisma.space.update({ where: { id: spaceId }, data });
  spaceById(ctx).clear(spaceId).prime(spaceId, updated);
  publishSpaceUpdated(ctx, spaceId);
  return updated;
}

/** Soft delete: the space stays restorable for `spaceRetentionDays`. True also when there was nothing to delete. */
export async function deleteSpace(ctx: Context, spaceId: string): Promise<boolean> {
  const space = await spaceById(ctx).load(spaceId);
  if (!space || isExpired(ctx, space)) return true; // did not exist (any more)
  const { role } = await requireSpace(ctx, spaceId);
  requireSpaceAction(space, role, "administer", "delete it");
  if (space.deletedAt) return true; // already deleted: the retention period keeps its first start
  const updated = await ctx.prisma.space.update({ where: { id: spaceId }, data: { deletedAt: new Date() } });
  spaceById(ctx).clear(spaceId).prime(spaceId, updated);
  publishSpaceUpdated(ctx, spaceId);
  return true;
}

export async function restoreSpace(ctx: Context, spaceId: string) {
  const { space, role } = await requireSpace(ctx, spaceId); // 404 once past the retention period
  requireSpaceAction(space, role, "administer", "restore it");
  if (!space.deletedAt) return space; // nothing to restore: restoring twice is harmless
  const updated = await ctx.prisma.space.update({ where: { id: spaceId }, data: { deletedAt: null } });
  spaceById(ctx).clear(spaceId).prime(spaceId, updated);
  publishSpaceUpdated(ctx, spaceId);
  return updated;
}

export async function duplicateSpace(ctx: Context, spaceId: string) {
  const { space } = await requireSpace(ctx, spaceId);
  await requireOrgRole(ctx, space.organizationId, "create", "duplicate spaces");
  requireNotDeleted(space);
  if (space.parentId) await requireTargetCollection(ctx, space.organizationId, space.parentId, "parent");
  const title = [...space.title].slice(0, SPACE_TITLE_MAX - COPY_SUFFIX.length).join("") + COPY_SUFFIX;
  const position = await positionFor(ctx.prisma, {
    organizationId: space.organizationId,
    parentId: space.parentId,
    movingId: "",
    position: { after: { type: "space", space: space.id } },
  });
  const grants = await ctx.prisma.spaceAccess.findMany({ where: { spaceId } });
  const id = newId("Space");
  const [copy] = await ctx.prisma.$transaction([
    ctx.prisma.space.create({
      data: {
        id,
        organizationId: space.organizationId,
        parentId: space.parentId,
        title,
        emoji: space.emoji,
        visibility: space.visibility,
        editMode: space.editMode,
        defaultLevel: space.defaultLevel,
        position,
      },
    }),
    ctx.prisma.spaceAccess.createMany({
      data: grants.map((g) => ({ id: newId("SpaceAccess"), spaceId: id, userId: g.userId, teamId: g.teamId, role: g.role })),
    }),
  ]);
  const revisionId = await copySpaceContent(ctx, space.id, id);
  return revisionId ? { ...copy, revisionId } : copy;
}

export async function moveSpace(ctx: Context, spaceId: string, args: { parent?: string | null; position?: PositionInput | null }) {
  const { space, role } = await requireSpace(ctx, spaceId);
  requireSpaceAction(space, role, "administer", "move it");
  requireNotDeleted(space);
  const parentId = args.parent === undefined ? space.parentId : optionalId("parent", args.parent);
  if (parentId && parentId !== space.parentId) await requireTargetCollection(ctx, space.organizationId, parentId, "parent");
  const position = await positionFor(ctx.prisma, {
    organizationId: space.organizationId,
    parentId,
    movingId: spaceId,
    position: args.position,
  });
  const updated = await ctx.prisma.space.update({
    where: { id: spaceId },
    data: {
      parentId,
      position,
      // "in-collection" only exists for spaces in a collection.
      ...(!parentId && space.visibility === "in_collection" ? { visibility: "private" as const } : {}),
    },
  });
  spaceById(ctx).clear(spaceId).prime(spaceId, updated);
  publishSpaceUpdated(ctx, spaceId);
  return updated;
}

/**
 * Moves a space to another organization (admin there too), into a collection (`collection`, in
 * the target organization), or both; it goes last under its new parent, at the top level when no
 * collection is given. Grants held by teams of the old organization are dropped. Transferring to
 * the organization it is already in without a collection changes nothing.
 */
export async function transferSpace(ctx: Context, spaceId: string, args: { organization: string; collection?: string | null }) {
  const { space, role } = await requireSpace(ctx, spaceId);
  requireSpaceAction(space, role, "administer", "transfer it");
  requireNotDeleted(space);
  const target = args.organization.trim();
  const crossOrg = target !== space.organizationId;
  if (crossOrg) await requireTargetOrganizationAdmin(ctx, target, "transfer spaces into it");
  const parentId = optionalId("collection", args.collection) ?? null;
  if (!crossOrg && !parentId) return space;
  if (parentId) await requireTargetCollection(ctx, target, parentId, "collection");
  const position = await endPosition(ctx.prisma, target, parentId);
  const [updated] = await ctx.prisma.$transaction([
    ctx.prisma.space.update({
      where: { id: spaceId },
      data: {
        organizationId: target,
        parentId,
        position,
        ...(!parentId && space.visibility === "in_collection" ? { visibility: "private" as const } : {}),
      },
    }),
    ctx.prisma.spaceAccess.deleteMany({ where: { spaceId, teamId: { not: null }, team: { organizationId: { not: target } } } }),
  ]);
  spaceById(ctx).clear(spaceId).prime(spaceId, updated);
  publishSpaceUpdated(ctx, spaceId);
  return updated;
}

// ─── Maintenance ───────────────────────────────────────────────────────────────────────────────

/** Removes for good the spaces deleted more than `retentionDays` ago. */
export async function purgeDeletedSpaces(prisma: PrismaClient, retentionDays: number, now = new Date()) {
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 60 * 60 * 1000);
  const { count } = await prisma.space.deleteMany({ where: { deletedAt: { lt: cutoff } } });
  return count;
}
