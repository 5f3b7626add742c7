/**
 * A value made by `load` on its first use and kept: for modules only some requests need (PDF
 * rendering, SAML, OpenAPI validation), imported by the first request that does rather than at
 * start, where every module loaded delays the first answer. Uses that arrive while it loads wait
 * for the same load; a failed load is not kept, and the next use tries again.
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= load().catch((err: unknown) => {
      pending = undefined;
      throw err;
    }));
}
