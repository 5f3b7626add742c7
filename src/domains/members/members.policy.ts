import type { Member } from "../../generated/prisma/client.js";
import { atLeast, type Role } from "../../core/access/roles.js";

type Membership = Pick<Member, "userId" | "role">;

/** Members who are not guests see the whole member list; guests see only themselves. */
export function canListMembers(viewer: Membership): boolean {
  return viewer.role !== null;
}

export function canViewMember(viewer: Membership, userId: string): boolean {
  return canListMembers(viewer) || viewer.userId === userId;
}

/** An admin removes anyone; every member may leave by removing themself. */
export function canRemoveMember(viewer: Membership, userId: string): boolean {
  return atLeast(viewer.role as Role | null, "admin") || viewer.userId === userId;
}

/** True when taking `target` out of the admins would leave the organization without an active admin. */
export function isLastAdmin(target: Pick<Member, "role" | "disabled">, activeAdmins: number): boolean {
  return target.role === "admin" && !target.disabled && activeAdmins <= 1;
}
