import type { Member } from "../../generated/prisma/client.js";
import { atLeast, type Role } from "../../core/access/roles.js";

export const TRANSLATION_PERMISSIONS = ["view", "edit"] as const;

/** The role needed to create, change or delete translation settings. */
export const EDIT_ROLE: Role = "create";

/**
 * What the caller may do with an organization's translation settings: every member (guests
 * included) may read them; members with the `create` role or above (so admins too) may edit them.
 */
export function translationPermissions(member: Pick<Member, "role"> | null) {
  return {
    view: member !== null,
    edit: member !== null && atLeast(member.role as Role | null, EDIT_ROLE),
  };
}
