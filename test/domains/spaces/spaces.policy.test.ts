import { describe, expect, it } from "vitest";
import { ROLES, type Role } from "../../../src/core/access/roles.js";
import {
  SPACE_PERMISSIONS,
  SPACE_RULES,
  canOnSpace,
  effectiveSpaceRole,
  spacePermissions,
  spaceRefusal,
  type SpaceAction,
} from "../../../src/domains/spaces/spaces.policy.js";
import { collectionPermissions, effectiveCollectionRole } from "../../../src/domains/collections/collections.access.js";

const ALL: (Role | null)[] = [...ROLES, null];

describe("effectiveSpaceRole", () => {
  it("is null for strangers, whatever the space grants", () => {
    expect(effectiveSpaceRole({ member: null, spaceDefaultLevel: "admin", grants: ["admin"] })).toBeNull();
    expect(effectiveSpaceRole({ member: undefined, spaceDefaultLevel: null })).toBeNull();
  });

  it("makes organization admins admins of every space, even one whose default level is read", () => {
    expect(effectiveSpaceRole({ member: { role: "admin" }, spaceDefaultLevel: "read", collectionDefaultLevel: "read" })).toBe("admin");
  });

  it("gives members the space's default level, else the collection's, else their role", () => {
    expect(effectiveSpaceRole({ member: { role: "edit" }, spaceDefaultLevel: "comment", collectionDefaultLevel: "review" })).toBe(
      "comment",
    );
    expect(effectiveSpaceRole({ member: { role: "edit" }, spaceDefaultLevel: null, collectionDefaultLevel: "review" })).toBe("review");
    expect(effectiveSpaceRole({ member: { role: "edit" }, spaceDefaultLevel: null, collectionDefaultLevel: null })).toBe("edit");
  });

  it("takes the strongest of the inherited role and the grants", () => {
    expect(effectiveSpaceRole({ member: { role: "read" }, spaceDefaultLevel: null, grants: ["comment", "review"] })).toBe("review");
    expect(effectiveSpaceRole({ member: { role: "create" }, spaceDefaultLevel: null, grants: ["read"] })).toBe("create");
  });

  it("gives guests only what is granted to them", () => {
    expect(effectiveSpaceRole({ member: { role: null }, spaceDefaultLevel: "edit", collectionDefaultLevel: "edit" })).toBeNull();
    expect(effectiveSpaceRole({ member: { role: null }, spaceDefaultLevel: "edit", grants: ["comment"] })).toBe("comment");
  });
});

describe("effectiveCollectionRole", () => {
  it("is admin for admins, the default level or role for members, nothing for guests and strangers", () => {
    expect(effectiveCollectionRole({ member: { role: "admin" }, collectionDefaultLevel: "read" })).toBe("admin");
    expect(effectiveCollectionRole({ member: { role: "edit" }, collectionDefaultLevel: "read" })).toBe("read");
    expect(effectiveCollectionRole({ member: { role: "edit" }, collectionDefaultLevel: null })).toBe("edit");
    expect(effectiveCollectionRole({ member: { role: null }, collectionDefaultLevel: "read" })).toBeNull();
    expect(effectiveCollectionRole({ member: null, collectionDefaultLevel: "read" })).toBeNull();
  });

  it("lets create and above add content", () => {
    expect(ALL.filter((r) => collectionPermissions(r).create)).toEqual(["admin", "create"]);
  });
});

describe("canOnSpace", () => {
  it("lets every action through at its role and above, and refuses below", () => {
    for (const [action, rule] of Object.entries(SPACE_RULES)) {
      const allowed = ALL.filter((r) => canOnSpace(r, "live", action as SpaceAction));
      expect(allowed, action).toEqual(ROLES.slice(0, ROLES.indexOf(rule.role) + 1));
    }
  });

  it("locks edits, title and emoji included, for admins too; not comments, reviews, change requests or administration", () => {
    const locked = (Object.keys(SPACE_RULES) as SpaceAction[]).filter((a) => !canOnSpace("admin", "locked", a));
    expect(locked.sort()).toEqual(["edit", "merge", "triggerGitSync"]);
    expect(canOnSpace("edit", "locked", "proposeChanges")).toBe(true);
    expect(canOnSpace("admin", "locked", "administer")).toBe(true);
  });

  it("is what fills permissions: each field is canOnSpace of the same action", () => {
    for (const role of ALL) {
      for (const mode of ["live", "locked"] as const) {
        const permissions = spacePermissions(role, mode);
        expect(Object.keys(permissions)).toEqual([...SPACE_PERMISSIONS]);
        for (const p of SPACE_PERMISSIONS) expect(permissions[p], `${role} ${mode} ${p}`).toBe(canOnSpace(role, mode, p));
      }
    }
  });
});

describe("spaceRefusal", () => {
  it("is null exactly when canOnSpace allows", () => {
    for (const role of ALL) {
      for (const mode of ["live", "locked"] as const) {
        for (const action of Object.keys(SPACE_RULES) as SpaceAction[]) {
          expect(spaceRefusal(role, mode, action, "act") === null, `${role} ${mode} ${action}`).toBe(canOnSpace(role, mode, action));
        }
      }
    }
  });

  it("names the role needed first, then the lock", () => {
    expect(spaceRefusal("read", "locked", "edit", "change its title")).toBe(
      "Your role on this space (read) does not allow you to change its title; it needs edit.",
    );
    expect(spaceRefusal("admin", "locked", "edit", "change its title")).toMatch(/locked.*change its title.*editMode to live/);
  });
});
