import fs from "node:fs";
import { printSchema } from "graphql";
import { sortedSchema } from "../src/schema.js";

/** Writes schema.graphql, the printed graph (a test fails when the committed file is out of date). */
fs.writeFileSync(new URL("../schema.graphql", import.meta.url), printSchema(sortedSchema()) + "\n");
console.log("schema.graphql written");
