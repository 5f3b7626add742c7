import { describe, expect, it } from "vitest";
import { groupCommit } from "../../src/events/group-commit.js";

/** A write that holds each batch until `release` is called, noting the batches it was given. */
function heldWrites(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const pending: (() => void)[] = [];
  const write = (items: number[]) => {
    batches.push(items);
    return new Promise<string[]>((resolve, reject) => {
      pending.push(() =>
        items.some(fail) ? reject(new Error(`bad ${items.filter(fail).join(",")}`)) : resolve(items.map((i) => `stored ${i}`)),
      );
    });
  };
  const release = async () => {
    while (!pending.length) await new Promise((r) => setImmediate(r));
    pending.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { batches, write, release };
}

describe("group commit (events/group-commit.ts)", () => {
  it("writes the items handed over while a batch is being written together in the next one; each call gets its own result", async () => {
    const w = heldWrites();
    const commit = groupCommit(w.write);
    const first = commit(1);
    const rest = [commit(2), commit(3), commit(4)];
    await w.release();
    expect(await first).toBe("stored 1");
    const later = commit(5);
    await w.release();
    expect(await Promise.all(rest)).toEqual(["stored 2", "stored 3", "stored 4"]);
    await w.release();
    expect(await later).toBe("stored 5");
    expect(w.batches).toEqual([[1], [2, 3, 4], [5]]);
  });

  it("writes the items of a failed batch again one by one: the bad one fails alone, the others are stored", async () => {
    const w = heldWrites((i) => i === 3);
    const commit = groupCommit(w.write);
    const first = commit(1);
    const results = [2, 3, 4].map((i) =>
      commit(i).then(
        (r) => r,
        (err: Error) => err.message,
      ),
    );
    await w.release();
    await first;
    for (let i = 0; i < 4; i++) await w.release();
    expect(await Promise.all(results)).toEqual(["stored 2", "bad 3", "stored 4"]);
    expect(w.batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
    // Writing goes on after a failure.
    const next = commit(6);
    await w.release();
    expect(await next).toBe("stored 6");
  });
});
