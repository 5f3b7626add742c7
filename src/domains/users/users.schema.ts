import { builder } from "../../core/graph/builder.js";
import { urlsOf } from "../../core/graph/rest-fields.js";

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
