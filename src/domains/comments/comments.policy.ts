import { atLeast, type Role } from "../../core/access/roles.js";

export const COMMENT_PERMISSIONS = ["view", "edit", "reply", "delete"] as const;

type Authored = { postedById: string };

/** Reading a comment needs a role on its space (any role reads); writing needs `comment`. */
export function canComment(role: Role | null): boolean {
  return atLeast(role, "comment");
}

/** Only the author edits a comment's body, and only while they may still comment there. */
export function canEditBody(role: Role | null, comment: Authored, userId: string): boolean {
  return comment.postedById === userId && canComment(role);
}

/** The author deletes their own comment; a space admin deletes anyone's. */
export function canDelete(role: Role | null, comment: Authored, userId: string): boolean {
  return comment.postedById === userId || atLeast(role, "admin");
}

/** The `permissions` object of a comment or a reply for the caller. */
export function commentPermissions(role: Role | null, comment: Authored, userId: string) {
  return {
    view: atLeast(role, "read"),
    edit: canEditBody(role, comment, userId),
    reply: canComment(role),
    delete: canDelete(role, comment, userId),
  };
}
