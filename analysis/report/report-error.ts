/** A report asked of runs that cannot give it; names the run, key or group to fix. */
export class ReportError extends Error {
  override name = "ReportError";
}
