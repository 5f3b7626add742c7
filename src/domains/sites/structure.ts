import type { Prisma as P, Site, SiteSection, SiteSectionGroup, SiteSpace } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { paginateArray, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, conflict, notFound } from "../../core/errors.js";
import { checkLength, codePointLength, sliceCodePoints } from "../../core/validate.js";
import { newId } from "../../core/ids.js";
import { checkCondition } from "./adaptive.js";
import {
  DESCRIPTION_MAX,
  SECTION_TITLE,
  adaptiveSchemaOf,
  checkIcon,
  checkPath,
  checkShareKey,
  checkTitle,
  groupsOfSite,
  pathFrom,
  requireEditableSite,
  requireLinkableSpace,
  requireSite,
  resetSiteLoaders,
  sectionById,
  sectionsOfSite,
  siteSpaceById,
  siteSpacesOfSite,
  uniquePath,
} from "./sites.service.js";

/**
 * The structure of a site.
 *
 * A site holds either site spaces at its root, or sections (each holding site spaces, its
 * variants); groups gather sections. The top level of a site with sections is one ordered list
 * of groups and ungrouped sections; a group orders its sections; a section (or the root) orders
 * its site spaces. Each level has exactly one default while it has items: the first item added
 * becomes the default, deleting the default promotes the first remaining item, and
 * `defaultSiteSection` / `defaultSiteSpace` move it.
 *
 * Paths are unique where visitors would collide on them: section paths within the site, site
 * space paths within their section (or the root). Generated paths come from titles (`-2`, `-3`…
 * on collisions); a path given explicitly that is taken is a 409 naming `path`.
 *
 * Writes run in a transaction that first locks the site's row, so concurrent changes to one
 * site's structure are applied one after the other.
 */

type Tx = P.TransactionClient;

/** Extra data some reads attach to the items they return (see the schema's resolvers). */
export interface ItemView {
  /** A share key the `urls.published` links carry (share-link sites). */
  shareKey?: string;
  /** Overrides the stored default (the published view, where hidden items do not count). */
  default?: boolean;
  /** The site spaces of a section as the reader sees them (the published view). */
  siteSpaces?: Viewed<SiteSpace>[];
}
export type Viewed<T> = T & { view?: ItemView };

interface Ordered {
  id: string;
  position: number;
  createdAt: Date;
}

export function byOrder(a: Ordered, b: Ordered): number {
  return a.position - b.position || a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export type TopItem = { kind: "group"; row: SiteSectionGroup } | { kind: "section"; row: SiteSection };

/** The top level of a site with sections: groups and ungrouped sections, in order. */
export function topLevel(sections: SiteSection[], groups: SiteSectionGroup[]): TopItem[] {
  return [
    ...groups.map((row) => ({ kind: "group" as const, row })),
    ...sections.filter((s) => !s.groupId).map((row) => ({ kind: "section" as const, row })),
  ].sort((a, b) => byOrder(a.row, b.row));
}

/** Sections in the order visitors see them: the top level, each group's sections in its place. */
export function displaySections(sections: SiteSection[], groups: SiteSectionGroup[]): SiteSection[] {
  const known = new Set(groups.map((g) => g.id));
  const out: SiteSection[] = [];
  for (const item of topLevel(
    sections.map((s) => (s.groupId && !known.has(s.groupId) ? { ...s, groupId: null } : s)),
    groups,
  )) {
    if (item.kind === "section") out.push(item.row);
    else out.push(...sections.filter((s) => s.groupId === item.row.id).sort(byOrder));
  }
  return out;
}

/** Site spaces in the order visitors see them: the root's, or each section's in section order. */
export function displaySiteSpaces(siteSpaces: SiteSpace[], sections: SiteSection[], groups: SiteSectionGroup[]): SiteSpace[] {
  const roots = siteSpaces.filter((s) => !s.sectionId).sort(byOrder);
  const inSections = displaySections(sections, groups).flatMap((section) =>
    siteSpaces.filter((s) => s.sectionId === section.id).sort(byOrder),
  );
  return [...roots, ...inSections];
}

interface Tree {
  site: Site;
  sections: SiteSection[];
  groups: SiteSectionGroup[];
  siteSpaces: SiteSpace[];
}

/** Locks the site's row for the transaction, then reads its whole structure. */
async function lockTree(tx: Tx, siteId: string): Promise<Tree> {
  await tx.$queryRaw`SELECT "id" FROM "Site" WHERE "id" = ${siteId} FOR UPDATE`;
  const [site, sections, groups, siteSpaces] = await Promise.all([
    tx.site.findUnique({ where: { id: siteId } }),
    tx.siteSection.findMany({ where: { siteId } }),
    tx.siteSectionGroup.findMany({ where: { siteId } }),
    tx.siteSpace.findMany({ where: { siteId } }),
  ]);
  if (!site) throw notFound(`Site "${siteId}"`);
  return { site, sections: sections.sort(byOrder), groups: groups.sort(byOrder), siteSpaces: siteSpaces.sort(byOrder) };
}

/** Runs a structure change in a transaction on the locked site, then forgets cached reads. */
export async function change<T>(ctx: Context, siteId: string, fn: (tx: Tx, tree: Tree) => Promise<T>): Promise<T> {
  try {
    return await ctx.prisma.$transaction(async (tx) => fn(tx, await lockTree(tx, siteId)), { timeout: 20_000 });
  } finally {
    resetSiteLoaders(ctx);
  }
}

/** Writes positions 1..n for items in their new order (only those that change). */
export async function writeTopOrder(tx: Tx, items: TopItem[]): Promise<void> {
  for (const [i, item] of items.entries()) {
    const position = i + 1;
    if (item.row.position === position) continue;
    if (item.kind === "group") await tx.siteSectionGroup.update({ where: { id: item.row.id }, data: { position } });
    else await tx.siteSection.update({ where: { id: item.row.id }, data: { position, groupId: null } });
  }
}

export function notNull<T>(field: string, value: T | null | undefined): T | undefined {
  if (value === null) throw badInput(`${field} cannot be null.`);
  return value;
}

function defaultSectionTitle(spaceTitle: string): string {
  const title = sliceCodePoints(spaceTitle.trim(), SECTION_TITLE.max);
  return codePointLength(title) >= SECTION_TITLE.min ? title : `Section ${title}`.trim();
}

export function nextPosition(rows: { position: number }[]): number {
  return rows.length ? Math.floor(Math.max(...rows.map((r) => r.position))) + 1 : 1;
}

export function sectionOf(tree: Tree, id: string): SiteSection | undefined {
  return tree.sections.find((s) => s.id === id);
}

async function requireSection(ctx: Context, siteId: string, sectionId: string): Promise<SiteSection> {
  const section = await sectionById(ctx).load(sectionId);
  if (!section || section.siteId !== siteId) throw notFound(`Site section "${sectionId}"`);
  return section;
}

// ─── Positions (the deprecated move operations) ───────────────────────────────────────────────

export type ItemType = "site-section" | "site-section-group" | "site-space";
export const ITEM_TYPES: readonly ItemType[] = ["site-section", "site-section-group", "site-space"];

export interface PositionTarget {
  type: ItemType;
  id?: string | null;
  siteSection?: string | null;
  siteSectionGroup?: string | null;
  siteSpace?: string | null;
}
export interface PositionInput {
  before?: PositionTarget | null;
  after?: PositionTarget | null;
}

export function targetId(field: string, target: PositionTarget): string {
  const key = target.type === "site-section" ? "siteSection" : target.type === "site-space" ? "siteSpace" : "siteSectionGroup";
  const id = target[key] ?? target.id;
  if (!id) throw badInput(`${field}.${key} (or ${field}.id) is required when ${field}.type is "${target.type}".`);
  return id;
}

/**
 * The index at which the moved item goes in `list` (which no longer holds it): right after
 * `after`, right before `before` (with both, `after` must come before `before`), else last.
 */
export function insertionIndex<T>(list: T[], idOf: (item: T) => string, position: { before?: string; after?: string }): number {
  const afterIndex = position.after ? list.findIndex((i) => idOf(i) === position.after) : -1;
  const beforeIndex = position.before ? list.findIndex((i) => idOf(i) === position.before) : -1;
  if (position.after && position.before && afterIndex >= beforeIndex) {
    throw badInput("position: the `after` item must come before the `before` item.");
  }
  if (position.after) return afterIndex + 1;
  if (position.before) return beforeIndex;
  return list.length;
}

// ─── Sections ──────────────────────────────────────────────────────────────────────────────────

export async function listSections(ctx: Context, organizationId: string, siteId: string, args: PageArgs & { shareKey?: string | null }) {
  const shareKey = checkShareKey(args.shareKey);
  await requireSite(ctx, organizationId, siteId);
  const [sections, groups] = await Promise.all([sectionsOfSite(ctx).load(siteId), groupsOfSite(ctx).load(siteId)]);
  const ordered: Viewed<SiteSection>[] = displaySections(sections, groups).map((s) => (shareKey ? { ...s, view: { shareKey } } : s));
  return paginateArray(ordered, args);
}

export interface SectionInput {
  spaceId: string;
  title?: string | null;
  icon?: string | null;
}

/**
 * Adds a section, last at the top level, with a site space for `spaceId`. On a site whose
 * content sat at its root, the root site spaces move into this first section (first, in their
 * order, keeping the default), and the site space for `spaceId` follows them unless one of them
 * already shows that space.
 */
export async function addSection(ctx: Context, organizationId: string, siteId: string, input: SectionInput) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const space = await requireLinkableSpace(ctx, organizationId, input.spaceId, "spaceId");
  const title =
    input.title !== undefined && input.title !== null ? checkTitle("title", input.title, SECTION_TITLE) : defaultSectionTitle(space.title);
  const icon = checkIcon("icon", input.icon) ?? null;
  return change(ctx, siteId, async (tx, tree) => {
    const sectionId = newId("SiteSection");
    const path = uniquePath(pathFrom(title, "section"), new Set(tree.sections.map((s) => s.path)));
    const top = topLevel(tree.sections, tree.groups);
    await tx.siteSection.create({ data: { id: sectionId, siteId, title, icon, path, position: nextPosition(top.map((i) => i.row)) } });
    const roots = tree.sections.length === 0 ? tree.siteSpaces.filter((s) => !s.sectionId) : [];
    let defaultSiteSpaceId: string | null = null;
    if (roots.length) {
      await tx.siteSpace.updateMany({ where: { siteId, sectionId: null }, data: { sectionId } });
      defaultSiteSpaceId = roots.some((r) => r.id === tree.site.defaultSiteSpaceId) ? tree.site.defaultSiteSpaceId : roots[0]!.id;
    }
    if (!roots.some((r) => r.spaceId === space.id)) {
      const id = newId("SiteSpace");
      const spacePath = uniquePath(pathFrom(space.title, "space"), new Set(roots.map((r) => r.path)));
      await tx.siteSpace.create({ data: { id, siteId, sectionId, spaceId: space.id, path: spacePath, position: nextPosition(roots) } });
      defaultSiteSpaceId ??= id;
    }
    await tx.siteSection.update({ where: { id: sectionId }, data: { defaultSiteSpaceId } });
    const hasDefault = tree.sections.some((s) => s.id === tree.site.defaultSectionId);
    if (!hasDefault || tree.site.defaultSiteSpaceId) {
      await tx.site.update({
        where: { id: siteId },
        data: { ...(hasDefault ? {} : { defaultSectionId: sectionId }), defaultSiteSpaceId: null },
      });
    }
    return tx.siteSection.findUniqueOrThrow({ where: { id: sectionId } });
  });
}

export interface SectionPatch {
  title?: string | null;
  path?: string | null;
  defaultSiteSpace?: string | null;
  condition?: string | null;
  icon?: string | null;
  description?: string | null;
}

export async function updateSection(ctx: Context, organizationId: string, siteId: string, sectionId: string, patch: SectionPatch) {
  const site = await requireEditableSite(ctx, organizationId, siteId, "change sites");
  await requireSection(ctx, siteId, sectionId);
  const data: P.SiteSectionUncheckedUpdateInput = {};
  if (patch.title !== undefined) data.title = checkTitle("title", notNull("title", patch.title)!, SECTION_TITLE);
  if (patch.path !== undefined) data.path = checkPath("path", notNull("path", patch.path)!);
  if (patch.condition !== undefined) {
    data.condition = patch.condition === null ? null : checkCondition("condition", patch.condition, adaptiveSchemaOf(site));
  }
  if (patch.icon !== undefined) data.icon = patch.icon === null ? null : checkIcon("icon", patch.icon);
  if (patch.description !== undefined) {
    if (patch.description === null) data.description = null;
    else {
      const description = patch.description.trim();
      checkLength("description", description, 0, DESCRIPTION_MAX);
      data.description = description || null;
    }
  }
  const defaultSiteSpace = patch.defaultSiteSpace !== undefined ? notNull("defaultSiteSpace", patch.defaultSiteSpace) : undefined;
  return change(ctx, siteId, async (tx, tree) => {
    if (!sectionOf(tree, sectionId)) throw notFound(`Site section "${sectionId}"`);
    if (typeof data.path === "string") {
      const other = tree.sections.find((s) => s.path === data.path && s.id !== sectionId);
      if (other) throw conflict(`path "${data.path}" is already used by section "${other.id}" of this site.`);
    }
    if (defaultSiteSpace !== undefined) {
      if (!tree.siteSpaces.some((s) => s.id === defaultSiteSpace && s.sectionId === sectionId)) {
        throw badInput(`defaultSiteSpace: site space "${defaultSiteSpace}" is not in section "${sectionId}".`);
      }
      data.defaultSiteSpaceId = defaultSiteSpace;
    }
    return tx.siteSection.update({ where: { id: sectionId }, data });
  });
}

/** Deletes a section and its site spaces; the first remaining section becomes the default if it was. */
export async function deleteSection(ctx: Context, organizationId: string, siteId: string, sectionId: string): Promise<boolean> {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const section = await sectionById(ctx).load(sectionId);
  if (!section || section.siteId !== siteId) return true;
  await change(ctx, siteId, async (tx, tree) => {
    if (!sectionOf(tree, sectionId)) return;
    await tx.siteSection.delete({ where: { id: sectionId } });
    if (tree.site.defaultSectionId === sectionId || !sectionOf(tree, tree.site.defaultSectionId ?? "")) {
      const rest = displaySections(
        tree.sections.filter((s) => s.id !== sectionId),
        tree.groups,
      );
      await tx.site.update({ where: { id: siteId }, data: { defaultSectionId: rest[0]?.id ?? null } });
    }
  });
  return true;
}

/** Moves a section among the top level or inside a group (it joins the container of its target). */
export async function moveSection(
  ctx: Context,
  organizationId: string,
  siteId: string,
  sectionId: string,
  position: PositionInput | null | undefined,
) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  await requireSection(ctx, siteId, sectionId);
  return change(ctx, siteId, async (tx, tree) => {
    const moving = sectionOf(tree, sectionId);
    if (!moving) throw notFound(`Site section "${sectionId}"`);
    const resolve = (field: string, target: PositionTarget | null | undefined) => {
      if (!target) return null;
      if (target.type !== "site-section" && target.type !== "site-section-group") {
        throw badInput(`${field}.type must be site-section or site-section-group.`);
      }
      const id = targetId(field, target);
      if (id === sectionId) throw badInput(`${field}: a section cannot be placed next to itself.`);
      if (target.type === "site-section") {
        const section = sectionOf(tree, id);
        if (!section) throw badInput(`${field}: section "${id}" is not a section of this site.`);
        return { id, container: section.groupId };
      }
      if (!tree.groups.some((g) => g.id === id)) throw badInput(`${field}: group "${id}" is not a group of this site.`);
      return { id, container: null as string | null };
    };
    const before = resolve("position.before", position?.before);
    const after = resolve("position.after", position?.after);
    if (before && after && before.container !== after.container) {
      throw badInput("position: `before` and `after` must be in the same group (or both at the top level).");
    }
    const container = before ? before.container : after ? after.container : moving.groupId;
    const pos = { before: before?.id, after: after?.id };
    if (container === null) {
      const list = topLevel(
        tree.sections.filter((s) => s.id !== sectionId),
        tree.groups,
      );
      list.splice(
        insertionIndex(list, (i) => i.row.id, pos),
        0,
        { kind: "section", row: { ...moving, position: -1 } },
      );
      await writeTopOrder(tx, list);
    } else {
      const list = tree.sections.filter((s) => s.groupId === container && s.id !== sectionId);
      list.splice(
        insertionIndex(list, (s) => s.id, pos),
        0,
        { ...moving, position: -1 },
      );
      for (const [i, s] of list.entries()) {
        if (s.position !== i + 1 || s.id === sectionId) {
          await tx.siteSection.update({ where: { id: s.id }, data: { position: i + 1, groupId: container } });
        }
      }
    }
    return tx.siteSection.findUniqueOrThrow({ where: { id: sectionId } });
  });
}

// ─── Site spaces ───────────────────────────────────────────────────────────────────────────────

/** Whether each site space is the default of its level (its section, or the root). */
export function defaultsOf(site: Site, sections: SiteSection[]): (s: SiteSpace) => boolean {
  const sectionDefault = new Map(sections.map((s) => [s.id, s.defaultSiteSpaceId]));
  return (s) => (s.sectionId ? sectionDefault.get(s.sectionId) === s.id : site.defaultSiteSpaceId === s.id);
}

/**
 * Site spaces of a site in display order. `default`: true keeps only the default site space of
 * each level (the root's, or each section's), false only the others.
 */
export async function listSiteSpaces(
  ctx: Context,
  organizationId: string,
  siteId: string,
  args: PageArgs & { shareKey?: string | null; default?: boolean | null },
) {
  const shareKey = checkShareKey(args.shareKey);
  const site = await requireSite(ctx, organizationId, siteId);
  const [siteSpaces, sections, groups] = await Promise.all([
    siteSpacesOfSite(ctx).load(siteId),
    sectionsOfSite(ctx).load(siteId),
    groupsOfSite(ctx).load(siteId),
  ]);
  const isDefault = defaultsOf(site, sections);
  let ordered: Viewed<SiteSpace>[] = displaySiteSpaces(siteSpaces, sections, groups);
  if (args.default !== undefined && args.default !== null) ordered = ordered.filter((s) => isDefault(s) === args.default);
  if (shareKey) ordered = ordered.map((s) => ({ ...s, view: { shareKey } }));
  return paginateArray(ordered, args);
}

/** Adds a site space last in a section (`sectionId`; omitted: the default section) or at the root of a site without sections. */
export async function addSiteSpace(
  ctx: Context,
  organizationId: string,
  siteId: string,
  input: { spaceId: string; sectionId?: string | null },
) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const space = await requireLinkableSpace(ctx, organizationId, input.spaceId, "spaceId");
  return change(ctx, siteId, async (tx, tree) => {
    let containerId: string | null = null;
    if (input.sectionId) {
      if (!sectionOf(tree, input.sectionId))
        throw badInput(`sectionId: section "${input.sectionId}" is not a section of site "${siteId}".`);
      containerId = input.sectionId;
    } else if (tree.sections.length) {
      containerId = sectionOf(tree, tree.site.defaultSectionId ?? "")?.id ?? displaySections(tree.sections, tree.groups)[0]!.id;
    }
    const siblings = tree.siteSpaces.filter((s) => s.sectionId === containerId);
    const where = containerId ? `section "${containerId}"` : "the root of this site";
    if (siblings.some((s) => s.spaceId === space.id)) throw conflict(`spaceId: space "${space.id}" is already in ${where}.`);
    const id = newId("SiteSpace");
    const path = uniquePath(pathFrom(space.title, "space"), new Set(siblings.map((s) => s.path)));
    const created = await tx.siteSpace.create({
      data: { id, siteId, sectionId: containerId, spaceId: space.id, path, position: nextPosition(siblings) },
    });
    if (containerId) {
      const section = sectionOf(tree, containerId)!;
      if (!siblings.some((s) => s.id === section.defaultSiteSpaceId)) {
        await tx.siteSection.update({ where: { id: containerId }, data: { defaultSiteSpaceId: id } });
      }
    } else if (!siblings.some((s) => s.id === tree.site.defaultSiteSpaceId)) {
      await tx.site.update({ where: { id: siteId }, data: { defaultSiteSpaceId: id } });
    }
    return created;
  });
}

export interface SiteSpacePatch {
  path?: string | null;
  condition?: string | null;
  spaceId?: string | null;
}

export async function updateSiteSpace(ctx: Context, organizationId: string, siteId: string, siteSpaceId: string, patch: SiteSpacePatch) {
  const site = await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const current = await siteSpaceById(ctx).load(siteSpaceId);
  if (!current || current.siteId !== siteId) throw notFound(`Site space "${siteSpaceId}"`);
  const data: P.SiteSpaceUncheckedUpdateInput = {};
  if (patch.path !== undefined) data.path = checkPath("path", notNull("path", patch.path)!);
  if (patch.condition !== undefined) {
    data.condition = patch.condition === null ? null : checkCondition("condition", patch.condition, adaptiveSchemaOf(site));
  }
  if (patch.spaceId !== undefined) {
    data.spaceId = (await requireLinkableSpace(ctx, organizationId, notNull("spaceId", patch.spaceId)!, "spaceId")).id;
  }
  return change(ctx, siteId, async (tx, tree) => {
    const row = tree.siteSpaces.find((s) => s.id === siteSpaceId);
    if (!row) throw notFound(`Site space "${siteSpaceId}"`);
    const siblings = tree.siteSpaces.filter((s) => s.sectionId === row.sectionId && s.id !== siteSpaceId);
    const where = row.sectionId ? `section "${row.sectionId}"` : "the root of this site";
    const samePath = siblings.find((s) => s.path === data.path);
    if (samePath) throw conflict(`path "${data.path}" is already used by site space "${samePath.id}" in ${where}.`);
    const sameSpace = siblings.find((s) => s.spaceId === data.spaceId);
    if (sameSpace) throw conflict(`spaceId: space "${data.spaceId}" is already in ${where} (site space "${sameSpace.id}").`);
    return tx.siteSpace.update({ where: { id: siteSpaceId }, data });
  });
}

/** Deletes a site space; the first remaining one of its level becomes the default if it was. */
export async function deleteSiteSpace(ctx: Context, organizationId: string, siteId: string, siteSpaceId: string): Promise<boolean> {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const current = await siteSpaceById(ctx).load(siteSpaceId);
  if (!current || current.siteId !== siteId) return true;
  await change(ctx, siteId, async (tx, tree) => {
    const row = tree.siteSpaces.find((s) => s.id === siteSpaceId);
    if (!row) return;
    await tx.siteSpace.delete({ where: { id: siteSpaceId } });
    const rest = tree.siteSpaces.filter((s) => s.sectionId === row.sectionId && s.id !== siteSpaceId);
    if (row.sectionId) {
      const section = sectionOf(tree, row.sectionId)!;
      if (!rest.some((s) => s.id === section.defaultSiteSpaceId)) {
        await tx.siteSection.update({ where: { id: section.id }, data: { defaultSiteSpaceId: rest[0]?.id ?? null } });
      }
    } else if (!rest.some((s) => s.id === tree.site.defaultSiteSpaceId)) {
      await tx.site.update({ where: { id: siteId }, data: { defaultSiteSpaceId: rest[0]?.id ?? null } });
    }
  });
  return true;
}

/** Moves a site space among the site spaces of its section (or of the root). */
export async function moveSiteSpace(
  ctx: Context,
  organizationId: string,
  siteId: string,
  siteSpaceId: string,
  position: PositionInput | null | undefined,
) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const current = await siteSpaceById(ctx).load(siteSpaceId);
  if (!current || current.siteId !== siteId) throw notFound(`Site space "${siteSpaceId}"`);
  return change(ctx, siteId, async (tx, tree) => {
    const moving = tree.siteSpaces.find((s) => s.id === siteSpaceId);
    if (!moving) throw notFound(`Site space "${siteSpaceId}"`);
    const siblings = tree.siteSpaces.filter((s) => s.sectionId === moving.sectionId && s.id !== siteSpaceId);
    const resolve = (field: string, target: PositionTarget | null | undefined) => {
      if (!target) return undefined;
      if (target.type !== "site-space") throw badInput(`${field}.type must be site-space.`);
      const id = targetId(field, target);
      if (id === siteSpaceId) throw badInput(`${field}: a site space cannot be placed next to itself.`);
      if (!siblings.some((s) => s.id === id)) {
        throw badInput(`${field}: site space "${id}" is not in the same ${moving.sectionId ? "section" : "level"} as "${siteSpaceId}".`);
      }
      return id;
    };
    const pos = { before: resolve("position.before", position?.before), after: resolve("position.after", position?.after) };
    siblings.splice(
      insertionIndex(siblings, (s) => s.id, pos),
      0,
      { ...moving, position: -1 },
    );
    for (const [i, s] of siblings.entries()) {
      if (s.position !== i + 1) await tx.siteSpace.update({ where: { id: s.id }, data: { position: i + 1 } });
    }
    return tx.siteSpace.findUniqueOrThrow({ where: { id: siteSpaceId } });
  });
}

// ─── The whole order at once ──────────────────────────────────────────────────────────────────

export interface StructureItemInput {
  type: ItemType;
  id: string;
  children?: StructureItemInput[] | null;
}

/**
 * Sets the order of a site's whole structure (sortSiteStructure). `structure` lists the top
 * level in order: the root site spaces of a site without sections, or the groups and ungrouped
 * sections of a site with sections; a group's `children` are its sections, a section's its site
 * spaces. It must list every group, section and site space of the site exactly once (400
 * otherwise). Sections may change group and site spaces may change section (409 when a path or
 * a space would then appear twice in one section); a section's default stays if it is still
 * there, else its first site space becomes the default.
 */
export async function sortStructure(ctx: Context, organizationId: string, siteId: string, structure: StructureItemInput[]) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  if (!Array.isArray(structure)) throw badInput("structure must be an array.");
  return change(ctx, siteId, async (tx, tree) => {
    const seen = new Set<string>();
    const sectionsById = new Map(tree.sections.map((s) => [s.id, s]));
    const groupsById = new Map(tree.groups.map((g) => [g.id, g]));
    const siteSpacesById = new Map(tree.siteSpaces.map((s) => [s.id, s]));
    const take = (field: string, item: StructureItemInput, allowed: ItemType[]) => {
      if (!item || typeof item.id !== "string") throw badInput(`${field}.id is required.`);
      if (!allowed.includes(item.type)) throw badInput(`${field}.type must be ${allowed.join(" or ")} here (got "${item.type}").`);
      const known =
        item.type === "site-section"
          ? sectionsById.has(item.id)
          : item.type === "site-section-group"
            ? groupsById.has(item.id)
            : siteSpacesById.has(item.id);
      if (!known) throw badInput(`${field}: ${item.type} "${item.id}" is not part of site "${siteId}".`);
      if (seen.has(item.id)) throw badInput(`${field}: ${item.type} "${item.id}" is listed more than once.`);
      seen.add(item.id);
      if (item.type === "site-space" && item.children?.length) throw badInput(`${field}.children: a site space has no children.`);
    };
    const top: TopItem[] = [];
    const groupSections = new Map<string, string[]>();
    const sectionSpaces = new Map<string | null, string[]>();
    const takeSection = (field: string, item: StructureItemInput) => {
      sectionSpaces.set(
        item.id,
        (item.children ?? []).map((child, k) => {
          take(`${field}.children[${k}]`, child, ["site-space"]);
          return child.id;
        }),
      );
    };
    if (tree.sections.length === 0) {
      // Root site spaces (and groups, which hold no section yet).
      const roots: string[] = [];
      structure.forEach((item, i) => {
        take(`structure[${i}]`, item, ["site-space", "site-section-group"]);
        if (item.type === "site-space") return void roots.push(item.id);
        if (item.children?.length) throw badInput(`structure[${i}].children: site "${siteId}" has no sections to put in a group.`);
        top.push({ kind: "group", row: groupsById.get(item.id)! });
      });
      sectionSpaces.set(null, roots);
    } else {
      structure.forEach((item, i) => {
        const field = `structure[${i}]`;
        take(field, item, ["site-section-group", "site-section"]);
        if (item.type === "site-section") {
          top.push({ kind: "section", row: sectionsById.get(item.id)! });
          takeSection(field, item);
        } else {
          top.push({ kind: "group", row: groupsById.get(item.id)! });
          groupSections.set(
            item.id,
            (item.children ?? []).map((child, k) => {
              take(`${field}.children[${k}]`, child, ["site-section"]);
              takeSection(`${field}.children[${k}]`, child);
              return child.id;
            }),
          );
        }
      });
    }
    const missing = [...tree.groups, ...tree.sections, ...tree.siteSpaces].filter((x) => !seen.has(x.id)).map((x) => x.id);
    if (missing.length) {
      throw badInput(
        `structure must list every group, section and site space of the site exactly once; missing: ${missing.slice(0, 20).join(", ")}.`,
      );
    }
    for (const [sectionId, ids] of sectionSpaces) {
      const paths = new Map<string, string>();
      const spaces = new Map<string, string>();
      for (const id of ids) {
        const row = siteSpacesById.get(id)!;
        const where = sectionId ? `section "${sectionId}"` : "the root";
        if (paths.has(row.path))
          throw conflict(`structure: site spaces "${paths.get(row.path)}" and "${id}" would share the path "${row.path}" in ${where}.`);
        if (spaces.has(row.spaceId))
          throw conflict(`structure: site spaces "${spaces.get(row.spaceId)}" and "${id}" would show the same space in ${where}.`);
        paths.set(row.path, id);
        spaces.set(row.spaceId, id);
      }
    }
    // Writes: only what changes.
    for (const [i, item] of top.entries()) {
      const wanted = { position: i + 1 };
      if (item.kind === "group" && item.row.position !== wanted.position)
        await tx.siteSectionGroup.update({ where: { id: item.row.id }, data: wanted });
      if (item.kind === "section" && (item.row.position !== wanted.position || item.row.groupId !== null)) {
        await tx.siteSection.update({ where: { id: item.row.id }, data: { ...wanted, groupId: null } });
      }
    }
    for (const [groupId, ids] of groupSections) {
      for (const [k, id] of ids.entries()) {
        const row = sectionsById.get(id)!;
        if (row.position !== k + 1 || row.groupId !== groupId)
          await tx.siteSection.update({ where: { id }, data: { position: k + 1, groupId } });
      }
    }
    for (const [sectionId, ids] of sectionSpaces) {
      for (const [k, id] of ids.entries()) {
        const row = siteSpacesById.get(id)!;
        if (row.position !== k + 1 || row.sectionId !== sectionId)
          await tx.siteSpace.update({ where: { id }, data: { position: k + 1, sectionId } });
      }
      if (sectionId) {
        const section = sectionsById.get(sectionId)!;
        const wantedDefault =
          section.defaultSiteSpaceId && ids.includes(section.defaultSiteSpaceId) ? section.defaultSiteSpaceId : (ids[0] ?? null);
        if (wantedDefault !== section.defaultSiteSpaceId)
          await tx.siteSection.update({ where: { id: sectionId }, data: { defaultSiteSpaceId: wantedDefault } });
      }
    }
    return tx.site.findUniqueOrThrow({ where: { id: siteId } });
  });
}
