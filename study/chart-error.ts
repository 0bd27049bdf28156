/** A chart asked of data it cannot draw (no series, no finite value, a bad size). */
export class ChartInputError extends Error {
  override name = "ChartInputError";
  constructor(readonly chart: string, readonly field: string, detail: string) {
    super(`chart "${chart}": ${field} ${detail}`);
  }
}
