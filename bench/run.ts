import { footprint } from "./footprint.js";
import { requestPath } from "./http.js";
import { publishedRender } from "./published-render.js";
import { restarts } from "./restart.js";
import { liveStreams } from "./streams.js";

/**
 * `npm run bench`: runs every benchmark one after another and prints its figures; `npm run bench
 * -- streams` (or `http`, `restart`, `footprint`) runs the ones named. Figures are measured in one run on this machine and
 * are never asserted by tests.
 */
const benchmarks: [id: string, name: string, run: () => Promise<unknown>][] = [
  ["http", "request path: REST, GraphQL, Prisma and the raw driver on the same rows", () => requestPath()],
  ["restart", "restarts: `npm start` on an existing database, to its first answer", () => restarts()],
  [
    "footprint",
    "footprint: restart time, CPU and memory beside PGlite alone on the same folder, and after a mixed load",
    () => footprint(),
  ],
  ["streams", "live streams: write → arrival at graphql-ws subscribers in child processes, against a minimal server", () => liveStreams()],
  ["published-render", "published pages: an uncached render of a 200-heading page, markdown to HTML", () => publishedRender()],
];

const chosen = process.argv.slice(2);
const unknown = chosen.filter((id) => !benchmarks.some(([b]) => b === id));
if (unknown.length) {
  console.error(`Unknown benchmark ${unknown.join(", ")}; there are: ${benchmarks.map(([id]) => id).join(", ")}.`);
  process.exit(2);
}
for (const [id, name, run] of benchmarks) {
  if (chosen.length && !chosen.includes(id)) continue;
  console.log(`== ${name}`);
  await run();
}
process.exit(0);
