import type { Organization, User } from "../../generated/prisma/client.js";
import { byKeys, defineLoader } from "../../core/loaders.js";

/** Organizations by id (references to organizations the caller is a member of). */
export const organizationById = defineLoader<string, Organization | null>(async (ids, ctx) =>
  byKeys(ids, await ctx.prisma.organization.findMany({ where: { id: { in: [...ids] } } }), (o) => o.id),
);

/** Users by id (authors of change requests). */
export const userById = defineLoader<string, User | null>(async (ids, ctx) =>
  byKeys(ids, await ctx.prisma.user.findMany({ where: { id: { in: [...ids] } } }), (u) => u.id),
);
