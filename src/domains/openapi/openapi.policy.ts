import type { Member } from "../../generated/prisma/client.js";
import { atLeast, type Role } from "../../core/access/roles.js";

export const OPENAPI_PERMISSIONS = ["view", "edit"] as const;

/**
 * The role needed to create, change or delete OpenAPI specs: the organization permission
 * `createOpenAPISpec` (role create or above).
 */
export const EDIT_ROLE: Role = "create";

/**
 * Who reads a spec: members with a role read every spec of their organization; guests, who reach
 * only what is shared with them, read only the specs whose visibility is public (the same ones the
 * web app publishes to anyone). Strangers read none through the API (404).
 */
export function canViewSpec(member: Pick<Member, "role"> | null, spec: { visibility: string }): boolean {
  if (!member) return false;
  return member.role !== null || spec.visibility === "public";
}

/** What the caller may do with an OpenAPI spec: see canViewSpec; create or above edit. */
export function openApiPermissions(member: Pick<Member, "role"> | null, spec: { visibility: string }) {
  return {
    view: canViewSpec(member, spec),
    edit: member !== null && atLeast(member.role as Role | null, EDIT_ROLE),
  };
}
