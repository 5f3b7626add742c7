import type { Member } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership, requireOrgRole } from "../../core/access/access.js";
import type { Role } from "../../core/access/roles.js";

/**
 * Who may do what with an organization's docs sites.
 *
 * - Reading sites, their sections, groups, site spaces, adaptive schema and condition templates:
 *   any member of the organization (guests included). Anyone else: 404, as if it did not exist.
 * - Changing them (create, update, publish, unpublish, sections, groups, site spaces, ordering,
 *   adaptive schema): organization role `create` or above (the Organization permission
 *   `createContent`).
 * - Deleting a site, managing its share links and reading its visitor-auth key: `admin`.
 * - The published structure (GET …/published) is for visitors: see published.ts.
 */
export const SITE_EDIT_ROLE: Role = "create";
export const SITE_ADMIN_ROLE: Role = "admin";

export function requireSiteReader(ctx: Context, organizationId: string): Promise<Member> {
  return requireMembership(ctx, organizationId);
}

export function requireSiteEditor(ctx: Context, organizationId: string, action: string): Promise<Member> {
  return requireOrgRole(ctx, organizationId, SITE_EDIT_ROLE, action);
}

export function requireSiteAdmin(ctx: Context, organizationId: string, action: string): Promise<Member> {
  return requireOrgRole(ctx, organizationId, SITE_ADMIN_ROLE, action);
}
