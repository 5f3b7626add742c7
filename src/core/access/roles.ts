/** The spec's Role enumeration, strongest first; null is a guest. */
export const ROLES = ["admin", "create", "review", "edit", "comment", "read"] as const;
export type Role = (typeof ROLES)[number];
export const TEAM_ROLES = ["owner", "member"] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

const RANK: Record<Role, number> = { admin: 6, create: 5, review: 4, edit: 3, comment: 2, read: 1 };

export function rank(role: Role | null | undefined): number {
  return role ? RANK[role] : 0;
}

/** True when `role` grants at least `needed`. */
export function atLeast(role: Role | null | undefined, needed: Role): boolean {
  return rank(role) >= RANK[needed];
}

export function strongest(...roles: (Role | null | undefined)[]): Role | null {
  let best: Role | null = null;
  for (const r of roles) if (rank(r) > rank(best)) best = r ?? null;
  return best;
}
