import { builder } from "../../core/graph/builder.js";
import {
  GitBookDocumentScalar,
  PageFormatEnum,
  PageRef,
  RevisionRef,
  checkDocumentReadArgs,
  documentReadArgs,
  readArgs,
} from "./content.schema.js";
import * as service from "./revision-pages.service.js";

/**
 * The reads of one revision by id that GitBook's reader makes (content/revision-pages.service.ts):
 * `GET /v1/spaces/{spaceId}/revisions/{revisionId}` and its `page/{pageId}`, `page/{pageId}/document`,
 * `path/{pagePath}`, `page/{pageId}/meta-links` and `changes`.
 */

const MarkdownRefsEnum = builder.enumType("MarkdownRefsFormat", {
  description: "How internal links are written in a page's markdown.",
  values: {
    relative: { description: "As stored (default)." },
    stable: { description: "GitBook's stable refs: /pages/<pageId>, /pages/<pageId>#<anchor>, /files/<fileId>." },
  } as const,
});

const revisionPageArgs = builder.args((t) => ({
  format: t.field({
    type: PageFormatEnum,
    defaultValue: "markdown",
    description: "markdown (default), or document for `document` (GitBook's JSONDocument) instead of `markdown`.",
  }),
  markdownRefs: t.field({
    type: MarkdownRefsEnum,
    description:
      "With format=markdown, how internal links are written (default relative: as stored). On /v1 GitBook's query parameter `format.markdown.refs` says the same.",
  }),
}));

const MetaLinkTarget = builder.objectRef<service.MetaLinkTarget>("RevisionPageMetaLinkTarget").implement({
  description: "A page of the content (`kind: page`) or a URL (`kind: url`).",
  fields: (t) => ({
    kind: t.exposeString("kind", { description: "page or url." }),
    page: t.string({ nullable: true, resolve: (m) => m.page ?? null }),
    url: t.string({ nullable: true, resolve: (m) => m.url ?? null }),
  }),
});

const MetaLinks = builder
  .objectRef<{ canonical?: service.MetaLinkTarget; alternates: service.MetaLinkTarget[] }>("RevisionPageMetaLinks")
  .implement({
    description: "Meta links of a page: its canonical location and alternates (pages carry none here: alternates is empty).",
    fields: (t) => ({
      canonical: t.field({ type: MetaLinkTarget, nullable: true, resolve: (m) => m.canonical ?? null }),
      alternates: t.field({ type: [MetaLinkTarget], resolve: (m) => m.alternates }),
    }),
  });

const ChangedPage = builder.objectRef<service.ChangedPage>("ChangedRevisionPage").implement({
  fields: (t) => ({
    id: t.exposeString("id"),
    type: t.exposeString("type", { description: "document, group or link." }),
    title: t.exposeString("title"),
    path: t.string({ nullable: true, description: "Path of the page (absent for groups).", resolve: (p) => p.path ?? null }),
  }),
});

const ChangedFile = builder.objectRef<NonNullable<service.SemanticChange["file"]>>("ChangedRevisionFile").implement({
  fields: (t) => ({
    id: t.exposeString("id"),
    name: t.exposeString("name"),
    contentType: t.exposeString("contentType"),
    downloadURL: t.exposeString("downloadURL"),
  }),
});

const ChangedReusableContent = builder
  .objectRef<NonNullable<service.SemanticChange["reusableContent"]>>("ChangedRevisionReusableContent")
  .implement({
    fields: (t) => ({
      id: t.exposeString("id"),
      title: t.exposeString("title"),
      document: t.string({ nullable: true, description: "Id of its document (absent when empty).", resolve: (r) => r.document ?? null }),
    }),
  });

const ChangedParent = builder.objectRef<NonNullable<service.SemanticChange["parent"]>>("ChangedRevisionPageParent").implement({
  description: "The parent of a moved page before and after (absent: the top level).",
  fields: (t) => ({
    before: t.field({ type: ChangedPage, nullable: true, resolve: (p) => p.before ?? null }),
    after: t.field({ type: ChangedPage, nullable: true, resolve: (p) => p.after ?? null }),
  }),
});

const SemanticChange = builder.objectRef<service.SemanticChange>("RevisionSemanticChange").implement({
  description:
    "One change of a revision against its parent: page_created, page_edited, page_moved, page_deleted (with `page`), " +
    "file_created, file_edited, file_deleted (with `file`), reusable_content_created, reusable_content_edited, reusable_content_deleted (with `reusableContent`).",
  fields: (t) => ({
    type: t.exposeString("type"),
    page: t.field({ type: ChangedPage, nullable: true, resolve: (c) => c.page ?? null }),
    file: t.field({ type: ChangedFile, nullable: true, resolve: (c) => c.file ?? null }),
    reusableContent: t.field({ type: ChangedReusableContent, nullable: true, resolve: (c) => c.reusableContent ?? null }),
    attributes: t.field({
      type: "JSON",
      nullable: true,
      description:
        "What was edited, each `{before, after}`: for pages title, description, slug, emoji, target (links) and document " +
        "(a fingerprint of the markdown); for files name, contentType, size; for reusable contents title and document.",
      resolve: (c) => c.attributes ?? null,
    }),
    parent: t.field({ type: ChangedParent, nullable: true, resolve: (c) => c.parent ?? null }),
  }),
});

const SemanticChanges = builder.objectRef<service.SemanticChanges>("RevisionSemanticChanges").implement({
  fields: (t) => ({
    changes: t.field({ type: [SemanticChange], resolve: (c) => c.changes }),
    more: t.int({ nullable: true, description: "Changes left out past `limit`.", resolve: (c) => c.more ?? null }),
  }),
});

const revisionIdArgs = builder.args((t) => ({
  spaceId: t.string({ required: true }),
  revisionId: t.string({ required: true }),
}));

builder.queryFields((t) => ({
  revision: t.field({
    type: RevisionRef,
    description: "A revision of the space (its own or one of its change requests'), with its page tree, files and reusable contents.",
    args: { ...revisionIdArgs, ...readArgs },
    resolve: (_r, args, ctx) => service.getRevision(ctx, args.spaceId, args.revisionId),
  }),
  revisionPage: t.field({
    type: PageRef,
    description: "A page of a revision: with its markdown (format=markdown), or with its document (format=document).",
    args: { ...revisionIdArgs, pageId: t.arg.string({ required: true }), ...revisionPageArgs, ...documentReadArgs, ...readArgs },
    resolve: (_r, args, ctx) => {
      checkDocumentReadArgs(args);
      return service.getRevisionPage(ctx, args.spaceId, args.revisionId, args.pageId, {
        format: args.format,
        refs: service.refsFormat(ctx, args.markdownRefs),
      });
    },
  }),
  revisionPageByPath: t.field({
    type: PageRef,
    description: "The page of a revision at a path (`a/b`, compared without case); 404 when none.",
    args: {
      ...revisionIdArgs,
      pagePath: t.arg.string({ required: true }),
      ...revisionPageArgs,
      ...documentReadArgs,
      ...readArgs,
      cachedMetadata: t.arg.boolean({ description: "Accepted: there is no Git metadata to cache." }),
    },
    resolve: (_r, args, ctx) => {
      checkDocumentReadArgs(args);
      return service.getRevisionPageByPath(ctx, args.spaceId, args.revisionId, args.pagePath, {
        format: args.format,
        refs: service.refsFormat(ctx, args.markdownRefs),
      });
    },
  }),
  revisionPageDocument: t.field({
    type: GitBookDocumentScalar,
    description: "The document of a page of a revision: GitBook's JSONDocument, derived from its markdown (404 for groups and links).",
    args: { ...revisionIdArgs, pageId: t.arg.string({ required: true }), ...documentReadArgs },
    resolve: (_r, args, ctx) => {
      checkDocumentReadArgs(args);
      return service.getRevisionPageDocument(ctx, args.spaceId, args.revisionId, args.pageId);
    },
  }),
  revisionPageMetaLinks: t.field({
    type: MetaLinks,
    description: "Meta links of a page of a revision.",
    args: { ...revisionIdArgs, pageId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getRevisionPageMetaLinks(ctx, args.spaceId, args.revisionId, args.pageId),
  }),
  revisionChanges: t.field({
    type: SemanticChanges,
    description: "What a revision changed against its parent: pages, files and reusable contents created, edited, moved, deleted.",
    args: {
      ...revisionIdArgs,
      limit: t.arg.int({ description: `How many changes at most (1 to ${service.CHANGES_LIMIT_MAX}, default 10).` }),
      ...readArgs,
    },
    resolve: (_r, args, ctx) => service.getRevisionChanges(ctx, args.spaceId, args.revisionId, args.limit),
  }),
}));
