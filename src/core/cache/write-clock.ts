/**
 * Committed writes by table, as a clock: what a reader notes before it reads (`mark`) tells it
 * afterwards whether one of the tables it read was written since (`writtenSince`), so that an
 * answer made from rows a write has changed is not kept past that write. One counter for all
 * writes, and the last tick each table was written at (the response cache's memory store,
 * server/response-cache.ts; kept list counts, core/cache/list-cache.ts).
 */
export class WriteClock {
  private tick = 0;
  private readonly last = new Map<string, number>();

  /** The clock now: to note before reading. */
  mark(): number {
    return this.tick;
  }

  /** A write of `tables` (one tick for all of them). */
  written(tables: Iterable<string>): void {
    this.tick++;
    for (const table of tables) this.last.set(table, this.tick);
  }

  /** Whether one of `tables` was written after `mark`. */
  writtenSince(tables: Iterable<string>, mark: number): boolean {
    for (const table of tables) if ((this.last.get(table) ?? 0) > mark) return true;
    return false;
  }
}
