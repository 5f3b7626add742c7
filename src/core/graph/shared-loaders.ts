import type { Organization, User } from "../../generated/prisma/client.js";
import { byKeys, defineSharedLoader } from "./loaders.js";

/*
 * Rows that every domain refers to by id, one loader each so that their reads by different
 * domains in one request, and by the requests under way, are one statement.
 */

/** Organizations by id (whether the caller may see one is decided by whoever refers to it). */
export const organizationById = defineSharedLoader<string, Organization | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.organization.findMany({ where: { id: { in: [...ids] } } }), (o) => o.id),
);

/** Users by id (authors, members, repliers, reactions). */
export const userById = defineSharedLoader<string, User | null>(async (ids, prisma) =>
  byKeys(ids, await prisma.user.findMany({ where: { id: { in: [...ids] } } }), (u) => u.id),
);
