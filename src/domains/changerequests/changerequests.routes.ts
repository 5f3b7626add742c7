import { routes } from "../../rest/route.js";

const cr = "/spaces/{spaceId}/change-requests/{changeRequestId}";
const content = `${cr}/content`;

export default [
  ...routes("Change requests", [
    {
      method: "GET",
      path: "/spaces/{spaceId}/change-requests",
      field: "Query.changeRequests",
      summary: "List change requests (status open by default: ?status=draft lists drafts)",
    },
    {
      method: "POST",
      path: "/spaces/{spaceId}/change-requests",
      field: "Mutation.changeRequestCreate",
      status: 201,
      summary: "Create a change request (it starts as a draft: ?status=draft lists drafts; PATCH status open asks for review)",
    },
    { method: "GET", path: cr, field: "Query.changeRequest", summary: "Get a change request by id or number" },
    { method: "PATCH", path: cr, field: "Mutation.changeRequestUpdate", summary: "Update a change request's subject or status" },
    { method: "POST", path: `${cr}/merge`, field: "Mutation.changeRequestMerge", summary: "Merge a change request into the space" },
    {
      method: "POST",
      path: `${cr}/update`,
      field: "Mutation.changeRequestUpdateFromMain",
      summary: "Bring the space's changes into a change request",
    },
    { method: "GET", path: `${cr}/pdf`, field: "Query.changeRequestPdf", summary: "Get a URL of the change request's content as PDF" },
  ]),
  ...routes("Change request content", [
    { method: "GET", path: content, field: "Query.changeRequestContent", summary: "Get the change request's active revision" },
    {
      method: "POST",
      path: content,
      field: "Mutation.changeRequestContentUpdate",
      query: ["compat"],
      upload: true,
      summary: "Apply a batch of content changes (insert, update, delete, revert pages; insert files) as one revision",
    },
    {
      method: "POST",
      path: `${content}/import`,
      field: "Mutation.changeRequestContentImport",
      status: 201,
      summary: "Import content from a URL",
    },
    {
      method: "GET",
      path: `${content}/pages`,
      field: "Query.changeRequestPages",
      summary: "List the pages of the change request's content",
    },
    {
      method: "GET",
      path: `${content}/files`,
      field: "Query.changeRequestFiles",
      summary: "List the files of the change request's content",
    },
    {
      method: "GET",
      path: `${content}/files/{fileId}`,
      field: "Query.changeRequestFile",
      summary: "Get a file of the change request's content",
    },
    {
      method: "GET",
      path: `${content}/files/{fileId}/backlinks`,
      field: "Query.changeRequestFileBacklinks",
      summary: "List the pages using a file",
    },
    {
      method: "GET",
      path: `${content}/page/{pageId}`,
      field: "Query.changeRequestPage",
      summary: "Get a page of the change request's content",
    },
    { method: "GET", path: `${content}/page/{pageId}/links`, field: "Query.changeRequestPageLinks", summary: "List the links of a page" },
    // Writes the reference does not show, in the same style (draft and open change requests).
    { method: "POST", path: `${content}/pages`, field: "Mutation.changeRequestPageCreate", status: 201, summary: "Create a page" },
    { method: "PATCH", path: `${content}/page/{pageId}`, field: "Mutation.changeRequestPageUpdate", summary: "Update or move a page" },
    {
      method: "DELETE",
      path: `${content}/page/{pageId}`,
      field: "Mutation.changeRequestPageDelete",
      status: 204,
      summary: "Delete a page and its sub-pages",
    },
    {
      method: "POST",
      path: `${content}/files`,
      field: "Mutation.changeRequestFileUpload",
      status: 201,
      summary: "Upload a file (base64 JSON body)",
    },
    {
      method: "DELETE",
      path: `${content}/files/{fileId}`,
      field: "Mutation.changeRequestFileDelete",
      status: 204,
      summary: "Remove a file from the change request's content",
    },
    // Reusable contents: GitBook's read, and writes in the same style.
    {
      method: "GET",
      path: `${content}/reusable-contents/{reusableContentId}`,
      field: "Query.changeRequestReusableContent",
      summary: "Get a reusable content of the change request's content",
    },
    {
      method: "POST",
      path: `${content}/reusable-contents`,
      field: "Mutation.changeRequestReusableContentCreate",
      status: 201,
      summary: "Create a reusable content",
    },
    {
      method: "PATCH",
      path: `${content}/reusable-contents/{reusableContentId}`,
      field: "Mutation.changeRequestReusableContentUpdate",
      summary: "Update a reusable content",
    },
    {
      method: "DELETE",
      path: `${content}/reusable-contents/{reusableContentId}`,
      field: "Mutation.changeRequestReusableContentDelete",
      status: 204,
      summary: "Delete a reusable content",
    },
    {
      method: "GET",
      path: `${content}/variables`,
      field: "Query.changeRequestVariables",
      summary: "Get the variables of the change request's content",
    },
    {
      method: "PUT",
      path: `${content}/variables`,
      field: "Mutation.changeRequestVariablesReplace",
      summary: "Replace the variables (a body {variables})",
    },
    {
      method: "PATCH",
      path: `${content}/variables`,
      field: "Mutation.changeRequestVariablesUpdate",
      summary: "Set some variables, keeping the others",
    },
    {
      method: "DELETE",
      path: `${content}/variables/{variableName}`,
      field: "Mutation.changeRequestVariableDelete",
      status: 204,
      summary: "Delete a variable",
    },
  ]),
];
