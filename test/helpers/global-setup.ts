import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { testTmpDir } from "./tmp.js";

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * A folder whose `pglite` folder holds an embedded database with every migration applied
     * once the folder has a `ready` file (startGateway waits for it); "" when this run has
     * none (DATABASE_URL is set).
     */
    pgliteTemplate: string;
  }
}

/** Written into the template folder once its database is complete, or could not be built. */
export const READY = "ready";
export const FAILED = "failed";

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Builds the template in a process of its own: PGlite runs its initdb synchronously for
 * seconds, and in this process that would stall the module loading of every test worker.
 * `stop` ends a build still under way (a run that did not need it is over).
 */
function buildPgliteTemplate(dir: string): { stop: () => Promise<void> } {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "build-template.ts"), dir], {
    cwd: path.resolve(here, "../.."),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const built = new Promise<void>((resolve) => {
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const fail = (why: string) => fs.writeFileSync(path.join(dir, FAILED), `${why}\n${out}`);
    child.once("error", (err) => {
      fail(err.message);
      resolve();
    });
    child.once("exit", (code, signal) => {
      if (code === 0) fs.writeFileSync(path.join(dir, READY), "");
      else fail(`build-template.ts exited with ${signal ?? code}`);
      resolve();
    });
  });
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await built;
    },
  };
}

/**
 * Runs once per `vitest run`, before any test file starts: creates an embedded database and
 * applies every migration, once. startGateway copies its `pglite` folder into each test's data
 * folder, far faster than PGlite's initdb; the server then applies whatever migration is
 * pending, so a copy is always correct.
 *
 * The build is not awaited here: it goes on while the test workers load their modules, and
 * startGateway waits for its `ready` file, so a run whose files start no embedded gateway does
 * not wait for it at all.
 */
export default function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    // startGateway uses PostgreSQL then. No template there: migrating a new database takes about
    // 0.25 s, copying a migrated one about 0.06 s, a few seconds over a whole run at best.
    project.provide("pgliteTemplate", "");
    return;
  }
  const dir = fs.mkdtempSync(path.join(testTmpDir(), "docs-api-template-"));
  const build = buildPgliteTemplate(dir);
  project.provide("pgliteTemplate", dir);
  return async () => {
    await build.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
}
