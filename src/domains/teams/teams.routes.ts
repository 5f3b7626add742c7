import { routes } from "../../rest/route.js";

export default routes("Teams", [
  { method: "GET", path: "/orgs/{organizationId}/teams", field: "Query.organizationTeams", summary: "List the organization's teams" },
  { method: "PUT", path: "/orgs/{organizationId}/teams", field: "Mutation.teamCreate", status: 201, summary: "Create a team" },
  { method: "GET", path: "/orgs/{organizationId}/teams/{teamId}", field: "Query.team", summary: "Get a team" },
  { method: "DELETE", path: "/orgs/{organizationId}/teams/{teamId}", field: "Mutation.teamDelete", status: 204, summary: "Delete a team" },
  { method: "PATCH", path: "/orgs/{organizationId}/teams/{teamId}", field: "Mutation.teamUpdate", summary: "Rename a team" },
  { method: "GET", path: "/orgs/{organizationId}/teams/{teamId}/members", field: "Query.teamMembers", summary: "List a team's members" },
  {
    method: "PUT",
    path: "/orgs/{organizationId}/teams/{teamId}/members",
    field: "Mutation.teamMembersUpdate",
    status: 204,
    summary: "Add, remove and update team members",
  },
  {
    method: "PUT",
    path: "/orgs/{organizationId}/teams/{teamId}/members/{userId}",
    field: "Mutation.teamMemberSet",
    status: 204,
    summary: "Add or update a team member",
  },
  {
    method: "DELETE",
    path: "/orgs/{organizationId}/teams/{teamId}/members/{userId}",
    field: "Mutation.teamMemberDelete",
    status: 204,
    summary: "Remove a team member",
  },
]);
