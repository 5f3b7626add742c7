import type { PrismaClient } from "../../generated/prisma/client.js";

/** Removes for good the spaces deleted more than `retentionDays` ago. */
export async function purgeDeletedSpaces(prisma: PrismaClient, retentionDays: number, now = new Date()) {
  const cutoff = new Date(now.getTime() - retentionDays * 24 * 60 * 60 * 1000);
  const { count } = await prisma.space.deleteMany({ where: { deletedAt: { lt: cutoff } } });
  return count;
}
