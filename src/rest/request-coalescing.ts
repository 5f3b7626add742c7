/**
 * Request coalescing: identical requests that arrive together share one run of their work.
 *
 * Per key, a flight boards, then runs. A request joins the boarding flight of its key, or opens
 * one; a flight starts at the end of the event loop's turn (`setImmediate`: after every request
 * whose bytes arrived in this turn has reached the same point) — when the flight of its key that
 * runs has landed, at the end of the turn it landed in (what arrives meanwhile, such as the next
 * requests of the callers just answered, boards too), or `maxWaitMs` after it opened if that one
 * is slow. A started flight takes no one; every request of a flight gets its outcome.
 *
 * So everything a flight reads (the caller's token and roles, the rows) is read after every
 * request that shares it arrived: each gets an answer as fresh as the one it would have made
 * alone — a write answered before a request was sent is seen by that request, whichever process
 * made it — and nothing is kept once a flight has landed (this is no cache). While one flight of a
 * key runs, the identical requests arriving meanwhile wait in the next: under load the same work
 * is done once for all of them rather than once each, side by side.
 */
export class Flights<T> {
  private keys = new Map<string, Slot<T>>();
  /** Requests that joined a flight someone else opened, and flights run (for tests and metrics). */
  readonly stats = { flights: 0, joined: 0 };

  constructor(private readonly maxWaitMs: number) {}

  /** The outcome of the boarding flight of `key`, or of a new one that runs `run`. */
  join(key: string, run: () => Promise<T>): Promise<T> {
    let slot = this.keys.get(key);
    if (slot?.boarding) {
      this.stats.joined++;
      return slot.boarding;
    }
    if (!slot) this.keys.set(key, (slot = {}));
    this.stats.flights++;
    const current = slot;
    const flight: Promise<T> = this.departure(current.running).then(() => {
      current.boarding = undefined;
      current.running = flight;
      return run();
    });
    current.boarding = flight;
    const landed = () => {
      if (current.running === flight) current.running = undefined;
      if (!current.running && !current.boarding && this.keys.get(key) === current) this.keys.delete(key);
    };
    flight.then(landed, landed);
    return flight;
  }

  /** When a flight opened now starts: at the end of this turn, or of the turn `running` lands in (maxWaitMs at most). */
  private departure(running: Promise<T> | undefined): Promise<void> {
    if (!running) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, this.maxWaitMs);
      const go = () => {
        clearTimeout(timer);
        setImmediate(resolve);
      };
      running.then(go, go);
    });
  }

  /** Keys with a flight running or boarding. */
  get size(): number {
    return this.keys.size;
  }
}

interface Slot<T> {
  running?: Promise<T>;
  boarding?: Promise<T>;
}
