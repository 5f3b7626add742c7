import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isoString } from "../../src/core/support/dates.js";

describe("isoString", () => {
  it("writes every date as toISOString does, invalid and far ones included", () => {
    // The whole range a Date holds (±8.64e15 ms), dense around years 0–9999 and their edges.
    const edges = [
      Date.UTC(0, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(1000, 0, 1),
      Date.UTC(999, 11, 31, 23, 59, 59, 999),
    ].map((t) => {
      const d = new Date(0);
      d.setTime(t);
      return d.getTime();
    });
    const times = fc.oneof(
      fc.integer({ min: -8.64e15, max: 8.64e15 }),
      fc.integer({ min: -62_167_219_200_000 - 1e10, max: 253_402_300_799_999 + 1e10 }),
      fc.constantFrom(...edges).chain((t) => fc.integer({ min: t - 86_400_000, max: t + 86_400_000 })),
    );
    fc.assert(
      fc.property(times, (t) => {
        const date = new Date(t);
        expect(isoString(date)).toBe(date.toISOString());
      }),
      { numRuns: 20_000 },
    );
    for (const year of [0, 1, 9, 99, 999, 1000, 1970, 9999]) {
      const date = new Date(0);
      date.setUTCFullYear(year, 0, 1);
      expect(isoString(date)).toBe(date.toISOString());
    }
    expect(() => isoString(new Date(Number.NaN))).toThrow(RangeError);
  });
});
