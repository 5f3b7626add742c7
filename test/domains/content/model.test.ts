import { describe, expect, it } from "vitest";
import { emptyContent, mergeContents, mergeText, pageTree, uniqueSlug, type RevisionContent, type StoredPage } from "../../../src/domains/content/model.js";

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
    const theirs = content(page("a", { markdown: "one\n\ntwo\n\nTHREE", emoji: "1f600" }), page("b", { position: 1 }), page("c", { position: 2 }));
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
    expect(conflicts).toEqual([{ kind: "page", id: "a", title: "a", field: "markdown" }]);
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
    const c = content(page("g", { type: "group", slug: "guides", position: 0 }), page("x", { parentId: "g", slug: "install" }), page("y", { slug: "faq", position: 1 }), page("z", { parentId: "y", slug: "billing" }));
    const tree = pageTree(c);
    expect(tree.map((n) => n.id)).toEqual(["g", "y"]);
    expect(tree[0]!.pages[0]!.path).toBe("install");
    expect(tree[1]!.pages[0]!.path).toBe("faq/billing");
  });
  it("makes slugs unique among siblings", () => {
    expect(uniqueSlug("Getting Started", ["getting-started"])).toBe("getting-started-2");
  });
});
