/**
 * The median of the values pushed so far, kept by two heaps (the lower half in a max-heap, the
 * upper half in a min-heap), so a median after every one of n values costs O(n log n) in all
 * rather than a sort per value. It is the same median as `quantile(xs, 0.5)`.
 *
 * @example
 * ```ts
 * const m = new RunningMedian();
 * [3, 1, 2, 10].forEach((x) => m.push(x));
 * m.median; // 2.5
 * ```
 */
export class RunningMedian {
  readonly #low = new Heap((a, b) => a > b);
  readonly #high = new Heap((a, b) => a < b);

  /** How many values were pushed. */
  get size(): number {
    return this.#low.size + this.#high.size;
  }

  /** The median of the values pushed; NaN before the first. */
  get median(): number {
    if (this.size === 0) return NaN;
    const low = this.#low.peek();
    return this.#low.size > this.#high.size ? low : low + 0.5 * (this.#high.peek() - low);
  }

  push(x: number): void {
    if (this.#low.size === 0 || x <= this.#low.peek()) this.#low.push(x);
    else this.#high.push(x);
    if (this.#low.size > this.#high.size + 1) this.#high.push(this.#low.pop());
    else if (this.#high.size > this.#low.size) this.#low.push(this.#high.pop());
  }
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
