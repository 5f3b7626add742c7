import fs from "node:fs";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"));

describe("runtime", () => {
  it("runs on the Node.js line the package declares (the `node` dependency, not the system's)", () => {
    console.log(`Node.js ${process.version}`);
    const wanted = /^>=(\d+)\.(\d+)$/.exec(pkg.engines.node);
    expect(wanted, `engines.node is ">=<major>.<minor>": ${pkg.engines.node}`).not.toBeNull();
    const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
    const [wantMajor, wantMinor] = [Number(wanted![1]), Number(wanted![2])];
    expect(
      major > wantMajor || (major === wantMajor && minor >= wantMinor),
      `${process.version} does not satisfy ${pkg.engines.node}`,
    ).toBe(true);
    // The dependency that provides it: npm scripts (npm start, npm test) put it first on PATH.
    expect(pkg.dependencies.node).toMatch(new RegExp(`^\\^${wantMajor}\\.`));
  });
});

describe("dependency install scripts", () => {
  it("are all reviewed in allowScripts: none is left for npm to warn about", async () => {
    const { execFile } = await import("node:child_process");
    const out = await new Promise<string>((resolve, reject) =>
      execFile("npm", ["install-scripts", "ls"], { cwd: new URL("..", import.meta.url).pathname }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(out).toContain("No packages with unreviewed install scripts.");
    // The reviewed decisions: the Node binary and esbuild's platform check run; telemetry and
    // Prisma's own install steps (the project generates its client itself) do not.
    expect(pkg.allowScripts).toMatchObject({
      node: true,
      esbuild: true,
      "@scarf/scarf": false,
      prisma: false,
      "@prisma/client": false,
      "@prisma/engines": false,
    });
  });
});
