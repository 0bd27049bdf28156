/**
 * Gathers a device run (tests/device/h200.sh) into figures.json: the adapter, every stage's
 * outcome, every figure (ours and PyTorch's) with the GPU memory nvidia-smi saw over its window,
 * the ratios ours / PyTorch for matching workloads, the per-op profiles, and the benchmark suites'
 * report lines. Prints the table. Exit 1 when a stage failed or timed out, 0 otherwise (skipped stages say why).
 */
import { commandExitCode, defineCommand, UsageError } from "../../events/cli/command.ts";

const cli = defineCommand({
  name: "figures",
  usage: "deno run -A tests/device/figures.ts --lines FILE --stages FILE --out FILE " +
    "[--gpu-memory FILE] [--log FILE]",
  summary: "Collects a device run's JSON lines into figures.json with ratios ours / PyTorch.",
  options: {
    lines: { type: "string", value: "FILE", help: "figure JSON lines", path: true },
    stages: { type: "string", value: "FILE", help: "stage JSON lines", path: true },
    "gpu-memory": {
      type: "string",
      value: "FILE",
      help: "'epoch-ms MiB' samples of nvidia-smi",
      path: true,
    },
    log: { type: "string", value: "FILE", help: "named in figures.json", path: true },
    out: { type: "string", value: "FILE", help: "figures.json to write", path: true },
  },
  examples: [
    "deno run -A tests/device/figures.ts --lines out/figures.jsonl --stages out/stages.jsonl --out out/figures.json",
  ],
});

/** One measured figure as shapes.ts and torch_peer.py write it. */
export interface Figure {
  readonly kind: "figure";
  readonly impl: string;
  readonly machine: string;
  readonly backend: string;
  readonly dtype: string;
  readonly shape: string;
  readonly workload: string;
  readonly batch?: number;
  readonly seq?: number;
  readonly newTokens?: number;
  readonly tokensPerSecond?: number;
  /** Measured under onnxruntime's profiler (shapes.ts --profile): not a throughput figure. */
  readonly profiled?: boolean;
  readonly startedAt?: number;
  readonly endedAt?: number;
  /** PyTorch's own allocator peak (torch.cuda.max_memory_allocated). */
  readonly gpuPeakMiB?: number;
  readonly [key: string]: unknown;
}

/** A `profile` figure (shapes.ts --profile): one session's average run, split by op type. */
export interface ProfileFigure extends Figure {
  readonly workload: "profile";
  readonly session: string;
  readonly runMs: number;
  readonly gpuMs: number;
  readonly gpuPrograms: number;
  readonly hostMs: number;
  readonly nodes: number;
  readonly copiesToHost: number;
  readonly top: readonly {
    op: string;
    clock: string;
    provider: string;
    calls: number;
    ms: number;
  }[];
}

function isProfile<F extends Figure>(f: F): f is F & ProfileFigure {
  return f.workload === "profile";
}

/** ours / PyTorch for one workload. */
export interface Ratio {
  readonly machine: string;
  readonly shape: string;
  readonly workload: string;
  readonly size: string;
  readonly ours: {
    readonly backend: string;
    readonly dtype: string;
    readonly tokensPerSecond: number;
  };
  readonly torch: {
    readonly impl: string;
    readonly backend: string;
    readonly dtype: string;
    readonly tokensPerSecond: number;
  };
  readonly ratio: number;
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((l) => l.trim().startsWith("{")).map((l) => JSON.parse(l));
}

/** The backend as the tables name it, with the compiler options shapes.ts measured under. */
export function backendLabel(f: Figure): string {
  const fused = Array.isArray(f.fused) && f.fused.length > 0 ? `fused ${f.fused.join("+")}` : null;
  const options = [fused, f.constantBase ? "constant base" : null].filter((o) => o !== null);
  return options.length > 0 ? `${f.backend} (${options.join(", ")})` : f.backend;
}

/** The workload's size as the table shows it: 8x512 (train), 64x256 new (generate). */
export function sizeOf(f: Figure): string {
  if (f.workload === "train-step") return `${f.batch}x${f.seq}`;
  if (f.workload === "generate") return `${f.batch}x${f.newTokens} new`;
  return "";
}

/** Every pair of (ours, PyTorch) figures of one machine, shape, workload and size. */
export function ratios(figures: readonly Figure[]): Ratio[] {
  const timed = figures.filter((f) => typeof f.tokensPerSecond === "number" && !f.profiled);
  const key = (f: Figure) => [f.machine, f.shape, f.workload, sizeOf(f)].join("|");
  const out: Ratio[] = [];
  for (const ours of timed.filter((f) => f.impl === "polyrl")) {
    for (const torch of timed.filter((f) => f.impl !== "polyrl" && key(f) === key(ours))) {
      out.push({
        machine: ours.machine,
        shape: ours.shape,
        workload: ours.workload,
        size: sizeOf(ours),
        ours: {
          backend: backendLabel(ours),
          dtype: ours.dtype,
          tokensPerSecond: ours.tokensPerSecond!,
        },
        torch: {
          impl: torch.impl,
          backend: torch.backend,
          dtype: torch.dtype,
          tokensPerSecond: torch.tokensPerSecond!,
        },
        ratio: ours.tokensPerSecond! / torch.tokensPerSecond!,
      });
    }
  }
  return out;
}

/** The largest memory sample inside [from, to], or null when none fell in it. */
function peakIn(samples: readonly [number, number][], from: number, to: number): number | null {
  let peak: number | null = null;
  for (const [t, mib] of samples) {
    if (t >= from && t <= to && Number.isFinite(mib)) peak = Math.max(peak ?? 0, mib);
  }
  return peak;
}

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

if (import.meta.main) {
  Deno.exit(
    await commandExitCode(cli.usage, async () => {
      const { values } = cli.parse(Deno.args);
      if (!values.lines || !values.stages || !values.out) {
        throw new UsageError("--lines, --stages and --out are required");
      }
      const records = jsonLines(await Deno.readTextFile(values.lines));
      const stages = jsonLines(await Deno.readTextFile(values.stages));
      const samples: [number, number][] = values["gpu-memory"]
        ? (await Deno.readTextFile(values["gpu-memory"])).split("\n")
          .map((l) => l.trim().split(/\s+/).map(Number) as [number, number])
          .filter((s) => s.length === 2 && Number.isFinite(s[0]) && Number.isFinite(s[1]))
        : [];
      type Placed = Figure & { gpuUsedPeakMiB: number | null };
      const figures = records.filter((r) => r.kind === "figure").map((r): Placed => {
        const f = r as unknown as Figure;
        const peak = samples.length > 0 && f.startedAt && f.endedAt
          ? peakIn(samples, f.startedAt, f.endedAt)
          : null;
        return { ...f, gpuUsedPeakMiB: peak };
      });
      // The benchmark suites print their ratios as text; keep their report lines.
      const bench: Record<string, string[]> = {};
      for (const s of stages) {
        const name = String(s.stage);
        if (!name.startsWith("bench") || typeof s.output !== "string") continue;
        const text = await Deno.readTextFile(s.output).catch(() => "");
        bench[name] = text.split("\n").map((l) => l.trimEnd()).filter((l) =>
          l !== "" && !l.includes("Task")
        );
      }
      const pairs = ratios(figures);
      const failed = stages.filter((s) => s.status === "failed" || s.status === "timeout");
      const result = {
        generatedAt: new Date().toISOString(),
        adapter: records.find((r) => r.kind === "adapter") ?? null,
        stages: stages.map(({ output: _output, ...s }) => s),
        figures,
        ratios: pairs,
        bench,
        log: values.log ?? null,
        gpuMemorySamples: samples.length,
      };
      await Deno.writeTextFile(values.out, JSON.stringify(result, null, 2) + "\n");

      const rows = figures.filter((f) => typeof f.tokensPerSecond === "number" && !f.profiled);
      console.log("impl\tmachine\tbackend\tdtype\tshape\tworkload\tsize\ttok/s\tgpu MiB");
      for (const f of rows) {
        console.log(
          [f.impl, f.machine, backendLabel(f), f.dtype, f.shape, f.workload, sizeOf(f)].join("\t") +
            `\t${fmt(f.tokensPerSecond!)}\t${f.gpuUsedPeakMiB ?? f.gpuPeakMiB ?? "-"}`,
        );
      }
      for (const p of figures.filter(isProfile)) {
        const top = p.top.slice(0, 6).map((o) => `${o.op} ${o.clock} ${o.ms} ms`).join(", ");
        console.log(
          `profile ${p.shape} ${p.dtype} ${p.session}: run ${p.runMs} ms, GPU ${p.gpuMs} ms in ` +
            `${p.gpuPrograms} programs, host ${p.hostMs} ms over ${p.nodes} nodes, copies to host ` +
            `${p.copiesToHost}; top: ${top}`,
        );
      }
      for (const c of figures.filter((f) => f.workload === "cpu-check")) {
        console.log(
          c.graph === "generate"
            ? `cpu-check ${c.shape} ${backendLabel(c)}: logits of ${c.rowsCompared} steps within ` +
              `${c.maxAbsDiff} of the cpu backend's (largest ${c.maxAbs})`
            : `cpu-check ${c.shape} ${backendLabel(c)} train step ${c.batch}x${c.seq}: loss ` +
              `${c.loss} (cpu ${c.cpuLoss}), gradient norm ${c.gradNorm} (cpu ${c.cpuGradNorm})`,
        );
      }
      for (const c of figures.filter((f) => f.workload === "fused-check")) {
        console.log(
          `fused-check ${c.shape} ${backendLabel(c)}: logits of ${c.rowsCompared} steps within ` +
            `${c.maxAbsDiff} of the composed decoder's (largest ${c.maxAbs})`,
        );
      }
      for (const r of pairs) {
        console.log(
          `ratio ${r.shape} ${r.workload} ${r.size}: ours ${r.ours.backend} ${r.ours.dtype} / ` +
            `${r.torch.impl} ${r.torch.backend} ${r.torch.dtype} = ${r.ratio.toFixed(3)}`,
        );
      }
      for (const s of stages) {
        if (s.status !== "ok") console.log(`stage ${s.stage}: ${s.status} ${s.reason ?? ""}`);
      }
      if (failed.length > 0) Deno.exit(1);
    }),
  );
}
