/**
 * onnxruntime's own profiler on the web backends and the native webgpu one. A session created
 * with `enableProfiling` records, per run, a `model_run` event (the run's wall time), a `<node>_kernel_time` event per
 * node (host time: the whole kernel on the CPU EP, the dispatch on WebGPU) and, on WebGPU with a
 * device that has `timestamp-query`, one `Api` event per GPU program with its GPU time. ORT's
 * WebAssembly build cannot write files, so `endProfiling` prints the JSON array to standard
 * output (onnxruntime PR 8932); onnxruntime-web 1.30 prints through `fs.writeSync(1, ...)` of
 * `node:fs` when `process.versions.node` exists, as in Deno. `captureProfile` takes that output
 * during the (synchronous) call and parses it, so it never reaches the terminal. onnxruntime-node
 * writes the same events to a file instead (`readProfileFile`).
 */
import fs from "node:fs";
import { RuntimeError } from "./runtime.ts";

/** One Chrome-trace event of ORT's profiler (`dur` and `ts` in microseconds). */
export interface ProfileEvent {
  readonly cat: string;
  readonly name: string;
  readonly ts: number;
  readonly dur: number;
  readonly args: Readonly<Record<string, unknown>>;
}

/** The events of one session, named as it was loaded. */
export interface SessionProfile {
  readonly session: string;
  readonly events: readonly ProfileEvent[];
}

/**
 * Calls `end` (a session's synchronous endProfiling) and returns the events ORT printed.
 *
 * @example
 * ```ts
 * import { captureProfile } from "./ort-profile.ts";
 *
 * declare const ortSession: { endProfiling(): void }; // an onnxruntime-web InferenceSession
 * const events = captureProfile(() => ortSession.endProfiling());
 * ```
 */
export function captureProfile(end: () => unknown): ProfileEvent[] {
  const printed: string[] = [];
  const write = fs.writeSync;
  const capture = (fd: number, data: unknown, ...rest: unknown[]) => {
    if (fd === 1 && typeof data === "string") {
      printed.push(data);
      return data.length;
    }
    return (write as (...args: unknown[]) => number)(fd, data, ...rest);
  };
  (fs as { writeSync: unknown }).writeSync = capture;
  try {
    end();
  } finally {
    (fs as { writeSync: unknown }).writeSync = write;
  }
  const text = printed.join("").trim();
  if (text === "") {
    throw new RuntimeError(
      "onnxruntime printed no profile: this onnxruntime-web build does not print it through " +
        "node:fs (expected with onnxruntime-web 1.30 under Deno)",
    );
  }
  try {
    return JSON.parse(text) as ProfileEvent[];
  } catch (error) {
    throw new RuntimeError(`onnxruntime's profile is not JSON: ${text.slice(0, 200)}`, {
      cause: error,
    });
  }
}

/**
 * Reads and deletes the profile onnxruntime-node wrote for a session created with
 * `profileFilePrefix: prefix` (the file is `<prefix>_<date and time>.json`).
 *
 * @example
 * ```ts
 * import { readProfileFile } from "./ort-profile.ts";
 *
 * declare const ortSession: { endProfiling(): void }; // profileFilePrefix "/tmp/profiles/0"
 * ortSession.endProfiling();
 * const events = readProfileFile("/tmp/profiles/0");
 * ```
 */
export function readProfileFile(prefix: string): ProfileEvent[] {
  const slash = prefix.lastIndexOf("/");
  const dir = prefix.slice(0, slash);
  const stem = `${prefix.slice(slash + 1)}_`;
  const files = [...Deno.readDirSync(dir)]
    .filter((e) => e.isFile && e.name.startsWith(stem) && e.name.endsWith(".json"))
    .map((e) => `${dir}/${e.name}`);
  if (files.length !== 1) {
    throw new RuntimeError(
      `onnxruntime wrote ${files.length} profile files named ${prefix}_*.json; expected one`,
    );
  }
  const text = Deno.readTextFileSync(files[0]);
  Deno.removeSync(files[0]);
  try {
    return JSON.parse(text) as ProfileEvent[];
  } catch (error) {
    throw new RuntimeError(`onnxruntime's profile ${files[0]} is not JSON: ${text.slice(0, 200)}`, {
      cause: error,
    });
  }
}

/** Time spent by one kind of work in one run. */
export interface OpTime {
  /** The ONNX op type (`MatMul`, `MemcpyToHost`, ...). */
  readonly op: string;
  /** `gpu`: GPU program time from timestamps; `host`: time of the node on the host thread. */
  readonly clock: "gpu" | "host";
  /** The execution provider of host times (`WebGpuExecutionProvider`, `CPUExecutionProvider`). */
  readonly provider: string;
  /** Nodes (host) or GPU programs (gpu) per run. */
  readonly calls: number;
  readonly microseconds: number;
}

/** Where the time of a session's runs went, per run. */
export interface RunProfile {
  readonly session: string;
  /** Runs profiled; the figures average the runs after the first (which compiles shaders). */
  readonly runs: number;
  /** Wall time of a run as ORT measured it (`model_run`). */
  readonly runMicroseconds: number;
  /** GPU program time per run (0 without timestamp-query). */
  readonly gpuMicroseconds: number;
  readonly gpuPrograms: number;
  /** Nodes per run, and how many of them copy between the host and the device. */
  readonly nodes: number;
  readonly copies: { readonly toHost: number; readonly fromHost: number };
  /** Per op type and clock, largest first. */
  readonly ops: readonly OpTime[];
}

/**
 * A session's average run. Host times come from the node events inside the `model_run` windows
 * of the runs after the first. GPU programs (`Api` events, named `<node>&<op type>&<program>`)
 * carry timestamps on the clock of the first profiled session, not this one's, so they are
 * summed over all runs and divided by the run count (a program's GPU time does not include its
 * compilation).
 *
 * @example
 * ```ts
 * import { runProfile } from "./ort-profile.ts";
 * import type { Runtime } from "./runtime.ts";
 *
 * declare const runtime: Runtime; // opened with profiling on, its sessions run
 * for (const profile of runtime.endProfiling()) {
 *   const run = runProfile(profile);
 *   console.log(run.gpuMicroseconds / run.runMicroseconds);
 * }
 * ```
 */
export function runProfile(profile: SessionProfile): RunProfile {
  const runs = profile.events.filter((e) => e.cat === "Session" && e.name === "model_run");
  if (runs.length === 0) throw new RuntimeError(`session ${profile.session} has no profiled run`);
  const timed = runs.length > 1 ? runs.slice(1) : runs;
  const inTimedRun = (e: ProfileEvent) => timed.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
  // Raw totals first, divided once at the end: host ones by the timed runs, GPU ones by all.
  const per = { host: timed.length, gpu: runs.length };
  const sums = new Map<
    string,
    { op: string; clock: "gpu" | "host"; provider: string; n: number; us: number }
  >();
  const add = (op: string, clock: "gpu" | "host", provider: string, us: number) => {
    const key = `${clock}|${provider}|${op}`;
    const s = sums.get(key) ?? { op, clock, provider, n: 0, us: 0 };
    s.n++;
    s.us += us;
    sums.set(key, s);
  };
  for (const e of profile.events) {
    if (e.cat === "Node" && e.name.endsWith("_kernel_time") && inTimedRun(e)) {
      add(String(e.args.op_name ?? "?"), "host", String(e.args.provider ?? "?"), e.dur);
    } else if (e.cat === "Api") {
      add(e.name.split("&")[1] ?? e.name, "gpu", "WebGpuExecutionProvider", e.dur);
    }
  }
  const ops: OpTime[] = [...sums.values()]
    .map((s) => ({
      op: s.op,
      clock: s.clock,
      provider: s.provider,
      calls: s.n / per[s.clock],
      microseconds: s.us / per[s.clock],
    }))
    .sort((a, b) => b.microseconds - a.microseconds);
  const total = (clock: "gpu" | "host", pick: (o: OpTime) => number, op?: string) =>
    ops.filter((o) => o.clock === clock && (op === undefined || o.op === op))
      .reduce((t, o) => t + pick(o), 0);
  const calls = (o: OpTime) => o.calls;
  return {
    session: profile.session,
    runs: runs.length,
    runMicroseconds: timed.reduce((t, r) => t + r.dur, 0) / timed.length,
    gpuMicroseconds: total("gpu", (o) => o.microseconds),
    gpuPrograms: total("gpu", calls),
    nodes: total("host", calls),
    copies: {
      toHost: total("host", calls, "MemcpyToHost"),
      fromHost: total("host", calls, "MemcpyFromHost"),
    },
    ops,
  };
}
