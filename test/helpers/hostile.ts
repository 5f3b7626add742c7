import fc from "fast-check";
import { vi } from "vitest";
import { log } from "../../src/core/logger.js";
import { created, type Admin } from "./fixtures.js";

/**
 * The hostile classes the fuzz tests mix into generated input: NUL characters, lone UTF-16
 * surrogates, empty strings, Object.prototype's member names, huge strings and numbers, deep
 * nesting. Shared by the REST fuzz (test/server/bad-input.test.ts) and the protocol fuzz
 * (test/server/protocol-fuzz.test.ts).
 */
export const PROTOTYPE_NAMES = [
  "constructor",
  "__proto__",
  "hasOwnProperty",
  "toString",
  "valueOf",
  "isPrototypeOf",
  "__defineGetter__",
  "prototype",
];

/** Raw (already percent-encoded) path segments. */
export const hostileSegment = fc.oneof(
  fc.constantFrom(
    "%00",
    "a%00b",
    "%ED%A0%80",
    "%ED%B0%80x",
    "%E0%A4%A",
    "%",
    "%C0%AF",
    "..%2F..%2Fetc",
    "%20",
    "-1",
    "0",
    "1e309",
    "null",
    "undefined",
    "[object Object]",
    "%F0%9F%92%A9",
  ),
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc.constant("x".repeat(3000)),
  fc.string({ maxLength: 40, unit: "grapheme" }).map((s) => encodeURIComponent(s) || "%20"),
);

export const hostileString = fc.oneof(
  fc.constantFrom("\u0000", "a\u0000b", "\ud800", "x\udfff", "\ud800x", "", " ", "\n", ...PROTOTYPE_NAMES, "%00", "\u202e", "💩"),
  fc.constant("x".repeat(200_000)),
  fc.string({ maxLength: 30, unit: "binary" }),
);

/** Longest error message an answer may carry: a few cut echoes of the client's input (core/errors.ts, boundEchoes) and the words around them. */
export const MAX_ERROR_MESSAGE = 2_000;

/**
 * What the process logs as an error (its message and its error's, cut to 300 characters) until
 * `stop` is called: while it answers a fuzz with no 5xx, nothing is — a client's mistake is not a fault.
 */
export function errorsLogged(): { lines: string[]; stop: () => void } {
  const lines: string[] = [];
  const spy = vi.spyOn(log, "error").mockImplementation(((fields: unknown, msg?: unknown) => {
    const err = typeof fields === "object" ? (fields as { err?: Error } | null)?.err : undefined;
    lines.push(`${typeof fields === "string" ? fields : (msg ?? "")}: ${err?.message ?? ""}`.slice(0, 300));
  }) as never);
  return { lines, stop: () => spy.mockRestore() };
}

export const hugeNumber = fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 1e21, 0.1, -0, Number.MAX_SAFE_INTEGER);

/** Nested `depth` levels of arrays or objects. */
export function nested(depth: number, asObject: boolean): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = asObject ? { a: value } : [value];
  return value;
}
export const deep = fc.oneof(
  fc.constantFrom(33, 40, 200).chain((d) => fc.boolean().map((o) => nested(d, o))),
  fc.constant(Object.fromEntries(PROTOTYPE_NAMES.map((n) => [n, { x: 1 }]))),
);

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 2, arbitrary: hugeNumber },
  { weight: 2, arbitrary: deep },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, [], {}, [[["x"]]], { "": "" }, ["\u0000"], { "\u0000": 1 }) },
);

/**
 * The objects the fuzz tests aim their generated ids at: a space with a page, a reusable content,
 * a variable and its revision, a change request
 * with a comment, a collection, a site, a team and an integration of `admin`'s organization.
 */
export async function fuzzTargets(admin: Admin): Promise<Record<string, string>> {
  const org = admin.organization;
  const ids: Record<string, string> = { organizationId: org, userId: admin.user, integrationName: "fuzz" };
  ids.spaceId = created(await admin.post(`/v1/orgs/${org}/spaces`, { title: "Fuzz" })).id;
  ids.collectionId = created(await admin.post(`/v1/orgs/${org}/collections`, { title: "Fuzz" })).id;
  ids.siteId = created(await admin.post(`/v1/orgs/${org}/sites`, { title: "Fuzz site" })).id;
  ids.pageId = created(await admin.post(`/v1/spaces/${ids.spaceId}/content/pages`, { title: "Page", markdown: "Hello" })).id;
  ids.reusableContentId = created(
    await admin.post(`/v1/spaces/${ids.spaceId}/content/reusable-contents`, { title: "Reused", markdown: "Hi" }),
  ).id;
  await admin.put(`/v1/spaces/${ids.spaceId}/content/variables`, { variables: { product: "Fuzz" } });
  ids.variableName = "product";
  ids.revisionId = (await admin.get(`/v1/spaces/${ids.spaceId}/content`)).body.id;
  ids.changeRequestId = created(await admin.post(`/v1/spaces/${ids.spaceId}/change-requests`, { subject: "Fuzz" })).id;
  ids.commentId = created(
    await admin.post(`/v1/spaces/${ids.spaceId}/change-requests/${ids.changeRequestId}/comments`, { body: { markdown: "Hm" } }),
  ).id;
  ids.teamId = created(await admin.put(`/v1/orgs/${org}/teams`, { title: "Fuzzers" })).id;
  created(await admin.post("/v1/integrations/fuzz", { title: "Fuzz", organization: org }));
  return ids;
}
