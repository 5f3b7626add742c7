import type { RouteDef } from "./route.js";
import type { RawRoute } from "./raw-routes.js";
import users from "../domains/users/users.routes.js";
import organizations from "../domains/organizations/organizations.routes.js";
import members from "../domains/members/members.routes.js";
import teams from "../domains/teams/teams.routes.js";
import collections from "../domains/collections/collections.routes.js";
import spaces from "../domains/spaces/spaces.routes.js";
import content from "../domains/content/content.routes.js";
import changeRequests from "../domains/changerequests/changerequests.routes.js";
import comments from "../domains/comments/comments.routes.js";
import sites from "../domains/sites/sites.routes.js";
import urlLookup from "../domains/sites/url-lookup.routes.js";
import sso from "../domains/sso/sso.routes.js";
import translations from "../domains/translations/translations.routes.js";
import openapi from "../domains/openapi/openapi.routes.js";
import integrations from "../domains/integrations/integrations.routes.js";
import { contentBinaryRoutes } from "../domains/content/binary.js";
import { samlRoutes } from "../domains/sso/sso.http.js";
import { integrationRoutes } from "../domains/integrations/integrations.http.js";
import { dashboardRoutes } from "../dashboard/dashboard.js";
import { publishedRoutes } from "../published/routes.js";

/*
 * The registry of HTTP routes: each area declares its rows here, once. The gateway
 * (src/server.ts) mounts both tables and knows no area by name.
 */

/** Every /v1 operation, each mapped to the graph field that serves it. */
export const routeTable: RouteDef[] = [
  ...users,
  ...organizations,
  ...members,
  ...teams,
  ...collections,
  ...spaces,
  ...content,
  ...changeRequests,
  ...comments,
  ...sites,
  ...urlLookup,
  ...sso,
  ...translations,
  ...openapi,
  ...integrations,
];

/** Every raw route of the areas (bytes, pages, redirects, SAML, forwarded requests): see rest/raw-routes.ts. */
export const rawRouteTable: RawRoute[] = [
  ...contentBinaryRoutes,
  ...samlRoutes,
  ...dashboardRoutes,
  ...integrationRoutes,
  ...publishedRoutes,
];
