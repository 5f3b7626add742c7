import { describe, expect, it } from "vitest";
import {
  dedupeSlugs,
  emptyContent,
  mergeContents,
  mergeText,
  mergeTextDetailed,
  pageTree,
  positionAt,
  takenSlugs,
  uniqueSlug,
  type RevisionContent,
  type StoredPage,
} from "../../../src/domains/content/model.js";

const at = "2026-01-01T00:00:00.000Z";
function page(id: string, patch: Partial<StoredPage> = {}): StoredPage {
  return { id, title: id, type: "document", parentId: null, position: 0, slug: id, markdown: "", createdAt: at, updatedAt: at, ...patch };
}
function content(...pages: StoredPage[]): RevisionContent {
  return { ...emptyContent(), pages: Object.fromEntries(pages.map((p) => [p.id, p])) };
}

describe("mergeText", () => {
  const base = "# Title\n\nintro\n\nmiddle\n\nend";
  it("combines edits to different lines", () => {
    expect(mergeText(base, base.replace("intro", "INTRO"), base.replace("end", "END"))).toBe("# Title\n\nINTRO\n\nmiddle\n\nEND");
  });
  it("reports overlapping edits as a conflict", () => {
    expect(mergeText(base, base.replace("middle", "ours"), base.replace("middle", "theirs"))).toBeNull();
  });
});

describe("mergeContents", () => {
  const base = content(page("a", { markdown: "one\n\ntwo\n\nthree" }), page("b", { position: 1 }));

  it("combines edits to different pages and fields", () => {
    const ours = content(page("a", { markdown: "ONE\n\ntwo\n\nthree" }), page("b", { position: 1, title: "Bee" }));
    const theirs = content(
      page("a", { markdown: "one\n\ntwo\n\nTHREE", emoji: "1f600" }),
      page("b", { position: 1 }),
      page("c", { position: 2 }),
    );
    const { content: merged, conflicts } = mergeContents(base, ours, theirs);
    expect(conflicts).toEqual([]);
    expect(merged.pages.a!.markdown).toBe("ONE\n\ntwo\n\nTHREE");
    expect(merged.pages.a!.emoji).toBe("1f600");
    expect(merged.pages.b!.title).toBe("Bee");
    expect(Object.keys(merged.pages).sort()).toEqual(["a", "b", "c"]);
  });

  it("names conflicting pages", () => {
    const ours = content(page("a", { markdown: "one\n\nours\n\nthree" }), page("b", { position: 1 }));
    const theirs = content(page("a", { markdown: "one\n\ntheirs\n\nthree" }));
    const { conflicts } = mergeContents(base, ours, theirs);
    expect(conflicts).toEqual([
      { kind: "page", id: "a", title: "a", field: "markdown", hunks: [{ line: 3, base: ["two"], ours: ["ours"], theirs: ["theirs"] }] },
    ]);
  });

  it("deletes a page removed on one side and untouched on the other, and flags edit against delete", () => {
    const ours = content(page("a", { markdown: "one\n\ntwo\n\nthree" }));
    expect(mergeContents(base, ours, base).content.pages.b).toBeUndefined();
    const theirs = content(page("a", { markdown: "one\n\ntwo\n\nthree" }), page("b", { position: 1, title: "changed" }));
    expect(mergeContents(base, ours, theirs).conflicts).toEqual([{ kind: "page", id: "b", title: "changed", field: "deleted" }]);
  });
});

describe("pageTree", () => {
  it("orders siblings and builds paths from slugs, groups adding no segment", () => {
    const c = content(
      page("g", { type: "group", slug: "guides", position: 0 }),
      page("x", { parentId: "g", slug: "install" }),
      page("y", { slug: "faq", position: 1 }),
      page("z", { parentId: "y", slug: "billing" }),
    );
    const tree = pageTree(c);
    expect(tree.map((n) => n.id)).toEqual(["g", "y"]);
    expect(tree[0]!.pages[0]!.path).toBe("install");
    expect(tree[1]!.pages[0]!.path).toBe("faq/billing");
  });
  it("makes slugs unique among siblings", () => {
    expect(uniqueSlug("Getting Started", ["getting-started"])).toBe("getting-started-2");
  });
});

describe("mergeTextDetailed", () => {
  it("treats the same change on both sides as no conflict", () => {
    expect(mergeTextDetailed("a\n\nb", "a\n\nB", "a\n\nB")).toEqual({ text: "a\n\nB", conflicts: [] });
  });
  it("reports each conflicting hunk with its base line", () => {
    const r = mergeTextDetailed("x\n\ny\n\nz", "X1\n\ny\n\nZ1", "X2\n\ny\n\nZ2");
    expect(r.text).toBeNull();
    expect(r.conflicts.map((c) => [c.line, c.ours, c.theirs])).toEqual([
      [1, ["X1"], ["X2"]],
      [5, ["Z1"], ["Z2"]],
    ]);
  });
});

describe("editing helpers", () => {
  it("places a page at an index by changing only its own position", () => {
    const c = content(page("a", { position: 0 }), page("b", { position: 1 }), page("c", { position: 2 }));
    const p = positionAt(c, null, 1);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(1);
    expect(positionAt(c, null, 0)).toBe(-1);
    expect(positionAt(c, null, undefined)).toBe(3);
    expect([c.pages.a!.position, c.pages.b!.position, c.pages.c!.position]).toEqual([0, 1, 2]);
  });
  it("renumbers siblings only when no value fits between two neighbours", () => {
    const c = content(page("a", { position: 1 }), page("b", { position: 1 + Number.EPSILON }));
    const p = positionAt(c, null, 1);
    expect(c.pages.a!.position).toBeLessThan(p);
    expect(p).toBeLessThan(c.pages.b!.position);
  });
  it("shares slugs between the pages of sibling groups, which add no path segment", () => {
    const c = content(
      page("g1", { type: "group", slug: "g1" }),
      page("g2", { type: "group", slug: "g2", position: 1 }),
      page("x", { parentId: "g1", slug: "intro" }),
    );
    expect([...takenSlugs(c, "g2")]).toEqual(["intro"]);
  });
  it("gives pages that ended on the same path distinct slugs, the older keeping its own", () => {
    const c = content(
      page("old", { slug: "intro", createdAt: "2026-01-01T00:00:00.000Z" }),
      page("new", { slug: "intro", createdAt: "2026-02-01T00:00:00.000Z", position: 1 }),
    );
    dedupeSlugs(c);
    expect([c.pages.old!.slug, c.pages.new!.slug]).toEqual(["intro", "intro-2"]);
  });
  it("merges two pages added at the same place on both sides, deduplicating their slugs", () => {
    const base = content(page("a"));
    const ours = content(page("a"), page("n1", { slug: "new", position: 1, createdAt: "2026-01-02T00:00:00.000Z" }));
    const theirs = content(page("a"), page("n2", { slug: "new", position: 1, createdAt: "2026-01-03T00:00:00.000Z" }));
    const { content: merged, conflicts } = mergeContents(base, ours, theirs);
    expect(conflicts).toEqual([]);
    expect(pageTree(merged).map((p) => p.path)).toEqual(["a", "new", "new-2"]);
  });
});
