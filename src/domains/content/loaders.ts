import type { Organization, User } from "../../generated/prisma/client.js";
import { byKeys, defineSharedLoader } from "../../core/loaders.js";

/** Organizations by id (references to organizations the caller is a member of). */
export const organizationById = defineSharedLoader<string, Organization | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.organization.findMany({ where: { id: { in: [...ids] } } }), (o) => o.id),
);

/** Users by id (authors of change requests). */
export const userById = defineSharedLoader<string, User | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.user.findMany({ where: { id: { in: [...ids] } } }), (u) => u.id),
);
