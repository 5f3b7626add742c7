import { requestPath } from "./http.js";
import { subscriptionFanOut } from "./subscriptions.js";

/**
 * `npm run bench`: runs every benchmark one after another and prints its figures. Figures are
 * measured in one run on this machine and are never asserted by tests.
 */
const benchmarks: [name: string, run: () => Promise<unknown>][] = [
  ["request path: REST, GraphQL, Prisma and the raw driver on the same rows", () => requestPath()],
  ["subscription fan-out", () => subscriptionFanOut()],
];

for (const [name, run] of benchmarks) {
  console.log(`== ${name}`);
  await run();
}
process.exit(0);
