import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, created, createSpace, type Admin } from "../../helpers/fixtures.js";
import { contentOf, indexSpaceRevision } from "../../../src/domains/content/revisions.js";

/**
 * An edit of a space's content stored in one statement rewrites only the search rows of the pages
 * it changed (content/revisions.ts searchWrites with its base). Whatever the edits — pages created
 * under any parent, renamed, rewritten, described, moved with their subtree (their paths change),
 * deleted — the space's search rows are exactly those a full rebuild from its head revision makes
 * (all columns but the revision a row was last written from).
 */
const RUNS = Number(process.env.SEARCH_PROPERTY_RUNS || 12);

let t: TestGateway;
let admin: Admin;
let org: string;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, org } = await acmeDocs(t));
});
afterAll(() => t?.close());

const words = fc.constantFrom("Install", "Guide", "Linux", "Provision", "Überblick", "日本語", "Setup & run", "API");
const markdown = fc
  .array(fc.constantFrom("Intro text.", "## Options\n\nFlags here.", "## Logging\n\nTo stdout.", "- a list\n- of items", ""), {
    maxLength: 3,
  })
  .map((parts) => parts.join("\n\n"));

type Op =
  | { kind: "create"; parent: number; title: string; markdown: string }
  | { kind: "edit"; page: number; title?: string; markdown?: string; description?: string | null }
  | { kind: "move"; page: number; parent: number }
  | { kind: "delete"; page: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), parent: fc.nat(20), title: words, markdown }),
  fc.record({
    kind: fc.constant("edit" as const),
    page: fc.nat(20),
    title: fc.option(words, { nil: undefined }),
    markdown: fc.option(markdown, { nil: undefined }),
    description: fc.option(fc.option(words, { nil: null }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant("move" as const), page: fc.nat(20), parent: fc.nat(20) }),
  fc.record({ kind: fc.constant("delete" as const), page: fc.nat(20) }),
);

type Row = Record<string, unknown>;
const rowsOf = async (spaceId: string): Promise<Row[]> =>
  (await t.gateway.db.prisma.pageSearch.findMany({ where: { spaceId }, orderBy: { pageId: "asc" } })).map(
    ({ revisionId: _, ...row }) => row,
  );

describe("search rows kept by edits", () => {
  it("equal a full rebuild from the head revision after any edits", async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 10 }), async (ops) => {
        const spaceId = (await createSpace(admin, org, { title: `Indexed ${n++}` })).id;
        const base = `/v1/spaces/${spaceId}/content`;
        const pages: string[] = [created(await admin.post(`${base}/pages`, { title: "Root", markdown: "## Start\n\nHere." })).id];
        const pick = (i: number) => pages[i % pages.length]!;
        for (const o of ops) {
          // Refusals (a page moved under itself, a page deleted before) are part of the sequence: they write nothing.
          if (o.kind === "create") {
            const res = await admin.post(`${base}/pages`, {
              title: o.title,
              markdown: o.markdown,
              parent: o.parent % 3 === 0 ? undefined : pick(o.parent),
            });
            if (res.status === 201) pages.push(res.body.id);
          } else if (o.kind === "edit") {
            await admin.patch(`${base}/page/${pick(o.page)}`, { title: o.title, markdown: o.markdown, description: o.description });
          } else if (o.kind === "move") {
            await admin.patch(`${base}/page/${pick(o.page)}`, { parent: o.parent % 4 === 0 ? null : pick(o.parent) });
          } else {
            await admin.delete(`${base}/page/${pick(o.page)}`);
          }
        }
        const kept = await rowsOf(spaceId);
        const space = await t.gateway.db.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
        const head = await t.gateway.db.prisma.revision.findUniqueOrThrow({ where: { id: space.revisionId! } });
        await t.gateway.db.prisma.$transaction((tx) => indexSpaceRevision(tx, spaceId, head.id, contentOf(head)));
        expect(kept).toEqual(await rowsOf(spaceId));
      }),
      { numRuns: RUNS },
    );
  }, 300_000);
});
