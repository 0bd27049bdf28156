/**
 * Marks gradient-norm spikes step by step with the rule of `gradNormStability` in
 * analysis/stats: a finite norm above `multiple` times the median of all earlier finite norms.
 * Two heaps keep the running median, so 10k steps cost O(n log n) rather than a sort per step.
 *
 * @example
 * ```ts
 * spikeFlags([1, 1, 1, 50, NaN], 10); // [false, false, false, true, false]
 * ```
 */
export function spikeFlags(norms: readonly number[], multiple = 10): boolean[] {
  const low = new Heap((a, b) => a > b); // max-heap: lower half
  const high = new Heap((a, b) => a < b); // min-heap: upper half
  const out: boolean[] = [];
  for (const x of norms) {
    if (!Number.isFinite(x)) {
      out.push(false);
      continue;
    }
    out.push(low.size > 0 && x > multiple * median(low, high));
    if (low.size === 0 || x <= low.peek()) low.push(x);
    else high.push(x);
    if (low.size > high.size + 1) high.push(low.pop());
    else if (high.size > low.size) low.push(high.pop());
  }
  return out;
}

function median(low: Heap, high: Heap): number {
  return low.size > high.size ? low.peek() : (low.peek() + high.peek()) / 2;
}

/** A binary heap of numbers ordered by `before`. */
class Heap {
  readonly #items: number[] = [];
  constructor(readonly before: (a: number, b: number) => boolean) {}
  get size(): number {
    return this.#items.length;
  }
  peek(): number {
    return this.#items[0];
  }
  push(x: number): void {
    const a = this.#items;
    a.push(x);
    for (let i = a.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!this.before(a[i], a[parent])) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }
  pop(): number {
    const a = this.#items;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      for (let i = 0;;) {
        const l = 2 * i + 1, r = l + 1;
        let best = i;
        if (l < a.length && this.before(a[l], a[best])) best = l;
        if (r < a.length && this.before(a[r], a[best])) best = r;
        if (best === i) break;
        [a[i], a[best]] = [a[best], a[i]];
        i = best;
      }
    }
    return top;
  }
}
