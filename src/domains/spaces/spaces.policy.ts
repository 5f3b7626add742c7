import { atLeast, strongest, type Role } from "../../core/roles.js";

/**
 * Who may do what on a space.
 *
 * A member's role on a space is the strongest of:
 * - their explicit grants on it (SpaceAccess rows for them or for one of their teams), and
 * - for members who are not guests, the space's `defaultLevel`, else its parent collection's
 *   `defaultLevel`, else their organization role.
 * Organization admins are admins of every space. Guests (role null) reach only what is granted
 * to them. No role at all means the space does not exist for them (404).
 */
export function effectiveSpaceRole(input: {
  /** The caller's organization membership; undefined when they are not a member. */
  member: { role: Role | null } | null | undefined;
  spaceDefaultLevel: Role | null;
  collectionDefaultLevel?: Role | null;
  grants?: Role[];
}): Role | null {
  const { member } = input;
  if (!member) return null;
  if (member.role === "admin") return "admin";
  const inherited = member.role === null ? null : (input.spaceDefaultLevel ?? input.collectionDefaultLevel ?? member.role);
  return strongest(inherited, ...(input.grants ?? []));
}

/** A collection's role for a member: admins administer; others get its defaultLevel or their role. */
export function effectiveCollectionRole(input: {
  member: { role: Role | null } | null | undefined;
  collectionDefaultLevel: Role | null;
}): Role | null {
  const { member } = input;
  if (!member) return null;
  if (member.role === "admin") return "admin";
  if (member.role === null) return null;
  return input.collectionDefaultLevel ?? member.role;
}

export const SPACE_PERMISSIONS = ["view", "access", "admin", "viewInviteLinks", "edit", "triggerGitSync", "comment", "merge", "review"] as const;

/** The Space `permissions` object for a role; edits are off while the space is locked. */
export function spacePermissions(role: Role | null, editMode: "live" | "locked") {
  const live = editMode === "live";
  return {
    view: atLeast(role, "read"),
    access: atLeast(role, "read"),
    admin: atLeast(role, "admin"),
    viewInviteLinks: atLeast(role, "admin"),
    edit: live && atLeast(role, "edit"),
    triggerGitSync: live && atLeast(role, "edit"),
    comment: atLeast(role, "comment"),
    merge: live && atLeast(role, "review"),
    review: atLeast(role, "review"),
  };
}

export const COLLECTION_PERMISSIONS = ["view", "admin", "viewInviteLinks", "create"] as const;

export function collectionPermissions(role: Role | null) {
  return {
    view: atLeast(role, "read"),
    admin: atLeast(role, "admin"),
    viewInviteLinks: atLeast(role, "admin"),
    create: atLeast(role, "create"),
  };
}
