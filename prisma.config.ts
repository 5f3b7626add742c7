import path from "node:path";
import { defineConfig } from "prisma/config";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";

// The Prisma CLI (generate, migrate diff) runs on the JS schema engine with an in-memory
// PGlite, so nothing is downloaded. The server applies migrations itself (src/core/migrate.ts).
export default defineConfig({
  schema: path.join("prisma", "schema.prisma"),
  engine: "js",
  experimental: { adapter: true },
  adapter: async () => new PrismaPGlite(new PGlite(process.env.PRISMA_PGLITE_DIR)),
} as any);
