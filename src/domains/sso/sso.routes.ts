import { routes } from "../../rest/route.js";

export default routes("SSO", [
  {
    method: "GET",
    path: "/orgs/{organizationId}/saml",
    field: "Query.organizationSamlProviders",
    summary: "List the organization's SAML providers",
  },
  {
    method: "POST",
    path: "/orgs/{organizationId}/saml",
    field: "Mutation.samlProviderCreate",
    status: 201,
    summary: "Add a SAML provider",
  },
  { method: "GET", path: "/orgs/{organizationId}/saml/{samlProviderId}", field: "Query.samlProvider", summary: "Get a SAML provider" },
  {
    method: "DELETE",
    path: "/orgs/{organizationId}/saml/{samlProviderId}",
    field: "Mutation.samlProviderDelete",
    status: 204,
    summary: "Remove a SAML provider",
  },
  {
    method: "PATCH",
    path: "/orgs/{organizationId}/saml/{samlProviderId}",
    field: "Mutation.samlProviderUpdate",
    summary: "Change a SAML provider",
  },
  {
    method: "GET",
    path: "/orgs/{organizationId}/sso",
    field: "Query.organizationSsoLogins",
    summary: "How to sign in to the organization with SSO",
  },
]);
