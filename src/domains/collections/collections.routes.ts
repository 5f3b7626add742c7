import { routes } from "../../rest/route.js";

export default routes("Collections", [
  { method: "GET", path: "/collections/{collectionId}", field: "Query.collection", summary: "Get a collection" },
  {
    method: "DELETE",
    path: "/collections/{collectionId}",
    field: "Mutation.collectionDelete",
    status: 204,
    summary: "Delete a collection and its sub-collections (their spaces move to the top level)",
  },
  { method: "PATCH", path: "/collections/{collectionId}", field: "Mutation.collectionUpdate", summary: "Update a collection" },
  {
    method: "GET",
    path: "/collections/{collectionId}/spaces",
    field: "Query.collectionSpaces",
    summary: "List the spaces of a collection",
  },
  {
    method: "POST",
    path: "/collections/{collectionId}/move",
    field: "Mutation.collectionMove",
    summary: "Move a collection to another parent or position",
  },
  {
    method: "POST",
    path: "/collections/{collectionId}/transfer",
    field: "Mutation.collectionTransfer",
    summary: "Transfer a collection, its sub-collections and their spaces to another organization",
  },
  {
    method: "GET",
    path: "/orgs/{organizationId}/collections",
    field: "Query.organizationCollections",
    summary: "List the collections of an organization",
  },
  {
    method: "POST",
    path: "/orgs/{organizationId}/collections",
    field: "Mutation.collectionCreate",
    status: 201,
    summary: "Create a collection",
  },
]);
