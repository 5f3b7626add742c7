// Runs a program of src/ from its compiled form in dist/: `node scripts/run.mjs src/main.ts [args]`.
// Rebuilds dist/ first when src/ changed since the last build (a few hundred milliseconds), so
// the server and the admin commands never run stale code, and no transpiler runs in the process.
// The program runs in this very process: signals sent to it reach the server.
import module from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, distDir, isStale, root, srcDir } from "./build.mjs";

const [entry, ...args] = process.argv.slice(2);
if (!entry || !entry.endsWith(".ts")) {
  console.error("usage: node scripts/run.mjs src/<program>.ts [arguments]");
  process.exit(2);
}
const source = path.resolve(root, entry);
const relative = path.relative(srcDir, source);
if (relative.startsWith("..")) {
  console.error(`${entry} is not under src/`);
  process.exit(2);
}
if (isStale()) await build();
process.setSourceMapsEnabled(true);
// V8 keeps the compiled code of every module loaded here (the server's and its dependencies'):
// later starts skip most of the parsing and compiling.
module.enableCompileCache?.(path.join(root, "node_modules", ".cache", "node-compile-cache"));
// The program reads its arguments from process.argv as if started as `node dist/<program>.js …`.
const compiled = path.join(distDir, relative.replace(/\.ts$/, ".js"));
process.argv = [process.argv[0], compiled, ...args];
await import(pathToFileURL(compiled).href);
