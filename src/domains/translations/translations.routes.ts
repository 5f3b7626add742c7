import { routes } from "../../rest/route.js";

export default routes("Translations", [
  {
    method: "GET",
    path: "/orgs/{organizationId}/translations",
    field: "Query.organizationTranslations",
    summary: "List the organization's translation settings",
  },
  {
    method: "POST",
    path: "/orgs/{organizationId}/translations",
    field: "Mutation.translationSettingsCreate",
    status: 201,
    summary: "Create translation settings",
  },
  {
    method: "GET",
    path: "/orgs/{organizationId}/translations/{translationSettingsId}",
    field: "Query.translationSettings",
    summary: "Get translation settings",
  },
  {
    method: "PUT",
    path: "/orgs/{organizationId}/translations/{translationSettingsId}",
    field: "Mutation.translationSettingsUpdate",
    summary: "Update translation settings",
  },
  {
    method: "DELETE",
    path: "/orgs/{organizationId}/translations/{translationSettingsId}",
    field: "Mutation.translationSettingsDelete",
    status: 204,
    summary: "Delete translation settings",
  },
]);
