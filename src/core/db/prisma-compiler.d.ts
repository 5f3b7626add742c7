/** Prisma's query compiler (WebAssembly), as its runtime module exports it; see core/db/query-plan-cache.ts. */
declare module "@prisma/client/runtime/query_compiler_bg.postgresql.mjs" {
  export class QueryCompiler {
    compile(query: string): unknown;
    compileBatch(query: string): unknown;
  }
}
