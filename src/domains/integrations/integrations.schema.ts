import { builder } from "../../core/graph/builder.js";
import { deleted, deletionPayload } from "../../core/graph/payloads.js";
import { argsWithNulls } from "../../core/context.js";
import { listOf, pageArgs, restName } from "../../core/graph/rest-fields.js";
import type { Integration } from "../../generated/prisma/client.js";
import { EVENT_STATUSES } from "../../events/messages.js";
import * as service from "./integrations.service.js";
import * as scoped from "./scoped-installations.service.js";
import * as rendering from "./integrations.render.js";
import {
  ConfigurationProperties,
  EventStatusEnum,
  IntegrationRef,
  JsonObject,
  NAME_ARG,
  RuntimeEnum,
  Secrets,
  SelectionEnum,
  TargetEnum,
  VisibilityEnum,
} from "./integration-object.schema.js";
import { InstallationRef, SiteInstallation, SpaceInstallation } from "./integration-installations.schema.js";
import { EventRef, EventWithTrace } from "./integration-events.schema.js";

/**
 * The integrations domain of the graph: ContentKit render output, lists, inputs and operations,
 * over the types of integration-object.schema.ts (Integration), integration-installations.schema.ts
 * (installations in organizations, spaces and sites) and integration-events.schema.ts (events and
 * their subscriptions).
 *
 * Importing this module defines all of them, in the order of those imports: the graph lists its
 * types (and /v1 its shapes) in the order they are defined, so the chain of imports is that order.
 */

export { IntegrationRef } from "./integration-object.schema.js";
export { InstallationRef } from "./integration-installations.schema.js";
export { EventRef } from "./integration-events.schema.js";

// ─── ContentKit ────────────────────────────────────────────────────────────────────────────────

const Confirm = builder.objectRef<rendering.ContentKitConfirm>("ContentKitConfirm").implement({
  fields: (t) => ({
    title: t.exposeString("title"),
    text: t.exposeString("text"),
    confirm: t.exposeString("confirm"),
    style: t.string({ nullable: true, resolve: (c) => c.style ?? null }),
  }),
});
const Button = builder.objectRef<rendering.ContentKitButton>("ContentKitButton").implement({
  fields: (t) => ({
    type: t.string({ resolve: () => "button" }),
    style: t.string({ nullable: true, resolve: (b) => b.style ?? null }),
    onPress: t.field({ type: JsonObject, description: "The action dispatched when pressed.", resolve: (b) => b.onPress }),
    icon: t.string({ nullable: true, resolve: (b) => b.icon ?? null }),
    trailingIcon: t.string({ nullable: true, resolve: (b) => b.trailingIcon ?? null }),
    label: t.string({ nullable: true, resolve: (b) => b.label ?? null }),
    tooltip: t.string({ nullable: true, resolve: (b) => b.tooltip ?? null }),
    confirm: t.field({ type: Confirm, nullable: true, resolve: (b) => b.confirm ?? null }),
    disabled: t.boolean({ nullable: true, resolve: (b) => b.disabled ?? null }),
  }),
});
const Control = builder.objectRef<rendering.ContentKitControl>("ContentKitControl").implement({
  fields: (t) => ({
    icon: t.string({ nullable: true, resolve: (c) => c.icon ?? null }),
    label: t.exposeString("label"),
    onPress: t.field({ type: JsonObject, resolve: (c) => c.onPress }),
    confirm: t.field({ type: Confirm, nullable: true, resolve: (c) => c.confirm ?? null }),
  }),
});
const BlockElement = builder.objectRef<rendering.ContentKitOutput["element"]>("ContentKitBlock").implement({
  fields: (t) => ({
    type: t.string({ resolve: () => "block" }),
    children: t.field({ type: [Button], resolve: (b) => b.children }),
    controls: t.field({ type: [Control], nullable: true, resolve: (b) => b.controls ?? null }),
  }),
});
const RenderOutput = builder.objectRef<rendering.ContentKitOutput>("ContentKitRenderOutput").implement({
  description: "ContentKit render output of an integration component.",
  fields: (t) => ({
    type: t.string({ resolve: () => "element" }),
    element: t.field({ type: BlockElement, resolve: (o) => o.element }),
    state: t.field({ type: JsonObject, resolve: (o) => o.state }),
    props: t.field({ type: JsonObject, resolve: (o) => o.props }),
  }),
});

const SigningSecret = builder.objectRef<{ signingSecret: string }>("IntegrationSigningSecret").implement({
  description:
    'The secret that signs requests sent to the integration: x-signature = sha256=<hex HMAC-SHA256 of "<x-signature-timestamp>.<raw body>">.',
  fields: (t) => ({ signingSecret: t.exposeString("signingSecret") }),
});

// ─── Lists and inputs ──────────────────────────────────────────────────────────────────────────

const IntegrationList = listOf("IntegrationList", IntegrationRef);
const InstallationList = listOf("IntegrationInstallationList", InstallationRef);
const EventList = listOf("IntegrationEventList", EventRef);
const SpaceInstallationList = listOf("IntegrationSpaceInstallationList", SpaceInstallation);
const SiteInstallationList = listOf("IntegrationSiteInstallationList", SiteInstallation);

const BlockMarkdownInput = builder.inputType("IntegrationBlockMarkdownInput", {
  fields: (t) => ({ codeblock: t.string({ required: true }), body: t.string({ required: true }) }),
});
const BlockInput = builder.inputType("IntegrationBlockInput", {
  fields: (t) => ({
    id: t.string({ required: true }),
    title: t.string({ required: true }),
    description: t.string(),
    icon: t.string(),
    urlUnfurl: t.stringList({ description: "URLs (or domains) whose links the block unfurls." }),
    markdown: t.field({ type: BlockMarkdownInput }),
  }),
});
const ContentSourceInput = builder.inputType("IntegrationContentSourceInput", {
  fields: (t) => ({
    id: t.string({ required: true }),
    title: t.string({ required: true }),
    description: t.string(),
    icon: t.string(),
    configuration: t.field({
      type: builder.inputType("IntegrationContentSourceConfigurationInput", {
        fields: (f) => ({ componentId: f.string({ required: true }) }),
      }),
      required: true,
    }),
  }),
});
const ExternalLinkInput = builder.inputType("IntegrationExternalLinkInput", {
  fields: (t) => ({ url: t.string({ required: true }), label: t.string({ required: true }) }),
});
const ConfigurationSchemaInput = builder.inputType("IntegrationConfigurationSchemaInput", {
  fields: (t) => ({ properties: t.field({ type: ConfigurationProperties }), required: t.stringList() }),
});
const ConfigurationsInput = builder.inputType("IntegrationConfigurationsInput", {
  fields: (t) => ({
    account: t.field({ type: ConfigurationSchemaInput }),
    space: t.field({ type: ConfigurationSchemaInput }),
    site: t.field({ type: ConfigurationSchemaInput }),
  }),
});

const installationListArgs = (t: any) => ({
  integrationName: t.arg.string(NAME_ARG),
  ...pageArgs,
  externalId: t.arg.string({ description: "Only items whose externalIds contain this value." }),
});

// ─── Operations ────────────────────────────────────────────────────────────────────────────────

builder.queryFields((t) => ({
  integrations: t.field({
    type: IntegrationList,
    description:
      "Integrations: public ones, and every one of the caller's organizations (unlisted ones of others are reached by name only), by name. " +
      "Filters: search (text in the name or title), category, blockDomain (integrations with a block unfurling links of that domain or its subdomains), " +
      "hasBlocks, hasContentSources, owner (id or subdomain of the owning organization), scope, target (installable there: that target or all).",
    args: {
      ...pageArgs,
      search: t.arg.string({ description: "Text searched in the name (and title), case-insensitive." }),
      category: t.arg.string(),
      blockDomain: t.arg.string({ description: "A domain, ^[a-zA-Z0-9-_.]+$." }),
      hasBlocks: t.arg.boolean(),
      hasContentSources: t.arg.boolean(),
      owner: t.arg.string({ description: "Id or subdomain of the owning organization." }),
      scope: t.arg.string(),
      target: t.arg({ type: TargetEnum }),
    },
    resolve: (_r, args, ctx) => service.listIntegrations(ctx, args as service.IntegrationFilters),
  }),
  integration: t.field({
    type: IntegrationRef,
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: (_r, args, ctx) => service.getIntegration(ctx, args.integrationName),
  }),
  integrationInstallations: t.field({
    type: InstallationList,
    description:
      "Installations of an integration: all of them for admins of the owner organization, else those of the caller's organizations.",
    args: installationListArgs(t),
    resolve: (_r, args: any, ctx) => service.listInstallations(ctx, args.integrationName, args),
  }),
  integrationInstallation: t.field({
    type: InstallationRef,
    args: { integrationName: t.arg.string(NAME_ARG), installationId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getInstallation(ctx, args.integrationName, args.installationId),
  }),
  integrationEvents: t.field({
    type: EventList,
    description: "Events of an integration, newest first (members of the owner organization).",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      ...pageArgs,
      type: t.arg.string({ description: "Only events of this type (installation_setup, space_content_updated, …)." }),
      status: t.arg({ type: EventStatusEnum, description: "Only events with this status." }),
      installationId: t.arg.string({ description: "Only events of this installation." }),
    },
    resolve: (_r, args, ctx) => service.listEvents(ctx, args.integrationName, args),
  }),
  integrationEvent: t.field({
    type: EventWithTrace,
    description: "An event with the trace of its delivery (members of the owner organization).",
    args: { integrationName: t.arg.string(NAME_ARG), eventId: t.arg.string({ required: true }) },
    resolve: (_r, args, ctx) => service.getEvent(ctx, args.integrationName, args.eventId),
  }),
  integrationRender: t.field({
    type: RenderOutput,
    description:
      "Renders a component: like POST …/render, with the request as LZ-string compressed JSON (compressToEncodedURIComponent) in `request`.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      request: t.arg.string({
        required: true,
        description: "LZ-string compressToEncodedURIComponent of the JSON {componentId, props, state, context, action}.",
      }),
    },
    resolve: (_r, args, ctx) => rendering.render(ctx, args.integrationName, rendering.decodeRenderRequest(args.request), "request."),
  }),
  integrationSigningSecret: t.field({
    type: SigningSecret,
    description: "The secret signing the requests sent to the integration (admins of the owner organization).",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: (_r, args, ctx) => service.signingSecret(ctx, args.integrationName),
  }),
}));

const IntegrationSpaceUninstallPayload = deletionPayload("IntegrationSpaceUninstallPayload", "space installation (the space's id)");
const IntegrationSiteUninstallPayload = deletionPayload("IntegrationSiteUninstallPayload", "site installation (the site's id)");
const IntegrationDeletePayload = deletionPayload("IntegrationDeletePayload", "integration");
const IntegrationUninstallPayload = deletionPayload("IntegrationUninstallPayload", "installation");

builder.mutationFields((t) => ({
  integrationPublish: t.field({
    type: IntegrationRef,
    description:
      "Publishes an integration: the first publish creates it (201, version 1) for `organization`; later ones add a version (200). " +
      "Omitted fields keep their value; null resets one to its default. Admins of the owning organization only.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      runtime: t.arg({ type: RuntimeEnum, description: "v1 (the default runtime when omitted)." }),
      icon: t.arg.string({ description: "Icon image, base64 content." }),
      title: t.arg.string({ description: "Required on the first publish, at most 100 characters." }),
      description: t.arg.string(),
      summary: t.arg.string({ description: "Long-form markdown." }),
      previewImages: t.arg.stringList({ description: "Preview images, base64 content each." }),
      visibility: t.arg({ type: VisibilityEnum, description: "private when omitted on the first publish." }),
      target: t.arg({ type: TargetEnum, description: "Omitted: installable at all targets." }),
      scopes: t.arg.stringList(),
      categories: t.arg.stringList(),
      blocks: t.arg({ type: [BlockInput] }),
      contentSources: t.arg({ type: [ContentSourceInput] }),
      externalLinks: t.arg({ type: [ExternalLinkInput] }),
      configurations: t.arg({ type: ConfigurationsInput }),
      script: t.arg.string({ description: "Script content." }),
      organization: t.arg.string({ description: "Id or subdomain of the publishing organization; required on the first publish." }),
      secrets: t.arg({ type: Secrets }),
      contentSecurityPolicy: t.arg.string({
        description: "Sent as the content-security-policy header of render requests and script-fetch and block-fetch events.",
      }),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { integrationName, ...input } = argsWithNulls(ctx, rawArgs);
      return service.publishIntegration(ctx, integrationName, input as service.PublishInput);
    },
  }),
  integrationDelete: t.field({
    type: IntegrationDeletePayload,
    description: "Deletes an integration with its installations and events (admins of the owner). Succeeds also when it did not exist.",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: async (_r, args, ctx) => deleted(service.deleteIntegration(ctx, args.integrationName), args.integrationName),
  }),
  integrationInstall: t.field({
    type: InstallationRef,
    description: "Installs an integration in an organization (its admins). Records an installation_setup event.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      organization: t.arg.string({ required: true, description: "Id or subdomain of the organization." }),
    },
    resolve: (_r, args, ctx) => service.installIntegration(ctx, args.integrationName, args.organization),
  }),
  integrationInstallationUpdate: t.field({
    type: InstallationRef,
    description:
      "Changes an installation (admins of its organization). A new configuration, space selection or site selection records an installation_setup event with `previous`.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      installationId: t.arg.string({ required: true }),
      configuration: t.arg({
        type: JsonObject,
        description: "The whole configuration (checked against the integration's account configuration schema).",
      }),
      spaceSelection: t.arg({
        type: SelectionEnum,
        description: "all: every space of the organization; selected: the spaces it was installed in.",
        extensions: restName("space_selection"),
      }),
      siteSelection: t.arg({
        type: SelectionEnum,
        description: "all: every site of the organization; selected: the sites it was installed in.",
        extensions: restName("site_selection"),
      }),
      externalIds: t.arg.stringList(),
    },
    resolve: (_r, rawArgs, ctx) => {
      const { integrationName, installationId, spaceSelection, siteSelection, ...rest } = argsWithNulls(ctx, rawArgs);
      // The service's patch speaks GitBook's names, as /v1 does.
      const patch = { ...rest, space_selection: spaceSelection, site_selection: siteSelection };
      return service.updateInstallation(ctx, integrationName, installationId, patch as service.InstallationPatch);
    },
  }),
  integrationUninstall: t.field({
    type: IntegrationUninstallPayload,
    description:
      "Removes an installation and its space and site installations (admins of its organization); records installation_deleted. Succeeds also when it did not exist.",
    args: { integrationName: t.arg.string(NAME_ARG), installationId: t.arg.string({ required: true }) },
    resolve: async (_r, args, ctx) => deleted(service.uninstall(ctx, args.integrationName, args.installationId), args.installationId),
  }),
  integrationDevSet: t.field({
    type: IntegrationRef,
    nullable: true,
    description:
      "Turns development mode on: events are dispatched to tunnelUrl (signed POSTs). all: forward every organization's events, not only the owner's.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      tunnelUrl: t.arg.string({ required: true, description: "http(s) URL receiving the integration's events and render requests." }),
      all: t.arg.boolean({ description: "Default false: only events of the owner organization's installations are forwarded." }),
    },
    resolve: async (_r, args, ctx) => {
      await service.setDevelopmentMode(ctx, args.integrationName, args.tunnelUrl, args.all);
      return ctx.prisma.integration.findUnique({ where: { name: args.integrationName } });
    },
  }),
  integrationDevDelete: t.field({
    type: IntegrationRef,
    nullable: true,
    description: "Turns development mode off; answers the integration (null when it did not exist).",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: async (_r, args, ctx) => {
      await service.disableDevelopmentMode(ctx, args.integrationName);
      return ctx.prisma.integration.findUnique({ where: { name: args.integrationName } });
    },
  }),
  integrationRenderPost: t.field({
    type: RenderOutput,
    description:
      "Renders a component of the integration: a signed POST {type: ui_render, componentId, props, state, context, action} to its endpoint (the development tunnel), " +
      "whose answer must be ContentKit render output (else 502). No endpoint: 409.",
    args: {
      integrationName: t.arg.string(NAME_ARG),
      componentId: t.arg.string({ required: true, description: "Id of the component to render." }),
      props: t.arg({ type: JsonObject, description: "Properties of the component." }),
      state: t.arg({ type: JsonObject, description: "Current local UI state." }),
      context: t.arg({ type: JsonObject, description: "Rendering context." }),
      action: t.arg({ type: JsonObject, description: "The action being handled (a button's onPress), if any." }),
    },
    resolve: (_r, args, ctx) => rendering.render(ctx, args.integrationName, args as rendering.RenderRequest),
  }),
  integrationSigningSecretRotate: t.field({
    type: SigningSecret,
    description: "Replaces the signing secret (admins of the owner organization); requests are signed with the new one at once.",
    args: { integrationName: t.arg.string(NAME_ARG) },
    resolve: (_r, args, ctx) => service.rotateSigningSecret(ctx, args.integrationName),
  }),
}));

// ─── Space and site installation operations ────────────────────────────────────────────────────

/**
 * The same four operations for space and site installations: list (GET …/spaces, …/sites), read,
 * install or change (PUT …/installations/{installationId}/spaces/{spaceId}), remove (DELETE).
 */
function scopedInstallationOperations(scope: scoped.InstallationScope, item: typeof SpaceInstallation, list: typeof SpaceInstallationList) {
  const Noun = scope === "space" ? "Space" : "Site";
  const idArg = `${scope}Id`;
  const expandDescription = `true: \`${scope}\` is the ${Noun} object; false (default): its id.`;
  builder.queryFields((t) => ({
    [`integration${Noun}Installations`]: t.field({
      type: list,
      description: `${Noun}s the integration is installed in (among the installations the caller sees), oldest first.`,
      args: { ...installationListArgs(t), expand: t.arg.boolean({ description: expandDescription }) },
      resolve: (_r, args: any, ctx) => scoped.listScopedInstallations(ctx, scope, args.integrationName, args),
    }),
    [`integration${Noun}Installation`]: t.field({
      type: item,
      args: {
        integrationName: t.arg.string(NAME_ARG),
        installationId: t.arg.string({ required: true }),
        [idArg]: t.arg.string({ required: true }),
        expand: t.arg.boolean({ description: expandDescription }),
      },
      resolve: (_r, args: any, ctx) =>
        scoped.getScopedInstallation(ctx, scope, args.integrationName, args.installationId, args[idArg], !!args.expand),
    }),
  }));
  builder.mutationFields((t) => ({
    [`integration${Noun}Install`]: t.field({
      type: item,
      description: `Installs the integration in a ${scope} of the installation's organization, or changes that ${scope} installation; records ${scope}_installation_setup.`,
      args: {
        integrationName: t.arg.string(NAME_ARG),
        installationId: t.arg.string({ required: true }),
        [idArg]: t.arg.string({ required: true }),
        configuration: t.arg({
          type: JsonObject,
          description: `Checked against the integration's ${scope} configuration schema; omitted: kept ({} at first).`,
        }),
        externalIds: t.arg.stringList({ description: "Omitted: kept ([] at first)." }),
      },
      resolve: (_r, args: any, ctx) => scoped.installScoped(ctx, scope, args.integrationName, args.installationId, args[idArg], args),
    }),
    [`integration${Noun}Uninstall`]: t.field({
      type: scope === "space" ? IntegrationSpaceUninstallPayload : IntegrationSiteUninstallPayload,
      description: `Removes the integration from a ${scope}; records ${scope}_installation_deleted. Succeeds also when it was not installed there.`,
      args: {
        integrationName: t.arg.string(NAME_ARG),
        installationId: t.arg.string({ required: true }),
        [idArg]: t.arg.string({ required: true }),
      },
      resolve: (_r, args: any, ctx) =>
        deleted(scoped.uninstallScoped(ctx, scope, args.integrationName, args.installationId, args[idArg]), args[idArg]),
    }),
  }));
}

scopedInstallationOperations("space", SpaceInstallation, SpaceInstallationList);
scopedInstallationOperations("site", SiteInstallation, SiteInstallationList);

export { EVENT_STATUSES };
export type { Integration };
