import { routes } from "../../rest/route.js";

const spec = "/orgs/{organizationId}/openapi/{specSlug}";

export default routes("OpenAPI", [
  {
    method: "GET",
    path: "/orgs/{organizationId}/openapi",
    field: "Query.organizationOpenAPISpecs",
    summary: "List the organization's OpenAPI specs",
  },
  {
    method: "POST",
    path: "/orgs/{organizationId}/openapi",
    field: "Mutation.openAPISpecCreate",
    status: 201,
    summary: "Create an OpenAPI spec from a source URL",
  },
  { method: "GET", path: spec, field: "Query.openAPISpec", summary: "Get an OpenAPI spec" },
  { method: "PUT", path: spec, field: "Mutation.openAPISpecUpdate", summary: "Update an OpenAPI spec's source" },
  { method: "DELETE", path: spec, field: "Mutation.openAPISpecDelete", status: 204, summary: "Delete an OpenAPI spec" },
  { method: "PATCH", path: spec, field: "Mutation.openAPISpecVisibilityUpdate", summary: "Change an OpenAPI spec's visibility" },
  { method: "GET", path: `${spec}/versions`, field: "Query.openAPISpecVersions", summary: "List an OpenAPI spec's versions" },
  {
    method: "GET",
    path: `${spec}/versions/latest`,
    field: "Query.openAPISpecLatestVersion",
    summary: "Get the latest version of an OpenAPI spec",
  },
  {
    method: "GET",
    path: `${spec}/versions/latest/content`,
    field: "Query.openAPISpecLatestVersionContent",
    summary: "Get the content of the latest version",
  },
  { method: "GET", path: `${spec}/versions/{versionId}`, field: "Query.openAPISpecVersion", summary: "Get a version of an OpenAPI spec" },
  {
    method: "GET",
    path: `${spec}/versions/{versionId}/content`,
    field: "Query.openAPISpecVersionContent",
    summary: "Get the content of a version",
  },
]);
