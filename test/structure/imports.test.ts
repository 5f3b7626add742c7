import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The module structure that keeps access rules in one place: space access lives in
 * spaces.access.ts, which every domain imports, and no domain service imports another in a
 * circle (a cycle makes module initialisation order decide what is defined, and hides which
 * module owns a rule).
 */

const SRC = path.resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sourceFiles(full);
    return e.name.endsWith(".ts") ? [full] : [];
  });
}

/** Relative imports that exist at run time (type-only imports and bindings are erased). */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const out: string[] = [];
  for (const node of source.statements) {
    if (!(ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) || !node.moduleSpecifier) continue;
    const spec = (node.moduleSpecifier as ts.StringLiteral).text;
    if (!spec.startsWith(".")) continue;
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      if (clause && !clause.name && named && ts.isNamedImports(named) && named.elements.length && named.elements.every((e) => e.isTypeOnly)) continue;
    } else if (node.isTypeOnly) continue;
    out.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")));
  }
  return out;
}

function graph() {
  const edges = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) edges.set(file, runtimeImports(file).filter((f) => fs.existsSync(f)));
  return edges;
}

/** Strongly connected components with more than one module (Tarjan). */
function cycles(edges: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(path.relative(SRC, w));
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe("module structure", () => {
  it("has no runtime import cycle through the domain services and space access", () => {
    const involved = cycles(graph()).filter((c) => c.some((f) => /\.(service|access)\.ts$/.test(f) || f.startsWith("domains/content/")));
    expect(involved).toEqual([]);
  });

  it("keeps the membership loader behind the door: only core/access.ts reads the caller's Member rows", () => {
    const offenders = sourceFiles(SRC)
      .filter((f) => !f.endsWith(path.join("core", "access.ts")))
      .filter((f) => /viewerMembership\(ctx\)\.load|member\.find\w*\(\{\s*where:\s*\{\s*userId:\s*ctx\.viewer\.userId/.test(fs.readFileSync(f, "utf8")))
      .map((f) => path.relative(SRC, f));
    expect(offenders).toEqual([]);
  });
});
