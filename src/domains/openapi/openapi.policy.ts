import type { Member } from "../../generated/prisma/client.js";
import { atLeast, type Role } from "../../core/roles.js";

export const OPENAPI_PERMISSIONS = ["view", "edit"] as const;

/**
 * The role needed to create, change or delete OpenAPI specs: the organization permission
 * `createOpenAPISpec` (role create or above).
 */
export const EDIT_ROLE: Role = "create";

/** What the caller may do with an organization's OpenAPI specs: members read, create or above edit. */
export function openApiPermissions(member: Pick<Member, "role"> | null) {
  return {
    view: member !== null,
    edit: member !== null && atLeast(member.role as Role | null, EDIT_ROLE),
  };
}
