import { lexicographicSortSchema } from "graphql";
import { builder } from "./core/graph/builder.js";
import { graphSchema } from "./rest/schema-projection.js";
import { gateSubscriptions } from "./graphql/streams/gate.js";
import "./domains/users/users.schema.js";
import "./domains/organizations/organizations.schema.js";
import "./domains/members/members.schema.js";
import "./domains/users/viewer.schema.js";
import "./domains/teams/teams.schema.js";
import "./domains/collections/collections.schema.js";
import "./domains/spaces/spaces.schema.js";
import "./domains/content/content.schema.js";
import "./domains/content/revision-pages.schema.js";
import "./domains/content/embed.schema.js";
import "./domains/changerequests/changerequests.schema.js";
import "./domains/comments/comments.schema.js";
import "./domains/sites/sites.schema.js";
import "./domains/sso/sso.schema.js";
import "./domains/translations/translations.schema.js";
import "./domains/openapi/openapi.schema.js";
import "./domains/integrations/integrations.schema.js";
import "./graphql/nodes.schema.js";

/**
 * Every domain's types, queries, mutations and subscriptions, with the fields kept for the /v1
 * shapes only (`restOnly`): the source of the REST projection (src/rest/schema-projection.ts).
 */
// Definition order is kept so REST answers read like the spec (`object`, `id` first).
export const completeSchema = builder.toSchema({ sortSchema: false });
/**
 * The one graph, as served at /graphql and over subscriptions; the sources of its subscription
 * fields pass each event through the gate of a shared stream (graphql/streams/gate.ts).
 */
export const schema = gateSubscriptions(graphSchema(completeSchema));
export const sortedSchema = () => lexicographicSortSchema(schema);
