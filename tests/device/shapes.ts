/**
 * Real-size shapes on one backend: a decoder from `tests/device/shapes.json` (Qwen2.5-0.5B- and
 * 1.5B-shaped, or `tiny` for the local check) with random weights from keyed draws, LoRA r 16 on
 * q, k, v, o, gate, up and down, the frozen base in float32 or float16. Measures the train step
 * (tokens/s at each BATCHxSEQ given) and KV-cache generation (new tokens/s), and writes one JSON
 * line per figure to `--out` as soon as it is measured, so a stage killed by its timeout keeps
 * what it finished. `--adapter` writes the WebGPU adapter instead (vendor, architecture,
 * fallback flag, limits, features). Each figure carries its wall-clock window, so that the
 * caller can match it to GPU memory samples (tests/device/h200.sh polls nvidia-smi).
 * `--profile` (wasm, webgpu) runs the same workloads under onnxruntime's profiler and then writes
 * one `profile` figure per session: its average run (after the first) split into GPU program time
 * and host time per op type, with the copies between host and device (ort-profile.ts).
 */
import { join } from "node:path";
import { parseModelConfig } from "../../adapters/hf/mod.ts";
import {
  adapterHostFeeds,
  allParams,
  type BaseDtype,
  baseParams,
  buildAppendDecodeGraph,
  buildDecodeGraph,
  buildPrefillGraph,
  createGenerator,
  type DecoderSpec,
  decoderSpec,
  FUSED_OPS,
  type FusedOp,
  type GenerationRequest,
  initBaseTensor,
  initLoraAdapter,
  loraSpec,
  paramCount,
  type ParamFeeds,
  paramHostTensor,
  type TokenChooser,
  trainStepConfig,
  unknownFusedOps,
} from "../../adapters/model/mod.ts";
import {
  type BackendName,
  type DeviceTensor,
  type HostTensor,
  openRuntime,
  probeWebGpuAdapter,
  runProfile,
  type Runtime,
} from "../../adapters/onnx/runtime/mod.ts";
import { ModelProto } from "../../adapters/onnx/onnx-proto.ts";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { openTrainStep, type TrainStepRunner } from "../../adapters/onnx/train-step/runner.ts";
import { IO } from "../../adapters/onnx/train-step/spec.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { commandExitCode, defineCommand, UsageError } from "../../events/cli/command.ts";
import { plainHyper, tinyBatch } from "../onnx-train/tiny-policy.ts";

/** The modules PEFT users adapt for a full LoRA: every projection of attention and the MLP. */
const TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
const SHAPES_FILE = join(import.meta.dirname!, "shapes.json");

const cli = defineCommand({
  name: "shapes",
  usage: "deno run -A tests/device/shapes.ts (--adapter | --shape NAME) [options] --out FILE",
  summary: "Train-step and generation throughput of real-size decoder shapes on one backend.",
  options: {
    adapter: { type: "boolean", help: "write the WebGPU adapter's description and exit" },
    shape: { type: "string", value: "NAME", help: "a key of tests/device/shapes.json" },
    backend: {
      type: "string",
      value: "cpu|wasm|webgpu|webgpu-web",
      default: "webgpu",
      help: "the runtime backend (webgpu: onnxruntime-node's native WebGPU EP; webgpu-web: " +
        "onnxruntime-web's)",
    },
    dtype: {
      type: "string",
      value: "float32|float16",
      default: "float32",
      help: "the frozen base's element type (LoRA and optimizer state stay float32)",
    },
    train: {
      type: "string",
      value: "BxS[,BxS]",
      default: "",
      help: "train-step batches (sequences x tokens), e.g. 8x512,32x512",
    },
    "micro-batch": {
      type: "string",
      value: "N|auto",
      default: "0",
      help: "sequences per micro-batch (gradient accumulation); 0: one fused step; auto: the " +
        "most whose logits fit one WebGPU storage binding",
    },
    steps: { type: "string", value: "N", default: "2", help: "timed steps after one warm-up" },
    generate: {
      type: "string",
      value: "RxN",
      default: "",
      help: "generation: R sequences x N new tokens, with the KV cache",
    },
    prompt: { type: "string", value: "N", default: "32", help: "prompt tokens per sequence" },
    graphs: { type: "boolean", help: "also write the serialized sizes of the graphs" },
    profile: {
      type: "boolean",
      help: "profile every session (onnxruntime's profiler; not cpu) and write where " +
        "the time of a run goes, per op type",
    },
    fused: {
      type: "string",
      value: "OP[,OP]",
      default: "",
      help: `parts built as fewer nodes (DecoderSpec.fused, runtime.fused_ops): ${
        FUSED_OPS.join(", ")
      }`,
    },
    "check-fused": {
      type: "boolean",
      help: "with --fused and --generate: also generate 8 tokens of up to 4 rows with the " +
        "composed decoder on the same weights and write how far the fused logits are from its",
    },
    "check-cpu": {
      type: "boolean",
      help: "also run 8 tokens of up to 4 rows of the first --generate and one step of the " +
        "first --train on the cpu backend with the same weights, and write how far this " +
        "backend's logits, loss and gradient norm are from the cpu's",
    },
    "constant-base": {
      type: "boolean",
      help: "the train step's frozen base as constants of its graphs (prepacked by the cpu EP) " +
        "instead of fed",
    },
    threads: { type: "string", value: "N", default: "0", help: "cpu threads (0: default)" },
    machine: { type: "string", value: "NAME", default: "local", help: "names the machine" },
    out: { type: "string", value: "FILE", help: "JSON lines are appended here", path: true },
  },
  examples: [
    "deno run -A tests/device/shapes.ts --adapter --out figures.jsonl",
    "deno run -A tests/device/shapes.ts --shape qwen2.5-0.5b --train 8x512 --generate 64x256 --out f.jsonl",
    "deno run -A tests/device/shapes.ts --shape tiny --train 4x32 --micro-batch 2 --steps 1 " +
    "--generate 4x4 --profile --out f.jsonl",
  ],
});

/**
 * Every logit row `spec`'s generator chose from, per request row in order (the prefill's last
 * position, then each decode step), on the host.
 */
async function generationLogits(
  rt: Runtime,
  spec: DecoderSpec,
  params: ParamFeeds,
  request: Omit<GenerationRequest, "choose">,
  choose: TokenChooser,
): Promise<Float32Array[][]> {
  const gen = await createGenerator(rt, spec);
  const rows: Float32Array[][] = request.prompts.map(() => []);
  await gen.generate(params, {
    ...request,
    choose: (logits, row, index) => {
      rows[row].push(logits.slice());
      return choose(logits, row, index);
    },
  });
  await gen.release();
  return rows;
}

/**
 * The same work on `rt` and on a cpu runtime with the same weights (the same keyed draws): the
 * logits of 8 generated tokens, and one train step's loss and gradient norm from the same LoRA
 * init and batch. Written as `cpu-check` figures: what says this backend's numbers are the cpu's
 * at a real size, which the tests check only at theirs.
 */
async function checkAgainstCpu(
  rt: Runtime,
  spec: DecoderSpec,
  base: Record<string, DeviceTensor>,
  work: {
    readonly generate: { rows: number; prompts: (rows: number) => number[][] } | null;
    readonly train: [number, number] | null;
    readonly choose: TokenChooser;
    readonly emit: (figure: Record<string, unknown>) => void;
  },
): Promise<void> {
  const cpu = await openRuntime("cpu", {});
  const cpuBase = uploadRandomBase(cpu, spec);
  try {
    const feedsOf = (tensors: Record<string, DeviceTensor>) => ({
      ...Object.fromEntries(Object.entries(tensors).map(([k, v]) => [IO.param(k), v])),
      ...loraFeeds(spec),
    });
    if (work.generate) {
      const request = {
        prompts: work.generate.prompts(work.generate.rows),
        temperature: 1,
        maxTokens: 8,
      };
      const mine = await generationLogits(rt, spec, feedsOf(base), request, work.choose);
      const reference = await generationLogits(cpu, spec, feedsOf(cpuBase), request, work.choose);
      work.emit({
        workload: "cpu-check",
        graph: "generate",
        rows: work.generate.rows,
        newTokens: 8,
        ...logitsDistance(mine, reference),
      });
    }
    if (work.train) {
      const [batch, seq] = work.train;
      const data = tinyBatch(
        { vocab: spec.config.vocabSize, dim: 0, hidden: 0, rank: 0 },
        batch,
        seq,
        3,
      );
      const stepOn = async (runtime: Runtime, frozen: Record<string, DeviceTensor>) => {
        const runner = await openTrainStep({
          runtime,
          config: trainStepConfig(spec),
          initial: loraInitial(spec),
          frozen,
        });
        try {
          return await runner.step(data, hyper);
        } finally {
          await runner.release();
        }
      };
      const mine = await stepOn(rt, base);
      const reference = await stepOn(cpu, cpuBase);
      work.emit({
        workload: "cpu-check",
        graph: "train-step",
        batch,
        seq,
        loss: mine.loss,
        cpuLoss: reference.loss,
        gradNorm: mine.gradNorm,
        cpuGradNorm: reference.gradNorm,
        entropy: mine.entropy,
        cpuEntropy: reference.entropy,
      });
    }
  } finally {
    Object.values(cpuBase).forEach((t) => t.dispose());
    await cpu.close();
  }
}

/** The largest |a - b| over matching logits, and the largest |b| (the scale it is read against). */
function logitsDistance(a: Float32Array[][], b: Float32Array[][]) {
  let [maxAbsDiff, maxAbs, rowsCompared] = [0, 0, 0];
  a.forEach((steps, row) =>
    steps.forEach((logits, step) => {
      const reference = b[row][step];
      rowsCompared++;
      for (let i = 0; i < logits.length; i++) {
        maxAbsDiff = Math.max(maxAbsDiff, Math.abs(logits[i] - reference[i]));
        maxAbs = Math.max(maxAbs, Math.abs(reference[i]));
      }
    })
  );
  return { maxAbsDiff, maxAbs, rowsCompared };
}

/** `BxS` list -> pairs; "" -> []. */
function pairs(text: string, option: string): [number, number][] {
  if (text === "") return [];
  return text.split(",").map((item) => {
    const m = /^(\d+)x(\d+)$/.exec(item.trim());
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
      throw new UsageError(`--${option} ${text}: each item is NxM with positive N, M (e.g. 8x512)`);
    }
    return [Number(m[1]), Number(m[2])];
  });
}

function count(text: string, option: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    throw new UsageError(`--${option} ${text}: expected an integer >= ${min}`);
  }
  return n;
}

let peakRss = 0;
const sampleRss = () => (peakRss = Math.max(peakRss, Deno.memoryUsage().rss));
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

/** Appends one JSON line to the output file at once (a later timeout cannot lose it). */
function writer(out: string, common: Record<string, unknown>) {
  return (figure: Record<string, unknown>) => {
    const line = JSON.stringify({ ...common, ...figure, rssPeakMiB: mib(sampleRss()) });
    Deno.writeTextFileSync(out, line + "\n", { append: true });
    console.log(line);
  };
}

/** The WebGPU adapter: what it is, whether it is software, its limits and features. */
async function adapterFigure(): Promise<Record<string, unknown>> {
  const probe = await probeWebGpuAdapter();
  if (probe.kind === "no-adapter") return { kind: "adapter", found: false, reason: probe.reason };
  const limits: Record<string, number> = {};
  for (const key in probe.adapter.limits) {
    limits[key] = (probe.adapter.limits as unknown as Record<string, number>)[key];
  }
  const features = [...probe.adapter.features].sort();
  return {
    kind: "adapter",
    found: true,
    ...probe.info,
    shaderF16: features.includes("shader-f16"),
    features,
    limits,
  };
}

/**
 * N(0, std^2) keyed draws for the first `TILE` values of each tensor, repeated over the rest:
 * drawing all 1.5 billion values of the larger shape takes minutes in JS, and a throughput figure
 * does not depend on the values (they stay finite and of the same scale). The period is not a
 * multiple of any row width here, so rows differ.
 */
const TILE = 65536;
function tiledNormal(purpose: string, out: Float32Array, std: number): void {
  fillNormal(randomStream({ seed: 1, purpose }), out.subarray(0, TILE), { std });
  for (let filled = Math.min(TILE, out.length); filled < out.length; filled *= 2) {
    out.copyWithin(filled, 0, Math.min(filled, out.length - filled));
  }
}

/** Random base weights, one tensor at a time, by HF name. */
function* randomBase(spec: DecoderSpec): Generator<[string, HostTensor]> {
  for (const p of allParams(spec).slice(0, baseParams(spec.config).length)) {
    yield [p.name, paramHostTensor(p, initBaseTensor(spec.config, p, tiledNormal).data)];
  }
}

/** Random base weights uploaded one tensor at a time (the host never holds the model twice). */
function uploadRandomBase(rt: Runtime, spec: DecoderSpec): Record<string, DeviceTensor> {
  const tensors: Record<string, DeviceTensor> = {};
  for (const [name, tensor] of randomBase(spec)) {
    tensors[name] = rt.upload(tensor);
    sampleRss();
  }
  return tensors;
}

/** A fresh adapter's LoRA matrices (PEFT's init) as graph feeds, `param:<HF name>`. */
function loraFeeds(spec: DecoderSpec) {
  const normal = (purpose: string, out: Float32Array, std: number) =>
    fillNormal(randomStream({ seed: 2, purpose }), out, { std });
  return adapterHostFeeds(spec, initLoraAdapter(spec, normal, "bench"));
}

/** The same matrices by HF name, as the train step's `initial` takes them. */
function loraInitial(spec: DecoderSpec) {
  const prefix = IO.param("").length;
  return Object.fromEntries(Object.entries(loraFeeds(spec)).map(([k, v]) => [k.slice(prefix), v]));
}

/** Nodes of a serialized model, Constant nodes left out. */
function nodeCount(model: Uint8Array): number {
  const proto = ModelProto.decode(model) as unknown as { graph: { node: { opType: string }[] } };
  return proto.graph.node.filter((n) => n.opType !== "Constant").length;
}

/** The largest buffer one WebGPU binding may view: the adapter's storage binding and buffer cap. */
async function storageBindingLimit(): Promise<number> {
  const probe = await probeWebGpuAdapter();
  if (probe.kind === "no-adapter") return Infinity;
  return Math.min(
    probe.adapter.limits.maxStorageBufferBindingSize,
    probe.adapter.limits.maxBufferSize,
  );
}

/**
 * Sequences per micro-batch so that the largest activation, the logits (`rowBytes` per sequence),
 * fits one binding: the largest power of two up to `batch`, at least 1.
 */
function fittingRows(batch: number, rowBytes: number, limit: number): number {
  let rows = 1;
  while (rows * 2 <= batch && rows * 2 * rowBytes <= limit) rows *= 2;
  return rows;
}

const hyper = plainHyper(1e-5);

Deno.exit(
  await commandExitCode(cli.usage, async () => {
    const { values } = cli.parse(Deno.args);
    if (!values.out) throw new UsageError("--out FILE is required");
    const out = values.out;
    if (values.adapter) {
      const figure = await adapterFigure();
      Deno.writeTextFileSync(out, JSON.stringify(figure) + "\n", { append: true });
      console.log(JSON.stringify(figure));
      return;
    }
    const shapes = JSON.parse(await Deno.readTextFile(SHAPES_FILE)) as Record<string, unknown>;
    const shape = values.shape ?? "";
    if (!(shape in shapes)) {
      throw new UsageError(`--shape ${shape}: expected one of ${Object.keys(shapes).join(", ")}`);
    }
    const backend = values.backend as BackendName;
    if (!["cpu", "wasm", "webgpu", "webgpu-web"].includes(backend)) {
      throw new UsageError(`--backend ${backend}: expected cpu, wasm, webgpu or webgpu-web`);
    }
    const dtype = values.dtype as BaseDtype;
    if (dtype !== "float32" && dtype !== "float16") {
      throw new UsageError(`--dtype ${dtype}: expected float32 or float16`);
    }
    const trains = pairs(values.train, "train");
    const gens = pairs(values.generate, "generate");
    const autoMicro = values["micro-batch"] === "auto";
    const micro = autoMicro ? 0 : count(values["micro-batch"], "micro-batch", 0);
    const steps = count(values.steps, "steps", 1);
    const promptLength = count(values.prompt, "prompt", 1);
    const threads = count(values.threads, "threads", 0);

    const config = parseModelConfig(shapes[shape], `tests/device/shapes.json#${shape}`);
    const lora = loraSpec({ rank: 16, alpha: 32, targetModules: TARGETS });
    const fused = values.fused === "" ? [] : values.fused.split(",");
    const unknown = unknownFusedOps(fused);
    if (unknown.length > 0) {
      throw new UsageError(
        `--fused ${unknown.join(",")}: expected some of ${FUSED_OPS.join(", ")}`,
      );
    }
    const spec = decoderSpec(config, lora, { baseDtype: dtype, fused: fused as FusedOp[] });
    const rt = await openRuntime(backend, {
      ...(threads > 0 ? { threads } : {}),
      ...(values.profile ? { profile: true } : {}),
    });
    const emit = writer(out, {
      kind: "figure",
      impl: "polyrl",
      machine: values.machine,
      backend,
      runtime: rt.info.onnxruntime.package,
      dtype,
      shape,
      adapter: rt.info.adapter?.description ?? null,
      threads: rt.info.threads,
      ...(values["constant-base"] ? { constantBase: true } : {}),
      ...(spec.fused.length > 0 ? { fused: spec.fused } : {}),
      // Timestamp queries and the profiler's bookkeeping slow a run: such rates are not figures.
      ...(values.profile ? { profiled: true } : {}),
    });
    try {
      if (values.graphs) {
        // Parameters are graph inputs, so a graph's size does not grow with the weights (ONNX's
        // protobuf limit is 2 GB); these sizes show it at the real vocabulary and depth. Nodes
        // are those written, Constants left out (what --fused changes).
        const build = [
          ["train-step-fused", () => buildTrainStep(trainStepConfig(spec), "fused").model],
          [
            "train-step-accumulate",
            () => buildTrainStep(trainStepConfig(spec), "accumulate").model,
          ],
          ["train-step-apply", () => buildTrainStep(trainStepConfig(spec), "apply").model],
          ["prefill", () => buildPrefillGraph(spec).model],
          ["decode", () => buildDecodeGraph(spec).model],
          ["append-decode", () => buildAppendDecodeGraph(spec).model],
        ] as const;
        for (const [name, build_] of build) {
          const model = build_();
          emit({
            workload: "graph",
            graph: name,
            bytes: model.byteLength,
            nodes: nodeCount(model),
          });
        }
        // The graphs alone: no weights are drawn when nothing runs.
        if (trains.length === 0 && gens.length === 0) return;
      }
      const started = Date.now();
      const base = uploadRandomBase(rt, spec);
      const feeds = Object.fromEntries(Object.entries(base).map(([k, v]) => [IO.param(k), v]));
      emit({
        workload: "weights",
        baseParams: paramCount(baseParams(config)),
        loraParams: paramCount(allParams(spec)) - paramCount(baseParams(config)),
        seconds: (Date.now() - started) / 1000,
        startedAt: started,
        endedAt: Date.now(),
      });

      // Generation first, then the train batches in the order given (h200.sh names the smaller
      // first): a stage cut short by its timeout keeps the figures the device runs lacked longest.
      const params = { ...feeds, ...loraFeeds(spec) };
      const promptsOf = (rows: number) =>
        Array.from(
          { length: rows },
          (_, r) => Array.from({ length: promptLength }, (_, i) => (r * 31 + i * 7 + 3) % 5000),
        );
      // The chooser only names a token (no scan of the logits) so that the figure is the model's.
      const choose = (_l: Float32Array, row: number, index: number) =>
        (row * 13 + index * 5 + 11) % 5000;
      if (values["check-fused"] && spec.fused.length > 0 && gens.length > 0) {
        const rows = Math.min(4, gens[0][0]);
        const composed = decoderSpec(config, lora, { baseDtype: dtype });
        const request = { prompts: promptsOf(rows), temperature: 1, maxTokens: 8 };
        const reference = await generationLogits(rt, composed, params, request, choose);
        const fusedLogits = await generationLogits(rt, spec, params, request, choose);
        emit({
          workload: "fused-check",
          rows,
          newTokens: 8,
          ...logitsDistance(fusedLogits, reference),
        });
      }
      if (values["check-cpu"] && backend !== "cpu") {
        await checkAgainstCpu(rt, spec, base, {
          generate: gens.length > 0 ? { rows: Math.min(4, gens[0][0]), prompts: promptsOf } : null,
          train: trains[0] ?? null,
          choose,
          emit,
        });
      }
      for (const [rows, newTokens] of gens) {
        const windowStart = Date.now();
        const gen = await createGenerator(rt, spec);
        const prompts = promptsOf(rows);
        const request = { prompts, temperature: 1, choose };
        await gen.generate(params, { ...request, maxTokens: 2 }); // loads and compiles
        sampleRss();
        const t0 = performance.now();
        const result = await gen.generate(params, { ...request, maxTokens: newTokens });
        const seconds = (performance.now() - t0) / 1000;
        const generated = result.reduce((n, r) => n + r.tokens.length, 0);
        await gen.release();
        emit({
          workload: "generate",
          batch: rows,
          prompt: promptLength,
          newTokens,
          generated,
          seconds,
          tokensPerSecond: generated / seconds,
          startedAt: windowStart,
          endedAt: Date.now(),
        });
      }

      const bindingLimit = rt.info.executionProvider === "webgpu"
        ? await storageBindingLimit()
        : Infinity;
      // One runner per micro-batch size, shared by the batches that split alike (the graphs take
      // any batch and length): loading the 0.5B shape's accumulate and apply sessions took 30 s
      // on the H200 run, as long as several steps.
      const runners = new Map<number, TrainStepRunner>();
      // Micro-batch shapes (rows x seq) a runner has run: their kernels are compiled already.
      const compiled = new Set<string>();
      for (const [batch, seq] of trains) {
        const windowStart = Date.now();
        const rows = autoMicro
          ? fittingRows(batch, seq * config.vocabSize * 4, bindingLimit)
          : micro;
        const microBatch = rows > 0 && rows < batch ? rows : 0;
        const reused = runners.has(microBatch);
        const opened = performance.now();
        const runner = runners.get(microBatch) ?? await openTrainStep({
          runtime: rt,
          config: trainStepConfig(spec),
          ...(values["constant-base"]
            ? {
              initial: { ...loraInitial(spec), ...Object.fromEntries(randomBase(spec)) },
              constantFrozen: true,
            }
            : { initial: loraInitial(spec), frozen: base }),
          ...(microBatch > 0 ? { microBatchSize: microBatch } : {}),
        });
        runners.set(microBatch, runner);
        const openSeconds = (performance.now() - opened) / 1000;
        const data = tinyBatch(
          { vocab: config.vocabSize, dim: 0, hidden: 0, rank: 0 },
          batch,
          seq,
          3,
        );
        // A batch that splits into micro-batches of a shape already run needs no warm-up step.
        const shapeKey = `${microBatch}:${microBatch > 0 ? microBatch : batch}x${seq}`;
        const warmed = microBatch > 0 && batch % microBatch === 0 && compiled.has(shapeKey);
        compiled.add(shapeKey);
        const warm = performance.now();
        if (!warmed) await runner.step(data, hyper); // compiles the kernels for this shape
        const warmSeconds = warmed ? null : (performance.now() - warm) / 1000;
        sampleRss();
        const t0 = performance.now();
        let gradNorm = 0;
        for (let i = 0; i < steps; i++) {
          const m = await runner.step(data, hyper);
          if (m.skipped) throw new Error("train step skipped: non-finite gradient");
          gradNorm = m.gradNorm;
          sampleRss();
        }
        const seconds = (performance.now() - t0) / 1000 / steps;
        emit({
          workload: "train-step",
          batch,
          seq,
          microBatch: microBatch > 0 ? microBatch : batch,
          steps,
          secondsPerStep: seconds,
          openSeconds: reused ? 0 : openSeconds,
          firstStepSeconds: warmSeconds,
          tokensPerSecond: (batch * seq) / seconds,
          gradNorm,
          startedAt: windowStart,
          endedAt: Date.now(),
        });
      }
      for (const runner of runners.values()) await runner.release();

      Object.values(base).forEach((t) => t.dispose());
      if (values.profile) {
        for (const profile of rt.endProfiling()) {
          if (!profile.events.some((e) => e.name === "model_run")) continue;
          const run = runProfile(profile);
          const ms = (us: number) => Math.round(us) / 1000;
          emit({
            workload: "profile",
            session: run.session,
            runs: run.runs,
            runMs: ms(run.runMicroseconds),
            gpuMs: ms(run.gpuMicroseconds),
            gpuPrograms: Math.round(run.gpuPrograms),
            hostMs: ms(
              run.ops.filter((o) => o.clock === "host").reduce((t, o) => t + o.microseconds, 0),
            ),
            nodes: Math.round(run.nodes),
            copiesToHost: run.copies.toHost,
            copiesFromHost: run.copies.fromHost,
            top: run.ops.slice(0, 12).map((o) => ({
              op: o.op,
              clock: o.clock,
              provider: o.provider.replace("ExecutionProvider", ""),
              calls: Math.round(o.calls * 10) / 10,
              ms: ms(o.microseconds),
            })),
          });
        }
      }
    } finally {
      await rt.close();
    }
  }),
);
