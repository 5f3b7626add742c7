import { describe, expect, it } from "vitest";
import { newId, randomString } from "../../src/core/ids.js";

/** Ids and tokens come from a pool of random bytes drawn ahead (src/core/ids.ts). */
describe("random strings", () => {
  it("have the length asked for, from the alphabet, and never repeat across pool refills", () => {
    const seen = new Set<string>();
    // 3,000 × 40 characters: the 4 KB pool is drawn again many times over.
    for (let i = 0; i < 3_000; i++) {
      const s = randomString(40);
      expect(s).toMatch(/^[0-9A-Za-z]{40}$/);
      seen.add(s);
    }
    expect(seen.size).toBe(3_000);
    expect(newId("Space")).toMatch(/^spc_[0-9A-Za-z]{20}$/);
  });

  it("draw every character about as often (no modulo bias)", () => {
    const counts = new Map<string, number>();
    const text = randomString(620_000);
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 10,000 expected each; with modulo bias (a byte % 62) the first 8 would come 5 times in 256 draws, the others 4: about 12,100 against 9,700.
    // Uniform: a count's standard deviation is about 100, so 10,600 is six of them.
    for (const n of counts.values()) expect(Math.abs(n - 10_000)).toBeLessThan(600);
  });
});
