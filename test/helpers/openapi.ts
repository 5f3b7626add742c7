import Ajv from "ajv";
import addFormats from "ajv-formats";
import { gitbookChecker, type GitBookChecker } from "./gitbook.js";

/**
 * Checks REST answers against the OpenAPI document the server publishes: the documented
 * success status and body schema of the matched operation, or the error schema; and, where
 * GitBook's API has the same operation, against GitBook's schema for it (test/helpers/gitbook.ts).
 */
export class OpenApiChecker {
  private ajv = new Ajv({ strict: false, allErrors: true });
  private ops: { method: string; regex: RegExp; template: string; op: any }[] = [];

  constructor(
    doc: any,
    private gitbook: GitBookChecker | null = gitbookChecker(),
  ) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc, "openapi");
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      const regex = new RegExp("^" + template.replace(/\{[^}]+\}/g, "[^/]+") + "$");
      for (const [method, op] of Object.entries(item)) this.ops.push({ method: method.toUpperCase(), regex, template, op });
    }
    // Literal segments win over placeholders (e.g. /versions/latest before /versions/{id}).
    this.ops.sort((a, b) => b.template.replace(/\{[^}]+\}/g, "").length - a.template.replace(/\{[^}]+\}/g, "").length);
  }

  operation(method: string, path: string) {
    return this.ops.find((o) => o.method === method && o.regex.test(path));
  }

  /** Throws when the answer does not match the document. */
  check(method: string, path: string, status: number, body: unknown, rawText: string): void {
    const found = this.operation(method, path);
    if (!found) throw new Error(`${method} ${path} is not in the published OpenAPI document`);
    const key = String(status);
    const response = found.op.responses[key];
    if (!response) throw new Error(`${method} ${path} answered ${status}, which the document does not list for ${found.template}`);
    if (status === 204 || status === 304) {
      if (rawText !== "") throw new Error(`${method} ${path} answered ${status} with a body: ${rawText}`);
      this.gitbook?.check(method, found.template, status, body);
      return;
    }
    const pointer = response.$ref
      ? `openapi${response.$ref}/content/application~1json/schema`
      : `openapi#/paths/${found.template.replace(/~/g, "~0").replace(/\//g, "~1")}/${method.toLowerCase()}/responses/${key}/content/application~1json/schema`;
    const validate = this.ajv.getSchema(pointer) ?? this.ajv.compile({ $ref: pointer });
    if (!validate(body)) {
      throw new Error(
        `${method} ${path} → ${status}: body does not match the OpenAPI document: ` +
          this.ajv.errorsText(validate.errors, { separator: "; " }) +
          `\nbody: ${JSON.stringify(body).slice(0, 2000)}`,
      );
    }
    this.gitbook?.check(method, found.template, status, body);
  }
}
