// Compiles src/ to dist/ for `npm start` and `npm run admin`: each TypeScript file becomes one
// JavaScript file at the same place under dist/ (dist/core/db.js for src/core/db.ts), so paths
// that modules resolve from their own location (prisma/migrations, the dashboard's page) stay
// right; other files (pages, browser scripts) are copied. Type checking is `npm run typecheck`.
//
// Run by `npm install` (postinstall, after `prisma generate`), and by scripts/run.mjs whenever
// src/ changed since the last build, so dist/ never runs stale code.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const srcDir = path.join(root, "src");
export const distDir = path.join(root, "dist");
const manifestFile = path.join(distDir, ".build.json");

/** Every file under src/, with what tells a change: `relative path → "mtime:size"`. */
function sourceState() {
  const state = {};
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const st = fs.statSync(full);
        state[path.relative(srcDir, full)] = `${st.mtimeMs}:${st.size}`;
      }
    }
  };
  walk(srcDir);
  return state;
}

/** True when dist/ is missing or was built from other sources than those in src/ now. */
export function isStale() {
  let built;
  try {
    built = JSON.parse(fs.readFileSync(manifestFile, "utf8"));
  } catch {
    return true;
  }
  const now = sourceState();
  const keys = Object.keys(now);
  if (keys.length !== Object.keys(built.sources ?? {}).length) return true;
  return keys.some((k) => built.sources[k] !== now[k]);
}

/** Builds dist/ from scratch (a file removed from src/ leaves nothing behind). */
export async function build() {
  const { build: esbuild } = await import("esbuild");
  const sources = sourceState();
  const files = Object.keys(sources);
  const entryPoints = files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")).map((f) => path.join(srcDir, f));
  const tmp = `${distDir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  await esbuild({
    entryPoints,
    outdir: tmp,
    outbase: srcDir,
    format: "esm",
    platform: "node",
    target: "node24",
    sourcemap: "linked",
    sourcesContent: false,
    logLevel: "error",
  });
  for (const f of files) {
    if (f.endsWith(".ts")) continue;
    fs.mkdirSync(path.dirname(path.join(tmp, f)), { recursive: true });
    fs.copyFileSync(path.join(srcDir, f), path.join(tmp, f));
  }
  fs.writeFileSync(path.join(tmp, "package.json"), JSON.stringify({ type: "module" }) + "\n");
  fs.writeFileSync(path.join(tmp, ".build.json"), JSON.stringify({ sources }) + "\n");
  // Swap in the new tree whole: a process starting meanwhile sees the old build or the new one.
  const old = `${distDir}.old-${process.pid}`;
  if (fs.existsSync(distDir)) fs.renameSync(distDir, old);
  try {
    fs.renameSync(tmp, distDir);
  } catch (err) {
    // Another build finished first (two commands started at once): its tree is as good.
    if (!["EEXIST", "ENOTEMPTY"].includes(err.code)) throw err;
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  fs.rmSync(old, { recursive: true, force: true });
  return entryPoints.length;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const count = await build();
  if (!process.argv.includes("--quiet")) {
    console.log(
      `Built ${count} modules into ${path.relative(process.cwd(), distDir) || "."} in ${Math.round(performance.now() - started)} ms`,
    );
  }
}
