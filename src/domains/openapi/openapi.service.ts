import type { OpenApiSpec } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership, requireOrgRole } from "../../core/access/access.js";
import { byKeys, defineSharedLoader } from "../../core/graph/loaders.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, conflict, notFound } from "../../core/errors.js";
import { checkLength, checkOneOf, checkPattern, checkUri } from "../../core/validate.js";
import { checkOutboundUrl } from "../../core/support/outbound.js";
import { newId } from "../../core/ids.js";
import { EDIT_ROLE, canViewSpec } from "./openapi.policy.js";
import { specUrls } from "./openapi.urls.js";
import { processorFor } from "./openapi.processing.js";

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SLUG_MAX = 100;
export const URL_MAX = 2048;
export const VISIBILITIES = ["private", "public"] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** The spec (slug and organization) of each version, for its links. */
export const specOfVersion = defineSharedLoader<string, Pick<OpenApiSpec, "id" | "slug" | "organizationId"> | null>(
  async (specIds, prisma) =>
    byKeys(
      specIds,
      await prisma.openApiSpec.findMany({ where: { id: { in: [...specIds] } }, select: { id: true, slug: true, organizationId: true } }),
      (s) => s.id,
    ),
);

/** A unique-constraint violation, as Prisma reports it (P2002) or as the driver adapter does (23505). */
function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string }; meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } };
  return e?.code === "P2002" || e?.cause?.code === "23505" || /unique constraint/i.test(String((err as Error)?.message));
}

function checkSlug(value: string | null | undefined): string {
  if (value === null || value === undefined || value === "") throw badInput("slug is required.");
  checkLength("slug", value, 1, SLUG_MAX);
  checkPattern("slug", value, SLUG_PATTERN, "^[a-z0-9]+(?:-[a-z0-9]+)*$ (lowercase letters and digits, joined by single hyphens)");
  return value;
}

export interface SourceInput {
  url?: string | null;
}

function checkSource(ctx: Context, source: SourceInput | null | undefined): string {
  if (!source) throw badInput("source is required.");
  const url = source.url?.trim();
  if (!url) throw badInput("source.url is required.");
  checkUri("source.url", url, URL_MAX);
  checkOutboundUrl(ctx.config, "source.url", url);
  return url;
}

async function findSpec(ctx: Context, organizationId: string, specSlug: string) {
  const spec = await ctx.prisma.openApiSpec.findUnique({ where: { organizationId_slug: { organizationId, slug: specSlug } } });
  if (!spec) throw notFound(`OpenAPI spec "${specSlug}" of organization "${organizationId}"`);
  return spec;
}

export async function listSpecs(ctx: Context, organizationId: string, args: PageArgs) {
  const member = await requireMembership(ctx, organizationId);
  return paginate({
    args,
    // canViewSpec: guests list only the public specs.
    where: member.role === null ? { organizationId, visibility: "public" } : { organizationId },
    order: [
      ["slug", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.openApiSpec,
  });
}

export async function getSpec(ctx: Context, organizationId: string, specSlug: string) {
  const member = await requireMembership(ctx, organizationId);
  const spec = await findSpec(ctx, organizationId, specSlug);
  if (!canViewSpec(member, spec)) throw notFound(`OpenAPI spec "${specSlug}" of organization "${organizationId}"`);
  return spec;
}

/** Creates a spec and processes its source in the background; it answers while `pending`. */
export async function createSpec(ctx: Context, organizationId: string, input: { slug?: string | null; source?: SourceInput | null }) {
  await requireOrgRole(ctx, organizationId, EDIT_ROLE, "create OpenAPI specs");
  const slug = checkSlug(input.slug);
  const sourceURL = checkSource(ctx, input.source);
  const taken = await ctx.prisma.openApiSpec.findUnique({ where: { organizationId_slug: { organizationId, slug } }, select: { id: true } });
  if (taken) throw conflict(`slug "${slug}" is already used by another OpenAPI spec of this organization.`);
  let spec: OpenApiSpec;
  try {
    spec = await ctx.prisma.openApiSpec.create({
      data: { id: newId("OpenApiSpec"), organizationId, slug, sourceURL, processingState: "pending" },
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict(`slug "${slug}" is already used by another OpenAPI spec of this organization.`);
    }
    throw err;
  }
  void processorFor(ctx).schedule(spec.id);
  return spec;
}

/** PUT: a new source; the spec goes back to `pending` and is processed again in the background. */
export async function updateSpecSource(ctx: Context, organizationId: string, specSlug: string, source: SourceInput | null | undefined) {
  await requireOrgRole(ctx, organizationId, EDIT_ROLE, "update OpenAPI specs");
  const sourceURL = checkSource(ctx, source);
  const spec = await findSpec(ctx, organizationId, specSlug);
  const updated = await ctx.prisma.openApiSpec.update({ where: { id: spec.id }, data: { sourceURL, processingState: "pending" } });
  void processorFor(ctx).schedule(spec.id);
  return updated;
}

export async function updateSpecVisibility(ctx: Context, organizationId: string, specSlug: string, visibility: string | null | undefined) {
  await requireOrgRole(ctx, organizationId, EDIT_ROLE, "change OpenAPI specs");
  if (visibility === null) throw badInput("visibility cannot be null: use private or public.");
  const value = checkOneOf("visibility", visibility, VISIBILITIES);
  const spec = await findSpec(ctx, organizationId, specSlug);
  if (!value || value === spec.visibility) return spec;
  return ctx.prisma.openApiSpec.update({ where: { id: spec.id }, data: { visibility: value } });
}

export async function deleteSpec(ctx: Context, organizationId: string, specSlug: string) {
  await requireOrgRole(ctx, organizationId, EDIT_ROLE, "delete OpenAPI specs");
  await ctx.prisma.openApiSpec.deleteMany({ where: { organizationId, slug: specSlug } });
  return true;
}

// ---------------------------------------------------------------------------------------------
// Versions

export async function listVersions(ctx: Context, organizationId: string, specSlug: string, args: PageArgs) {
  const spec = await getSpec(ctx, organizationId, specSlug);
  return paginate({
    args,
    where: { specId: spec.id },
    order: [
      ["createdAt", "desc"],
      ["id", "desc"],
    ],
    from: ctx.prisma.openApiSpecVersion,
  });
}

/** A version by id; `latest` names the spec's newest good version (`lastVersion`). */
export async function getVersion(ctx: Context, organizationId: string, specSlug: string, versionId: string) {
  const spec = await getSpec(ctx, organizationId, specSlug);
  if (versionId === "latest") {
    if (!spec.lastVersionId) throw notFound(`A processed version of OpenAPI spec "${specSlug}" (it has none yet)`);
    versionId = spec.lastVersionId;
  }
  const version = await ctx.prisma.openApiSpecVersion.findFirst({ where: { id: versionId, specId: spec.id } });
  if (!version) throw notFound(`Version "${versionId}" of OpenAPI spec "${specSlug}"`);
  return version;
}

export async function getVersionContent(ctx: Context, organizationId: string, specSlug: string, versionId: string) {
  const version = await getVersion(ctx, organizationId, specSlug, versionId);
  const spec = await getSpec(ctx, organizationId, specSlug);
  // `public`: where anyone may read it, for a public spec (its published address); null otherwise.
  const urls = { source: version.url, public: specUrls(ctx, spec).published ?? null };
  return { filesystem: version.filesystem as Record<string, string>, url: version.url, urls };
}
