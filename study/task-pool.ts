/**
 * At most `jobs` tasks at a time, started in order. Each run of a study is single-threaded (its
 * config fixes `runtime.threads`), so on a machine with several cores runs proceed side by side;
 * their results do not depend on it.
 */

/**
 * Applies `work` to every item with at most `jobs` in flight; results in item order. Once
 * `signal` is aborted no further item starts (their results are `undefined`); items already
 * running finish.
 *
 * @example
 * ```ts
 * const codes = await runPool([1, 2, 3], 2, async (n) => n * 2); // [2, 4, 6]
 * ```
 */
export async function runPool<T, R>(
  items: readonly T[],
  jobs: number,
  work: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<(R | undefined)[]> {
  if (!(Number.isInteger(jobs) && jobs >= 1)) {
    throw new RangeError(`jobs must be an integer >= 1; got ${jobs}`);
  }
  const results: (R | undefined)[] = new Array(items.length).fill(undefined);
  let next = 0;
  const lane = async () => {
    while (next < items.length && !signal?.aborted) {
      const i = next++;
      results[i] = await work(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, lane));
  return results;
}
