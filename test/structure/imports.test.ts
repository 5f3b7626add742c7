import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The module structure: src/core in layers that know nothing of the features built on them, space
 * access in spaces.access.ts which every domain imports, and no import circle anywhere (a cycle
 * makes module initialisation order decide what is defined, and hides which module owns a rule).
 */

const SRC = path.resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sourceFiles(full);
    return e.name.endsWith(".ts") ? [full] : [];
  });
}

interface Import {
  target: string;
  /** Erased at run time: `import type`, or every binding marked `type`. */
  typeOnly: boolean;
}

/** Every relative import and re-export of a file, static or dynamic (`import("./x.js")`). */
function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const out: Import[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (spec.startsWith(".")) out.push({ target: path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")), typeOnly });
  };
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      let typeOnly = false;
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        const named = clause?.namedBindings;
        typeOnly =
          !!clause?.isTypeOnly ||
          (!!clause &&
            !clause.name &&
            !!named &&
            ts.isNamedImports(named) &&
            named.elements.length > 0 &&
            named.elements.every((e) => e.isTypeOnly));
      } else typeOnly = node.isTypeOnly;
      add((node.moduleSpecifier as ts.StringLiteral).text, typeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteral(arg)) add(arg.text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.filter((i) => fs.existsSync(i.target));
}

/** Relative imports that exist at run time (type-only imports and bindings are erased). */
function runtimeImports(file: string): string[] {
  return importsOf(file)
    .filter((i) => !i.typeOnly)
    .map((i) => i.target);
}

function graph(withTypes = false) {
  const edges = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) edges.set(file, withTypes ? importsOf(file).map((i) => i.target) : runtimeImports(file));
  return edges;
}

/**
 * The layers of src/core, each with its one job. Domain code reaches the database and the caches
 * only through the graph toolkit (loaders, pagination) and its own services: the caches stay
 * invisible to it, and their invalidation comes from committed writes (core/db).
 */
const CORE_LAYERS: Record<string, string> = {
  ".": "what every request carries: context, errors, ids, validation, urls, logger, error reporting",
  graph: "the toolkit domains build the graph with: builder, loaders, pagination, payloads, scalars, REST field extensions",
  access: "who the caller is and what they may reach: tokens, memberships, roles, SSO enforcement, the access cache",
  db: "the database engine: PGlite or PostgreSQL, migrations, the data-folder lock, query plans, faults",
  cache: "what a response was read from and when it changes: row keys, the write clock, the list cache",
  messaging: "the pub/sub between writes and live streams (in process or Redis) and the payloads of its topics",
  support: "small helpers with no domain meaning: dates, lazy modules, outbound requests, request notes",
};

/** Layers of src/core that domain code may import (db-faults classifies database errors for services). */
const DOMAIN_VISIBLE = new Set([".", "graph", "access", "messaging", "support"]);
const DOMAIN_VISIBLE_FILES = new Set(["core/db/db-faults.ts"]);

const rel = (f: string) => path.relative(SRC, f);
const coreLayer = (f: string) => {
  const r = rel(f);
  if (!r.startsWith("core/")) return null;
  const parts = r.split("/");
  return parts.length === 2 ? "." : parts[1]!;
};

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

  it("has no import cycle at all, type imports included", () => {
    expect(cycles(graph(true))).toEqual([]);
  });

  it("keeps src/core to its layers: each folder has its one job, and at most 12 files at the root", () => {
    const folders = fs
      .readdirSync(path.join(SRC, "core"), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.sort()).toEqual(
      Object.keys(CORE_LAYERS)
        .filter((l) => l !== ".")
        .sort(),
    );
    const rootFiles = fs.readdirSync(path.join(SRC, "core"), { withFileTypes: true }).filter((e) => e.isFile());
    expect(rootFiles.length).toBeLessThanOrEqual(12);
  });

  it("keeps src/core free of feature code: it imports nothing from domains, events, graphql, rest or server", () => {
    const offenders = sourceFiles(path.join(SRC, "core")).flatMap((file) =>
      importsOf(file)
        .filter((i) => /^(domains|events|graphql|rest|server)\//.test(rel(i.target)))
        .map((i) => `${rel(file)} → ${rel(i.target)}`),
    );
    expect(offenders).toEqual([]);
  });

  it("lets domains import only the toolkit layers of src/core, never the database engine or the caches", () => {
    const offenders = sourceFiles(path.join(SRC, "domains")).flatMap((file) =>
      importsOf(file)
        .filter((i) => {
          const layer = coreLayer(i.target);
          return layer !== null && !DOMAIN_VISIBLE.has(layer) && !DOMAIN_VISIBLE_FILES.has(rel(i.target));
        })
        .map((i) => `${rel(file)} → ${rel(i.target)}`),
    );
    expect(offenders).toEqual([]);
  });

  it("has no source file over 800 lines", () => {
    const long = sourceFiles(SRC)
      .map((f) => [rel(f), fs.readFileSync(f, "utf8").split("\n").length] as const)
      .filter(([, lines]) => lines > 800);
    expect(long).toEqual([]);
  });

  it("keeps the membership loader behind the door: only core/access/access.ts reads the caller's Member rows", () => {
    const offenders = sourceFiles(SRC)
      .filter((f) => !f.endsWith(path.join("core", "access", "access.ts")))
      .filter((f) =>
        /viewerMembership\(ctx\)\.load|member\.find\w*\(\{\s*where:\s*\{\s*userId:\s*ctx\.viewer\.userId/.test(fs.readFileSync(f, "utf8")),
      )
      .map((f) => path.relative(SRC, f));
    expect(offenders).toEqual([]);
  });
});
