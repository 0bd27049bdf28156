/** The `run id: <id>` line that the training and evaluation tasks print as a run starts. */
import type { OutputFormat } from "../../events/cli/mod.ts";

/**
 * Prints `run id: <id>` on stdout under the table format, where it is the first line (README);
 * on stderr under json and csv, so that stdout holds only the parseable result.
 *
 * @example
 * ```ts
 * import { printRunId } from "./run-id-line.ts";
 *
 * printRunId("smoke-20260101T000000-abc123", "json"); // "run id: smoke-..." on stderr
 * ```
 */
export function printRunId(runId: string, format: OutputFormat): void {
  const line = `run id: ${runId}`;
  if (format === "table") console.log(line);
  else console.error(line);
}
