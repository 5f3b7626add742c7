import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { organizationParent } from "../organizations/organizations.schema.js";
import { argsWithNulls } from "../../core/context.js";
import { viewerMembership, viewerMemberWhere } from "../../core/access/access.js";
import { listOf, pageArgs, permissionsOf, urlsOf } from "../../core/graph/rest-fields.js";
import { TRANSLATION_PERMISSIONS, translationPermissions } from "./translations.policy.js";
import { translationUrls } from "./translations.urls.js";
import * as service from "./translations.service.js";

const TranslationSettingsPermissions = permissionsOf("TranslationSettingsPermissions", TRANSLATION_PERMISSIONS);
const TranslationSettingsUrls = urlsOf("TranslationSettingsUrls", ["location"] as const);

export const TranslationSettingsRef = builder.prismaNode("TranslationSettings", {
  id: { field: "id" },
  description: "Translation settings of an organization: a title and the languages content is translated into.",
  fields: (t) => ({
    object: t.string({ resolve: () => "translation-settings" }),
    title: t.exposeString("title", { description: `1 to ${service.TITLE_MAX} characters.` }),
    languages: t.exposeStringList("languages", { description: "BCP 47 language codes, such as en, fr-CA or zh-Hant-TW." }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    permissions: t.field({
      type: TranslationSettingsPermissions,
      select: { organizationId: true },
      resolve: async (s, _a, ctx) => translationPermissions(await viewerMembership(ctx, s.organizationId)),
    }),
    urls: t.field({
      type: TranslationSettingsUrls,
      select: { organizationId: true },
      resolve: (s, _a, ctx) => translationUrls(ctx, s.organizationId, s.id),
    }),
  }),
});

const TranslationSettingsList = listOf("TranslationSettingsList", TranslationSettingsRef);

// The graph: an organization's translation settings, for its members, oldest first.
builder.prismaObjectFields("Organization", (t) => ({
  translations: t.relatedConnection("translationSettings", {
    cursor: "id",
    totalCount: true,
    description: "The organization's translation settings, oldest first.",
    query: (_args, ctx) => ({
      where: { organization: { members: { some: viewerMemberWhere(ctx) } } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    }),
  }),
}));

const LANGUAGES_DESCRIPTION = "BCP 47 language codes (en, fr-CA, zh-Hant-TW…); stored in canonical case, without duplicates.";

builder.queryFields((t) => ({
  organizationTranslations: t.field({
    type: TranslationSettingsList,
    description: "Translation settings of an organization, oldest first.",
    args: { organizationId: t.arg.string({ required: true }), ...pageArgs },
    resolve: (_r, args, ctx) => service.listTranslations(ctx, args.organizationId, args),
  }),
  translationSettings: t.field({
    type: TranslationSettingsRef,
    args: { organizationId: t.arg.string({ required: true }), translationSettingsId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getTranslations(ctx, args.organizationId, args.translationSettingsId),
  }),
}));

const TranslationSettingsDeletePayload = deletionPayload("TranslationSettingsDeletePayload", "translation settings", organizationParent);

builder.mutationFields((t) => ({
  translationSettingsCreate: t.field({
    type: TranslationSettingsRef,
    description: "Creates translation settings (role create or above).",
    args: {
      organizationId: t.arg.string({ required: true }),
      title: t.arg.string({ required: true, description: `1 to ${service.TITLE_MAX} characters.` }),
      languages: t.arg.stringList({ description: LANGUAGES_DESCRIPTION }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, ...input } = argsWithNulls(ctx, rawArgs);
      return service.createTranslations(ctx, organizationId, input);
    },
  }),
  translationSettingsUpdate: t.field({
    type: TranslationSettingsRef,
    description: "Replaces the title; replaces the languages when given, keeps them when absent (role create or above).",
    args: {
      organizationId: t.arg.string({ required: true }),
      translationSettingsId: t.arg.string({ required: true }),
      title: t.arg.string({ required: true, description: `1 to ${service.TITLE_MAX} characters.` }),
      languages: t.arg.stringList({ description: LANGUAGES_DESCRIPTION }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { organizationId, translationSettingsId, ...input } = argsWithNulls(ctx, rawArgs);
      return service.updateTranslations(ctx, organizationId, translationSettingsId, input);
    },
  }),
  translationSettingsDelete: t.field({
    type: TranslationSettingsDeletePayload,
    description: "Deletes translation settings (succeeds also when they did not exist).",
    args: { organizationId: t.arg.string({ required: true }), translationSettingsId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) =>
      deleted(
        service.deleteTranslations(ctx, args.organizationId, args.translationSettingsId),
        args.translationSettingsId,
        args.organizationId,
      ),
  }),
}));
