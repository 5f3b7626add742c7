import { GraphQLScalarType } from "graphql";
import type { ScalarRef } from "@pothos/core";
import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { organizationParent } from "../organizations/organizations.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { viewerMembership, viewerMemberWhere } from "../../core/access/access.js";
import { GRAPH_ONLY, KEEP_NULL, listOf, pageArgs, permissionsOf, urlsOf } from "../../core/graph/rest-fields.js";
import { OPENAPI_PERMISSIONS, openApiPermissions } from "./openapi.policy.js";
import { specUrls, versionUrls } from "./openapi.urls.js";
import { PROCESS_ERROR_CODES, type ProcessErrorCode } from "./openapi.fetch.js";
import { PROCESSING_STATES, type ProcessingState } from "./openapi.processing.js";
import * as service from "./openapi.service.js";

const ProcessingStateEnum = builder.enumType("OpenApiSpecProcessingState", {
  description: "pending (waiting to be processed) → progress (being fetched and validated) → completed or failed.",
  values: PROCESSING_STATES,
});

const ProcessErrorCodeEnum = builder.enumType("OpenApiSpecProcessErrorCode", {
  values: Object.fromEntries(Object.entries(PROCESS_ERROR_CODES).map(([code, description]) => [code, { description }])) as Record<
    ProcessErrorCode,
    { description: string }
  >,
});

const VisibilityEnum = builder.enumType("OpenApiSpecVisibility", {
  values: {
    private: { description: "Not publicly available." },
    public: { description: "Available to anyone with the public link (urls.published)." },
  } as const,
});

// A map of file name to text; published as `{ type: object, additionalProperties: string }`.
const Filesystem = builder.addScalarType(
  "OpenApiFilesystem" as never,
  new GraphQLScalarType<Record<string, string>, Record<string, string>>({
    name: "OpenApiFilesystem",
    description: 'The files of a version: file name to text, e.g. { "openapi.yaml": "openapi: 3.1.0…" }.',
    extensions: { jsonSchema: { type: "object", additionalProperties: { type: "string" } } },
    serialize: (value) => value as Record<string, string>,
  }),
) as unknown as ScalarRef<
  typeof builder extends { $inferSchemaTypes: infer T } ? T : never,
  Record<string, string>,
  Record<string, string>
>;

const SpecPermissions = permissionsOf("OpenApiSpecPermissions", OPENAPI_PERMISSIONS);
const SpecUrls = urlsOf("OpenApiSpecUrls", ["location", "app", "published"] as const, ["published"]);
const VersionUrls = urlsOf("OpenApiSpecVersionUrls", ["location"] as const);

const VersionContentUrls = builder.objectRef<{ source: string; public: string | null }>("OpenApiSpecVersionContentUrls").implement({
  fields: (t) => ({
    source: t.exposeString("source", { description: "Where the version was fetched from." }),
    public: t.string({
      nullable: true,
      extensions: KEEP_NULL,
      description: "Where anyone may read the specification: the spec's published address when it is public; null for a private spec.",
      resolve: (u) => u.public,
    }),
  }),
});

const VersionContent = builder
  .objectRef<{ filesystem: Record<string, string>; url: string; urls?: { source: string; public: string | null } }>(
    "OpenApiSpecVersionContent",
  )
  .implement({
    description: "The content of a version: its files and where the specification is accessible.",
    fields: (t) => ({
      filesystem: t.field({ type: Filesystem, resolve: (c) => c.filesystem }),
      url: t.exposeString("url"),
      urls: t.field({ type: VersionContentUrls, nullable: true, resolve: (c) => c.urls ?? null }),
    }),
  });

export const OpenApiSpecVersionRef = builder.prismaNode("OpenApiSpecVersion", {
  id: { field: "id" },
  description: "A processed version of an OpenAPI spec.",
  fields: (t) => ({
    object: t.string({ resolve: () => "openapi-spec-version" }),
    createdAt: t.expose("createdAt", { type: "DateTime", nullable: true }),
    url: t.exposeString("url", { description: "Where the specification is accessible (at most 2048 characters)." }),
    urls: t.field({
      type: VersionUrls,
      resolve: async (v, _a, ctx) => versionUrls(ctx, (await service.specOfVersion(ctx).load(v.specId))!, v.id),
    }),
    content: t.field({
      type: VersionContent,
      extensions: GRAPH_ONLY,
      description: "The version's files.",
      select: { filesystem: true, url: true },
      resolve: (v) => ({ filesystem: v.filesystem as Record<string, string>, url: v.url }),
    }),
  }),
});

export const OpenApiSpecRef = builder.prismaNode("OpenApiSpec", {
  id: { field: "id" },
  description: "An OpenAPI specification, fetched from its source URL and kept in versions.",
  fields: (t) => ({
    object: t.string({ resolve: () => "openapi-spec" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    slug: t.exposeString("slug", { description: "Unique in the organization; pattern ^[a-z0-9]+(?:-[a-z0-9]+)*$." }),
    sourceURL: t.exposeString("sourceURL", { nullable: true }),
    processingState: t.field({ type: ProcessingStateEnum, resolve: (s) => s.processingState as ProcessingState }),
    visibility: t.field({ type: VisibilityEnum, resolve: (s) => s.visibility as service.Visibility }),
    lastVersion: t.exposeString("lastVersionId", { nullable: true, description: "Id of the newest good version." }),
    lastProcessedAt: t.expose("lastProcessedAt", { type: "DateTime", nullable: true }),
    lastProcessedErrorCount: t.int({
      description: "Errors of the last processing: 1 when it failed (it stops at the first), 0 otherwise.",
      resolve: (s) => (s.lastProcessErrorCode ? 1 : 0),
    }),
    lastProcessErrorCode: t.field({
      type: ProcessErrorCodeEnum,
      nullable: true,
      description: "Why the last processing failed; absent when it succeeded.",
      resolve: (s) => (s.lastProcessErrorCode as ProcessErrorCode | null) ?? null,
    }),
    permissions: t.field({
      type: SpecPermissions,
      resolve: async (s, _a, ctx) => openApiPermissions(await viewerMembership(ctx, s.organizationId), s),
    }),
    urls: t.field({ type: SpecUrls, resolve: (s, _a, ctx) => specUrls(ctx, s) }),
    versions: t.relatedConnection("versions", {
      cursor: "id",
      totalCount: true,
      description: "The spec's versions, newest first.",
      query: () => ({ orderBy: [{ createdAt: "desc" }, { id: "desc" }] }),
    }),
  }),
});

const SpecList = listOf("OpenApiSpecList", OpenApiSpecRef);
const VersionList = listOf("OpenApiSpecVersionList", OpenApiSpecVersionRef);

const SourceInput = builder.inputType("OpenApiSpecSourceInput", {
  fields: (t) => ({ url: t.string({ required: true, description: "http(s) URL of the JSON or YAML document, at most 2048 characters." }) }),
});

// The graph: an organization's OpenAPI specs, for its members, by slug.
builder.prismaObjectFields("Organization", (t) => ({
  openAPISpecs: t.relatedConnection("openApiSpecs", {
    cursor: "id",
    totalCount: true,
    description: "The organization's OpenAPI specs, by slug.",
    query: (_args, ctx) => ({
      // canViewSpec in SQL: members with a role read all of them, guests the public ones.
      where: {
        OR: [
          { organization: { members: { some: { ...viewerMemberWhere(ctx), role: { not: null } } } } },
          { visibility: "public", organization: { members: { some: viewerMemberWhere(ctx) } } },
        ],
      },
      orderBy: [{ slug: "asc" }, { id: "asc" }],
    }),
  }),
}));

const specArgs = builder.args((t) => ({
  organizationId: t.string({ required: true }),
  specSlug: t.string({ required: true, description: "The spec's slug." }),
}));

builder.queryFields((t) => ({
  organizationOpenAPISpecs: t.field({
    type: SpecList,
    description: "OpenAPI specs of an organization, by slug.",
    args: { organizationId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => service.listSpecs(ctx, args.organizationId, args),
  }),
  openAPISpec: t.field({
    type: OpenApiSpecRef,
    args: specArgs,
    resolve: (_r, args, ctx) => service.getSpec(ctx, args.organizationId, args.specSlug),
  }),
  openAPISpecVersions: t.field({
    type: VersionList,
    description: "Versions of an OpenAPI spec, newest first.",
    args: { ...specArgs, ...pageArgs },
    resolve: (_r, args, ctx) => service.listVersions(ctx, args.organizationId, args.specSlug, args),
  }),
  // `latest` before `{versionId}`, so routers that try paths in order pick the literal one.
  openAPISpecLatestVersion: t.field({
    type: OpenApiSpecVersionRef,
    description: "The newest good version of an OpenAPI spec (its lastVersion).",
    args: specArgs,
    resolve: (_r, args, ctx) => service.getVersion(ctx, args.organizationId, args.specSlug, "latest"),
  }),
  openAPISpecLatestVersionContent: t.field({
    type: VersionContent,
    args: specArgs,
    resolve: (_r, args, ctx) => service.getVersionContent(ctx, args.organizationId, args.specSlug, "latest"),
  }),
  openAPISpecVersion: t.field({
    type: OpenApiSpecVersionRef,
    args: { ...specArgs, versionId: t.arg.string({ required: true, description: "A version id, or latest." }) },
    resolve: (_r, args, ctx) => service.getVersion(ctx, args.organizationId, args.specSlug, args.versionId),
  }),
  openAPISpecVersionContent: t.field({
    type: VersionContent,
    args: { ...specArgs, versionId: t.arg.string({ required: true, description: "A version id, or latest." }) },
    resolve: (_r, args, ctx) => service.getVersionContent(ctx, args.organizationId, args.specSlug, args.versionId),
  }),
}));

const OpenAPISpecDeletePayload = deletionPayload("OpenAPISpecDeletePayload", "specification (its slug)", organizationParent);

builder.mutationFields((t) => ({
  openAPISpecCreate: t.field({
    type: OpenApiSpecRef,
    description: "Creates a spec and processes its source in the background (role create or above).",
    args: {
      organizationId: t.arg.string({ required: true }),
      slug: t.arg.string({
        required: true,
        description: `Pattern ^[a-z0-9]+(?:-[a-z0-9]+)*$, at most ${service.SLUG_MAX} characters, unique in the organization.`,
      }),
      source: t.arg({ type: SourceInput, required: true }),
    },
    resolve: (_r, args, ctx) => service.createSpec(ctx, args.organizationId, args),
  }),
  openAPISpecUpdate: t.field({
    type: OpenApiSpecRef,
    description: "Sets a new source and processes it in the background (role create or above).",
    args: { ...specArgs, source: t.arg({ type: SourceInput, required: true }) },
    resolve: (_r, args, ctx) => service.updateSpecSource(ctx, args.organizationId, args.specSlug, args.source),
  }),
  openAPISpecVisibilityUpdate: t.field({
    type: OpenApiSpecRef,
    description: "Makes a spec private or public (role create or above).",
    args: { ...specArgs, visibility: t.arg({ type: VisibilityEnum }) },
    resolve: (_r, rawArgs, ctx) => {
      const args = argsWithNulls(ctx, rawArgs);
      return service.updateSpecVisibility(ctx, args.organizationId, args.specSlug, args.visibility);
    },
  }),
  openAPISpecDelete: t.field({
    type: OpenAPISpecDeletePayload,
    description: "Deletes a spec and its versions (succeeds also when it did not exist).",
    args: specArgs,
    resolve: async (_r, args, ctx) =>
      deleted(service.deleteSpec(ctx, args.organizationId, args.specSlug), args.specSlug, args.organizationId),
  }),
}));
