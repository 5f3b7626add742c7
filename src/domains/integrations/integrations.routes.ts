import { routes } from "../../rest/route.js";

const I = "/integrations/{integrationName}";

export default routes("Integrations", [
  { method: "GET", path: "/integrations", field: "Query.integrations", summary: "List integrations (filters: search, category, blockDomain, hasBlocks, hasContentSources, owner, scope, target)" },
  { method: "GET", path: I, field: "Query.integration", summary: "Get an integration" },
  { method: "POST", path: I, field: "Mutation.integrationPublish", status: 201, statuses: [200], summary: "Publish an integration: 201 for the first version, 200 for a new one" },
  { method: "DELETE", path: I, field: "Mutation.integrationDelete", status: 204, summary: "Delete an integration" },
  { method: "GET", path: `${I}/installations`, field: "Query.integrationInstallations", summary: "List the installations of an integration" },
  { method: "POST", path: `${I}/installations`, field: "Mutation.integrationInstall", status: 201, summary: "Install an integration in an organization" },
  { method: "GET", path: `${I}/installations/{installationId}`, field: "Query.integrationInstallation", summary: "Get an installation" },
  { method: "PATCH", path: `${I}/installations/{installationId}`, field: "Mutation.integrationInstallationUpdate", summary: "Change an installation's configuration, space or site selection, or external ids" },
  { method: "DELETE", path: `${I}/installations/{installationId}`, field: "Mutation.integrationUninstall", status: 204, summary: "Uninstall an integration from an organization" },
  { method: "GET", path: `${I}/installations/{installationId}/spaces/{spaceId}`, field: "Query.integrationSpaceInstallation", summary: "Get a space installation" },
  { method: "PUT", path: `${I}/installations/{installationId}/spaces/{spaceId}`, field: "Mutation.integrationSpaceInstall", summary: "Install an integration in a space, or change that space installation" },
  { method: "DELETE", path: `${I}/installations/{installationId}/spaces/{spaceId}`, field: "Mutation.integrationSpaceUninstall", status: 204, summary: "Remove an integration from a space" },
  { method: "GET", path: `${I}/installations/{installationId}/sites/{siteId}`, field: "Query.integrationSiteInstallation", summary: "Get a site installation" },
  { method: "PUT", path: `${I}/installations/{installationId}/sites/{siteId}`, field: "Mutation.integrationSiteInstall", summary: "Install an integration in a site, or change that site installation" },
  { method: "DELETE", path: `${I}/installations/{installationId}/sites/{siteId}`, field: "Mutation.integrationSiteUninstall", status: 204, summary: "Remove an integration from a site" },
  { method: "GET", path: `${I}/events`, field: "Query.integrationEvents", summary: "List an integration's events, newest first" },
  { method: "GET", path: `${I}/events/{eventId}`, field: "Query.integrationEvent", summary: "Get an event with the trace of its delivery" },
  { method: "GET", path: `${I}/spaces`, field: "Query.integrationSpaceInstallations", summary: "List the spaces an integration is installed in" },
  { method: "GET", path: `${I}/sites`, field: "Query.integrationSiteInstallations", summary: "List the sites an integration is installed in" },
  { method: "PUT", path: `${I}/dev`, field: "Mutation.integrationDevSet", status: 204, summary: "Turn development mode on: dispatch events to a tunnel URL" },
  { method: "DELETE", path: `${I}/dev`, field: "Mutation.integrationDevDelete", status: 204, summary: "Turn development mode off" },
  { method: "GET", path: `${I}/render`, field: "Query.integrationRender", errors: [502], summary: "Render a component (request: LZ-string compressed JSON)" },
  { method: "POST", path: `${I}/render`, field: "Mutation.integrationRenderPost", errors: [502], summary: "Render a component" },
  { method: "GET", path: `${I}/signing-secret`, field: "Query.integrationSigningSecret", summary: "Read the secret that signs requests sent to the integration" },
  { method: "POST", path: `${I}/signing-secret`, field: "Mutation.integrationSigningSecretRotate", summary: "Replace the secret that signs requests sent to the integration" },
]);
