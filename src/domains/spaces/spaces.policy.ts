import { atLeast, strongest, type Role } from "../../core/access/roles.js";

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

export const SPACE_PERMISSIONS = [
  "view",
  "access",
  "admin",
  "viewInviteLinks",
  "edit",
  "triggerGitSync",
  "comment",
  "merge",
  "review",
] as const;
export type SpacePermission = (typeof SPACE_PERMISSIONS)[number];
export type EditMode = "live" | "locked";

/**
 * What each action on a space needs: a role, and whether the space must be live (`editMode`
 * locked means "all edits are locked": its own content, title and emoji, merges). The actions
 * named like the `permissions` fields fill that object; the others are guards only. A guard and
 * the `permissions` field of the same action read the same rule, so they cannot disagree.
 */
export const SPACE_RULES = {
  view: { role: "read", live: false },
  access: { role: "read", live: false },
  admin: { role: "admin", live: false },
  viewInviteLinks: { role: "admin", live: false },
  /** Direct edits: the space's own content, its title and emoji. */
  edit: { role: "edit", live: true },
  triggerGitSync: { role: "edit", live: true },
  comment: { role: "comment", live: false },
  merge: { role: "review", live: true },
  review: { role: "review", live: false },
  /** Change requests stay writable while the space is locked: that is how locked content changes. */
  proposeChanges: { role: "edit", live: false },
  /** editMode, defaultLevel, delete, restore, move, transfer, grants: what admins keep while the space is locked. */
  administer: { role: "admin", live: false },
} as const satisfies Record<string, { role: Role; live: boolean }>;
export type SpaceAction = keyof typeof SPACE_RULES;

/** True when a caller with `role` on a space in `editMode` may do `action`. */
export function canOnSpace(role: Role | null | undefined, editMode: EditMode, action: SpaceAction): boolean {
  const rule = SPACE_RULES[action];
  return atLeast(role, rule.role) && (!rule.live || editMode === "live");
}

/**
 * Why `action` is refused, in words for a 403 (null when it is allowed): first the role it
 * needs, then the lock. `what` names the action ("change its title").
 */
export function spaceRefusal(role: Role | null | undefined, editMode: EditMode, action: SpaceAction, what: string): string | null {
  const rule = SPACE_RULES[action];
  if (!atLeast(role, rule.role)) return `Your role on this space (${role ?? "none"}) does not allow you to ${what}; it needs ${rule.role}.`;
  if (rule.live && editMode !== "live")
    return `This space is locked (editMode locked): nobody can ${what} until an admin sets editMode to live.`;
  return null;
}

/** The Space `permissions` object: one canOnSpace per field. */
export function spacePermissions(role: Role | null, editMode: EditMode): Record<SpacePermission, boolean> {
  return Object.fromEntries(SPACE_PERMISSIONS.map((p) => [p, canOnSpace(role, editMode, p)])) as Record<SpacePermission, boolean>;
}

/** The keys of the Space `permissions` object: the space's rules, and `installIntegration`. */
export const SPACE_PERMISSION_KEYS = [...SPACE_PERMISSIONS, "installIntegration"] as const;

/**
 * The Space `permissions` object. `installIntegration` follows the integrations policy:
 * installations in a space are managed by admins of its organization (`organizationRole`),
 * whatever their role on the space.
 */
export function spacePermissionsFor(role: Role | null, editMode: EditMode, organizationRole: Role | null) {
  return { ...spacePermissions(role, editMode), installIntegration: atLeast(organizationRole, "admin") };
}
