/**
 * `deno task bench models`: the embedded-size decoder (random weights from keyed draws) on `cpu`
 * (or the backend `--backend` names):
 * - next-token rate with the KV cache (one decode run over a cached context) versus recomputing
 *   the whole prefix (one prefill run over context + 1 tokens), at contexts 128 and 512;
 * - train-step tokens/s (the supervised step: one fused run of forward, backward and AdamW);
 * - generation throughput for a batch of 64 sequences;
 * - a rollout batch of 4 prompts x 8 samples (160-token prompts) with and without prefix sharing,
 *   and with rows of different lengths, finished rows leaving the decode batch or staying in it;
 * - multi-turn rollouts (refine-style episodes of 5 turns of 8 to 48 tokens, each turn's prompt
 *   the question and the episode's earlier turns) with continuous batching, each episode's next
 *   turn joining the running batch between decode steps, against whole waves of turns;
 * - generation and the train step with every runtime.fused_ops op fused (RMSNorm, RoPE, attention;
 *   attention only in generation) against composed.
 * All figures come from one run, so machine load affects them alike. `--threads N` sets the cpu
 * runtime's intra-op threads; `--peer` (cpu only) then runs the PyTorch peer at the same
 * threads and prints ours / PyTorch for next token, generation and the train step.
 */
import process from "node:process";
import {
  createGenerator,
  type Generator,
  type TokenChooser,
} from "../../adapters/model/generate.ts";
import type { BatchOptions, Sequence } from "../../adapters/model/continuous-batch.ts";
import type { ParamFeeds } from "../../adapters/model/weights.ts";
import {
  buildAppendDecodeGraph,
  buildDecodeGraph,
  buildPrefillGraph,
  MODEL_IO,
  type ModelGraph,
} from "../../adapters/model/graphs.ts";
import { embeddedModelConfig, initEmbeddedModel } from "../../adapters/model/embedded-model.ts";
import { decoderSpec, FUSED_OPS } from "../../adapters/model/parameters.ts";
import { openSupervisedTrainer } from "../../adapters/model/supervised.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import {
  type Feed,
  hostTensor,
  openRuntime,
  type Runtime,
} from "../../adapters/onnx/runtime/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import type { BenchOptions } from "../bench/bench.ts";
import { comparePeer, type PeerFigures } from "../bench/torch-peer.ts";
import { minorPageFaults } from "../support/page-faults.ts";

const spec = decoderSpec(embeddedModelConfig());
const fusedSpec = decoderSpec(embeddedModelConfig(), null, { fused: FUSED_OPS });
const c = spec.config;
const weights = initEmbeddedModel((purpose, out, std) =>
  fillNormal(randomStream({ seed: 1, purpose }), out, { std })
);
const tensors = new Map(weights.map((t) => [t.name, t]));

async function seconds(reps: number, body: () => Promise<void>): Promise<number> {
  await body();
  const start = performance.now();
  for (let i = 0; i < reps; i++) await body();
  return (performance.now() - start) / 1000 / reps;
}

const ids = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 7 + salt) % 250);

async function load(rt: Runtime, g: ModelGraph) {
  return await rt.load(g.model, { keepOnDevice: g.keepOnDevice });
}

/** Seconds per next token at `context` cached tokens: decode run vs full prefill recompute. */
async function nextToken(rt: Runtime, params: Record<string, Feed>, context: number) {
  const prefill = await load(rt, buildPrefillGraph(spec));
  // The decode the generator runs on this backend: on cpu and wasm the append graph over a host
  // cache (no copy of the cache per token), on webgpu the decode graph over device tensors.
  const hostCache = rt.info.executionProvider !== "webgpu";
  const decode = await load(rt, hostCache ? buildAppendDecodeGraph(spec) : buildDecodeGraph(spec));
  const mask = (n: number) => hostTensor("float32", [1, n], new Float32Array(n).fill(1));
  const cached = await prefill.run({
    ...params,
    [MODEL_IO.tokens]: hostTensor("int32", [1, context], ids(context, 1)),
    [MODEL_IO.attentionMask]: mask(context),
  });
  const past: Record<string, Feed> = {};
  for (let i = 0; i < c.numLayers; i++) {
    const pairs = [
      [MODEL_IO.pastKey(i), MODEL_IO.presentKey(i)],
      [MODEL_IO.pastValue(i), MODEL_IO.presentValue(i)],
    ];
    for (const [pastName, presentName] of pairs) {
      const present = cached.device[presentName];
      past[pastName] = hostCache ? await present.read() : present;
    }
  }
  const decodeOnce = async () => {
    const out = await decode.run({
      ...params,
      ...past,
      [MODEL_IO.tokens]: hostTensor("int32", [1, 1], [5]),
      [MODEL_IO.attentionMask]: mask(context + 1),
    });
    Object.values(out.device).forEach((t) => t.dispose());
  };
  // A run takes about a millisecond, so one slice of a loaded machine's time would decide a
  // handful of runs: warm up, then take the median of five rounds of 40.
  for (let i = 0; i < 20; i++) await decodeOnce();
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) rounds.push(await seconds(40, decodeOnce));
  const withCache = rounds.sort((a, b) => a - b)[2];
  const recompute = await seconds(3, async () => {
    const out = await prefill.run({
      ...params,
      [MODEL_IO.tokens]: hostTensor("int32", [1, context + 1], ids(context + 1, 1)),
      [MODEL_IO.attentionMask]: mask(context + 1),
    });
    Object.values(out.device).forEach((t) => t.dispose());
  });
  Object.values(cached.device).forEach((t) => t.dispose());
  await prefill.release();
  await decode.release();
  return { withCache, recompute };
}

/** How the next turns of a multi-turn rollout are batched. */
type TurnBatching = "waves" | ContinuousBatchAdmission;
type ContinuousBatchAdmission = NonNullable<BatchOptions["admission"]>;

/**
 * Generated tokens of `episodes` refine-style episodes (4 prompts x episodes/4 samples, 120-token
 * questions), `turns` turns each of a length set by (episode, turn), 8 to 48 tokens; turn t's
 * prompt is the question and the episode's turns so far. `waves`: the next wave of turns starts
 * once the whole batch has ended (batching turn by turn); otherwise an episode's next turn is
 * submitted as soon as its turn ends and joins the running batch by the given admission rule.
 */
async function multiTurnRollout(
  gen: Generator,
  params: ParamFeeds,
  batching: TurnBatching,
  episodes: number,
  turns: number,
): Promise<number> {
  const stop = 0;
  const length = (e: number, t: number) => 8 + ((e * 37 + t * 53) % 41);
  const history = Array.from({ length: episodes }, (_, e) => ids(120, 1 + (e % 4)));
  const turn = new Array(episodes).fill(0);
  const batch = gen.openBatch(params, {
    maxRows: 64,
    admission: batching === "waves" ? "every-step" : batching,
  });
  const episodeOf = new Map<Sequence, number>();
  const submit = (e: number) => {
    const t = turn[e];
    const sequence = batch.submit({
      prompt: history[e],
      maxTokens: 48,
      temperature: 1,
      stopTokenIds: [stop],
      choose: (_l, i) => i + 1 === length(e, t) ? stop : 1 + ((e * 13 + t * 7 + i * 5) % 249),
    });
    episodeOf.set(sequence, e);
  };
  let generated = 0;
  let deferred: number[] = [];
  for (let e = 0; e < episodes; e++) submit(e);
  try {
    while (batch.running + batch.queued > 0) {
      for (const outcome of await batch.step()) {
        if (outcome.kind === "failed") throw outcome.error;
        const e = episodeOf.get(outcome.sequence)!;
        generated += outcome.row.tokens.length;
        history[e] = [...history[e], ...outcome.row.tokens];
        if (++turn[e] === turns) continue;
        if (batching === "waves") deferred.push(e);
        else submit(e);
      }
      if (batch.running + batch.queued === 0) {
        deferred.forEach(submit);
        deferred = [];
      }
    }
  } finally {
    await batch.close();
  }
  return generated;
}

/** Runs the suite. */
export async function run(options: BenchOptions): Promise<void> {
  const threads = options.threads ?? Math.min(8, navigator.hardwareConcurrency || 1);
  const rt = await openRuntime(options.backend ?? "cpu", { threads });
  const adapter = rt.info.adapter ? `, adapter ${rt.info.adapter.description}` : "";
  console.log(
    `${rt.info.backend}, ${rt.info.threads} threads${adapter}; embedded config: ` +
      `${c.numLayers} layers, d=${c.hiddenSize}, vocab ${c.vocabSize}`,
  );
  const ours: { -readonly [K in keyof PeerFigures]: number } = {
    nextToken128: 0,
    nextToken512: 0,
    generation: 0,
    trainStep: 0,
    trainStepCpu: 0,
  };
  try {
    const base = uploadBase(rt, spec, tensors);
    for (const context of [128, 512]) {
      const r = await nextToken(rt, base.feeds, context);
      ours[context === 128 ? "nextToken128" : "nextToken512"] = 1 / r.withCache;
      console.log(
        `next token at context ${context}: KV cache ${(1 / r.withCache).toFixed(1)} tok/s, ` +
          `recompute ${(1 / r.recompute).toFixed(1)} tok/s, ratio ${
            (r.recompute / r.withCache).toFixed(1)
          }x`,
      );
    }

    const gen = await createGenerator(rt, spec);
    const choose: TokenChooser = (_l, row, index) => (row * 13 + index * 5) % 250;
    const prompts = Array.from({ length: 64 }, (_, r) => ids(16, r));
    const genSeconds = await seconds(1, async () => {
      await gen.generate(base.feeds, { prompts, maxTokens: 32, temperature: 1, choose });
    });
    ours.generation = (64 * 32) / genSeconds;
    console.log(
      `generation, batch 64 x 32 new tokens (16-token prompts): ${
        ((64 * 32) / genSeconds).toFixed(0)
      } tok/s`,
    );
    // A step's first turn: group_size samples of each prompt, the prompts in a chat template.
    const group = Array.from({ length: 32 }, (_, r) => ids(160, Math.floor(r / 8)));
    const rollout = (sharePrompts: boolean) =>
      seconds(2, async () => {
        await gen.generate(base.feeds, {
          prompts: group,
          maxTokens: 48,
          temperature: 1,
          choose,
          sharePrompts,
        });
      });
    // Alternated, so that machine load hits both alike.
    let [unshared, shared] = [0, 0];
    for (let round = 0; round < 2; round++) {
      unshared += await rollout(false);
      shared += await rollout(true);
    }
    console.log(
      `rollout, 4 prompts x 8 samples x 48 new tokens (160-token prompts): prefix sharing ${
        ((32 * 48) / (shared / 2)).toFixed(0)
      } tok/s, without ${((32 * 48) / (unshared / 2)).toFixed(0)} tok/s, ratio ${
        (unshared / shared).toFixed(2)
      }x`,
    );
    // Rows of a rollout end at different lengths (stop token 0 at a row's own length, 8 to 48):
    // finished rows leave the decode batch, or stay in it, fed padding, until the longest ends.
    const ends = Array.from({ length: 32 }, (_, r) => 8 + ((r * 37) % 41));
    const stopAtEnd: TokenChooser = (l, row, index) =>
      index + 1 === ends[row] ? 0 : 1 + (choose(l, row, index) % 249);
    const generated = ends.reduce((a, b) => a + b, 0);
    const ragged = (dropFinished: boolean) =>
      seconds(2, async () => {
        await gen.generate(base.feeds, {
          prompts: group,
          maxTokens: 48,
          temperature: 1,
          choose: stopAtEnd,
          stopTokenIds: [0],
          dropFinished,
        });
      });
    let [kept, dropped] = [0, 0];
    for (let round = 0; round < 2; round++) {
      kept += await ragged(false);
      dropped += await ragged(true);
    }
    console.log(
      `rollout, 4 prompts x 8 samples, 8 to 48 new tokens per row (${generated} in all): ` +
        `finished rows leave the batch ${(generated / (dropped / 2)).toFixed(0)} tok/s, stay ${
          (generated / (kept / 2)).toFixed(0)
        } tok/s, ratio ${(kept / dropped).toFixed(2)}x`,
    );
    // Multi-turn rollouts (one step of the default preset's shape), the three alternated.
    const modes: TurnBatching[] = ["waves", "doubling", "every-step"];
    const spent = new Map(modes.map((m) => [m, { seconds: 0, tokens: 0 }]));
    for (let round = 0; round < 2; round++) {
      for (const mode of modes) {
        const start = performance.now();
        const tokens = await multiTurnRollout(gen, base.feeds, mode, 16, 5);
        const m = spent.get(mode)!;
        m.seconds += (performance.now() - start) / 1000;
        m.tokens += tokens;
      }
    }
    const rate = (m: TurnBatching) => spent.get(m)!.tokens / spent.get(m)!.seconds;
    console.log(
      `multi-turn rollout, 16 episodes x 5 turns of 8 to 48 tokens (${
        spent.get("waves")!.tokens / 2
      } tokens): continuous batching (doubling admissions) ${rate("doubling").toFixed(0)} tok/s, ` +
        `joining at every step ${rate("every-step").toFixed(0)} tok/s, whole waves of turns ${
          rate("waves").toFixed(0)
        } tok/s; ratios to waves ${(rate("doubling") / rate("waves")).toFixed(2)}x and ${
          (rate("every-step") / rate("waves")).toFixed(2)
        }x`,
    );
    // The decoder with every runtime.fused_ops op fused against the composed one, on the same
    // weights, alternated.
    const fusedGen = await createGenerator(rt, fusedSpec);
    const generation = (g: Generator) =>
      seconds(1, async () => {
        await g.generate(base.feeds, { prompts, maxTokens: 32, temperature: 1, choose });
      });
    let [composedGen, fusedGenSeconds] = [0, 0];
    for (let round = 0; round < 3; round++) {
      composedGen += await generation(gen);
      fusedGenSeconds += await generation(fusedGen);
    }
    await fusedGen.release();
    // Attention is fused only in the device cache's decode step (the webgpu backends').
    const hostCache = rt.info.executionProvider !== "webgpu";
    console.log(
      `generation, batch 64 x 32, ${FUSED_OPS.join(", ")} fused` +
        `${hostCache ? " (attention changes no graph with the host cache)" : ""}: ${
          ((64 * 32) / (fusedGenSeconds / 3)).toFixed(0)
        } tok/s, composed ${((64 * 32) / (composedGen / 3)).toFixed(0)} tok/s, ratio ${
          (composedGen / fusedGenSeconds).toFixed(2)
        }x`,
    );
    await gen.release();
    base.release();

    const host = Object.fromEntries(
      weights.map((t) => [t.name, hostTensor("float32", t.shape, t.data)]),
    );
    const trainer = await openSupervisedTrainer(rt, spec, host);
    const examples = Array.from(
      { length: 8 },
      (_, r) => ({ tokens: ids(129, r), lossSpans: [[1, 129] as const] }),
    );
    const hyper = { lr: 1e-4, weightDecay: 0, maxGradNorm: 1 };
    // The warm-up: the first steps fill the session's arena with its plan (one 110 MB block) and
    // grow the heap for the outputs; a training run pays that once. Time the steps after it (the
    // first that maps fewer than 1,000 pages), and say what it cost.
    const warm = { steps: 0, faults: 0 };
    if (Deno.build.os === "linux") {
      for (let faulted = Infinity; faulted > 1000 && warm.steps < 12; warm.steps++) {
        const before = minorPageFaults();
        await trainer.step(examples, hyper);
        faulted = minorPageFaults() - before;
        warm.faults += faulted;
      }
    }
    const stepSeconds = await seconds(2, async () => {
      await trainer.step(examples, hyper);
    });
    ours.trainStep = (8 * 128) / stepSeconds;
    // Memory mapped anew per step (glibc-malloc.ts keeps what a step freed for the next one).
    // And CPU time per step, over the same steps as the peer's (four after its warm-up).
    const faultSteps = 4;
    const faultsBefore = Deno.build.os === "linux" ? minorPageFaults() : 0;
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < faultSteps; i++) {
      await trainer.step(examples, hyper);
    }
    const cpu = process.cpuUsage(cpuBefore);
    ours.trainStepCpu = (cpu.user + cpu.system) / 1e6 / faultSteps;
    const faults = Deno.build.os === "linux"
      ? `, ${((minorPageFaults() - faultsBefore) / faultSteps).toFixed(0)} page faults/step`
      : "";
    console.log(
      `train step (fused: forward, backward, AdamW), batch 8 x 128: ${
        ((8 * 128) / stepSeconds).toFixed(0)
      } tok/s (${stepSeconds.toFixed(2)} s/step, ${
        ours.trainStepCpu.toFixed(3)
      } s CPU/step${faults}; after ${warm.steps} warm-up steps, ${warm.faults} page faults)`,
    );
    // The same step fused (its graph has no attention node), CPU per step, alternated with the
    // composed one.
    const fusedTrainer = await openSupervisedTrainer(rt, fusedSpec, host);
    for (let i = 0; i < 2; i++) await fusedTrainer.step(examples, hyper);
    const cpuPerStep = async (t: typeof trainer) => {
      const before = process.cpuUsage();
      for (let i = 0; i < 2; i++) await t.step(examples, hyper);
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1e6 / 2;
    };
    let [composedCpu, fusedCpu] = [0, 0];
    for (let round = 0; round < 2; round++) {
      composedCpu += await cpuPerStep(trainer);
      fusedCpu += await cpuPerStep(fusedTrainer);
    }
    console.log(
      `train step, batch 8 x 128, ${
        FUSED_OPS.join(", ")
      } fused (the step keeps attention composed): ${(fusedCpu / 2).toFixed(3)} s CPU/step, ` +
        `composed ${(composedCpu / 2).toFixed(3)}, ratio ${(composedCpu / fusedCpu).toFixed(2)}x`,
    );
    await fusedTrainer.release();
    await trainer.release();
  } finally {
    await rt.close();
  }
  if (options.peer) await comparePeer(options.peer, threads, ours);
}
