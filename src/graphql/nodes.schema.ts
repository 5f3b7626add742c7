import { brandWithType } from "@pothos/core";
import { MAX_CONNECTION_SIZE, builder } from "../core/graph/builder.js";
import type { Context } from "../core/context.js";
import { appErrorOf, badInput } from "../core/errors.js";
import { typeOfId } from "../core/ids.js";
import { defineLoader } from "../core/graph/loaders.js";
import { viewerMemberWhere } from "../core/access/access.js";
import { getOrganization } from "../domains/organizations/organizations.service.js";
import { requireCollection } from "../domains/collections/collections.service.js";
import { requireSpace } from "../domains/spaces/spaces.access.js";
import { getChangeRequest } from "../domains/changerequests/changerequests.service.js";
import { requireSite, siteById } from "../domains/sites/sites.service.js";
import { getTeam } from "../domains/teams/teams.service.js";
import { getProvider } from "../domains/sso/sso.service.js";
import { getTranslations } from "../domains/translations/translations.service.js";
import { getSpec, getVersion, specOfVersion } from "../domains/openapi/openapi.service.js";

/**
 * `node(id:)` and `nodes(ids:)`: any object implementing Node, by its id (ids name their type,
 * core/ids.ts). The access rule is the type's: an object is answered when the type's own read
 * (the guard of `space`, `collection`, `site`… through the membership door and the space rules)
 * would answer it, and is null — exactly like a missing one — when it would not.
 * Rows are loaded per type in one statement; the guards read through per-request loaders.
 */
type Row = Record<string, any>;

interface NodeType {
  /** The Prisma model of its rows. */
  model: string;
  /** Extra condition telling this type's rows apart (replies and comments share a table). */
  where?: Row;
  /** Whether the caller may see the row: the type's read guard, or a batched rule. */
  visible: (ctx: Context, row: Row) => Promise<boolean>;
}

/** True when `guard` passes; false when it refuses with an error a caller can get (403, 404). */
async function passes(guard: () => Promise<unknown>): Promise<boolean> {
  try {
    await guard();
    return true;
  } catch (err) {
    const app = appErrorOf(err);
    if (app && (app.status === 403 || app.status === 404)) return false;
    throw err;
  }
}

/**
 * Users the caller may see: themself, and members of an organization where the caller is a
 * member with a role (a guest sees only themself, as on the members routes).
 */
const visibleUsers = defineLoader<string, boolean>(async (ids, ctx) => {
  const rows = await ctx.prisma.member.findMany({
    where: { userId: { in: [...ids] }, organization: { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } } },
    select: { userId: true },
  });
  const seen = new Set(rows.map((r) => r.userId));
  return ids.map((id) => id === ctx.viewer.userId || seen.has(id));
});

async function inSite(ctx: Context, siteId: string): Promise<boolean> {
  const site = await siteById(ctx).load(siteId);
  return !!site && passes(() => requireSite(ctx, site.organizationId, site.id));
}

export const NODE_TYPES: Record<string, NodeType> = {
  Organization: { model: "organization", visible: (ctx, o) => passes(() => getOrganization(ctx, o.id)) },
  Collection: { model: "collection", visible: (ctx, c) => passes(() => requireCollection(ctx, c.id)) },
  Space: { model: "space", visible: (ctx, s) => passes(() => requireSpace(ctx, s.id)) },
  ChangeRequest: { model: "changeRequest", visible: (ctx, cr) => passes(() => getChangeRequest(ctx, cr.spaceId, cr.id)) },
  Comment: { model: "comment", where: { parentId: null }, visible: (ctx, c) => passes(() => requireSpace(ctx, c.spaceId)) },
  CommentReply: { model: "comment", where: { parentId: { not: null } }, visible: (ctx, c) => passes(() => requireSpace(ctx, c.spaceId)) },
  Site: { model: "site", visible: (ctx, s) => passes(() => requireSite(ctx, s.organizationId, s.id)) },
  SiteSection: { model: "siteSection", visible: (ctx, s) => inSite(ctx, s.siteId) },
  SiteSectionGroup: { model: "siteSectionGroup", visible: (ctx, g) => inSite(ctx, g.siteId) },
  SiteSpace: { model: "siteSpace", visible: (ctx, s) => inSite(ctx, s.siteId) },
  Team: { model: "team", visible: (ctx, t) => passes(() => getTeam(ctx, t.organizationId, t.id)) },
  SamlProvider: { model: "samlProvider", visible: (ctx, p) => passes(() => getProvider(ctx, p.organizationId, p.id)) },
  TranslationSettings: { model: "translationSettings", visible: (ctx, s) => passes(() => getTranslations(ctx, s.organizationId, s.id)) },
  OpenApiSpec: { model: "openApiSpec", visible: (ctx, s) => passes(() => getSpec(ctx, s.organizationId, s.slug)) },
  OpenApiSpecVersion: {
    model: "openApiSpecVersion",
    visible: async (ctx, v) => {
      const spec = await specOfVersion(ctx).load(v.specId);
      return !!spec && passes(() => getVersion(ctx, spec.organizationId, spec.slug, v.id));
    },
  },
  User: { model: "user", visible: (ctx, u) => visibleUsers(ctx).load(u.id) },
};

/** Rows of one type by id, one statement per type and request. */
const rowsOf = defineLoader<string, Row | null>(async (keys, ctx) => {
  const byType = new Map<string, string[]>();
  for (const key of keys) {
    const [type, id] = key.split("\u0000") as [string, string];
    byType.set(type, [...(byType.get(type) ?? []), id]);
  }
  const found = new Map<string, Row>();
  await Promise.all(
    [...byType].map(async ([type, ids]) => {
      const spec = NODE_TYPES[type]!;
      const rows: Row[] = await (ctx.prisma as any)[spec.model].findMany({ where: { id: { in: ids }, ...spec.where } });
      for (const row of rows) found.set(`${type}\u0000${row.id}`, row);
    }),
  );
  return keys.map((k) => found.get(k) ?? null);
});

/** The object of `id` if it exists and the caller may see it, branded with its type; else null. */
export async function loadNode(ctx: Context, id: string): Promise<object | null> {
  const type = typeOfId(id);
  const spec = type ? NODE_TYPES[type] : undefined;
  if (!type || !spec) return null;
  const row = await rowsOf(ctx).load(`${type}\u0000${id}`);
  if (!row || !(await spec.visible(ctx, row))) return null;
  brandWithType(row, type as never);
  return row;
}

builder.queryFields((t) => ({
  node: t.field({
    type: builder.nodeInterfaceRef(),
    nullable: true,
    description: "The object with this id (any type implementing Node); null when there is none or the caller may not see it.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => loadNode(ctx, String(args.id)) as any,
  }),
  nodes: t.field({
    type: [builder.nodeInterfaceRef()],
    nullable: { list: false, items: true },
    description: "The objects with these ids, in order; null for each one that does not exist or that the caller may not see.",
    args: { ids: t.arg.idList({ required: true }) },
    resolve: (_root, args, ctx) => {
      if (args.ids.length > MAX_CONNECTION_SIZE)
        throw badInput(`ids on nodes must hold at most ${MAX_CONNECTION_SIZE} ids (got ${args.ids.length}).`);
      return Promise.all(args.ids.map((id) => loadNode(ctx, String(id)))) as any;
    },
  }),
}));
