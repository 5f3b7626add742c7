import { routes } from "../../rest/route.js";

export default routes("Members", [
  { method: "GET", path: "/orgs/{organizationId}/members", field: "Query.organizationMembers", summary: "List the organization's members" },
  { method: "GET", path: "/orgs/{organizationId}/members/{userId}", field: "Query.organizationMember", summary: "Get a member" },
  {
    method: "DELETE",
    path: "/orgs/{organizationId}/members/{userId}",
    field: "Mutation.organizationMemberDelete",
    status: 204,
    summary: "Remove a member",
  },
  {
    method: "PATCH",
    path: "/orgs/{organizationId}/members/{userId}",
    field: "Mutation.organizationMemberUpdate",
    summary: "Change a member's role",
  },
  { method: "POST", path: "/orgs/{organizationId}/ping", field: "Mutation.organizationPing", summary: "Record the caller as active" },
  {
    method: "POST",
    path: "/orgs/{organizationId}/members/{userId}/sso",
    field: "Mutation.organizationMemberSsoMark",
    summary: "Mark a member as an SSO member",
  },
  {
    method: "GET",
    path: "/orgs/{organizationId}/members/{userId}/spaces",
    field: "Query.organizationMemberSpaces",
    summary: "Spaces a member can access",
  },
  {
    method: "GET",
    path: "/orgs/{organizationId}/members/{userId}/teams",
    field: "Query.organizationMemberTeams",
    summary: "Teams a member belongs to",
  },
]);
