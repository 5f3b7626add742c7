import { routes } from "../../rest/route.js";

const content = "/spaces/{spaceId}/content";

export default [
  ...routes("Space content", [
    { method: "GET", path: "/spaces/{spaceId}/search", field: "Query.spaceSearch", summary: "Search the space's content" },
    {
      method: "GET",
      path: "/spaces/{spaceId}/embed",
      field: "Query.spaceEmbed",
      summary: "How an embedded URL is shown (GitBook's Embed)",
    },
    { method: "GET", path: content, field: "Query.spaceContent", summary: "Get the space's active revision" },
    { method: "POST", path: `${content}/import`, field: "Mutation.spaceContentImport", status: 201, summary: "Import content from a URL" },
    { method: "GET", path: `${content}/pages`, field: "Query.spacePages", summary: "List the pages of the space's content" },
    { method: "GET", path: `${content}/files`, field: "Query.spaceFiles", summary: "List the files of the space's content" },
    { method: "GET", path: `${content}/files/{fileId}`, field: "Query.spaceFile", summary: "Get a file of the space's content" },
    {
      method: "GET",
      path: `${content}/files/{fileId}/backlinks`,
      field: "Query.spaceFileBacklinks",
      summary: "List the pages using a file",
    },
    { method: "GET", path: `${content}/page/{pageId}`, field: "Query.spacePage", summary: "Get a page of the space's content" },
    { method: "GET", path: `${content}/page/{pageId}/links`, field: "Query.spacePageLinks", summary: "List the links of a page" },
    // Writes the reference does not show, in the same style (the space must be live).
    { method: "POST", path: `${content}/pages`, field: "Mutation.pageCreate", status: 201, summary: "Create a page" },
    { method: "PATCH", path: `${content}/page/{pageId}`, field: "Mutation.pageUpdate", summary: "Update or move a page" },
    {
      method: "DELETE",
      path: `${content}/page/{pageId}`,
      field: "Mutation.pageDelete",
      status: 204,
      summary: "Delete a page and its sub-pages",
    },
    {
      method: "POST",
      path: `${content}/files`,
      field: "Mutation.fileUpload",
      status: 201,
      upload: true,
      summary: "Upload a file (base64 JSON body)",
    },
    {
      method: "DELETE",
      path: `${content}/files/{fileId}`,
      field: "Mutation.fileDelete",
      status: 204,
      summary: "Remove a file from the space's content",
    },
    // Reusable contents: GitBook's read, and writes in the same style (the space must be live).
    {
      method: "GET",
      path: `${content}/reusable-contents/{reusableContentId}`,
      field: "Query.spaceReusableContent",
      summary: "Get a reusable content of the space's content",
    },
    {
      method: "POST",
      path: `${content}/reusable-contents`,
      field: "Mutation.reusableContentCreate",
      status: 201,
      summary: "Create a reusable content",
    },
    {
      method: "PATCH",
      path: `${content}/reusable-contents/{reusableContentId}`,
      field: "Mutation.reusableContentUpdate",
      summary: "Update a reusable content",
    },
    {
      method: "DELETE",
      path: `${content}/reusable-contents/{reusableContentId}`,
      field: "Mutation.reusableContentDelete",
      status: 204,
      summary: "Delete a reusable content",
    },
    { method: "GET", path: `${content}/variables`, field: "Query.spaceVariables", summary: "Get the variables of the space's content" },
    {
      method: "PUT",
      path: `${content}/variables`,
      field: "Mutation.contentVariablesReplace",
      summary: "Replace the variables (a body {variables})",
    },
    {
      method: "PATCH",
      path: `${content}/variables`,
      field: "Mutation.contentVariablesUpdate",
      summary: "Set some variables, keeping the others",
    },
    {
      method: "DELETE",
      path: `${content}/variables/{variableName}`,
      field: "Mutation.contentVariableDelete",
      status: 204,
      summary: "Delete a variable",
    },
  ]),
  ...routes("Revisions", [
    // What GitBook's reader reads of a revision by id (content/revision-pages.service.ts).
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}",
      field: "Query.revision",
      summary: "Get a revision of the space, with its page tree",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}/changes",
      field: "Query.revisionChanges",
      summary: "Get what a revision changed against its parent",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}",
      field: "Query.revisionPage",
      summary: "Get a page of a revision (format=markdown with format.markdown.refs=relative|stable, or format=document)",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}/document",
      field: "Query.revisionPageDocument",
      summary: "Get the document of a page of a revision",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}/meta-links",
      field: "Query.revisionPageMetaLinks",
      summary: "Get the meta links of a page of a revision",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}/path/{pagePath}",
      field: "Query.revisionPageByPath",
      summary: "Get the page of a revision at a path",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}",
      field: "Query.revisionReusableContent",
      summary: "Get a reusable content of a revision",
    },
    {
      method: "GET",
      path: "/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}/document",
      field: "Query.revisionReusableContentDocument",
      summary: "Get the document of a reusable content of a revision",
    },
  ]),
  ...routes("Spaces", [
    { method: "GET", path: "/spaces/{spaceId}/links", field: "Query.spaceLinks", summary: "List the links of the space's content" },
  ]),
  ...routes("Organizations", [
    {
      method: "GET",
      path: "/orgs/{organizationId}/search",
      field: "Query.organizationSearch",
      summary: "Search the content of the organization's spaces",
    },
  ]),
];
