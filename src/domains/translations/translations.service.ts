import type { Prisma as P } from "../../generated/prisma/client.js";
import type { Context } from "../../core/context.js";
import { requireMembership, requireOrgRole } from "../../core/access/access.js";
import { paginate, type PageArgs } from "../../core/graph/pagination.js";
import { badInput, notFound } from "../../core/errors.js";
import { checkLength } from "../../core/validate.js";
import { newId } from "../../core/ids.js";
import { EDIT_ROLE } from "./translations.policy.js";
import { lazy } from "../../core/support/lazy.js";

export const TITLE_MAX = 100;
export const LANGUAGES_MAX = 200;

/** A required title, 1 to 100 characters once trimmed. */
function checkTitle(value: string | null | undefined): string {
  if (value === null || value === undefined) throw badInput("title is required.");
  const title = value.trim();
  checkLength("title", title, 1, TITLE_MAX);
  return title;
}

/** The IANA language subtag registry (language-tags), loaded by the first check. */
const languageTags = lazy(async () => (await import("language-tags")).default);

/**
 * Language codes must be valid BCP 47 tags known to the IANA registry (en, fr-CA, zh-Hant-TW…);
 * they are stored in their canonical case (en-us → en-US), without duplicates, in the order given.
 */
export async function checkLanguages(values: readonly string[]): Promise<string[]> {
  if (values.length > LANGUAGES_MAX) throw badInput(`languages must hold at most ${LANGUAGES_MAX} codes (got ${values.length}).`);
  const tags = await languageTags();
  const out: string[] = [];
  values.forEach((raw, i) => {
    const code = typeof raw === "string" ? raw.trim() : "";
    const tag = tags(code);
    if (!code || code.length > 64 || !tag.valid()) {
      throw badInput(`languages[${i}] "${raw}" is not a valid BCP 47 language code (such as "en", "fr-CA" or "zh-Hant-TW").`);
    }
    const canonical = tag.format();
    if (!out.includes(canonical)) out.push(canonical);
  });
  return out;
}

export async function listTranslations(ctx: Context, organizationId: string, args: PageArgs) {
  await requireMembership(ctx, organizationId);
  return paginate({
    args,
    where: { organizationId },
    order: [
      ["createdAt", "asc"],
      ["id", "asc"],
    ],
    from: ctx.prisma.translationSettings,
  });
}

async function findSettings(ctx: Context, organizationId: string, translationSettingsId: string) {
  const row = await ctx.prisma.translationSettings.findFirst({ where: { id: translationSettingsId, organizationId } });
  if (!row) throw notFound(`Translation settings "${translationSettingsId}" of organization "${organizationId}"`);
  return row;
}

export async function getTranslations(ctx: Context, organizationId: string, translationSettingsId: string) {
  await requireMembership(ctx, organizationId);
  return findSettings(ctx, organizationId, translationSettingsId);
}

export interface TranslationInput {
  title?: string | null;
  languages?: readonly string[] | null;
}

export async function createTranslations(ctx: Context, organizationId: string, input: TranslationInput) {
  await requireOrgRole(ctx, organizationId, EDIT_ROLE, "create translation settings");
  const title = checkTitle(input.title);
  const languages = input.languages ? await checkLanguages(input.languages) : [];
  return ctx.prisma.translationSettings.create({
    data: { id: newId("TranslationSettings"), organizationId, title, languages },
  });
}

/** PUT: the title is replaced; `languages` is replaced when given and kept when absent. */
export async function updateTranslations(ctx: Context, organizationId: string, translationSettingsId: string, input: TranslationInput) {
  await requireOrgRole(ctx, organizationId, EDIT_ROLE, "change translation settings");
  const title = checkTitle(input.title);
  const data: P.TranslationSettingsUpdateInput = { title };
  if (input.languages === null) data.languages = [];
  else if (input.languages !== undefined) data.languages = await checkLanguages(input.languages);
  await findSettings(ctx, organizationId, translationSettingsId);
  return ctx.prisma.translationSettings.update({ where: { id: translationSettingsId }, data });
}

export async function deleteTranslations(ctx: Context, organizationId: string, translationSettingsId: string) {
  await requireOrgRole(ctx, organizationId, EDIT_ROLE, "delete translation settings");
  await ctx.prisma.translationSettings.deleteMany({ where: { id: translationSettingsId, organizationId } });
  return true;
}
