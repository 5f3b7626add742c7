import { builder } from "../../core/graph/builder.js";
import { getEmbed, type EmbedView } from "./embed.js";

/** Embeds of a space's content on the graph and on /v1 (GitBook's Embed shape): see embed.ts. */

const EmbedRef = builder.objectRef<EmbedView>("Embed").implement({
  description: "How an embedded URL is shown: a link with the page's title, its site's name and icon.",
  fields: (t) => ({
    type: t.string({ description: "link.", resolve: (e) => e.type }),
    title: t.exposeString("title", { description: "The page's title, else its host name." }),
    site: t.exposeString("site", { description: "The site's name, else its host name." }),
    icon: t.exposeString("icon", { nullable: true, description: "URL of the site's icon, when the page names one." }),
  }),
});

builder.queryField("spaceEmbed", (t) =>
  t.field({
    type: EmbedRef,
    description: "What an embed of `url` in the space shows (callers who can read the space).",
    args: {
      spaceId: t.arg.string({ required: true }),
      url: t.arg.string({ required: true, description: "The embedded URL (http or https)." }),
    },
    resolve: (_r, args, ctx) => getEmbed(ctx, args.spaceId, args.url),
  }),
);
