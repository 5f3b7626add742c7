import fs from "node:fs";
import crypto from "node:crypto";
import { GraphQLError, parse } from "graphql";
import type { Plugin } from "graphql-yoga";
import { usePersistedOperations } from "@graphql-yoga/plugin-persisted-operations";

/**
 * Trusted documents (GRAPHQL_TRUSTED_DOCUMENTS=path): production clients send the id of a document
 * known in advance instead of its text, and nothing else runs on /graphql or graphql-ws.
 * The file is a JSON object `{ "<sha256 of the document>": "<document>" }`, the
 * `persisted-documents.json` that GraphQL Code Generator's client preset writes.
 */
export interface TrustedDocuments {
  get(id: string): string | undefined;
  readonly size: number;
}

const sha256 = (text: string) => crypto.createHash("sha256").update(text).digest("hex");
const plainId = (id: string) => id.replace(/^sha256:/, "");

/** Reads and checks the file: every document parses and is stored under its own SHA-256. */
export function loadTrustedDocuments(file: string): TrustedDocuments {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS: cannot read ${file} as JSON (${(err as Error).message}).`);
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS: ${file} must hold a JSON object { "<sha256>": "<document>" }.`);
  const docs = new Map<string, string>();
  for (const [key, document] of Object.entries(raw)) {
    const id = plainId(key);
    if (typeof document !== "string") throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS: the value of "${key}" is not a document string.`);
    if (sha256(document) !== id) throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS: "${key}" is not the SHA-256 of its document.`);
    try {
      parse(document);
    } catch (err) {
      throw new Error(`GRAPHQL_TRUSTED_DOCUMENTS: the document "${key}" does not parse: ${(err as Error).message}`);
    }
    docs.set(id, document);
  }
  return { get: (id) => docs.get(plainId(id)), size: docs.size };
}

interface Params {
  query?: string | null;
  documentId?: unknown;
  extensions?: { persistedQuery?: { version?: number; sha256Hash?: unknown } } | null;
}

/** The document id a request names: `documentId` (GraphQL over HTTP) or the `persistedQuery` extension. */
export function documentIdOf(params: Params): string | null {
  if (typeof params.documentId === "string") return params.documentId;
  const hash = params.extensions?.persistedQuery?.sha256Hash;
  return typeof hash === "string" ? hash : null;
}

const refusal = (message: string, code: string) => new GraphQLError(message, { extensions: { code, http: { status: 400, spec: false } } });
const ONLY =
  "This server runs trusted documents only: send the document's id (documentId, or extensions.persistedQuery.sha256Hash), not its text.";
const UNKNOWN = "No trusted document has this id.";

/** The text of the trusted document an operation names; throws when it names none or sends its own text. */
export function trustedQuery(store: TrustedDocuments, params: Params): string {
  const id = documentIdOf(params);
  if (!id) throw refusal(ONLY, "PERSISTED_QUERY_ONLY");
  const document = store.get(id);
  if (!document) throw refusal(UNKNOWN, "PERSISTED_QUERY_NOT_FOUND");
  return document;
}

/** The yoga plugin of the trusted-documents mode on HTTP (graphql-ws uses `trustedQuery`). */
export function useTrustedDocuments(store: TrustedDocuments): Plugin {
  return usePersistedOperations({
    allowArbitraryOperations: false,
    extractPersistedOperationId: (params) => documentIdOf(params as Params),
    getPersistedOperation: (id) => store.get(id) ?? null,
    customErrors: {
      persistedQueryOnly: { message: ONLY, extensions: { code: "PERSISTED_QUERY_ONLY", http: { status: 400 } } },
      notFound: { message: UNKNOWN, extensions: { code: "PERSISTED_QUERY_NOT_FOUND", http: { status: 400 } } },
      keyNotFound: { message: ONLY, extensions: { code: "PERSISTED_QUERY_ONLY", http: { status: 400 } } },
    },
  }) as Plugin;
}
