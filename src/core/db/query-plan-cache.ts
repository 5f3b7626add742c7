import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { QueryCompiler } from "@prisma/client/runtime/query_compiler_bg.postgresql.mjs";
import { boundNestedPages } from "./bounded-pages.js";

/**
 * Prisma's query compiler turns every query into a plan (its SQL and how to read the rows) anew:
 * about half a millisecond of WebAssembly per query, as long as PGlite takes to run it. Queries of
 * one shape (the same model, action, selection and arguments but for their string values) get the
 * same plan with other values in it, so plans are kept by shape, with the string values as holes
 * that each query fills with its own.
 *
 * - Which values are holes is learnt, once per shape, from the compiler itself: a value is a hole
 *   when compiling the query with a unique stand-in for it gives a plan in which the stand-in
 *   appears only as itself (a statement's parameter, a value the plan hands back), at least once.
 *   A value that is rewritten (`contains` as a LIKE pattern), refused (an enum, an order) or that
 *   changes the plan is not a hole: it belongs to the plan's key, like numbers, booleans, nulls and
 *   typed values (dates, JSON, bytes).
 * - A plan is kept only once the compiler's own plan for the query at hand equals the kept plan
 *   with the query's values put back: the first query of every key checks its own plan.
 * - Kept plans are frozen and shared: a query's plan is a copy of the objects on the way to its
 *   holes only.
 * - Bounds: at most MAX_TEMPLATES plans in all (all are dropped past it), MAX_PER_SHAPE keys per shape
 *   (a shape whose other values keep changing stops being kept), no key over MAX_KEY characters,
 *   shapes of at most MAX_PROBES values probed one by one. A shape whose values come out serialized
 *   together (a JSON document: page contents, whose keys are page ids) is not kept at all, and an
 *   operation (model and action) with MAX_OFF_SHAPES shapes not kept is no longer probed: writes of
 *   documents cost one compile, as without the cache.
 *
 * `QUERY_PLAN_CACHE=off` leaves the compiler alone (see config.ts).
 */

const MAX_TEMPLATES = 5_000;
const MAX_PER_SHAPE = 16;
const MAX_KEY = 2_048;
const MAX_PROBES = 24;
const MAX_FAILURES = 8;
const MAX_OFF_SHAPES = 4;
const MAX_UNUSED_SHAPES = 16;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

type Compile = (query: string) => unknown;
type Path = (string | number)[];

interface Template {
  plan: unknown;
  /** Where each hole's value goes: the path in the plan, and which of the query's values. */
  holes: { path: Path; value: number }[];
}

interface Shape {
  /** Per value of the shape: a hole (true), part of the key (false); null until learnt. */
  holes: boolean[] | null;
  /** Plans by the values that are not holes. */
  templates: Map<string, Template>;
  /** Plans that did not check out for this shape. */
  failures: number;
  /** True once the shape is not worth keeping (its key values keep changing, or its plans do not check out). */
  off: boolean;
  /** Its operation's (model and action) counts. */
  stats: { learnt: number; off: number; hits: number };
}

export interface PlanCacheStats {
  hits: number;
  misses: number;
  shapes: number;
  templates: number;
}

/** A compile function that answers queries of a known shape from the plans it keeps. */
export function cachedCompile(compile: Compile): Compile & { stats(): PlanCacheStats } {
  const nonce = randomBytes(6).toString("hex");
  const standIn = (i: number) => `\u2063plan${nonce}:${i}\u2063`;
  const marker = `\u2063plan${nonce}:`;
  const shapes = new Map<string, Shape>();
  /** Per operation (model and action): its shapes learnt, those not worth keeping, and the plans answered from its shapes. */
  const operations = new Map<string, { learnt: number; off: number; hits: number }>();
  let templates = 0;
  let hits = 0;
  let misses = 0;

  /**
   * The plan of `query` compiled with stand-ins for the values marked in `as`, and where each
   * stand-in landed (null when one of them landed elsewhere than as itself, or not at all), with
   * the number of stand-ins found inside longer strings (values rewritten, or serialized as JSON).
   */
  const probe = (parsed: unknown, values: string[], as: boolean[]): { template: Template | null; embedded: number } => {
    let plan: unknown;
    try {
      plan = compile(
        JSON.stringify(
          withValues(
            parsed,
            values.map((v, i) => (as[i] ? standIn(i) : v)),
          ),
        ),
      );
    } catch {
      return { template: null, embedded: 0 };
    }
    const holes: Template["holes"] = [];
    let clean = true;
    let embedded = 0;
    visit(
      plan,
      [],
      (value, path) => {
        if (!value.includes(marker)) return;
        const i = value.startsWith(marker) ? Number(value.slice(marker.length, -1)) : NaN;
        if (Number.isInteger(i) && standIn(i) === value && as[i]) holes.push({ path, value: i });
        else {
          clean = false;
          embedded += value.split(marker).length - 1;
        }
      },
      () => (clean = false),
    );
    if (!clean) return { template: null, embedded };
    for (let i = 0; i < as.length; i++) if (as[i] && !holes.some((h) => h.value === i)) return { template: null, embedded };
    return { template: { plan: deepFreeze(plan), holes }, embedded };
  };

  /** Which values of the shape are holes, and the plan with every one of them a hole when that is all of them; null when the shape is not worth keeping. */
  const learn = (parsed: unknown, values: string[], fixed: boolean[]): { holes: boolean[]; template: Template | null } | null => {
    const all = fixed.map((f) => !f);
    const first = probe(parsed, values, all);
    if (first.template) return { holes: all, template: first.template };
    // Several values inside one string: a JSON document (page contents) whose every edit is another key.
    if (first.embedded > 1) return null;
    if (all.filter(Boolean).length > MAX_PROBES) return null;
    const holes = all.map(
      (candidate, i) =>
        candidate &&
        probe(
          parsed,
          values,
          all.map((_, j) => j === i),
        ).template !== null,
    );
    const template = probe(parsed, values, holes).template;
    return template ? { holes, template } : null;
  };

  /** The compiler's own plan, counted as a miss. */
  const compiled = (query: string) => {
    misses++;
    planStats.misses++;
    return compile(query);
  };

  const keep = (shape: Shape, literal: string, template: Template | null, values: string[], plan: unknown) => {
    if (template && isDeepStrictEqual(instantiate(template, values), plan)) {
      if (templates >= MAX_TEMPLATES) {
        for (const s of shapes.values()) s.templates.clear();
        templates = 0;
      }
      shape.templates.set(literal, template);
      templates++;
    } else if (shape.templates.size === 0 || ++shape.failures >= MAX_FAILURES) turnOff(shape);
  };

  const run = ((query: string) => {
    let parsed: { modelName?: unknown; action?: unknown };
    try {
      parsed = JSON.parse(query);
    } catch {
      return compiled(query);
    }
    const { key, values, fixed } = shapeOf(parsed);
    // The compiler reads a lone surrogate as U+FFFD: such a value is not put back as given.
    if (values.some((v) => LONE_SURROGATE.test(v))) return compiled(query);
    let shape = shapes.get(key);
    if (shape?.off) return compiled(query);
    const literalOf = (holes: boolean[]) => JSON.stringify(values.filter((_, i) => !holes[i]));
    if (shape?.holes) {
      const template = shape.templates.get(literalOf(shape.holes));
      if (template) {
        hits++;
        planStats.hits++;
        shape.stats.hits++;
        return instantiate(template, values);
      }
    }
    const plan = compiled(query); // the query's own plan (and its errors) first
    if (!shape) {
      // An operation whose shapes keep turning out not worth keeping, or whose every query is a new
      // shape (a number that changes each time, such as a new item's position), is no longer probed.
      const operation = `${String(parsed.modelName)}.${String(parsed.action)}`;
      let stats = operations.get(operation);
      if (!stats) operations.set(operation, (stats = { learnt: 0, off: 0, hits: 0 }));
      if (stats.off >= MAX_OFF_SHAPES || (stats.learnt >= MAX_UNUSED_SHAPES && stats.hits < stats.learnt)) return plan;
      stats.learnt++;
      if (shapes.size >= MAX_TEMPLATES) shapes.clear(), (templates = 0);
      shapes.set(key, (shape = { holes: null, templates: new Map(), failures: 0, off: false, stats }));
      const learnt = learn(parsed, values, fixed);
      if (!learnt) return (turnOff(shape), plan);
      shape.holes = learnt.holes;
      const literal = literalOf(learnt.holes);
      if (literal.length <= MAX_KEY) keep(shape, literal, learnt.template, values, plan);
      return plan;
    }
    const literal = literalOf(shape.holes!);
    if (literal.length > MAX_KEY) return plan;
    if (shape.templates.size >= MAX_PER_SHAPE) return (turnOff(shape), plan);
    keep(shape, literal, probe(parsed, values, shape.holes!).template, values, plan);
    return plan;
  }) as Compile & { stats(): PlanCacheStats };

  /** The shape is no longer kept: its plans are dropped, and its operation counts one more such shape. */
  function turnOff(shape: Shape): void {
    if (shape.off) return;
    shape.stats.off++;
    shape.off = true;
    templates -= shape.templates.size;
    shape.templates.clear();
  }
  run.stats = () => ({ hits, misses, shapes: shapes.size, templates });
  return run;
}

/**
 * The shape of a query (Prisma's JSON protocol): its text with every string value of its
 * arguments left out, those values in order, and which of them are typed (`{"$type": …}`: dates,
 * JSON, bytes…), which are never holes.
 */
export function shapeOf(query: unknown): { key: string; values: string[]; fixed: boolean[] } {
  const values: string[] = [];
  const fixed: boolean[] = [];
  const out: string[] = [];
  const walk = (v: unknown, inArgs: boolean, typed: boolean): void => {
    if (typeof v === "string") {
      if (inArgs) {
        values.push(v);
        fixed.push(typed);
        out.push("?");
      } else out.push(JSON.stringify(v));
      return;
    }
    if (v === null || typeof v !== "object") {
      out.push(JSON.stringify(v) ?? "undefined");
      return;
    }
    if (Array.isArray(v)) {
      out.push("[");
      for (let i = 0; i < v.length; i++) {
        if (i) out.push(",");
        walk(v[i], inArgs, typed);
      }
      out.push("]");
      return;
    }
    const isTyped = typed || (inArgs && Object.hasOwn(v, "$type"));
    out.push("{");
    let first = true;
    for (const k of Object.keys(v)) {
      if (!first) out.push(",");
      first = false;
      out.push(JSON.stringify(k), ":");
      walk((v as Record<string, unknown>)[k], inArgs || k === "arguments", isTyped);
    }
    out.push("}");
  };
  walk(query, false, false);
  return { key: out.join(""), values, fixed };
}

/** `query` with its argument string values replaced, in the order shapeOf lists them. */
function withValues(query: unknown, values: string[]): unknown {
  let i = 0;
  const walk = (v: unknown, inArgs: boolean): unknown => {
    if (typeof v === "string") return inArgs ? values[i++] : v;
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, inArgs));
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) out[k] = walk((v as Record<string, unknown>)[k], inArgs || k === "arguments");
    return out;
  };
  return walk(query, false);
}

/** Calls `onString` for every string value of `plan` with its path, `onKey` for every object key containing a stand-in. */
function visit(plan: unknown, path: Path, onString: (value: string, path: Path) => void, onBadKey: () => void): void {
  if (typeof plan === "string") {
    onString(plan, path.slice());
    return;
  }
  if (plan === null || typeof plan !== "object") return;
  if (Array.isArray(plan)) {
    for (let i = 0; i < plan.length; i++) {
      path.push(i);
      visit(plan[i], path, onString, onBadKey);
      path.pop();
    }
    return;
  }
  for (const k of Object.keys(plan)) {
    if (k.includes("\u2063")) onBadKey();
    path.push(k);
    visit((plan as Record<string, unknown>)[k], path, onString, onBadKey);
    path.pop();
  }
}

/** The template's plan with the query's values in its holes: objects on the way to a hole are copied, the rest is shared. */
function instantiate(template: Template, values: string[]): unknown {
  if (template.holes.length === 0) return template.plan;
  const copies = new Set<object>();
  const copy = (node: any) => {
    const c = Array.isArray(node) ? node.slice() : { ...node };
    copies.add(c);
    return c;
  };
  const root = copy(template.plan);
  for (const { path, value } of template.holes) {
    let node = root;
    for (let i = 0; i < path.length - 1; i++) {
      const child = node[path[i]!];
      node = copies.has(child) ? child : (node[path[i]!] = copy(child));
    }
    node[path[path.length - 1]!] = values[value];
  }
  return root;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Plans answered from kept plans, and compiled, by every client of the process (installCompilerHooks). */
export const planStats = { hits: 0, misses: 0 };

const proto = QueryCompiler.prototype as unknown as Record<"compile" | "compileBatch", (this: object, query: string) => unknown>;
/** The compiler's own functions, as they were before installCompilerHooks (tests compare with them). */
export const compilerOwn = { compile: proto.compile, compileBatch: proto.compileBatch };
let installed = false;

/** A compiler function whose plans read nested pages bounded (core/db/bounded-pages.ts). */
function bounded(own: (this: object, query: string) => unknown) {
  return function (this: object, query: string) {
    return boundNestedPages(own.call(this, query));
  };
}

/**
 * Has every Prisma client of this process compile plans that read nested pages bounded
 * (core/db/bounded-pages.ts), through plan caches (one per compiler) unless `planCache` is false.
 */
export function installCompilerHooks(opts: { planCache: boolean }): void {
  if (installed) return;
  installed = true;
  const compile = bounded(compilerOwn.compile);
  const compileBatch = bounded(compilerOwn.compileBatch);
  if (!opts.planCache) {
    proto.compile = compile;
    proto.compileBatch = compileBatch;
    return;
  }
  const caches = new WeakMap<object, { one: Compile; batch: Compile }>();
  const cachesOf = (compiler: object) => {
    let c = caches.get(compiler);
    if (!c)
      caches.set(
        compiler,
        (c = { one: cachedCompile((q) => compile.call(compiler, q)), batch: cachedCompile((q) => compileBatch.call(compiler, q)) }),
      );
    return c;
  };
  proto.compile = function (this: object, query: string) {
    return cachesOf(this).one(query);
  };
  proto.compileBatch = function (this: object, query: string) {
    return cachesOf(this).batch(query);
  };
}
