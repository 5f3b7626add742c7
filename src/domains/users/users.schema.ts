import { builder } from "../../core/graph/builder.js";
import { urlsOf } from "../../core/graph/rest-fields.js";
import { getUser } from "./users.service.js";

const UserUrls = urlsOf("UserUrls", ["location"] as const);

export const UserRef = builder.prismaNode("User", {
  id: { field: "id" },
  description: "A person using the platform.",
  fields: (t) => ({
    object: t.string({ resolve: () => "user" }),
    displayName: t.exposeString("displayName"),
    email: t.exposeString("email"),
    photoURL: t.exposeString("photoURL", { nullable: true }),
    urls: t.field({ type: UserUrls, resolve: (u, _a, ctx) => ctx.urls.user(u.id) }),
  }),
});

builder.queryField("user", (t) =>
  t.field({
    type: UserRef,
    description: "A user: the caller, or a member of an organization the caller shares and may list the members of (404 otherwise).",
    args: { userId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => getUser(ctx, args.userId),
  }),
);
