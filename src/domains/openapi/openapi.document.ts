import YAML from "yaml";
import { validate, compileErrors } from "@readme/openapi-parser";
import { ProcessError } from "./openapi.fetch.js";

export interface ParsedDocument {
  /** The file name the text is stored under in a version's `filesystem`. */
  fileName: "openapi.json" | "openapi.yaml";
  document: Record<string, unknown>;
}

/** Parses JSON or YAML text into an object; anything else is a PARSE_ERROR. */
export function parseDocument(text: string): ParsedDocument {
  let document: unknown;
  let fileName: ParsedDocument["fileName"] = "openapi.yaml";
  try {
    document = JSON.parse(text);
    fileName = "openapi.json";
  } catch {
    try {
      document = YAML.parse(text, { logLevel: "error", maxAliasCount: 100 });
    } catch (err) {
      throw new ProcessError("PARSE_ERROR", `The document is neither JSON nor YAML: ${(err as Error).message.split("\n")[0]}`);
    }
  }
  if (!document || typeof document !== "object" || Array.isArray(document)) {
    throw new ProcessError("PARSE_ERROR", "The document is not a JSON or YAML object.");
  }
  return { fileName, document: document as Record<string, unknown> };
}

/**
 * Validates an OpenAPI 3.x or Swagger 2.0 definition with the maintained parser. External
 * `$ref`s are not followed (the server fetches only the source URL itself).
 */
export async function validateDocument(document: Record<string, unknown>): Promise<void> {
  const version = document.openapi ?? document.swagger;
  if (typeof version !== "string" || !(/^3\.\d+(\.\d+)?/.test(version) || version === "2.0")) {
    throw new ProcessError("VALIDATION_ERROR", 'The document declares neither "openapi: 3.x" nor "swagger: 2.0".');
  }
  let result: Awaited<ReturnType<typeof validate>>;
  try {
    result = await validate(structuredClone(document) as any, {
      resolve: { external: false },
      dereference: { circular: "ignore" },
      validate: { errors: { colorize: false } },
    });
  } catch (err) {
    throw new ProcessError("VALIDATION_ERROR", (err as Error).message);
  }
  if (!result.valid) throw new ProcessError("VALIDATION_ERROR", compileErrors(result));
}
