import { routes } from "../../rest/route.js";

const SITE = "/orgs/{organizationId}/sites/{siteId}";

export default [
  ...routes("Docs sites", [
    { method: "GET", path: "/orgs/{organizationId}/sites", field: "Query.organizationSites", summary: "List the sites of an organization" },
    { method: "POST", path: "/orgs/{organizationId}/sites", field: "Mutation.siteCreate", status: 201, summary: "Create a site" },
    { method: "GET", path: SITE, field: "Query.site", summary: "Get a site" },
    { method: "DELETE", path: SITE, field: "Mutation.siteDelete", status: 204, summary: "Delete a site" },
    { method: "PATCH", path: SITE, field: "Mutation.siteUpdate", summary: "Update a site" },
    { method: "POST", path: `${SITE}/publish`, field: "Mutation.sitePublish", summary: "Publish a site" },
    { method: "POST", path: `${SITE}/unpublish`, field: "Mutation.siteUnpublish", summary: "Unpublish a site" },
    { method: "GET", path: `${SITE}/adaptive-schema`, field: "Query.siteAdaptiveSchema", summary: "Get the visitor schema of adaptive content" },
    { method: "PUT", path: `${SITE}/adaptive-schema`, field: "Mutation.siteAdaptiveSchemaUpdate", summary: "Set the visitor schema of adaptive content" },
    {
      method: "GET",
      path: `${SITE}/adaptive-schema/template-conditions`,
      field: "Query.siteAdaptiveTemplateConditions",
      summary: "Condition templates generated from the visitor schema",
    },
    {
      method: "GET",
      path: `${SITE}/published`,
      field: "Query.sitePublished",
      auth: "optional",
      summary: "The published structure of a site, as a visitor sees it (no token needed)",
    },
    { method: "PUT", path: `${SITE}/structure`, field: "Mutation.siteStructureSort", summary: "Set the order of the whole structure (sortSiteStructure)" },
    { method: "GET", path: `${SITE}/share-links`, field: "Query.siteShareLinks", summary: "List the share links of a site" },
    { method: "POST", path: `${SITE}/share-links`, field: "Mutation.siteShareLinkCreate", status: 201, summary: "Create a share link" },
    { method: "DELETE", path: `${SITE}/share-links/{shareLinkId}`, field: "Mutation.siteShareLinkRevoke", status: 204, summary: "Revoke a share link" },
    { method: "GET", path: `${SITE}/visitor-auth`, field: "Query.siteVisitorAuth", summary: "The key visitor tokens are signed with" },
  ]),
  ...routes("Site sections", [
    { method: "GET", path: `${SITE}/sections`, field: "Query.siteSections", summary: "List the sections of a site" },
    { method: "POST", path: `${SITE}/sections`, field: "Mutation.siteSectionCreate", status: 201, summary: "Add a section" },
    { method: "DELETE", path: `${SITE}/sections/{siteSectionId}`, field: "Mutation.siteSectionDelete", status: 204, summary: "Delete a section" },
    { method: "PATCH", path: `${SITE}/sections/{siteSectionId}`, field: "Mutation.siteSectionUpdate", summary: "Update a section" },
    { method: "POST", path: `${SITE}/sections/{siteSectionId}/move`, field: "Mutation.siteSectionMove", summary: "Move a section (deprecated: use PUT …/structure)" },
  ]),
  ...routes("Site section groups", [
    { method: "GET", path: `${SITE}/section-groups`, field: "Query.siteSectionGroups", summary: "List the section groups of a site" },
    { method: "POST", path: `${SITE}/section-groups`, field: "Mutation.siteSectionGroupCreate", status: 201, summary: "Create a section group" },
    {
      method: "DELETE",
      path: `${SITE}/section-groups/{siteSectionGroupId}`,
      field: "Mutation.siteSectionGroupDelete",
      status: 204,
      summary: "Delete a section group (its sections stay)",
    },
    { method: "PATCH", path: `${SITE}/section-groups/{siteSectionGroupId}`, field: "Mutation.siteSectionGroupUpdate", summary: "Update a section group" },
    {
      method: "POST",
      path: `${SITE}/section-groups/{siteSectionGroupId}/sections`,
      field: "Mutation.siteSectionGroupSectionAdd",
      status: 201,
      summary: "Add a section to a group",
    },
    {
      method: "DELETE",
      path: `${SITE}/section-groups/{siteSectionGroupId}/sections/{siteSectionId}`,
      field: "Mutation.siteSectionGroupSectionRemove",
      status: 204,
      summary: "Take a section out of a group",
    },
    {
      method: "POST",
      path: `${SITE}/section-groups/{siteSectionGroupId}/move`,
      field: "Mutation.siteSectionGroupMove",
      summary: "Move a section group (deprecated: use PUT …/structure)",
    },
  ]),
  ...routes("Site spaces", [
    { method: "GET", path: `${SITE}/site-spaces`, field: "Query.siteSpaces", summary: "List the site spaces of a site" },
    { method: "POST", path: `${SITE}/site-spaces`, field: "Mutation.siteSpaceCreate", status: 201, summary: "Add a site space" },
    { method: "DELETE", path: `${SITE}/site-spaces/{siteSpaceId}`, field: "Mutation.siteSpaceDelete", status: 204, summary: "Delete a site space" },
    { method: "PATCH", path: `${SITE}/site-spaces/{siteSpaceId}`, field: "Mutation.siteSpaceUpdate", summary: "Update a site space" },
    { method: "POST", path: `${SITE}/site-spaces/{siteSpaceId}/move`, field: "Mutation.siteSpaceMove", summary: "Move a site space (deprecated: use PUT …/structure)" },
  ]),
];
