import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { ErrorObject, ValidateFunction } from "ajv";
import { GITBOOK_ALLOWED, type GitBookDifference } from "../gitbook-allowlist.js";

/**
 * Checks REST answers against GitBook's own OpenAPI document (shipped in the `@gitbook/api`
 * package) for the same operation, matched by method and path template (placeholders compared
 * by position: GitBook names some of them differently). A difference fails the test unless
 * test/gitbook-allowlist.ts lists it with its reason.
 *
 * With GITBOOK_REPORT=<file>, nothing fails: every compared answer is appended to the file as a
 * JSON line (operation, status, body, differences, and which of them the allow-list explains),
 * and `npx tsx scripts/gitbook-report.ts <file>` sums them up.
 */
export class GitBookChecker {
  private ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private ops = new Map<string, { template: string; op: any }>();
  private validators = new Map<string, ValidateFunction>();
  readonly version: string;

  constructor(doc: any, version: string) {
    this.version = version;
    addFormats(this.ajv);
    // Formats of GitBook's own that no JSON Schema library knows: not checked.
    for (const name of ["emoji", "icon"]) this.ajv.addFormat(name, true);
    this.ajv.addSchema(discriminate(structuredClone(doc)), "gitbook");
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (op && typeof op === "object" && op.responses) this.ops.set(`${method.toUpperCase()} ${normalize(template)}`, { template, op });
      }
    }
  }

  /** GitBook's operation for one of this server's operations (its template starts with /v1). */
  operation(method: string, ourTemplate: string) {
    return this.ops.get(`${method} ${normalize(ourTemplate.replace(/^\/v1(?=\/)/, ""))}`);
  }

  /**
   * The differences between an answer and GitBook's schema for it: undefined when GitBook has
   * no such operation or documents no body for errors of that status.
   */
  differences(
    method: string,
    ourTemplate: string,
    status: number,
    body: unknown,
  ): { operation: string; differences: GitBookDifference[] } | undefined {
    const found = this.operation(method, ourTemplate);
    if (!found || status === 304) return undefined; // 304: a conditional GET's empty answer, nothing to compare
    const operation = `${method} ${found.template}`;
    const responses = found.op.responses as Record<string, any>;
    const key = String(status);
    if (!responses[key]) {
      // Error statuses GitBook does not list for the operation are not compared: its document
      // lists few of them, always with the same `{error: {code, message}}` shape as this server.
      if (status >= 400) return undefined;
      return {
        operation,
        differences: [{ operation, status, path: "", keyword: "status", message: `GitBook answers ${Object.keys(responses).join(", ")}` }],
      };
    }
    let response = responses[key];
    let pointer = `gitbook#/paths/${escape(found.template)}/${method.toLowerCase()}/responses/${key}/content/application~1json/schema`;
    if (response.$ref) {
      pointer = `gitbook${response.$ref}/content/application~1json/schema`;
      response = undefined;
    }
    if (response && !response.content?.["application/json"]) {
      if (body === undefined) return { operation, differences: [] };
      return { operation, differences: [{ operation, status, path: "", keyword: "body", message: "GitBook answers no JSON body" }] };
    }
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: pointer });
      this.validators.set(pointer, validate);
    }
    if (validate(body)) return { operation, differences: [] };
    return { operation, differences: collapse(validate.errors ?? []).map((e) => ({ operation, status, ...e })) };
  }

  /** Throws on a difference the allow-list does not explain (or, in report mode, records it). */
  check(method: string, ourTemplate: string, status: number, body: unknown): void {
    const result = this.differences(method, ourTemplate, status, body);
    if (!result) return;
    const unexplained = result.differences.filter((d) => !allowed(d));
    const report = process.env.GITBOOK_REPORT;
    if (report) {
      fs.appendFileSync(
        report,
        JSON.stringify({
          operation: result.operation,
          method,
          template: ourTemplate,
          status,
          body,
          differences: result.differences.map((d) => ({
            path: d.path,
            keyword: d.keyword,
            message: d.message,
            allowed: allowed(d)?.reason ?? null,
          })),
          valid: result.differences.length === 0,
          validWithAllowList: unexplained.length === 0,
        }) + "\n",
      );
      return;
    }
    if (unexplained.length) {
      throw new Error(
        `${method} ${ourTemplate} → ${status}: differs from GitBook's schema (@gitbook/api ${this.version}) for ${result.operation}:\n` +
          unexplained.map((d) => `  ${d.path || "/"} ${d.keyword}: ${d.message}`).join("\n") +
          `\nbody: ${JSON.stringify(body).slice(0, 2000)}`,
      );
    }
  }
}

/**
 * Rewrites each `oneOf` whose branches all carry a required string tag (`type`, `object`, …)
 * with distinct values into "the tag is one of these values, and the branch it names applies"
 * (`if`/`then` per branch), so that an answer is checked against the branch its tag names and
 * the differences reported are that branch's alone, not every branch's. Branches may be
 * references or `allOf` compositions; GitBook's own `discriminator` notes are dropped.
 */
function discriminate(doc: any): any {
  const deref = (s: any): any => {
    for (let i = 0; s?.$ref && i < 20; i++)
      s = s.$ref.startsWith("#/components/schemas/") ? doc.components.schemas[s.$ref.slice(21)] : undefined;
    return s;
  };
  /** Properties and required names of a schema, through references and allOf. */
  const flatten = (schema: any, depth = 0): { properties: Record<string, any>; required: string[] } => {
    const s = deref(schema);
    const out = { properties: { ...(s?.properties ?? {}) }, required: [...(s?.required ?? [])] };
    if (depth < 10) {
      for (const part of s?.allOf ?? []) {
        const f = flatten(part, depth + 1);
        out.properties = { ...f.properties, ...out.properties };
        out.required.push(...f.required);
      }
    }
    return out;
  };
  const tagValues = (branch: any, name: string): string[] | undefined => {
    const f = flatten(branch);
    const prop = deref(f.properties[name]);
    if (!prop || !f.required.includes(name)) return undefined;
    if (typeof prop.const === "string") return [prop.const];
    if (Array.isArray(prop.enum) && prop.enum.length && prop.enum.every((v: unknown) => typeof v === "string")) return prop.enum;
    return undefined;
  };
  const visit = (node: any) => {
    if (!node || typeof node !== "object") return;
    if (Array.isArray(node)) return node.forEach(visit);
    delete node.discriminator;
    for (const value of Object.values(node)) visit(value);
    if (!Array.isArray(node.oneOf) || node.oneOf.length < 2) return;
    for (const name of Object.keys(flatten(node.oneOf[0]).properties)) {
      const values = node.oneOf.map((b: any) => tagValues(b, name));
      if (values.some((v: unknown) => !v)) continue;
      const all = (values as string[][]).flat();
      if (new Set(all).size !== all.length) continue;
      const branches = node.oneOf;
      delete node.oneOf;
      node.allOf = [
        ...(node.allOf ?? []),
        { if: { type: "object" }, then: { required: [name], properties: { [name]: { enum: all } } } },
        ...branches.map((branch: any, i: number) => ({
          if: { type: "object", required: [name], properties: { [name]: { enum: values[i] } } },
          then: branch,
        })),
      ];
      return;
    }
  };
  visit(doc);
  return doc;
}

function normalize(template: string): string {
  return template.replace(/\{[^}]+\}/g, "{}");
}

function escape(template: string): string {
  return template.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
 * Ajv's errors in a stable form: array indexes become `*`, and the errors of the branches of
 * a failed oneOf/anyOf are kept only when no branch explains more (the branch errors name the
 * fields; the oneOf error alone says little).
 */
function collapse(errors: ErrorObject[]): Omit<GitBookDifference, "operation" | "status">[] {
  const seen = new Set<string>();
  const out: Omit<GitBookDifference, "operation" | "status">[] = [];
  for (const e of errors) {
    if (e.keyword === "if") continue; // the branch's own errors follow
    const path = e.instancePath.replace(/\/\d+(?=\/|$)/g, "/*");
    let message = e.message ?? e.keyword;
    if (e.keyword === "required") message = `must have required property '${(e.params as any).missingProperty}'`;
    if (e.keyword === "additionalProperties") message = `must not have property '${(e.params as any).additionalProperty}'`;
    if (e.keyword === "enum") message = `must be one of ${JSON.stringify((e.params as any).allowedValues)}`;
    const key = `${path} ${e.keyword} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, keyword: e.keyword, message });
  }
  return out;
}

/** The allow-list entry that explains a difference, if one does. */
export function allowed(d: GitBookDifference) {
  return GITBOOK_ALLOWED.find(
    (a) =>
      (a.operation === "*" || (a.operation instanceof RegExp ? a.operation.test(d.operation) : a.operation === d.operation)) &&
      (a.status === undefined || a.status === d.status) &&
      (a.path instanceof RegExp ? a.path.test(d.path) : a.path === d.path) &&
      (a.keyword === undefined || a.keyword === d.keyword) &&
      (a.message === undefined || (a.message instanceof RegExp ? a.message.test(d.message) : a.message === d.message)),
  );
}

let shared: GitBookChecker | undefined;

/** One checker per test worker: GitBook's document is the same for every gateway. */
export function gitbookChecker(): GitBookChecker {
  if (!shared) {
    const require = createRequire(import.meta.url);
    const file = require.resolve("@gitbook/api/spec/openapi.json");
    const doc = JSON.parse(fs.readFileSync(file, "utf8"));
    const version = JSON.parse(fs.readFileSync(path.join(path.dirname(file), "../package.json"), "utf8")).version;
    shared = new GitBookChecker(doc, version);
  }
  return shared;
}
