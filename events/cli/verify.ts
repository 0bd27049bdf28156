/**
 * `deno task verify [RUN] [--store PATH|postgres://URL] [--format table|json|csv]`: walks the
 * hash chains, positions and blob references of a store (or of one run's stream) and reports the
 * first bad position with the reason. Exit 0 when intact, 1 on damage, 2 on bad usage.
 */
import {
  commandExitCode,
  defineCommand,
  ExitCode,
  formatOption,
  parseFormat,
  storeOption,
  UsageError,
} from "./command.ts";
import { openStore } from "../store/open-store.ts";
import type { VerifyReport } from "../verify.ts";

const cli = defineCommand({
  name: "verify",
  usage: "deno task verify [RUN] [--store PATH|postgres://URL] [--format table|json|csv]",
  summary: "Walk the hash chains and blob references of a store; exit 1 on damage.",
  options: { ...storeOption, ...formatOption },
  examples: ["deno task verify", "deno task verify --store runs.sqlite --format json"],
});

function csvCell(value: unknown): string {
  const s = value === null || value === undefined ? "" : String(value);
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function render(report: VerifyReport, format: string): string {
  if (format === "json") return JSON.stringify(report, null, 2);
  const columns = ["position", "kind", "stream", "version", "reason"] as const;
  if (format === "csv") {
    return [
      columns.join(","),
      ...report.problems.map((p) => columns.map((c) => csvCell(p[c])).join(",")),
    ]
      .join("\n");
  }
  const lines = [
    `store: ${report.target}${report.stream ? `  stream: ${report.stream}` : ""}`,
    `streams: ${report.streams}  events: ${report.events}  blobs: ${report.blobs}`,
  ];
  if (report.ok) return [...lines, "ok: every chain, position and blob checks out"].join("\n");
  const first = report.firstProblem!;
  lines.push(`DAMAGED: first bad position ${first.position}: ${first.reason}`, "");
  lines.push(`${"position".padStart(9)}  ${"kind".padEnd(14)} ${"stream".padEnd(16)} reason`);
  for (const p of report.problems) {
    lines.push(
      `${String(p.position).padStart(9)}  ${p.kind.padEnd(14)} ${(p.stream ?? "-").padEnd(16)} ` +
        p.reason,
    );
  }
  return lines.join("\n");
}

/** `deno task verify ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(cli.usage, async () => {
    const { values, positionals } = cli.parse(args);
    const format = parseFormat(values.format);
    if (positionals.length > 1) {
      throw new UsageError(`expected at most one RUN, got ${positionals}`);
    }
    const store = await openStore(String(values.store), { readOnly: true });
    try {
      const report = await store.verify({ stream: positionals[0] });
      if (positionals[0] !== undefined && report.events === 0 && report.ok) {
        throw new UsageError(`run ${positionals[0]} has no events in ${store.target}`);
      }
      console.log(render(report, format));
      return report.ok ? ExitCode.ok : ExitCode.failedCheck;
    } finally {
      await store.close();
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
