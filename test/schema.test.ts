import fs from "node:fs";
import path from "node:path";
import { printSchema } from "graphql";
import { describe, expect, it } from "vitest";
import { sortedSchema } from "../src/schema.js";

describe("schema.graphql", () => {
  it("is the printed schema of the code (run `npm run schema:print` after changing the graph)", () => {
    const committed = fs.readFileSync(path.resolve(import.meta.dirname, "../schema.graphql"), "utf8");
    expect(committed).toBe(printSchema(sortedSchema()) + "\n");
  });
});
