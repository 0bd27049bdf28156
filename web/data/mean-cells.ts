/**
 * Means per (x, label) cell, accumulated value by value: how the Run page folds a step's many
 * rewards, norms and baseline statistics into one point per line. Non-finite values are left
 * out (a skipped step's NaN norm is shown as a marker, not averaged).
 *
 * @example
 * ```ts
 * const m = new MeanCells();
 * m.add(0, "wg0", 1.5);
 * m.add(0, "wg0", 2.5);
 * m.rows(); // [{ x: 0, label: "wg0", value: 2, n: 2 }]
 * ```
 */
export class MeanCells {
  readonly #cells = new Map<string, { x: number; label: string; sum: number; n: number }>();

  add(x: number, label: string, value: number): void {
    if (!Number.isFinite(value)) return;
    const key = `${x}\u0000${label}`;
    const cell = this.#cells.get(key);
    if (cell) {
      cell.sum += value;
      cell.n++;
    } else {
      this.#cells.set(key, { x, label, sum: value, n: 1 });
    }
  }

  /** The cells in insertion order, as rows for `chartFromRows`. */
  rows(): { x: number; label: string; value: number; n: number }[] {
    return [...this.#cells.values()].map((c) => ({
      x: c.x,
      label: c.label,
      value: c.sum / c.n,
      n: c.n,
    }));
  }
}
