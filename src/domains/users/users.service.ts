import type { User } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { notFound } from "../../core/errors.js";
import { viewerMemberships } from "../../core/access/access.js";
import { userById } from "../../core/graph/shared-loaders.js";
import { canViewMember } from "../members/members.policy.js";

/**
 * A user by id (GET /v1/users/{userId}): the caller themself, or someone the caller may see as a
 * member of an organization they share — by the members rules, a member with a role sees every
 * member of the organization, a guest only themself. Anyone else is 404, as if they did not
 * exist: nothing says whether a user of another organization exists.
 */
export async function getUser(ctx: Context, userId: string): Promise<User> {
  const missing = () => notFound(`User "${userId}"`);
  if (ctx.viewer.anonymous || !ctx.viewer.userId) throw missing();
  const user = await userById(ctx).load(userId);
  if (!user) throw missing();
  if (userId === ctx.viewer.userId) return user;
  const theirs = await ctx.prisma.member.findMany({ where: { userId }, select: { organizationId: true } });
  const mine = await viewerMemberships(
    ctx,
    theirs.map((m) => m.organizationId),
  );
  if (!mine.some((member) => member && canViewMember(member, userId))) throw missing();
  return user;
}
