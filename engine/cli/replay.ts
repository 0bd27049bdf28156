/**
 * `deno task replay RUN|latest`: re-executes a recorded training run (`latest`: the latest one)
 * from its `run.started` config and compares every regenerated event with the log. Prints
 * `identical through step N` or the first divergent event, its differing fields and the likely
 * cause; an altered log is named as such with its first bad position. Exit 0 when identical (or,
 * on another backend than recorded, within tolerance) and the log intact, 1 on divergence, an
 * altered log, or a run with nothing to replay (an evaluation run, a run stopped before its first
 * step or, with 0 steps, its evaluation of the initial team ended). Writes nothing.
 */
import {
  commandExitCode,
  defineCommand,
  ExitCode,
  formatOption,
  parseFormat,
  storeOption,
  UsageError,
} from "../../events/cli/mod.ts";
import { openStore } from "../../events/mod.ts";
import { type BackendChoice, openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { formatReplayReport, ReplayRangeError, replayRun } from "../replay/mod.ts";
import { trainProgress } from "../trainer/train-progress.ts";
import { REPLAY_ROLLOUTS, type ReplayRollouts } from "../trainer/rollout/mod.ts";
import { latestRunId, readRunLog } from "../trainer/run-log/mod.ts";

const cli = defineCommand({
  name: "replay",
  usage:
    "deno task replay RUN|latest [--from STEP] [--to STEP] [--device cpu|wasm|webgpu|webgpu-web|auto] " +
    "[--rtol X] [--atol X] [--rollouts keyed|recorded] [--store PATH|postgres://URL] [--format table|json]",
  summary: "Re-executes a recorded training run (latest: the latest one) and checks that the " +
    "log is intact and every event regenerates identically.",
  options: {
    from: {
      type: "string",
      value: "STEP",
      help: "first step to compare (restored from the checkpoint before)",
    },
    to: { type: "string", value: "STEP", help: "last step to compare (default: the run's last)" },
    device: {
      type: "string",
      value: "cpu|wasm|webgpu|webgpu-web|auto",
      help: "backend to replay on (default: the recorded config's)",
    },
    rtol: {
      type: "string",
      value: "X",
      help: "relative tolerance on another backend (default 1e-3)",
    },
    atol: {
      type: "string",
      value: "X",
      help: "absolute tolerance on another backend (default 1e-4)",
    },
    rollouts: {
      type: "string",
      value: "keyed|recorded",
      help: "turns of a run on inference servers: keyed re-samples them in-process and compares " +
        "tokens (default; deno task serve's keyed draws), recorded takes the log's as given and " +
        "re-executes rewards, advantages and updates (vLLM, SGLang)",
    },
    ...storeOption,
    format: { ...formatOption.format, value: "table|json", help: "output format: table or json" },
  },
  examples: [
    "deno task replay latest",
    "deno task replay latest --from 2 --to 3 --format json",
    "deno task replay RUN --rollouts recorded",
  ],
});

const DEVICES: readonly BackendChoice[] = ["auto", "cpu", "wasm", "webgpu", "webgpu-web"];

function numberOption(name: string, value: string | undefined, integer: boolean) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) {
    throw new UsageError(
      `--${name} must be a ${integer ? "step number" : "number"} >= 0; got ${value}`,
    );
  }
  return n;
}

/** `deno task replay ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(cli.usage, async () => {
    const { values, positionals } = cli.parse(args);
    const format = parseFormat(values.format, ["table", "json"]);
    if (positionals.length !== 1) throw new UsageError("name one run (or `latest`)");
    const from = numberOption("from", values.from, true);
    const to = numberOption("to", values.to, true);
    const rtol = numberOption("rtol", values.rtol, false);
    const atol = numberOption("atol", values.atol, false);
    const rollouts = values.rollouts as ReplayRollouts | undefined;
    if (rollouts !== undefined && !REPLAY_ROLLOUTS.includes(rollouts)) {
      throw new UsageError(
        `--rollouts must be keyed or recorded; got ${rollouts}`,
      );
    }
    await using store = await openStore(values.store, { readOnly: true });
    const runId = positionals[0] === "latest" ? await latestRunId(store) : positionals[0];
    const { config } = await readRunLog(store, runId);
    const device = (values.device ?? config.runtime.device) as BackendChoice;
    if (!DEVICES.includes(device)) {
      throw new UsageError(`--device must be one of ${DEVICES.join(", ")}; got ${device}`);
    }
    const runtime = await openRuntime(device, { threads: config.runtime.threads });
    const progress = trainProgress("replay");
    try {
      const report = await replayRun(store, runId, {
        runtime,
        from,
        to,
        rtol,
        atol,
        rollouts,
        onProgress: progress.onProgress,
      }).catch((err) => {
        if (err instanceof ReplayRangeError) throw new UsageError(err.message);
        throw err;
      });
      progress.finish();
      if (format === "json") console.log(JSON.stringify(report, null, 2));
      else console.log(formatReplayReport(report).join("\n"));
      return report.ok ? ExitCode.ok : ExitCode.failedCheck;
    } finally {
      progress.finish();
      await runtime.close();
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
