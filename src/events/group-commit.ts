/**
 * A group commit: items handed over while an earlier batch is being written are written together
 * in the next batch, so a burst of small writes from concurrent work costs a few statements, not
 * one each. Each call resolves with its own item's result once its batch is stored. Should a batch
 * of several fail, its items are written again one by one, so that one bad item fails alone and
 * the others are stored.
 *
 * `write` stores the items it is given together (one statement, or one transaction: all or none)
 * and answers one result per item, in order.
 */
export function groupCommit<T, R>(write: (items: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  interface Queued {
    item: T;
    resolve: (result: R) => void;
    reject: (err: unknown) => void;
  }
  const waiting: Queued[] = [];
  let writing = false;

  async function writeWaiting(): Promise<void> {
    writing = true;
    try {
      while (waiting.length) {
        const batch = waiting.splice(0);
        let results: R[] | undefined;
        let failure: unknown;
        try {
          results = await write(batch.map((q) => q.item));
        } catch (err) {
          failure = err;
        }
        if (results) batch.forEach((q, i) => q.resolve(results[i]!));
        else if (batch.length === 1) batch[0]!.reject(failure);
        else {
          for (const q of batch) {
            await write([q.item]).then(
              ([result]) => q.resolve(result!),
              (err: unknown) => q.reject(err),
            );
          }
        }
      }
    } finally {
      writing = false;
    }
  }

  return (item) => {
    const done = new Promise<R>((resolve, reject) => waiting.push({ item, resolve, reject }));
    if (!writing) void writeWaiting();
    return done;
  };
}
