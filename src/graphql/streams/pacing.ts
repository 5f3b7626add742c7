import fs from "node:fs";

/** Longest a delivery runs before yielding, in ms: a write waits up to this at each of its steps. */
export const SLICE_MS = 1;
/** Longest a delivery waits for the process's requests before a slice, so writes are answered first; tuned for event-loop delay (see docs/performance.md). */
export const DEFER_MS = 24;
/** That wait under constant load, so deliveries still get SLICE_MS of every SLICE_MS + DEFER_BUSY_MS; tuned for write latency (see docs/performance.md). */
export const DEFER_BUSY_MS = 8;
/** Once a pass wrote to this many sockets it pauses after each slice, leaving cores to the database and other gateways (see docs/performance.md). */
const PACE_FROM_WRITES = 64;
/** A paced pass's pause as a multiple of its slice (a delivery gets a third of the time): write latency against arrival (see docs/performance.md). */
export const PAUSE_PER_RUN = 2;
/** pacing "contended": cores count as contended for CONTENDED_FOR_MS after a slice waited over CONTENDED_SHARE of its time for one (see docs/performance.md). */
const CONTENDED_SHARE = 0.2;
const CONTENDED_FOR_MS = 50;
/** Sockets served between two looks at the clock. */
export const CLOCK_EVERY = 8;

/** Whether a slice that ran `ranMs` found the cores contended; without a reading (none, or NaN) it always does. */
export function sliceContended(coreWaitMs: (() => number) | null, waitAtStart: number, ranMs: number): boolean {
  return !coreWaitMs || !(coreWaitMs() - waitAtStart <= CONTENDED_SHARE * ranMs);
}

export function paces(served: number, sinceContendedMs: number): boolean {
  return served >= PACE_FROM_WRITES && sinceContendedMs < CONTENDED_FOR_MS;
}

/** The reader runQueueDelay made (the main thread's: deliveries run on it). */
let delayReader: (() => number) | null | undefined;

/** The calling thread's run-queue delay so far in ms (/proc/thread-self/schedstat; NaN on a failed read), or null where unreadable. */
export function runQueueDelay(): (() => number) | null {
  if (delayReader === undefined) delayReader = openRunQueueDelay();
  return delayReader;
}

function openRunQueueDelay(): (() => number) | null {
  let fd: number;
  try {
    fd = fs.openSync("/proc/thread-self/schedstat", "r");
  } catch {
    return null;
  }
  const buffer = Buffer.alloc(96);
  const read = () => {
    try {
      const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
      return Number(buffer.toString("latin1", 0, length).split(" ")[1]) / 1e6;
    } catch {
      return NaN;
    }
  };
  if (Number.isFinite(read())) return read;
  fs.closeSync(fd);
  return null;
}
