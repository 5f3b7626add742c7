import type { Context } from "../../core/context.js";
import { badInput, notFound } from "../../core/errors.js";
import { checkLength, textProblem } from "../../core/validate.js";
import { newId } from "../../core/ids.js";
import { entry, type RevisionContent, type VariableValue } from "./model.js";
import { contentOf, editScope, readScope, revisionById, scopeRevision } from "./revisions.js";
import { reusableContentView, type ReusableContentView } from "./views.js";
import { toGitBookDocument, type GitBookDocument } from "./gitbook-document.js";
import { documentToMarkdown } from "./markdown.js";
import { MARKDOWN_MAX, checkMarkdown, checkTitle, commit, scopedContent } from "./content.service.js";

// ─── Reusable contents, variables, file deletion ─────────────────────────────────────────────

/**
 * Reusable contents and variables are parts of a revision's content like pages: written in a
 * scope (the space's content while its editMode is live, or a draft or open change request), one
 * revision per write, and merged three-way with the rest (content/model.ts `mergeContents`).
 */

export interface ReusableContentInput {
  title?: string | null;
  markdown?: string | null;
  /** A JSON document (this server's `format=document` shape or GitBook's), converted to markdown. */
  document?: unknown;
}

/** The markdown a reusable content write sets: from `markdown` or `document`, undefined when neither is given. */
function reusableMarkdown(input: ReusableContentInput): string | undefined {
  const hasMarkdown = input.markdown !== undefined && input.markdown !== null;
  const hasDocument = input.document !== undefined && input.document !== null;
  if (hasMarkdown && hasDocument) throw badInput("Give markdown or document, not both.");
  if (input.markdown === null && !hasDocument) throw badInput('markdown cannot be null: send "" to empty the reusable content.');
  if (hasMarkdown) return checkMarkdown(input.markdown!);
  if (hasDocument) {
    const markdown = documentToMarkdown("document", input.document);
    if (markdown.length > MARKDOWN_MAX) throw badInput(`document is too large (more than ${MARKDOWN_MAX} characters as markdown).`);
    return markdown;
  }
  return undefined;
}

function findReusable(content: RevisionContent, reusableContentId: string) {
  const item = entry(content.reusableContents, reusableContentId);
  if (!item) throw notFound(`Reusable content "${reusableContentId}"`);
  return item;
}

export async function getReusableContent(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  reusableContentId: string,
): Promise<ReusableContentView> {
  const { content } = await scopedContent(ctx, spaceId, changeRequestId);
  return reusableContentView(findReusable(content, reusableContentId));
}

/** A revision of a space (any role on the space reads it, like the space's change requests); 404 naming it otherwise. */
async function spaceRevisionContent(ctx: Context, spaceId: string, revisionId: string): Promise<RevisionContent> {
  const { space } = await readScope(ctx, spaceId);
  const revision = await revisionById(ctx).load(revisionId);
  if (!revision || revision.spaceId !== space.id) throw notFound(`Revision "${revisionId}" in space "${spaceId}"`);
  return contentOf(revision);
}

export async function getRevisionReusableContent(
  ctx: Context,
  spaceId: string,
  revisionId: string,
  reusableContentId: string,
): Promise<ReusableContentView> {
  return reusableContentView(findReusable(await spaceRevisionContent(ctx, spaceId, revisionId), reusableContentId));
}

/** A reusable content's document: GitBook's JSONDocument, derived from its markdown (content/gitbook-document.ts). */
export async function getRevisionReusableContentDocument(
  ctx: Context,
  spaceId: string,
  revisionId: string,
  reusableContentId: string,
): Promise<GitBookDocument> {
  return toGitBookDocument(findReusable(await spaceRevisionContent(ctx, spaceId, revisionId), reusableContentId).markdown);
}

export async function createReusableContent(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  input: ReusableContentInput,
): Promise<ReusableContentView> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "create reusable contents");
  const title = checkTitle(input.title);
  const markdown = reusableMarkdown(input) ?? "";
  const id = newId("ReusableContent");
  const result = await commit(ctx, scope, "edits", (draft) => {
    draft.reusableContents[id] = { id, title, markdown };
  });
  return reusableContentView(result.content.reusableContents[id]!);
}

export async function updateReusableContent(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  reusableContentId: string,
  input: ReusableContentInput,
): Promise<ReusableContentView> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "edit reusable contents");
  const title = input.title === undefined ? undefined : checkTitle(input.title);
  const markdown = reusableMarkdown(input);
  const result = await commit(ctx, scope, "edits", (draft) => {
    const current = findReusable(draft, reusableContentId);
    draft.reusableContents[reusableContentId] = {
      ...current,
      ...(title !== undefined ? { title } : {}),
      ...(markdown !== undefined ? { markdown } : {}),
    };
  });
  return reusableContentView(result.content.reusableContents[reusableContentId]!);
}

/** Deletes a reusable content; true also when it did not exist. */
export async function deleteReusableContent(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  reusableContentId: string,
): Promise<boolean> {
  return deleteItem(ctx, spaceId, changeRequestId, "reusableContents", reusableContentId, "delete reusable contents");
}

/** Removes the item `id` of a scope's `kind` records in a new revision; true also when it was not there (no revision then). */
async function deleteItem(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  kind: "reusableContents" | "files",
  id: string,
  action: string,
): Promise<boolean> {
  const scope = await editScope(ctx, spaceId, changeRequestId, action);
  const { content } = await scopeRevision(ctx, scope);
  if (!entry<unknown>(content[kind], id)) return true;
  await commit(ctx, scope, "edits", (draft) => {
    delete draft[kind][id];
  });
  return true;
}

export const MAX_VARIABLES = 100;
export const VARIABLE_NAME_MAX = 64;
/** GitBook's VariableValue: strings of at most 256 characters. */
export const VARIABLE_STRING_MAX = 256;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks variables a write sends (names, values); throws a 400 naming the first wrong one. */
export function checkVariables(label: string, variables: unknown): Record<string, VariableValue> {
  if (!variables || typeof variables !== "object" || Array.isArray(variables)) {
    throw badInput(`${label} must be an object of names to values: {"version": "2.1", "beta": true}.`);
  }
  const out: Record<string, VariableValue> = Object.create(null);
  const entries = Object.entries(variables);
  if (entries.length > MAX_VARIABLES) throw badInput(`${label}: at most ${MAX_VARIABLES} variables (got ${entries.length}).`);
  for (const [name, value] of entries) {
    const field = `${label}.${name.length > 80 ? `${name.slice(0, 80)}…` : name}`;
    checkVariableName(field, name);
    if (typeof value === "string") {
      const problem = textProblem(value);
      if (problem) throw badInput(`${field} ${problem}.`);
      checkLength(field, value, 0, VARIABLE_STRING_MAX);
    } else if (typeof value === "number") {
      if (!Number.isFinite(value)) throw badInput(`${field} must be a finite number.`);
    } else if (typeof value !== "boolean") {
      throw badInput(`${field} must be a string (at most ${VARIABLE_STRING_MAX} characters), a number or a boolean.`);
    }
    out[name] = value;
  }
  return out;
}

function checkVariableName(field: string, name: string): void {
  const problem = textProblem(name);
  if (problem) throw badInput(`The variable name ${field} ${problem}.`);
  checkLength(`The variable name ${field}`, name, 1, VARIABLE_NAME_MAX);
  if (!VARIABLE_NAME.test(name))
    throw badInput(`The variable name ${field} must be letters, digits and underscores, not starting with a digit.`);
  if (name.startsWith("__")) throw badInput(`The variable name ${field}: names starting with two underscores are reserved.`);
}

/**
 * Sets the variables of a scope: `replace` makes them exactly the given ones, `merge` sets the
 * given ones and keeps the others. Answers all the variables after the write.
 */
export async function setVariables(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  variables: unknown,
  mode: "replace" | "merge",
): Promise<Record<string, VariableValue>> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "edit variables");
  const given = checkVariables("variables", variables);
  const result = await commit(ctx, scope, "edits", (draft) => {
    const next =
      mode === "replace" ? Object.assign(Object.create(null), given) : Object.assign(Object.create(null), draft.variables, given);
    const count = Object.keys(next).length;
    if (count > MAX_VARIABLES) throw badInput(`variables: at most ${MAX_VARIABLES} variables (these would make ${count}).`);
    draft.variables = next;
  });
  return result.content.variables;
}

/** Deletes a variable; true also when it did not exist. */
export async function deleteVariable(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  name: string,
): Promise<boolean> {
  const scope = await editScope(ctx, spaceId, changeRequestId, "edit variables");
  const { content } = await scopeRevision(ctx, scope);
  if (!Object.hasOwn(content.variables, name)) return true;
  await commit(ctx, scope, "edits", (draft) => {
    delete draft.variables[name];
  });
  return true;
}

export async function getVariables(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
): Promise<Record<string, VariableValue>> {
  return (await scopedContent(ctx, spaceId, changeRequestId)).content.variables;
}

/**
 * Removes a file from a scope's content; true also when it was not there. Its bytes stay: older
 * revisions and change requests made before still name the file, and serve it from them; they go
 * with the space.
 */
export async function deleteFile(
  ctx: Context,
  spaceId: string,
  changeRequestId: string | null | undefined,
  fileId: string,
): Promise<boolean> {
  return deleteItem(ctx, spaceId, changeRequestId, "files", fileId, "delete files");
}
