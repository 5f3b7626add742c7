import { routes } from "../../rest/route.js";

const content = "/spaces/{spaceId}/content";

export default [
  ...routes("Space content", [
    { method: "GET", path: "/spaces/{spaceId}/search", field: "Query.spaceSearch", summary: "Search the space's content" },
    { method: "GET", path: content, field: "Query.spaceContent", summary: "Get the space's active revision" },
    { method: "POST", path: `${content}/import`, field: "Mutation.spaceContentImport", status: 201, summary: "Import content from a URL" },
    { method: "GET", path: `${content}/pages`, field: "Query.spacePages", summary: "List the pages of the space's content" },
    { method: "GET", path: `${content}/files`, field: "Query.spaceFiles", summary: "List the files of the space's content" },
    { method: "GET", path: `${content}/files/{fileId}`, field: "Query.spaceFile", summary: "Get a file of the space's content" },
    { method: "GET", path: `${content}/files/{fileId}/backlinks`, field: "Query.spaceFileBacklinks", summary: "List the pages using a file" },
    { method: "GET", path: `${content}/page/{pageId}`, field: "Query.spacePage", summary: "Get a page of the space's content" },
    { method: "GET", path: `${content}/page/{pageId}/links`, field: "Query.spacePageLinks", summary: "List the links of a page" },
    // Writes the reference does not show, in the same style (the space must be live).
    { method: "POST", path: `${content}/pages`, field: "Mutation.pageCreate", status: 201, summary: "Create a page" },
    { method: "PATCH", path: `${content}/page/{pageId}`, field: "Mutation.pageUpdate", summary: "Update or move a page" },
    { method: "DELETE", path: `${content}/page/{pageId}`, field: "Mutation.pageDelete", status: 204, summary: "Delete a page and its sub-pages" },
    { method: "POST", path: `${content}/files`, field: "Mutation.fileUpload", status: 201, upload: true, summary: "Upload a file (base64 JSON body)" },
  ]),
  ...routes("Spaces", [
    { method: "GET", path: "/spaces/{spaceId}/links", field: "Query.spaceLinks", summary: "List the links of the space's content" },
  ]),
  ...routes("Organizations", [
    { method: "GET", path: "/orgs/{organizationId}/search", field: "Query.organizationSearch", summary: "Search the content of the organization's spaces" },
  ]),
];
