/**
 * Differences between this server's answers and GitBook's OpenAPI schemas (`@gitbook/api`,
 * pinned in package.json) that are accepted, each with its reason. test/helpers/gitbook.ts
 * fails any REST answer in the suite with a difference not listed here.
 *
 * An entry matches a difference by GitBook's operation (`METHOD /path/{template}` as GitBook
 * writes it, "*", or a RegExp), optionally its status, the JSON pointer into the answer (array indexes
 * written `*`; a string must be equal, a RegExp must match), Ajv's keyword and message.
 */
export interface GitBookDifference {
  operation: string;
  status: number;
  path: string;
  keyword: string;
  message: string;
}

export interface GitBookAllowance {
  operation: string | RegExp;
  status?: number;
  path: string | RegExp;
  keyword?: string;
  message?: string | RegExp;
  reason: string;
}

const ANY = /.*/;

export const GITBOOK_ALLOWED: GitBookAllowance[] = [
  // ─── Statuses: the spec is the contract ─────────────────────────────────────────────────────
  {
    operation: /^POST \/spaces\/\{spaceId\}(\/change-requests\/\{changeRequestId\})?\/comments(\/\{commentId\}\/replies)?$/,
    path: "",
    keyword: "status",
    message: "GitBook answers 200",
    reason: "The spec answers 201 Created for a new comment or reply; GitBook's document says 200 (same body).",
  },
  {
    operation: /^DELETE /,
    path: "",
    keyword: "status",
    message: "GitBook answers 205",
    reason: "The spec answers every delete with 204 and an empty body; GitBook's document says 205 (also empty).",
  },

  {
    operation: "POST /integrations/{integrationName}",
    status: 201,
    path: "",
    keyword: "status",
    reason:
      "Publishing an integration answers 201 when it creates the integration and 200 for a new version of an existing one; GitBook's document says 200 for both (same body).",
  },

  // ─── Limits the spec sets differently ──────────────────────────────────────────────────────
  {
    operation: ANY,
    path: /(^|\/)title$/,
    keyword: "maxLength",
    message: "must NOT have more than 50 characters",
    reason:
      "Space titles may have up to 100 characters in the spec; GitBook's schema says 50. Only spaces given a longer title answer one.",
  },

  // ─── Values the spec documents that GitBook's enumerations lack ──────────────────────────────
  {
    operation: /\/revisions\/\{revisionId\}$|\/content$/,
    path: "/type",
    keyword: "enum",
    reason:
      "Revision `type`: this server also writes `initial` (a space's first, empty revision) and `import` (made by an import); GitBook knows edits, merge, rollback, update, computed.",
  },
  {
    operation: /^GET \/integrations\/\{integrationName\}\/events/,
    path: /\/status$/,
    keyword: "enum",
    message: 'must be one of ["success","failed"]',
    reason:
      "Integration event `status`: besides success and failed, events are `pending` until delivered and `skipped` when development mode does not forward them; GitBook lists only settled statuses.",
  },
  {
    operation: /^GET \/integrations\/\{integrationName\}\/events/,
    path: /\/payload(\/|$)/,
    reason:
      "Integration event payloads: this server records the space activity events of the spec (space_content_updated with its own fields, change_request_*, comment_*, …), which GitBook's payload union does not describe.",
  },
  {
    operation: /^GET \/integrations\/\{integrationName\}\/events\/\{eventId\}$/,
    path: "/trace/logs/*/level",
    keyword: "enum",
    reason:
      "Trace log levels are the spec's (it gives `debug` as a sample and the delivery trace also writes `log`); GitBook knows debug, info, warn, error.",
  },
  {
    operation: /^(GET|POST|PATCH) \/integrations/,
    path: /\/(scopes|categories)\/\*$/,
    keyword: "enum",
    reason:
      "Integration scopes and categories are stored as published by the integration (the spec leaves their values open); GitBook's enumerations are narrower.",
  },
  {
    operation: /^(GET|PATCH|POST) \/orgs\/\{organizationId\}\/sites/,
    path: /\/features\/\*\/id$/,
    keyword: "enum",
    reason:
      "Site `features[].id`: the spec's list of features has ids GitBook's enumeration does not (the spec gives sites-adaptive-content as a sample only).",
  },
  {
    operation: /^(GET|PUT|PATCH|POST) \/orgs\/\{organizationId\}\/openapi/,
    path: /\/(processingState|lastProcessErrorCode)$/,
    keyword: "enum",
    reason: "OpenAPI processing states and error codes are the spec's (`FETCH_TOO_LARGE`, …); GitBook's enumerations are narrower.",
  },

  // ─── Resources of the spec that GitBook models differently ─────────────────────────────────
  {
    operation: /^(GET|POST|PUT) \/orgs\/\{organizationId\}\/translations/,
    path: ANY,
    reason:
      "The spec's translations are translation settings (`object: translation-settings`, a title and languages); GitBook's translations are machine-translation jobs from a source space (status, source, language, stats). Nothing of a job exists here.",
  },
  {
    operation: /^(GET|PUT|PATCH) \/orgs\/\{organizationId\}\/sites\/\{siteId\}\/adaptive-schema$/,
    path: ANY,
    reason:
      "The adaptive schema is the JSON Schema the spec describes (with `$id`, and whatever property schemas a site's owner wrote); GitBook's schema only admits its own restricted form and fixed description texts.",
  },
  {
    operation: /^(GET|POST) \/integrations\/\{integrationName\}\/render$/,
    path: ANY,
    reason:
      "A render answer is the integration's own ContentKit output, relayed as it answered (spec); its `props` and `state` are the integration's, which GitBook's schema types narrowly.",
  },
  {
    operation: /^GET \/(orgs\/\{organizationId\}|spaces\/\{spaceId\})\/search$/,
    path: /^\/items\/\*(\/pages\/\*)?(\/sections\/\*)?$/,
    keyword: "required",
    message: /'(score|rank|type|ancestors|description)'/,
    reason:
      "Search results have the spec's shape (space → pages → sections, ordered by relevance); GitBook adds relevance scores, a global rank, page ancestors and descriptions, which this server's full-text search does not compute.",
  },
  {
    operation: /^(GET|POST|PATCH) \/orgs\/\{organizationId\}\/saml/,
    path: /^(\/items\/\*)?$/,
    keyword: "required",
    message: /'(ssoURL|entityID|certificate)'/,
    reason:
      "A SAML provider is created with a label only (spec) and gets its identity provider's settings later; until then it has no ssoURL, entityID or certificate to send.",
  },
  {
    operation: "GET /spaces/{spaceId}/revisions/{revisionId}/changes",
    path: "/changes/*/attributes",
    keyword: "oneOf",
    reason:
      "GitBook's own schema cannot be met here: a page_edited change's `attributes` is a oneOf of the document, group and link attribute schemas, none of which closes its properties and all of which share `title`, so every edit (`{title: {before, after}}`, …) matches more than one branch.",
  },
  {
    operation: /^(GET|POST) \/spaces\/\{spaceId\}(\/change-requests\/\{changeRequestId\})?\/comments/,
    path: /(^|\/)body$/,
    keyword: "oneOf",
    reason:
      "With format=document a comment's body keeps the spec's `markdown` (`body: {markdown}`, a non-null field of the graph) beside GitBook's JSONDocument in `document`; GitBook's Document is a oneOf of `{markdown}` and `{document}` that do not exclude each other, so a body holding both matches two branches.",
  },
];
