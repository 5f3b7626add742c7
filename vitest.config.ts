import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql instance: Node loads its CommonJS entry for dependencies, so tests must too.
    alias: { graphql: require.resolve("graphql") },
  },
  test: {
    include: ["test/**/*.test.ts"],
    // Builds the migrated database template that startGateway copies (test/helpers/gateway.ts).
    globalSetup: ["test/helpers/global-setup.ts"],
    // The tests' stand-in integrations, import and OpenAPI sources listen on this machine: allow
    // outbound requests to it (the server refuses private addresses by default, src/core/outbound.ts).
    env: {
      OUTBOUND_ALLOWED_NETWORKS: process.env.OUTBOUND_ALLOWED_NETWORKS ?? "127.0.0.0/8,::1",
      // The suite's own traffic stays under the rate limit; test/server/rate-limit.test.ts sets its own.
      RATE_LIMIT_PER_MINUTE: process.env.RATE_LIMIT_PER_MINUTE ?? "1000000",
      // Servers the tests start as processes announce "listening on …" at info level, and the tests
      // wait for that line: a LOG_LEVEL of the calling shell must not silence it. The suite's own
      // in-process log level is TEST_LOG_LEVEL (test/helpers/gateway.ts).
      LOG_LEVEL: "info",
    },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
