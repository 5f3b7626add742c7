import type { Prisma as P, SiteSectionGroup } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { paginateArray, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, notFound } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import {
  GROUP_TITLE,
  checkIcon,
  checkTitle,
  groupById,
  groupsOfSite,
  requireEditableSite,
  requireSite,
  resetSiteLoaders,
  sectionById,
  sectionsOfSite,
} from "./sites.service.js";
import {
  change,
  insertionIndex,
  nextPosition,
  notNull,
  sectionOf,
  targetId,
  topLevel,
  writeTopOrder,
  type PositionInput,
  type PositionTarget,
  type TopItem,
} from "./structure.js";

// ─── Section groups ────────────────────────────────────────────────────────────────────────────

export async function listGroups(ctx: Context, organizationId: string, siteId: string, args: PageArgs) {
  await requireSite(ctx, organizationId, siteId);
  const [sections, groups] = await Promise.all([sectionsOfSite(ctx).load(siteId), groupsOfSite(ctx).load(siteId)]);
  const ordered = topLevel(sections, groups).flatMap((i) => (i.kind === "group" ? [i.row] : []));
  return paginateArray(ordered, args);
}

async function requireGroup(ctx: Context, siteId: string, groupId: string): Promise<SiteSectionGroup> {
  const group = await groupById(ctx).load(groupId);
  if (!group || group.siteId !== siteId) throw notFound(`Site section group "${groupId}"`);
  return group;
}

export interface GroupInput {
  title: string;
  icon?: string | null;
  sections?: string[] | null;
}

/**
 * Creates a group holding `sections` in the order given (taken out of their groups, if any).
 * The group takes the place of the first listed section that was at the top level, else goes last.
 */
export async function createGroup(ctx: Context, organizationId: string, siteId: string, input: GroupInput) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const title = checkTitle("title", notNull("title", input.title) ?? "", GROUP_TITLE);
  const icon = checkIcon("icon", input.icon) ?? null;
  const ids = [...new Set(input.sections ?? [])];
  return change(ctx, siteId, async (tx, tree) => {
    for (const id of ids) if (!sectionOf(tree, id)) throw badInput(`sections: section "${id}" is not a section of site "${siteId}".`);
    const groupId = newId("SiteSectionGroup");
    const listed = new Set(ids);
    const top = topLevel(tree.sections, tree.groups);
    const firstIndex = top.findIndex((i) => i.kind === "section" && listed.has(i.row.id));
    const remaining = top.filter((i) => !(i.kind === "section" && listed.has(i.row.id)));
    const insertAt =
      firstIndex < 0 ? remaining.length : top.slice(0, firstIndex).filter((i) => !(i.kind === "section" && listed.has(i.row.id))).length;
    const group = await tx.siteSectionGroup.create({ data: { id: groupId, siteId, title, icon, position: insertAt + 1 } });
    remaining.splice(insertAt, 0, { kind: "group", row: group });
    await writeTopOrder(tx, remaining);
    for (const [i, id] of ids.entries()) await tx.siteSection.update({ where: { id }, data: { groupId, position: i + 1 } });
    return group;
  });
}

export async function updateGroup(
  ctx: Context,
  organizationId: string,
  siteId: string,
  groupId: string,
  patch: { title?: string | null; icon?: string | null },
) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  await requireGroup(ctx, siteId, groupId);
  const data: P.SiteSectionGroupUpdateInput = {};
  if (patch.title !== undefined) data.title = checkTitle("title", notNull("title", patch.title)!, GROUP_TITLE);
  if (patch.icon !== undefined) data.icon = patch.icon === null ? null : checkIcon("icon", patch.icon);
  const updated = await ctx.prisma.siteSectionGroup.update({ where: { id: groupId }, data });
  resetSiteLoaders(ctx);
  return updated;
}

/** Deletes a group; its sections stay, ungrouped, where the group was. */
export async function deleteGroup(ctx: Context, organizationId: string, siteId: string, groupId: string): Promise<boolean> {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const group = await groupById(ctx).load(groupId);
  if (!group || group.siteId !== siteId) return true;
  await change(ctx, siteId, async (tx, tree) => {
    if (!tree.groups.some((g) => g.id === groupId)) return;
    const top = topLevel(tree.sections, tree.groups).flatMap<TopItem>((i) =>
      i.kind === "group" && i.row.id === groupId
        ? tree.sections.filter((s) => s.groupId === groupId).map((row) => ({ kind: "section" as const, row: { ...row, position: -1 } }))
        : [i],
    );
    await writeTopOrder(tx, top);
    await tx.siteSectionGroup.delete({ where: { id: groupId } });
  });
  return true;
}

/** Puts a section last in a group (out of its previous group, if any). */
export async function addSectionToGroup(ctx: Context, organizationId: string, siteId: string, groupId: string, sectionId: string) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  await requireGroup(ctx, siteId, groupId);
  return change(ctx, siteId, async (tx, tree) => {
    const group = tree.groups.find((g) => g.id === groupId);
    if (!group) throw notFound(`Site section group "${groupId}"`);
    const section = sectionOf(tree, sectionId);
    if (!section) throw badInput(`sectionId: section "${sectionId}" is not a section of site "${siteId}".`);
    if (section.groupId !== groupId) {
      const position = nextPosition(tree.sections.filter((s) => s.groupId === groupId));
      await tx.siteSection.update({ where: { id: sectionId }, data: { groupId, position } });
    }
    return group;
  });
}

/** Takes a section out of a group: it goes to the top level right after the group. */
export async function removeSectionFromGroup(
  ctx: Context,
  organizationId: string,
  siteId: string,
  groupId: string,
  sectionId: string,
): Promise<boolean> {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  const section = await sectionById(ctx).load(sectionId);
  if (!section || section.siteId !== siteId || section.groupId !== groupId) return true;
  await change(ctx, siteId, async (tx, tree) => {
    const current = sectionOf(tree, sectionId);
    if (!current || current.groupId !== groupId) return;
    const top = topLevel(tree.sections, tree.groups);
    const at = top.findIndex((i) => i.kind === "group" && i.row.id === groupId);
    top.splice(at + 1, 0, { kind: "section", row: { ...current, position: -1 } });
    await writeTopOrder(tx, top);
  });
  return true;
}

/** Moves a group among the top-level groups and ungrouped sections. */
export async function moveGroup(
  ctx: Context,
  organizationId: string,
  siteId: string,
  groupId: string,
  position: PositionInput | null | undefined,
) {
  await requireEditableSite(ctx, organizationId, siteId, "change sites");
  await requireGroup(ctx, siteId, groupId);
  return change(ctx, siteId, async (tx, tree) => {
    const moving = tree.groups.find((g) => g.id === groupId);
    if (!moving) throw notFound(`Site section group "${groupId}"`);
    const resolve = (field: string, target: PositionTarget | null | undefined) => {
      if (!target) return undefined;
      if (target.type !== "site-section" && target.type !== "site-section-group") {
        throw badInput(`${field}.type must be site-section or site-section-group.`);
      }
      const id = targetId(field, target);
      if (id === groupId) throw badInput(`${field}: a group cannot be placed next to itself.`);
      if (target.type === "site-section") {
        const section = sectionOf(tree, id);
        if (!section) throw badInput(`${field}: section "${id}" is not a section of this site.`);
        if (section.groupId) throw badInput(`${field}: section "${id}" is in a group; a group goes next to top-level sections and groups.`);
      } else if (!tree.groups.some((g) => g.id === id)) {
        throw badInput(`${field}: group "${id}" is not a group of this site.`);
      }
      return id;
    };
    const pos = { before: resolve("position.before", position?.before), after: resolve("position.after", position?.after) };
    const list = topLevel(
      tree.sections,
      tree.groups.filter((g) => g.id !== groupId),
    );
    list.splice(
      insertionIndex(list, (i) => i.row.id, pos),
      0,
      { kind: "group", row: { ...moving, position: -1 } },
    );
    await writeTopOrder(tx, list);
    return tx.siteSectionGroup.findUniqueOrThrow({ where: { id: groupId } });
  });
}
