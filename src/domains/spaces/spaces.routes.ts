import { routes } from "../../rest/route.js";

export default routes("Spaces", [
  {
    method: "GET",
    path: "/spaces/{spaceId}",
    field: "Query.space",
    summary: "Get a space (a deleted one too, with deletedAt, for 7 days)",
  },
  {
    method: "DELETE",
    path: "/spaces/{spaceId}",
    field: "Mutation.spaceDelete",
    status: 204,
    summary: "Delete a space (restorable for 7 days)",
  },
  { method: "PATCH", path: "/spaces/{spaceId}", field: "Mutation.spaceUpdate", summary: "Update a space" },
  { method: "POST", path: "/spaces/{spaceId}/duplicate", field: "Mutation.spaceDuplicate", status: 201, summary: "Duplicate a space" },
  {
    method: "POST",
    path: "/spaces/{spaceId}/restore",
    field: "Mutation.spaceRestore",
    summary: "Restore a space deleted in the last 7 days",
  },
  {
    method: "POST",
    path: "/spaces/{spaceId}/move",
    field: "Mutation.spaceMove",
    summary: "Move a space to another collection or position",
  },
  {
    method: "POST",
    path: "/spaces/{spaceId}/transfer",
    field: "Mutation.spaceTransfer",
    summary: "Transfer a space to another organization and/or collection",
  },
  {
    method: "GET",
    path: "/orgs/{organizationId}/spaces",
    field: "Query.organizationSpaces",
    summary: "List the spaces of an organization",
  },
  { method: "POST", path: "/orgs/{organizationId}/spaces", field: "Mutation.spaceCreate", status: 201, summary: "Create a space" },
]);
