/**
 * Work run one at a time per key, in the order it was queued; different keys do not wait on one
 * another. A Durable Object's input gates do not hold across the awaits of its work (D1, other
 * objects), so an object that must not interleave two changes to the same thing queues them here.
 * A failed piece of work does not stop what comes after it; a key's entry goes when its queue drains.
 */
export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after everything queued before it under `key`; answers what `work` answers. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const run = (this.#tails.get(key) ?? Promise.resolve()).then(work);
    const tail = run.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return run;
  }
}
