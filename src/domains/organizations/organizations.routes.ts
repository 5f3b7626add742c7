import { routes } from "../../rest/route.js";

export default routes("Organizations", [
  { method: "GET", path: "/orgs", field: "Query.organizations", summary: "List the caller's organizations" },
  { method: "GET", path: "/orgs/{organizationId}", field: "Query.organization", summary: "Get an organization" },
  { method: "PATCH", path: "/orgs/{organizationId}", field: "Mutation.organizationUpdate", summary: "Update an organization" },
  {
    method: "DELETE",
    path: "/orgs/{organizationId}/link-invites/{inviteId}",
    field: "Mutation.organizationInviteLinkDelete",
    status: 204,
    summary: "Delete an invite link",
  },
  {
    method: "GET",
    path: "/email-domains/{emailDomain}/orgs",
    field: "Query.organizationsByEmailDomain",
    summary: "Organizations accepting an email domain",
  },
]);
