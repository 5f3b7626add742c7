import type { Member } from "../../generated/prisma/client.js";
import type { TeamRole } from "../../core/access/roles.js";

export const TEAM_PERMISSIONS = ["admin", "view"] as const;

/**
 * What the caller may do with a team: organization admins and the team's owners manage it
 * (`admin`); members with an organization role see every team, guests only their own.
 */
export function teamPermissions(viewer: Pick<Member, "role"> | null, viewerTeamRole: TeamRole | null) {
  if (!viewer) return { admin: false, view: false };
  return {
    admin: viewer.role === "admin" || viewerTeamRole === "owner",
    view: viewer.role !== null || viewerTeamRole !== null,
  };
}
