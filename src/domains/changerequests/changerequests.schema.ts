import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { jsonScalar } from "../../core/graph/scalars.js";
import { spaceParent } from "../spaces/spaces.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { GRAPH_ONLY, KEEP_NULL, listOf, pageArgs, restName, restOnly, urlsOf } from "../../core/graph/rest-fields.js";
import { UserRef } from "../users/users.schema.js";
import { userById } from "../../core/graph/shared-loaders.js";
import {
  ContentReferenceList,
  FileList,
  FileRef,
  ImportResult,
  LinkReportRef,
  PageDocumentScalar,
  PageRef,
  PageTypeEnum,
  RevisionPages,
  RevisionRef,
  fileUploadArgs,
  importArgs,
  reusableContentWriteArgs,
  variablesArg,
  ReusableContentRef,
  ReusableContentDeletePayload,
  VariableDeletePayload,
  FileDeletePayload,
  VariablesScalar,
  linkArgs,
  pageReadArgs,
  pageWriteArgs,
  readArgs,
} from "../content/content.schema.js";
import * as content from "../content/content.service.js";
import * as reusable from "../content/reusable.service.js";
import type { LinkStatus } from "../content/links.js";
import * as service from "./changerequests.service.js";
import { invalidScalarValue } from "../../core/errors.js";

export const ChangeRequestStatusEnum = builder.enumType("ChangeRequestStatus", {
  values: {
    draft: { description: "Being written; created in this status." },
    open: { description: "Ready for review." },
    merged: { description: "Merged into the space (POST …/merge); it no longer changes." },
    archived: { description: "Closed without merging; it can be reopened (draft or open)." },
  } as const,
});

const ChangeRequestUrls = urlsOf("ChangeRequestUrls", ["app", "location"] as const);

export const ChangeRequestRef = builder.prismaNode("ChangeRequest", {
  id: { field: "id" },
  description: "Proposed edits to a space, merged into its content later.",
  fields: (t) => ({
    object: t.string({ resolve: () => "change-request" }),
    number: t.exposeInt("number", { description: "Incremental identifier inside the space; usable wherever a change request id is." }),
    status: t.field({ type: ChangeRequestStatusEnum, resolve: (cr) => cr.status }),
    spaceId: t.string({
      extensions: restOnly("space"),
      description: "Id of the space the change request belongs to.",
      resolve: (cr) => cr.spaceId,
    }),
    space: t.relation("space", { extensions: GRAPH_ONLY, description: "The space the change request belongs to." }),
    subject: t.string({ description: 'What it changes; "" when it has no subject.', resolve: (cr) => cr.subject ?? "" }),
    createdBy: t.field({
      type: UserRef,
      resolve: async (cr, _a, ctx) => (await userById(ctx).load(cr.createdById))!,
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    revision: t.exposeString("revisionId", { description: "Id of the change request's active revision." }),
    revisionInitial: t.exposeString("revisionInitial", { description: "The space's revision it was created from." }),
    revisionMergedAncestor: t.exposeString("revisionMergedAncestor", {
      nullable: true,
      description: "The space's revision it was last updated from (POST …/update); absent before the first update.",
    }),
    revisionMerged: t.exposeString("revisionMerged", {
      nullable: true,
      description: "The space's revision made by merging it; absent until merged.",
    }),
    commentsCount: t.exposeInt("openCommentsCount", { extensions: restName("comments"), description: "Number of open comments." }),
    outdated: t.boolean({
      description: "True while the space's content changed since the change request's base (draft and open change requests).",
      resolve: (cr, _a, ctx) => service.isOutdated(ctx, cr),
    }),
    urls: t.field({ type: ChangeRequestUrls, resolve: (cr, _a, ctx) => service.changeRequestUrls(ctx, cr) }),
    content: t.field({
      type: RevisionRef,
      extensions: GRAPH_ONLY,
      description: "The change request's active revision.",
      resolve: (cr, _a, ctx) => content.changeRequestRevisionView(ctx, cr),
    }),
  }),
});

const ChangeRequestList = listOf("ChangeRequestList", ChangeRequestRef);

const MergeResultKind = builder.enumType("ChangeRequestMergeResultKind", {
  values: {
    merge: { description: "The change request was merged into the space." },
    update: { description: "The space's changes were brought into the change request." },
  } as const,
});
const MergeResult = builder.objectRef<service.MergeOutcome>("ChangeRequestMergeResult").implement({
  fields: (t) => ({
    revision: t.exposeString("revision", {
      description: "The resulting revision: the space's after a merge, the change request's after an update.",
    }),
    result: t.field({ type: MergeResultKind, resolve: (r) => r.result }),
  }),
});
const PdfResult = builder.objectRef<{ url: string }>("ChangeRequestPdf").implement({
  fields: (t) => ({ url: t.exposeString("url", { description: "Where the PDF is served (GET with the API token)." }) }),
});

// A merge revision names the change request it merged (`mergedFrom`), the one whose
// revisionMerged it is.
builder.objectField(RevisionRef, "mergedFrom", (t) =>
  t.field({
    type: ChangeRequestRef,
    nullable: true,
    description: "On a merge revision: the change request it merged.",
    resolve: async (r, _a, ctx) =>
      r.type === "merge" ? ctx.prisma.changeRequest.findFirst({ where: { spaceId: r.ref.spaceId, revisionMerged: r.id } }) : null,
  }),
);

// ─── Graph fields on Space ───────────────────────────────────────────────────────────────────

builder.prismaObjectFields("Space", (t) => ({
  // Counts kept with the space's row (prisma/schema.prisma): no statement of their own.
  changeRequestsCount: t.exposeInt("changeRequestsCount", {
    extensions: restName("changeRequests"),
    description: "Number of change requests.",
  }),
  openChangeRequestsCount: t.exposeInt("openChangeRequestsCount", {
    extensions: restName("changeRequestsOpen"),
    description: "Number of open change requests.",
  }),
  draftChangeRequestsCount: t.exposeInt("draftChangeRequestsCount", {
    extensions: restName("changeRequestsDraft"),
    description: "Number of draft change requests.",
  }),
  changeRequests: t.relatedConnection("changeRequests", {
    description: "Change requests of the space, newest first; all statuses unless `status` is given.",
    cursor: "id",
    totalCount: true,
    extensions: GRAPH_ONLY,
    args: { status: t.arg({ type: ChangeRequestStatusEnum }) },
    query: (args) => ({ where: args.status ? { status: args.status } : {}, orderBy: [{ number: "desc" }] }),
  }),
}));

// ─── Operations ──────────────────────────────────────────────────────────────────────────────

const crArgs = builder.args((t) => ({
  spaceId: t.string({ required: true }),
  changeRequestId: t.string({ required: true, description: "Id or number of the change request." }),
}));

builder.queryFields((t) => ({
  changeRequests: t.field({
    type: ChangeRequestList,
    description: "Change requests of a space, newest first.",
    args: {
      spaceId: t.arg.string({ required: true }),
      ...pageArgs,
      status: t.arg({
        type: ChangeRequestStatusEnum,
        defaultValue: "open",
        description: "Only change requests in this status (default open).",
      }),
      creator: t.arg.string({ description: "Only change requests created by this user (id)." }),
      contributor: t.arg.string({ description: "Only change requests this user (id) contributed to: created or edited." }),
    },
    resolve: (_r, args, ctx) => service.listChangeRequests(ctx, args.spaceId, args),
  }),
  changeRequest: t.field({
    type: ChangeRequestRef,
    args: { ...crArgs },
    resolve: (_r, args, ctx) => service.getChangeRequest(ctx, args.spaceId, args.changeRequestId),
  }),
  changeRequestPdf: t.field({
    type: PdfResult,
    description: "Where to get the change request's content as a PDF; `pageId` restricts it to one page.",
    args: { ...crArgs, pageId: t.arg.string({ description: "Only this page." }) },
    resolve: (_r, args, ctx) => service.changeRequestPdf(ctx, args.spaceId, args.changeRequestId, args.pageId),
  }),

  // Change request content: the same shapes as the space's content.
  changeRequestContent: t.field({
    type: RevisionRef,
    description: "The change request's active revision.",
    args: { ...crArgs, ...readArgs },
    resolve: (_r, args, ctx) => content.getContent(ctx, args.spaceId, args.changeRequestId),
  }),
  changeRequestPages: t.field({
    type: RevisionPages,
    args: { ...crArgs, ...readArgs },
    resolve: (_r, args, ctx) => content.getPages(ctx, args.spaceId, args.changeRequestId),
  }),
  changeRequestFiles: t.field({
    type: FileList,
    args: { ...crArgs, ...pageArgs, ...readArgs },
    resolve: (_r, args, ctx) => content.listFiles(ctx, args.spaceId, args.changeRequestId, args),
  }),
  changeRequestFile: t.field({
    type: FileRef,
    args: { ...crArgs, fileId: t.arg.string({ required: true }), ...readArgs },
    resolve: (_r, args, ctx) => content.getFile(ctx, args.spaceId, args.changeRequestId, args.fileId),
  }),
  changeRequestFileBacklinks: t.field({
    type: ContentReferenceList,
    args: { ...crArgs, fileId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => content.fileBacklinks(ctx, args.spaceId, args.changeRequestId, args.fileId, args),
  }),
  changeRequestPage: t.field({
    type: PageRef,
    args: { ...crArgs, ...pageReadArgs, ...readArgs },
    resolve: (_r, args, ctx) => content.getPage(ctx, args.spaceId, args.changeRequestId, args.pageId, args.format),
  }),
  changeRequestReusableContent: t.field({
    type: ReusableContentRef,
    description: "A reusable content of the change request's content.",
    args: { ...crArgs, reusableContentId: t.arg.string({ required: true }), ...readArgs },
    resolve: (_r, args, ctx) => reusable.getReusableContent(ctx, args.spaceId, args.changeRequestId, args.reusableContentId),
  }),
  changeRequestVariables: t.field({
    type: VariablesScalar,
    description: "The variables of the change request's content.",
    args: { ...crArgs },
    resolve: (_r, args, ctx) => reusable.getVariables(ctx, args.spaceId, args.changeRequestId),
  }),
  changeRequestPageLinks: t.field({
    type: LinkReportRef,
    args: { ...crArgs, pageId: t.arg.string({ required: true }), ...pageArgs, ...linkArgs },
    resolve: (_r, args, ctx) =>
      content.contentLinks(ctx, args.spaceId, args.changeRequestId, args.pageId, args.status as LinkStatus | null, args),
  }),
}));

const ChangeRequestPageDeletePayload = deletionPayload("ChangeRequestPageDeletePayload", "page", spaceParent);

builder.mutationFields((t) => ({
  changeRequestCreate: t.field({
    type: ChangeRequestRef,
    description: "Creates a change request (draft) from the space's active revision (edit role).",
    args: {
      spaceId: t.arg.string({ required: true }),
      subject: t.arg.string({ description: `At most ${service.SUBJECT_MAX} characters.` }),
      agentTaskId: t.arg.string({ description: "Id of the agent task the change request implements." }),
    },
    resolve: (_r, args, ctx) => service.createChangeRequest(ctx, args.spaceId, args),
  }),
  changeRequestUpdate: t.field({
    type: ChangeRequestRef,
    description:
      "Changes the subject (its author, or the edit role) or the status (edit role): draft ↔ open, → archived, archived → draft or open.",
    args: {
      ...crArgs,
      subject: t.arg.string({ description: `At most ${service.SUBJECT_MAX} characters; null or empty removes it.` }),
      status: t.arg({ type: ChangeRequestStatusEnum }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { spaceId, changeRequestId, ...patch } = argsWithNulls(ctx, rawArgs);
      return service.updateChangeRequest(ctx, spaceId, changeRequestId, patch);
    },
  }),
  changeRequestMerge: t.field({
    type: MergeResult,
    description:
      "Merges the change request into the space (review role; the space must be live). Conflicts answer 409 naming the pages; nothing is written.",
    args: { ...crArgs },
    resolve: (_r, args, ctx) => service.mergeChangeRequest(ctx, args.spaceId, args.changeRequestId),
  }),
  changeRequestUpdateFromMain: t.field({
    type: MergeResult,
    description:
      "Brings the space's changes into the change request (edit role). Conflicts answer 409 naming the pages and lines; nothing is written.",
    args: { ...crArgs },
    resolve: (_r, args, ctx) => service.updateChangeRequestFromMain(ctx, args.spaceId, args.changeRequestId),
  }),

  // Change request content edits (draft and open change requests; edit role).
  changeRequestContentImport: t.field({
    type: ImportResult,
    args: { ...crArgs, ...importArgs },
    resolve: (_r, args, ctx) => content.importContent(ctx, args.spaceId, args.changeRequestId, args),
  }),
  changeRequestPageCreate: t.field({
    type: PageRef,
    args: {
      ...crArgs,
      ...pageWriteArgs,
      title: t.arg.string({ required: true, description: "At most 256 characters." }),
      type: t.arg({ type: PageTypeEnum, description: "document (default), group or link." }),
    },
    resolve: (_r, args, ctx) => {
      const { spaceId, changeRequestId, ...input } = argsWithNulls(ctx, args);
      return content.createPage(ctx, spaceId, changeRequestId, input);
    },
  }),
  changeRequestPageUpdate: t.field({
    type: PageRef,
    args: { ...crArgs, pageId: t.arg.string({ required: true }), ...pageWriteArgs },
    resolve: (_r, args, ctx) => {
      const { spaceId, changeRequestId, pageId, ...input } = argsWithNulls(ctx, args);
      return content.updatePage(ctx, spaceId, changeRequestId, pageId, input);
    },
  }),
  changeRequestPageDelete: t.field({
    type: ChangeRequestPageDeletePayload,
    args: { ...crArgs, pageId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(content.deletePage(ctx, args.spaceId, args.changeRequestId, args.pageId), args.pageId, args.spaceId),
  }),
  changeRequestFileUpload: t.field({
    type: FileRef,
    args: { ...crArgs, ...fileUploadArgs },
    resolve: (_r, args, ctx) => content.uploadFile(ctx, args.spaceId, args.changeRequestId, args),
  }),
  changeRequestFileDelete: t.field({
    type: FileDeletePayload,
    description: "Removes a file from the change request's content (the space's content keeps it until the change request is merged).",
    args: { ...crArgs, fileId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) =>
      deleted(reusable.deleteFile(ctx, args.spaceId, args.changeRequestId, args.fileId), args.fileId, args.spaceId),
  }),
  changeRequestReusableContentCreate: t.field({
    type: ReusableContentRef,
    args: { ...crArgs, ...reusableContentWriteArgs, title: t.arg.string({ required: true, description: "At most 256 characters." }) },
    resolve: (_r, args, ctx) => {
      const { spaceId, changeRequestId, ...input } = argsWithNulls(ctx, args);
      return reusable.createReusableContent(ctx, spaceId, changeRequestId, input);
    },
  }),
  changeRequestReusableContentUpdate: t.field({
    type: ReusableContentRef,
    args: { ...crArgs, reusableContentId: t.arg.string({ required: true }), ...reusableContentWriteArgs },
    resolve: (_r, args, ctx) => {
      const { spaceId, changeRequestId, reusableContentId, ...input } = argsWithNulls(ctx, args);
      return reusable.updateReusableContent(ctx, spaceId, changeRequestId, reusableContentId, input);
    },
  }),
  changeRequestReusableContentDelete: t.field({
    type: ReusableContentDeletePayload,
    args: { ...crArgs, reusableContentId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) =>
      deleted(
        reusable.deleteReusableContent(ctx, args.spaceId, args.changeRequestId, args.reusableContentId),
        args.reusableContentId,
        args.spaceId,
      ),
  }),
  changeRequestVariablesReplace: t.field({
    type: VariablesScalar,
    description: "Replaces the variables of the change request's content with the given ones; answers them.",
    args: { ...crArgs, ...variablesArg },
    resolve: (_r, args, ctx) => reusable.setVariables(ctx, args.spaceId, args.changeRequestId, args.variables, "replace"),
  }),
  changeRequestVariablesUpdate: t.field({
    type: VariablesScalar,
    description: "Sets the given variables of the change request's content, keeping the others; answers all of them.",
    args: { ...crArgs, ...variablesArg },
    resolve: (_r, args, ctx) => reusable.setVariables(ctx, args.spaceId, args.changeRequestId, args.variables, "merge"),
  }),
  changeRequestVariableDelete: t.field({
    type: VariableDeletePayload,
    args: { ...crArgs, variableName: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) =>
      deleted(reusable.deleteVariable(ctx, args.spaceId, args.changeRequestId, args.variableName), args.variableName, args.spaceId),
  }),
}));

// ─── Batched content changes (GitBook's updateChangeRequestContent) ──────────────────────────

const ContentOperationEnum = builder.enumType("ChangeRequestContentOperation", {
  values: {
    insert_page: { description: "Insert a page (document required; into, at, ref, page metadata)." },
    update_page: {
      description: "Update a page (page required): its document, metadata, or place (into: a page id or null for the top level; at).",
    },
    delete_page: { description: "Delete a page and its sub-pages (page)." },
    revert_page: { description: "Revert a page to a revision of the space (revision; the change request's base when omitted)." },
    insert_files: { description: "Add files (files: 1 to 20, each from a url or base64 bytes)." },
  } as const,
});

const ContentDocumentInput = builder.inputType("ChangeRequestContentDocumentInput", {
  description: "A page's document: {markdown} (frontmatter sets the page's metadata), {document} (a JSON document), or {} (empty).",
  fields: (t) => ({
    markdown: t.string({ description: "The page as markdown." }),
    document: t.field({ type: PageDocumentScalar, description: "The page as a JSON document (the `format=document` shape)." }),
  }),
});

const ContentFileInput = builder.inputType("ChangeRequestContentFileInput", {
  description: "A file to add: exactly one of url (fetched by the server) and base64 (then contentType is required).",
  fields: (t) => ({
    ref: t.string({ description: "A name for this file inside the batch: pages of the batch link to it as `./<ref>`." }),
    name: t.string({ required: true, description: "File name with its extension (1 to 256 characters)." }),
    contentType: t.string({ description: "Media type; required with base64, else the served one." }),
    url: t.string({ description: "A public http(s) URL to fetch the file from." }),
    base64: t.string({ description: "The bytes, base64-encoded." }),
  }),
});

const ContentChangeInput = builder.inputType("ChangeRequestContentChangeInput", {
  description: "One change of a batch; `operation` says which fields it takes.",
  fields: (t) => ({
    operation: t.field({ type: ContentOperationEnum, required: true }),
    page: t.string({ description: "Id of the page (update_page, delete_page, revert_page)." }),
    title: t.string({ description: "Title (1 to 256 characters)." }),
    slug: t.string({ description: "Path segment in the parent; derived from the title when omitted." }),
    emoji: t.string({ description: 'Emoji; "" removes it.' }),
    icon: t.string({ description: 'Icon name; "" removes it.' }),
    description: t.string({ description: 'Description; "" removes it.' }),
    hidden: t.boolean({ description: "Hidden from the navigation." }),
    noIndex: t.boolean({ description: "Left out of search." }),
    noRobotsIndex: t.boolean({ description: "Left out of search engines' indexes." }),
    condition: t.string({ description: 'Adaptive-content condition: only "" (pages have no conditions here).' }),
    document: t.field({ type: ContentDocumentInput, description: "The page's document (insert_page, update_page)." }),
    into: t.string({ extensions: KEEP_NULL, description: "Parent page id; null (update_page) moves the page to the top level." }),
    at: t.int({ description: "Index among the siblings (0 first); last when omitted." }),
    ref: t.string({ description: "A name for the inserted page inside the batch: other pages of the batch link to it as `./<ref>.md`." }),
    revision: t.string({ description: "Revision of the space to revert to (revert_page)." }),
    block: t.stringList({ description: "Not supported: pages are reverted whole." }),
    files: t.field({ type: [ContentFileInput], description: "Files to add (insert_files)." }),
  }),
});

const ContentPageUrls = urlsOf("ChangeRequestContentPageUrls", ["location"] as const);
const ContentPage = builder.objectRef<content.ContentChangeView["page"]>("ChangeRequestContentPage").implement({
  fields: (t) => ({
    id: t.exposeString("id"),
    urls: t.field({
      type: ContentPageUrls,
      nullable: true,
      description: "Where to read the page (absent for a deleted page).",
      resolve: (p) => p.urls,
    }),
  }),
});

const PAGE_REF_SCHEMA = {
  type: "object",
  required: ["object", "id", "urls"],
  additionalProperties: false,
  properties: {
    object: { type: "string", enum: ["page"] },
    id: { type: "string" },
    urls: { type: "object", required: ["location"], additionalProperties: false, properties: { location: { type: "string" } } },
  },
};

/** The /v1 form of the changes: a deleted page is named by its id alone, the others by a page reference. */
jsonScalar("ChangeRequestContentChangesJSON", {
  description:
    "Pages a batch touched: created_page {ref?, page}, updated_page {page} with page {object, id, urls.location}, deleted_page {page: id}.",
  extensions: {
    jsonSchema: {
      type: "array",
      items: {
        oneOf: [
          {
            type: "object",
            required: ["object", "page"],
            additionalProperties: false,
            properties: { object: { type: "string", enum: ["created_page"] }, ref: { type: "string" }, page: PAGE_REF_SCHEMA },
          },
          {
            type: "object",
            required: ["object", "page"],
            additionalProperties: false,
            properties: { object: { type: "string", enum: ["updated_page"] }, page: PAGE_REF_SCHEMA },
          },
          {
            type: "object",
            required: ["object", "page"],
            additionalProperties: false,
            properties: { object: { type: "string", enum: ["deleted_page"] }, page: { type: "string" } },
          },
        ],
      },
    },
  },
  serialize: (value) =>
    (value as content.ContentChangeView[]).map((c) =>
      c.object === "deleted_page"
        ? { object: c.object, page: c.page.id }
        : { object: c.object, ...(c.ref ? { ref: c.ref } : {}), page: { object: "page", id: c.page.id, urls: c.page.urls } },
    ),
  parseValue: () => {
    throw invalidScalarValue("ChangeRequestContentChangesJSON", "ChangeRequestContentChangesJSON is an output type.");
  },
});

const ContentChange = builder.objectRef<content.ContentChangeView>("ChangeRequestContentChange").implement({
  description: "A page a batch touched.",
  fields: (t) => ({
    object: t.exposeString("object", { description: "created_page, updated_page or deleted_page." }),
    ref: t.string({ nullable: true, description: "The ref the batch gave an inserted page.", resolve: (c) => c.ref ?? null }),
    page: t.field({ type: ContentPage, resolve: (c) => c.page }),
  }),
});

const ContentUpdate = builder.objectRef<content.ContentUpdateView>("ChangeRequestContentUpdate").implement({
  description: "The result of a batch of changes (compat false).",
  fields: (t) => ({
    changeRequest: t.field({ type: ChangeRequestRef, resolve: (u) => u.changeRequest }),
    changes: t.field({
      type: [ContentChange],
      extensions: { restType: "ChangeRequestContentChangesJSON" },
      description: "One entry per page touched, in the order first touched.",
      resolve: (u) => u.changes,
    }),
    insertedFiles: t.field({ type: [FileRef], description: "Files the batch added, in order.", resolve: (u) => u.insertedFiles }),
  }),
});

const ContentUpdateResult = builder.unionType("ChangeRequestContentUpdateResult", {
  description:
    "The change request (compat true, the default), or the change request with the pages touched and the files added (compat false).",
  types: [ChangeRequestRef, ContentUpdate],
  resolveType: (value) => ("changes" in value && "changeRequest" in value ? ContentUpdate : ChangeRequestRef),
});

builder.mutationFields((t) => ({
  changeRequestContentUpdate: t.field({
    type: ContentUpdateResult,
    description:
      "Applies up to 50 content changes to a draft or open change request, in order, as one revision; " +
      "the first change that does not apply rejects the whole batch (400 naming it) and nothing is written (edit role).",
    args: {
      ...crArgs,
      changes: t.arg({ type: [ContentChangeInput], required: true }),
      compat: t.arg.boolean({ defaultValue: true, description: "false answers the pages touched and the files added too." }),
    },
    resolve: (_r, args, ctx) =>
      content.updateChangeRequestContent(ctx, args.spaceId, args.changeRequestId, args.changes as any, args.compat ?? true),
  }),
}));
