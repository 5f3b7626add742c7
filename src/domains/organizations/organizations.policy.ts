import type { Member } from "../../generated/prisma/client.js";
import { atLeast, type Role } from "../../core/access/roles.js";

export const ORGANIZATION_PERMISSIONS = [
  "view",
  "admin",
  "ownTeam",
  "createContent",
  "createOpenAPISpec",
  "ingestConversations",
  "viewBilling",
  "listMembers",
  "listTeams",
  "listIntegrations",
  "access",
  "listInstallations",
  "installIntegration",
] as const;

/** What a member may do in their organization; a non-member may do nothing. */
export function organizationPermissions(member: Pick<Member, "role"> | null) {
  const role = (member?.role ?? null) as Role | null;
  const isMember = member !== null;
  const isFullMember = isMember && role !== null; // guests see only what is shared with them
  return {
    view: isMember,
    admin: atLeast(role, "admin"),
    ownTeam: atLeast(role, "admin"),
    createContent: atLeast(role, "create"),
    createOpenAPISpec: atLeast(role, "create"),
    ingestConversations: atLeast(role, "admin"),
    viewBilling: atLeast(role, "admin"),
    listMembers: isFullMember,
    listTeams: isFullMember,
    listIntegrations: atLeast(role, "admin"),
    access: isMember,
    // Installations are listed to members of the installing organization, managed by its admins.
    listInstallations: isMember,
    installIntegration: atLeast(role, "admin"),
  };
}
