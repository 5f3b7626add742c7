/** Polls `check` every `everyMs` until it returns a truthy value, which it resolves with; throws after `timeoutMs`. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 30_000, everyMs = 50): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
