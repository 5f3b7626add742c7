import { builder } from "../../core/graph/builder.js";
import { badInput, invalidScalarValue } from "../../core/errors.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { jsonScalar, stringScalar } from "../../core/graph/scalars.js";
import { spaceParent } from "../spaces/spaces.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { GRAPH_ONLY, ListNext, listOf, pageArgs, urlsOf } from "../../core/graph/rest-fields.js";
import { OrganizationRef } from "../organizations/organizations.schema.js";
import { SpaceRef } from "../spaces/spaces.schema.js";
import { spaceById } from "../spaces/spaces.access.js";
import { organizationById } from "../../core/graph/shared-loaders.js";
import { GITBOOK_DOCUMENT_JSON_SCHEMA, PAGE_DOCUMENT_JSON_SCHEMA } from "./gitbook-document.js";
import { LINK_STATUSES, type LinkItemView, type LinkReportView, type LinkStatus, type ReferenceView } from "./links.js";
import {
  fileViews,
  pageJson,
  pageViews,
  reusableContentViews,
  type FileView,
  type PageView,
  type ReusableContentView,
  type RevisionView,
} from "./views.js";
import { REVISION_TYPES } from "./revisions.js";
import {
  SEARCH_QUERY_MAX,
  searchOrganization,
  searchSpace,
  type SearchPageView,
  type SearchSectionView,
  type SearchSpaceView,
} from "./search.js";
import * as service from "./content.service.js";
import * as reusable from "./reusable.service.js";

// ─── Scalars: JSON values with a documented shape ────────────────────────────────────────────

/**
 * The /v1 form of `Page.pages`: the sub-pages as JSON, each a Page (with its own `pages`), since
 * a REST operation cannot select a recursive type to any depth. GraphQL clients get typed pages.
 */
jsonScalar("PageTreeJSON", {
  description: "Sub-pages of a page as JSON: an array of Page objects, each with its own `pages`.",
  extensions: { jsonSchema: { type: "array", items: { $ref: "#/components/schemas/Page" } } },
  serialize: (value) => (value as PageView[]).map(pageJson),
  parseValue: () => {
    throw invalidScalarValue("PageTreeJSON", "PageTreeJSON is an output type.");
  },
});

const PageDocumentScalar = jsonScalar("PageDocument", {
  description: PAGE_DOCUMENT_JSON_SCHEMA.description,
  extensions: { jsonSchema: PAGE_DOCUMENT_JSON_SCHEMA },
  serialize: (value) => value,
  parseValue: (value) => value,
});

export const GitBookDocumentScalar = jsonScalar("GitBookDocument", {
  description: GITBOOK_DOCUMENT_JSON_SCHEMA.description,
  extensions: { jsonSchema: GITBOOK_DOCUMENT_JSON_SCHEMA },
  serialize: (value) => value,
  parseValue: () => {
    throw invalidScalarValue("GitBookDocument", "GitBookDocument is an output type.");
  },
});

const VariablesScalar = jsonScalar("ContentVariables", {
  description:
    "Variables (GitBook's `Variables`): a map of names to values, each a string (at most 256 characters), a number or a boolean. " +
    "Names: letters, digits and underscores, not starting with a digit nor with two underscores, at most 64 characters; at most 100 variables.",
  extensions: {
    jsonSchema: { type: "object", additionalProperties: { oneOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }] } },
  },
  serialize: (value) => value,
  parseValue: (value) => value,
});

/** Link status: its `in-app` value cannot be a GraphQL enum value, so it is a checked string. */
export const LinkStatusScalar = stringScalar("LinkStatus", {
  description: "ok (no problem), broken (the target does not exist in the revision), in-app (a URL pointing to an internal app location).",
  extensions: { jsonSchema: { type: "string", enum: [...LINK_STATUSES] } },
  serialize: (value) => String(value),
  parseValue: (value) => {
    // Not String(value): an object whose toString is not a function would throw a TypeError.
    if (typeof value !== "string" || !(LINK_STATUSES as string[]).includes(value))
      throw invalidScalarValue("LinkStatus", `status must be one of ${LINK_STATUSES.join(", ")} (got ${JSON.stringify(value)})`);
    return value;
  },
});

// ─── Enumerations ────────────────────────────────────────────────────────────────────────────

export const RevisionTypeEnum = builder.enumType("RevisionType", {
  description:
    "What made a revision: initial (the empty content a space starts with), edits (page and file changes), " +
    "merge (a change request merged into the space), update (the space's changes brought into a change request), import (content imported from a URL).",
  values: REVISION_TYPES,
});

export const PageTypeEnum = builder.enumType("PageType", {
  values: {
    document: { description: "A page with markdown content." },
    group: { description: "A heading holding pages; it adds no segment to their paths." },
    link: { description: "A page pointing to a URL (its `markdown` is `[title](url)`)." },
  } as const,
});

export const PageFormatEnum = builder.enumType("PageFormat", {
  values: {
    markdown: { description: "The page with its markdown (default)." },
    document: {
      description:
        "The page with `document`, GitBook's JSONDocument derived from its markdown, instead of `markdown` (as GitBook answers).",
    },
  } as const,
});

export const LinkRelationEnum = builder.enumType("LinkRelation", {
  values: {
    reference: { description: "A link: `[text](target)`." },
    image: { description: "An embedded image: `![alt](target)`." },
  } as const,
});

export const ImportSourceEnum = builder.enumType("ImportSource", {
  values: {
    website: { description: "An HTML page and the pages of the same site under its folder (at most 50)." },
    html: { description: "One HTML page." },
    markdown: { description: "One markdown file." },
  } as const,
});

// ─── Page ────────────────────────────────────────────────────────────────────────────────────

const PageUrls = urlsOf("PageUrls", ["app"] as const);
const ContentGitRef = builder.objectRef<{ oid: string; path: string }>("ContentGitRef").implement({
  description: "Where a page or file lives in a synchronized Git repository (absent: Git Sync is not configured).",
  fields: (t) => ({ oid: t.exposeString("oid"), path: t.exposeString("path") }),
});

const PageLayout = builder.objectRef<NonNullable<PageView["layout"]>>("PageLayout").implement({
  description: "How a document page is laid out.",
  fields: (t) => ({
    width: t.exposeString("width", { description: "default or wide." }),
    cover: t.exposeBoolean("cover"),
    coverSize: t.exposeString("coverSize", { description: "hero or full." }),
    title: t.exposeBoolean("title"),
    description: t.exposeBoolean("description"),
    tableOfContents: t.exposeBoolean("tableOfContents"),
    outline: t.exposeBoolean("outline"),
    pagination: t.exposeBoolean("pagination"),
    coverMask: t.exposeString("coverMask", { description: "none: covers are shown unmasked." }),
    metadata: t.exposeBoolean("metadata", { description: "Whether the page's metadata is shown." }),
    tags: t.exposeBoolean("tags", { description: "Whether the page's tags are shown." }),
    actions: t.exposeBoolean("actions", { description: "Whether the page actions are shown." }),
    anchors: t.exposeBoolean("anchors", { description: "Whether heading anchors are shown." }),
  }),
});

const PageLinkTarget = builder.objectRef<{ kind: "url"; url: string }>("PageLinkTarget").implement({
  description: "Where a link page points.",
  fields: (t) => ({ kind: t.exposeString("kind", { description: "url." }), url: t.exposeString("url") }),
});

const PageTag = builder.objectRef<{ tag: string; primary?: boolean }>("PageTag").implement({
  description: "A tag of a page.",
  fields: (t) => ({ tag: t.exposeString("tag"), primary: t.boolean({ nullable: true, resolve: (p) => p.primary ?? null }) }),
});

const PageCoverRef = builder.objectRef<{ kind: string; file: string }>("PageCoverRef").implement({
  fields: (t) => ({
    kind: t.exposeString("kind", { description: "file." }),
    file: t.exposeString("file", { description: "Id of the image file." }),
  }),
});
const PageCover = builder
  .objectRef<{ ref?: { kind: string; file: string }; refDark?: { kind: string; file: string }; yPos: number }>("PageCover")
  .implement({
    description: "The cover image of a page.",
    fields: (t) => ({
      ref: t.field({ type: PageCoverRef, nullable: true, resolve: (c) => c.ref ?? null }),
      refDark: t.field({ type: PageCoverRef, nullable: true, resolve: (c) => c.refDark ?? null }),
      yPos: t.exposeFloat("yPos"),
    }),
  });
const PageComputed = builder.objectRef<{ type: string; dependencies: unknown; props: unknown }>("PageComputed").implement({
  description: "How a computed page is generated (absent: this server has no computed pages).",
  fields: (t) => ({
    type: t.exposeString("type"),
    dependencies: t.field({ type: "JSON", resolve: (c) => c.dependencies }),
    props: t.field({ type: "JSON", resolve: (c) => c.props }),
  }),
});

export const PageRef = builder.objectRef<PageView>("Page");
PageRef.implement({
  description: "A page of a revision: a document, a group of pages, or a link.",
  fields: (t) => ({
    id: t.exposeString("id"),
    title: t.exposeString("title"),
    emoji: t.string({
      nullable: true,
      description: "A Unicode character or hex codepoint; absent when none.",
      resolve: (p) => p.emoji ?? null,
    }),
    icon: t.string({ nullable: true, resolve: (p) => p.icon ?? null }),
    createdAt: t.field({ type: "DateTime", resolve: (p) => p.createdAt }),
    updatedAt: t.field({ type: "DateTime", resolve: (p) => p.updatedAt }),
    markdown: t.string({
      nullable: true,
      description: "The page's content as markdown (absent for groups, and with format=document).",
      resolve: (p) => p.markdown ?? null,
    }),
    type: t.field({ type: PageTypeEnum, resolve: (p) => p.type }),
    kind: t.exposeString("kind", { deprecationReason: "sheet for documents, else the page type." }),
    tags: t.field({ type: [PageTag], description: "Tags of the page: none (pages carry no tags here).", resolve: (p) => p.tags }),
    target: t.field({
      type: PageLinkTarget,
      nullable: true,
      description: "Where a link page points (link pages only).",
      resolve: (p) => p.target ?? null,
    }),
    urls: t.field({ type: PageUrls, resolve: (p) => p.urls }),
    slug: t.exposeString("slug"),
    path: t.exposeString("path", { description: "Slugs of the page and its ancestors joined by / (groups add none)." }),
    description: t.string({ nullable: true, resolve: (p) => p.description ?? null }),
    documentId: t.string({
      nullable: true,
      description: "Id of the page's document (document pages only).",
      resolve: (p) => p.documentId ?? null,
    }),
    pages: t.field({
      type: [PageRef],
      description: "Sub-pages, in order (recursive). On /v1 they are JSON Page objects.",
      extensions: { restType: "PageTreeJSON" },
      resolve: (p) => p.pages,
    }),
    layout: t.field({ type: PageLayout, nullable: true, resolve: (p) => p.layout ?? null }),
    cover: t.field({ type: PageCover, nullable: true, resolve: () => null }),
    variables: t.field({ type: VariablesScalar, nullable: true, resolve: () => null }),
    hidden: t.exposeBoolean("hidden"),
    noIndex: t.exposeBoolean("noIndex"),
    noRobotsIndex: t.exposeBoolean("noRobotsIndex"),
    git: t.field({ type: ContentGitRef, nullable: true, resolve: () => null }),
    computed: t.field({ type: PageComputed, nullable: true, resolve: () => null }),
    computedSeed: t.string({ nullable: true, resolve: () => null }),
    document: t.field({
      type: PageDocumentScalar,
      nullable: true,
      description: "The page as GitBook's JSONDocument; only on a single page read with format=document (which leaves out `markdown`).",
      resolve: (p) => p.document ?? null,
    }),
  }),
});

// ─── File ────────────────────────────────────────────────────────────────────────────────────

const FileDimensions = builder.objectRef<{ width: number; height: number }>("FileDimensions").implement({
  fields: (t) => ({ width: t.exposeInt("width"), height: t.exposeInt("height") }),
});

export const FileRef = builder.objectRef<FileView>("File").implement({
  description: "A file of a revision. Its bytes are served at `downloadURL` (GET with the API token).",
  fields: (t) => ({
    id: t.exposeString("id"),
    name: t.exposeString("name"),
    contentType: t.exposeString("contentType"),
    downloadURL: t.exposeString("downloadURL"),
    size: t.exposeInt("size", { description: "Size in bytes." }),
    dimensions: t.field({
      type: FileDimensions,
      nullable: true,
      description: "Width and height of images, in pixels.",
      resolve: (f) => f.dimensions ?? null,
    }),
    git: t.field({ type: ContentGitRef, nullable: true, resolve: () => null }),
  }),
});
const FileList = listOf("FileList", FileRef);

// ─── Revision ────────────────────────────────────────────────────────────────────────────────

const RevisionUrls = urlsOf("RevisionUrls", ["app", "published", "public"] as const, ["published", "public"]);
const RevisionGit = builder
  .objectRef<{ oid: string; message?: string; createdByService?: boolean; url?: string; ref?: string }>("RevisionGit")
  .implement({
    description: "The Git commit of a revision (absent: Git Sync is not configured).",
    fields: (t) => ({
      oid: t.exposeString("oid"),
      message: t.string({ nullable: true, resolve: (g) => g.message ?? null }),
      createdByService: t.boolean({ nullable: true, resolve: (g) => g.createdByService ?? null }),
      url: t.string({ nullable: true, resolve: (g) => g.url ?? null }),
      ref: t.string({ nullable: true, resolve: (g) => g.ref ?? null }),
    }),
  });

export const ReusableContentRef = builder.objectRef<ReusableContentView>("ReusableContent").implement({
  description: "A block of content reused across pages (GitBook's RevisionReusableContent), with its markdown.",
  fields: (t) => ({
    id: t.exposeString("id"),
    title: t.exposeString("title"),
    markdown: t.exposeString("markdown", { description: "The content as markdown." }),
    document: t.string({
      nullable: true,
      description:
        "Id of its document (derived from the markdown; read it at …/revisions/{revisionId}/reusable-contents/{id}/document); absent when it is empty.",
      resolve: (r) => r.document ?? null,
    }),
    git: t.field({ type: ContentGitRef, nullable: true, resolve: () => null }),
  }),
});

const RevisionTag = builder.objectRef<{ id: string; title: string }>("RevisionTag").implement({
  description: "A tag available in a revision.",
  fields: (t) => ({ id: t.exposeString("id"), title: t.exposeString("title") }),
});

export const RevisionRef = builder.objectRef<RevisionView>("Revision").implement({
  description: "An immutable snapshot of a space's or a change request's content.",
  fields: (t) => ({
    object: t.string({ resolve: () => "revision" }),
    id: t.exposeString("id"),
    parents: t.exposeStringList("parents", { description: "Ids of the revisions it was made from." }),
    pages: t.field({
      type: [PageRef],
      description: "Top-level pages, each with its sub-pages.",
      resolve: (r, _a, ctx) => pageViews(ctx, r.ref, r.content),
    }),
    files: t.field({
      type: [FileRef],
      resolve: (r, _a, ctx) => fileViews(ctx, r.ref.spaceId, r.content),
    }),
    reusableContents: t.field({
      type: [ReusableContentRef],
      description: "Reusable contents, by title.",
      resolve: (r) => reusableContentViews(r.content),
    }),
    variables: t.field({ type: VariablesScalar, resolve: (r) => r.content.variables }),
    createdAt: t.field({ type: "DateTime", resolve: (r) => r.createdAt }),
    git: t.field({ type: RevisionGit, nullable: true, resolve: () => null }),
    urls: t.field({ type: RevisionUrls, resolve: (r) => r.urls }),
    type: t.field({ type: RevisionTypeEnum, resolve: (r) => r.type as (typeof REVISION_TYPES)[number] }),
    tags: t.field({
      type: [RevisionTag],
      description: "Tags available in the revision: none (content carries no tags here).",
      resolve: () => [],
    }),
  }),
});

const RevisionPages = builder.objectRef<{ pages: PageView[] }>("RevisionPages").implement({
  fields: (t) => ({ pages: t.field({ type: [PageRef], resolve: (p) => p.pages }) }),
});

const ImportResult = builder
  .objectRef<{ revision: string; importedResources: number; totalResources: number }>("ContentImportResult")
  .implement({
    fields: (t) => ({
      revision: t.exposeString("revision", { description: "Id of the revision holding the imported pages." }),
      importedResources: t.exposeInt("importedResources", { description: "Pages imported." }),
      totalResources: t.exposeInt("totalResources", { description: "Resources found (imported, or skipped by the limits or on errors)." }),
    }),
  });

// ─── References and link reports ─────────────────────────────────────────────────────────────

const VersionContext = builder.objectRef<{ type: "revision"; revision: string }>("ContentVersionContext").implement({
  description: "The revision a reference was read in.",
  fields: (t) => ({ type: t.exposeString("type", { description: "revision." }), revision: t.exposeString("revision") }),
});

export const ContentReferenceRef = builder.objectRef<ReferenceView>("ContentReference").implement({
  description:
    "What a link points to, or where it is. kind: url (`url`), page (`page`, `space`, `versionContext`), anchor (`page`, `anchor`, …), " +
    "file (`file`, `space`, `versionContext`), space (`space`), organization (`organization`). A broken target keeps the link as written in `url`.",
  fields: (t) => ({
    kind: t.exposeString("kind"),
    url: t.string({
      nullable: true,
      description: "The URL, or the link as written when its target is missing.",
      resolve: (r) => r.url ?? null,
    }),
    page: t.string({ nullable: true, description: "Id of the page.", resolve: (r) => r.page ?? null }),
    anchor: t.string({ nullable: true, description: "Anchor of a heading of the page.", resolve: (r) => r.anchor ?? null }),
    organization: t.field({
      type: OrganizationRef,
      nullable: true,
      resolve: async (r, _a, ctx) => (r.organizationId ? await organizationById(ctx).load(r.organizationId) : null),
    }),
    space: t.field({
      type: SpaceRef,
      nullable: true,
      resolve: async (r, _a, ctx) => (r.spaceId ? await spaceById(ctx).load(r.spaceId) : null),
    }),
    versionContext: t.field({ type: VersionContext, nullable: true, resolve: (r) => r.versionContext ?? null }),
    file: t.field({ type: FileRef, nullable: true, resolve: (r) => r.file ?? null }),
  }),
});
const ContentReferenceList = listOf("ContentReferenceList", ContentReferenceRef);

const LinkReportItem = builder.objectRef<LinkItemView>("LinkReportItem").implement({
  description: "A link target of the content with the pages that link to it.",
  fields: (t) => ({
    status: t.field({ type: LinkStatusScalar, resolve: (i) => i.status }),
    relation: t.field({ type: LinkRelationEnum, resolve: (i) => i.relation }),
    targetReference: t.field({ type: ContentReferenceRef, resolve: (i) => i.targetReference }),
    locationReferences: t.field({ type: [ContentReferenceRef], resolve: (i) => i.locationReferences }),
  }),
});

const LinkBrokenStats = builder.objectRef<LinkReportView["stats"]["broken"]>("LinkBrokenStats").implement({
  fields: (t) => ({
    total: t.exposeInt("total", { description: "Broken items of this content." }),
    changeRequest: t.exposeInt("changeRequest", {
      description:
        "Broken links that only change requests have: those a change request adds (its own report), or the sum over the space's draft and open change requests (a space's report).",
    }),
  }),
});
const LinkStats = builder.objectRef<LinkReportView["stats"]>("LinkStats").implement({
  fields: (t) => ({
    total: t.exposeInt("total", { description: "Items (distinct link targets), whatever the status filter." }),
    broken: t.field({ type: LinkBrokenStats, resolve: (s) => s.broken }),
  }),
});

export const LinkReportRef = builder.objectRef<LinkReportView>("LinkReport").implement({
  description: "Links of a content or a page, one item per target; `stats` ignores the status filter.",
  fields: (t) => ({
    next: t.field({ type: ListNext, nullable: true, resolve: (p) => p.next }),
    count: t.exposeInt("count", { description: "Items matching the filter, over all pages." }),
    items: t.field({ type: [LinkReportItem], resolve: (p) => p.items }),
    stats: t.field({ type: LinkStats, resolve: (p) => p.stats }),
  }),
});

// ─── Search ──────────────────────────────────────────────────────────────────────────────────

const SearchUrls = urlsOf("SearchResultUrls", ["app"] as const);
const SearchSection = builder.objectRef<SearchSectionView>("SearchSection").implement({
  description: "A part of a page (the text under a heading, or before the first one) that matches.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "The heading's anchor (the page id for the text before the first heading)." }),
    title: t.exposeString("title"),
    path: t.exposeString("path"),
    body: t.exposeString("body", { description: "The section's text (the first 300 characters)." }),
    urls: t.field({ type: SearchUrls, resolve: (s) => s.urls }),
  }),
});
const SearchPage = builder.objectRef<SearchPageView>("SearchPageResult").implement({
  fields: (t) => ({
    id: t.exposeString("id", { description: "Id of the page." }),
    title: t.exposeString("title"),
    path: t.exposeString("path"),
    sections: t.field({ type: [SearchSection], resolve: (p) => p.sections }),
    urls: t.field({ type: SearchUrls, resolve: (p) => p.urls }),
  }),
});
const SearchSpace = builder.objectRef<SearchSpaceView>("SearchSpaceResult").implement({
  fields: (t) => ({
    id: t.exposeString("id", { description: "Id of the space." }),
    title: t.exposeString("title"),
    pages: t.field({ type: [SearchPage], resolve: (s) => s.pages }),
  }),
});
const SearchPageList = listOf("SearchPageList", SearchPage);
const SearchSpaceList = listOf("SearchSpaceList", SearchSpace);

// ─── Arguments ───────────────────────────────────────────────────────────────────────────────

export const readArgs = builder.args((t) => ({
  metadata: t.boolean({ defaultValue: true, description: "false leaves out mutable Git metadata (there is none without Git Sync)." }),
  computed: t.boolean({ defaultValue: true, description: "false skips computing content (this server has no computed pages)." }),
}));

export const pageReadArgs = builder.args((t) => ({
  pageId: t.string({ required: true }),
  format: t.field({
    type: PageFormatEnum,
    defaultValue: "markdown",
    description: "markdown (default), or document for `document` instead of `markdown`.",
  }),
  evaluated: t.boolean({
    defaultValue: false,
    description: "Evaluate expressions of the document (this server's content has none: accepted, same output).",
  }),
}));

export const pageWriteArgs = builder.args((t) => ({
  title: t.string({ description: "At most 256 characters." }),
  markdown: t.string({ description: "Content of a document page." }),
  description: t.string({ description: "At most 1000 characters; null or empty removes it." }),
  parent: t.string({ description: "Id of the parent page; null for the top level." }),
  position: t.int({ description: "Index among the siblings (0 first); last when omitted." }),
  hidden: t.boolean({ description: "Hidden from the published navigation." }),
  emoji: t.string({ description: "A Unicode character or hex codepoint; null removes it." }),
  href: t.string({ description: "URL a link page points to." }),
  slug: t.string({ description: "Path segment (lowercase letters, digits, hyphens); derived from the title when omitted." }),
}));

export const fileUploadArgs = builder.args((t) => ({
  name: t.string({ required: true, description: "File name, such as diagram.png." }),
  contentType: t.string({ required: true, description: "Media type, such as image/png." }),
  data: t.string({ required: true, description: "The bytes, base64-encoded (at most 10 MB decoded)." }),
}));

export const reusableContentWriteArgs = builder.args((t) => ({
  title: t.string({ description: "At most 256 characters." }),
  markdown: t.string({ description: "The content as markdown (at most 1,000,000 characters)." }),
  document: t.field({
    type: PageDocumentScalar,
    description:
      "The content as a JSON document (GitBook's JSONDocument, the `format=document` shape; the older text shape is read too), instead of markdown.",
  }),
}));

export const variablesArg = builder.args((t) => ({
  variables: t.field({ type: VariablesScalar, required: true }),
}));

export const documentReadArgs = builder.args((t) => ({
  evaluated: t.string({
    description: "true, false or deterministic-only: this server's documents hold no expressions (accepted, same output).",
  }),
  dereferenced: t.string({ description: "true, false or reusable-contents: documents are served as stored (accepted, same output)." }),
}));

export const importArgs = builder.args((t) => ({
  url: t.string({ required: true, description: "Where to import from (http or https)." }),
  source: t.field({ type: ImportSourceEnum, required: true }),
}));

export const linkArgs = builder.args((t) => ({
  status: t.field({ type: LinkStatusScalar, description: "Only links with this status." }),
}));

// Exported for the change request content area, which serves the same shapes.
export { FileList, ContentReferenceList, RevisionPages, ImportResult, PageDocumentScalar, VariablesScalar };

// ─── Space content operations ────────────────────────────────────────────────────────────────

builder.queryFields((t) => ({
  spaceSearch: t.field({
    type: SearchPageList,
    description: `Pages of the space's content matching a query (full text, title matches first). query: at most ${SEARCH_QUERY_MAX} characters.`,
    args: { spaceId: t.arg.string({ required: true }), query: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => searchSpace(ctx, args.spaceId, args.query, args),
  }),
  organizationSearch: t.field({
    type: SearchSpaceList,
    description: `Spaces of the organization the caller can read, each with its pages matching a query, best first. query: at most ${SEARCH_QUERY_MAX} characters.`,
    args: { organizationId: t.arg.string({ required: true }), query: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => searchOrganization(ctx, args.organizationId, args.query, args),
  }),
  spaceContent: t.field({
    type: RevisionRef,
    description: "The space's active revision.",
    args: { spaceId: t.arg.string({ required: true }), ...readArgs },
    resolve: (_r, args, ctx) => service.getContent(ctx, args.spaceId),
  }),
  spacePages: t.field({
    type: RevisionPages,
    description: "The page tree of the space's active revision.",
    args: { spaceId: t.arg.string({ required: true }), ...readArgs },
    resolve: (_r, args, ctx) => service.getPages(ctx, args.spaceId),
  }),
  spaceFiles: t.field({
    type: FileList,
    description: "Files of the space's active revision, by name.",
    args: { spaceId: t.arg.string({ required: true }), ...pageArgs, ...readArgs },
    resolve: (_r, args, ctx) => service.listFiles(ctx, args.spaceId, null, args),
  }),
  spaceFile: t.field({
    type: FileRef,
    args: { spaceId: t.arg.string({ required: true }), fileId: t.arg.string({ required: true }), ...readArgs },
    resolve: (_r, args, ctx) => service.getFile(ctx, args.spaceId, null, args.fileId),
  }),
  spaceFileBacklinks: t.field({
    type: ContentReferenceList,
    description: "Pages of the space's active revision that use the file (`![](file:<id>)`, `[](file:<id>)` or its downloadURL).",
    args: { spaceId: t.arg.string({ required: true }), fileId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => service.fileBacklinks(ctx, args.spaceId, null, args.fileId, args),
  }),
  spacePage: t.field({
    type: PageRef,
    args: { spaceId: t.arg.string({ required: true }), ...pageReadArgs, ...readArgs },
    resolve: (_r, args, ctx) => service.getPage(ctx, args.spaceId, null, args.pageId, args.format),
  }),
  spaceReusableContent: t.field({
    type: ReusableContentRef,
    description: "A reusable content of the space's active revision.",
    args: { spaceId: t.arg.string({ required: true }), reusableContentId: t.arg.string({ required: true }), ...readArgs },
    resolve: (_r, args, ctx) => reusable.getReusableContent(ctx, args.spaceId, null, args.reusableContentId),
  }),
  spaceVariables: t.field({
    type: VariablesScalar,
    description: "The variables of the space's active revision.",
    args: { spaceId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => reusable.getVariables(ctx, args.spaceId, null),
  }),
  revisionReusableContent: t.field({
    type: ReusableContentRef,
    description: "A reusable content of a revision of the space (its own, or one of its change requests').",
    args: {
      spaceId: t.arg.string({ required: true }),
      revisionId: t.arg.string({ required: true }),
      reusableContentId: t.arg.string({ required: true }),
      ...readArgs,
    },
    resolve: (_r, args, ctx) => reusable.getRevisionReusableContent(ctx, args.spaceId, args.revisionId, args.reusableContentId),
  }),
  revisionReusableContentDocument: t.field({
    type: GitBookDocumentScalar,
    description: "The document of a reusable content of a revision: GitBook's JSONDocument, derived from its markdown.",
    args: {
      spaceId: t.arg.string({ required: true }),
      revisionId: t.arg.string({ required: true }),
      reusableContentId: t.arg.string({ required: true }),
      ...documentReadArgs,
    },
    resolve: (_r, args, ctx) => {
      checkDocumentReadArgs(args);
      return reusable.getRevisionReusableContentDocument(ctx, args.spaceId, args.revisionId, args.reusableContentId);
    },
  }),
  spacePageLinks: t.field({
    type: LinkReportRef,
    description: "Links of a page of the space's active revision.",
    args: { spaceId: t.arg.string({ required: true }), pageId: t.arg.string({ required: true }), ...pageArgs, ...linkArgs },
    resolve: (_r, args, ctx) => service.contentLinks(ctx, args.spaceId, null, args.pageId, args.status as LinkStatus | null, args),
  }),
  spaceLinks: t.field({
    type: LinkReportRef,
    description: "Links of every page of the space's active revision.",
    args: { spaceId: t.arg.string({ required: true }), ...pageArgs, ...linkArgs },
    resolve: (_r, args, ctx) => service.contentLinks(ctx, args.spaceId, null, null, args.status as LinkStatus | null, args),
  }),
}));

const PageDeletePayload = deletionPayload("PageDeletePayload", "page", spaceParent);
export const ReusableContentDeletePayload = deletionPayload("ReusableContentDeletePayload", "reusable content", spaceParent);
export const VariableDeletePayload = deletionPayload("ContentVariableDeletePayload", "variable (its name)", spaceParent);
export const FileDeletePayload = deletionPayload("FileDeletePayload", "file", spaceParent);

/** `evaluated` and `dereferenced` of a document read: GitBook's values, checked. */
export function checkDocumentReadArgs(args: { evaluated?: string | null; dereferenced?: string | null }): void {
  if (args.evaluated != null && !["true", "false", "deterministic-only"].includes(args.evaluated))
    throw badInput("evaluated must be true, false or deterministic-only.");
  if (args.dereferenced != null && !["true", "false", "reusable-contents"].includes(args.dereferenced))
    throw badInput("dereferenced must be true, false or reusable-contents.");
}

builder.mutationFields((t) => ({
  spaceContentImport: t.field({
    type: ImportResult,
    description: "Imports pages from a URL into the space's content as a new revision (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), ...importArgs },
    resolve: (_r, args, ctx) => service.importContent(ctx, args.spaceId, null, args),
  }),
  pageCreate: t.field({
    type: PageRef,
    description: "Creates a page in the space's content (edit role; the space must be live).",
    args: {
      spaceId: t.arg.string({ required: true }),
      ...pageWriteArgs,
      title: t.arg.string({ required: true, description: "At most 256 characters." }),
      type: t.arg({ type: PageTypeEnum, description: "document (default), group or link." }),
    },
    resolve: (_r, args, ctx) => service.createPage(ctx, args.spaceId, null, argsWithNulls(ctx, args)),
  }),
  pageUpdate: t.field({
    type: PageRef,
    description: "Changes a page of the space's content; giving parent or position moves it (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), pageId: t.arg.string({ required: true }), ...pageWriteArgs },
    resolve: (_r, args, ctx) => {
      const { spaceId: id, pageId, ...input } = argsWithNulls(ctx, args);
      return service.updatePage(ctx, id, null, pageId, input);
    },
  }),
  pageDelete: t.field({
    type: PageDeletePayload,
    description: "Deletes a page and its sub-pages from the space's content (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), pageId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(service.deletePage(ctx, args.spaceId, null, args.pageId), args.pageId, args.spaceId),
  }),
  fileUpload: t.field({
    type: FileRef,
    description: "Adds a file to the space's content (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), ...fileUploadArgs },
    resolve: (_r, args, ctx) => service.uploadFile(ctx, args.spaceId, null, args),
  }),
  fileDelete: t.field({
    type: FileDeletePayload,
    description:
      "Removes a file from the space's content (edit role; the space must be live). Older revisions and change requests that name it keep it.",
    args: { spaceId: t.arg.string({ required: true }), fileId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => deleted(reusable.deleteFile(ctx, args.spaceId, null, args.fileId), args.fileId, args.spaceId),
  }),
  reusableContentCreate: t.field({
    type: ReusableContentRef,
    description: "Creates a reusable content in the space's content (edit role; the space must be live).",
    args: {
      spaceId: t.arg.string({ required: true }),
      ...reusableContentWriteArgs,
      title: t.arg.string({ required: true, description: "At most 256 characters." }),
    },
    resolve: (_r, args, ctx) => {
      const { spaceId, ...input } = argsWithNulls(ctx, args);
      return reusable.createReusableContent(ctx, spaceId, null, input);
    },
  }),
  reusableContentUpdate: t.field({
    type: ReusableContentRef,
    description: "Changes the title or the content of a reusable content of the space's content (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), reusableContentId: t.arg.string({ required: true }), ...reusableContentWriteArgs },
    resolve: (_r, args, ctx) => {
      const { spaceId, reusableContentId, ...input } = argsWithNulls(ctx, args);
      return reusable.updateReusableContent(ctx, spaceId, null, reusableContentId, input);
    },
  }),
  reusableContentDelete: t.field({
    type: ReusableContentDeletePayload,
    description: "Deletes a reusable content of the space's content (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), reusableContentId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) =>
      deleted(reusable.deleteReusableContent(ctx, args.spaceId, null, args.reusableContentId), args.reusableContentId, args.spaceId),
  }),
  contentVariablesReplace: t.field({
    type: VariablesScalar,
    description: "Replaces the variables of the space's content with the given ones; answers them (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), ...variablesArg },
    resolve: (_r, args, ctx) => reusable.setVariables(ctx, args.spaceId, null, args.variables, "replace"),
  }),
  contentVariablesUpdate: t.field({
    type: VariablesScalar,
    description:
      "Sets the given variables of the space's content, keeping the others; answers all of them (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), ...variablesArg },
    resolve: (_r, args, ctx) => reusable.setVariables(ctx, args.spaceId, null, args.variables, "merge"),
  }),
  contentVariableDelete: t.field({
    type: VariableDeletePayload,
    description: "Deletes a variable of the space's content (edit role; the space must be live).",
    args: { spaceId: t.arg.string({ required: true }), variableName: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) =>
      deleted(reusable.deleteVariable(ctx, args.spaceId, null, args.variableName), args.variableName, args.spaceId),
  }),
}));

// ─── Graph fields on Space ───────────────────────────────────────────────────────────────────

builder.prismaObjectFields("Space", (t) => ({
  content: t.field({
    type: RevisionRef,
    extensions: GRAPH_ONLY,
    description: "The space's active revision, with its typed page tree and files.",
    resolve: (space, _a, ctx) => service.spaceRevisionView(ctx, space),
  }),
}));
