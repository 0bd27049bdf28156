/**
 * `deno task pretrain`: trains the embedded base model from scratch on synthetic arithmetic
 * (engine/tasks/arithmetic) in chat format, answer as `\boxed{...}`, then measures greedy accuracy
 * on held-out validation tasks and writes an HF checkpoint plus its training log. Everything is a
 * pure function of the options: weights from Philox keyed draws, tasks from the generator's seed,
 * batches in a fixed order, fixed cpu thread count.
 */
import { join } from "node:path";
import { defineCommand, runCommand, UsageError } from "../../events/cli/command.ts";
import { EMBEDDED_TOKENIZER_DIR, type HfTokenizer, loadTokenizer } from "../../adapters/hf/mod.ts";
import {
  baseTensorsFromHost,
  createGenerator,
  decoderSpec,
  EMBEDDED_MODEL_DIR,
  embeddedModelConfig,
  initEmbeddedModel,
  paramCount,
  saveEmbeddedModel,
  trainableParams,
} from "../../adapters/model/mod.ts";
import { openSupervisedTrainer, type SupervisedExample } from "../../adapters/model/supervised.ts";
import {
  type BackendChoice,
  type HostTensor,
  hostTensor,
  openRuntime,
} from "../../adapters/onnx/runtime/mod.ts";
import { IO } from "../../adapters/onnx/train-step-spec.ts";
import { fillNormal, randomStream, sampleLogits } from "../random/mod.ts";
import { type ArithmeticTask, generateArithmeticTasks } from "../tasks/arithmetic/mod.ts";
import { gradeAnswer } from "../tasks/math/mod.ts";

const USAGE = "deno task pretrain [--steps N] [--batch N] [--seed N] [--out DIR] [--backend cpu]";
const BACKENDS: readonly BackendChoice[] = ["cpu", "wasm", "webgpu", "auto"];

const cli = defineCommand({
  name: "pretrain",
  usage: USAGE,
  summary: "Pretrains the embedded base model on synthetic arithmetic and saves it with its log.",
  options: {
    steps: { type: "string", default: "3000", help: "optimizer steps (default 3000)" },
    batch: { type: "string", default: "32", help: "sequences per step (default 32)" },
    seed: { type: "string", default: "1", help: "seed of init and data (default 1)" },
    lr: { type: "string", default: "0.002", help: "peak AdamW learning rate (default 0.002)" },
    difficulties: { type: "string", default: "1,2", help: "task difficulties mixed (default 1,2)" },
    "eval-tasks": {
      type: "string",
      default: "200",
      help: "held-out validation tasks per difficulty (default 200)",
    },
    out: {
      type: "string",
      default: EMBEDDED_MODEL_DIR.pathname,
      help: "checkpoint directory (default the committed adapters/model/embedded/)",
    },
    backend: { type: "string", default: "cpu", help: "runtime: cpu, wasm, webgpu or auto" },
    threads: { type: "string", default: "2", help: "cpu threads; part of the result (default 2)" },
    "log-every": { type: "string", default: "50", help: "steps between log lines (default 50)" },
  },
  allowPositionals: false,
});

function positiveInt(name: string, value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--${name} must be a positive integer, got ${value}`);
  }
  return n;
}

/** Chat-formatted prompt and `\boxed{answer}` response of a task, as tokens. */
function example(tokenizer: HfTokenizer, task: ArithmeticTask): SupervisedExample {
  const prompt = promptText(tokenizer, task);
  const tokens = tokenizer.encode(`${prompt}\\boxed{${task.answer}}<|im_end|>`);
  return { tokens, lossFrom: tokenizer.encode(prompt).length };
}

function promptText(tokenizer: HfTokenizer, task: ArithmeticTask): string {
  return tokenizer.chatTemplate!.render([{ role: "user", content: task.problem }]);
}

/** Linear warm-up over the first 5% of steps, then cosine decay to a tenth of the peak. */
function learningRate(step: number, steps: number, peak: number): number {
  const warm = Math.max(1, Math.floor(steps * 0.05));
  if (step < warm) return (peak * (step + 1)) / warm;
  const progress = (step - warm) / Math.max(1, steps - warm);
  return peak * (0.1 + 0.45 * (1 + Math.cos(Math.PI * progress)));
}

await runCommand(USAGE, async () => {
  const { values } = cli.parse(Deno.args);
  const steps = positiveInt("steps", values.steps);
  const batchSize = positiveInt("batch", values.batch);
  const seed = positiveInt("seed", values.seed);
  const evalTasks = positiveInt("eval-tasks", values["eval-tasks"]);
  const threads = positiveInt("threads", values.threads);
  const logEvery = positiveInt("log-every", values["log-every"]);
  const peak = Number(values.lr);
  if (!(peak > 0)) throw new UsageError(`--lr must be a positive number, got ${values.lr}`);
  const difficulties = String(values.difficulties).split(",").map((d) =>
    positiveInt("difficulties", d)
  );
  const out = String(values.out);
  const backend = values.backend as BackendChoice;
  if (!BACKENDS.includes(backend)) {
    throw new UsageError(`--backend must be one of ${BACKENDS.join(", ")}, got ${backend}`);
  }

  const tokenizer = await loadTokenizer(EMBEDDED_TOKENIZER_DIR.pathname);
  const imEnd = tokenizer.tokenToId("<|im_end|>")!;
  const spec = decoderSpec(embeddedModelConfig());
  const initial = initEmbeddedModel((purpose, data, std) =>
    fillNormal(randomStream({ seed, purpose }), data, { std })
  );
  const runtime = await openRuntime(backend, { threads });
  const start = performance.now();
  // The log is written as the run goes, so an interrupted run still leaves its curve.
  await Deno.mkdir(out, { recursive: true });
  const logPath = join(out, "pretrain-log.jsonl");
  await Deno.writeTextFile(logPath, "");
  const record = (line: Record<string, unknown>) => {
    const text = JSON.stringify(line);
    Deno.writeTextFileSync(logPath, text + "\n", { append: true });
    console.log(text);
  };
  record({
    event: "start",
    params: paramCount(trainableParams(spec)),
    steps,
    batch: batchSize,
    seed,
    lr: peak,
    difficulties,
    runtime: runtime.info,
  });
  const trainer = await openSupervisedTrainer(
    runtime,
    spec,
    Object.fromEntries(initial.map((t) => [t.name, hostTensor("float32", t.shape, t.data)])),
  );
  try {
    // Each step draws its batch round-robin over difficulties from one long task list each.
    const perDifficulty = Math.ceil((steps * batchSize) / difficulties.length);
    const train = difficulties.map((difficulty) =>
      generateArithmeticTasks({ seed, difficulty, split: "train", count: perDifficulty })
    );
    let window = 0;
    let windowTokens = 0;
    for (let step = 0; step < steps; step++) {
      const examples = Array.from({ length: batchSize }, (_, i) => {
        const k = step * batchSize + i;
        return example(
          tokenizer,
          train[k % difficulties.length][Math.floor(k / difficulties.length)],
        );
      });
      const lr = learningRate(step, steps, peak);
      const m = await trainer.step(examples, { lr, weightDecay: 0.01, maxGradNorm: 1 });
      window += m.loss * m.lossTokens;
      windowTokens += m.lossTokens;
      if ((step + 1) % logEvery === 0 || step === steps - 1) {
        record({
          event: "train",
          step: step + 1,
          loss: window / windowTokens,
          gradNorm: m.gradNorm,
          lr,
          seconds: (performance.now() - start) / 1000,
        });
        window = windowTokens = 0;
      }
    }

    const generator = await createGenerator(runtime, spec);
    const accuracy: Record<string, number> = {};
    for (const difficulty of difficulties) {
      const tasks = generateArithmeticTasks({
        seed,
        difficulty,
        split: "validation",
        count: evalTasks,
      });
      let correct = 0;
      for (let i = 0; i < tasks.length; i += 64) {
        const chunk = tasks.slice(i, i + 64);
        const rows = await generator.generate(trainer.feeds(), {
          prompts: chunk.map((t) => tokenizer.encode(promptText(tokenizer, t))),
          maxTokens: 24,
          // Greedy: temperature 0 consumes no draws; the stream only names the purpose.
          choose: (logits, row, index) =>
            sampleLogits(
              randomStream({ seed, purpose: "pretrain-eval", sample: i + row }),
              index,
              logits,
              {
                temperature: 0,
                topP: 1,
              },
            ),
          stopTokenIds: [imEnd],
        });
        rows.forEach((r, j) => {
          const text = tokenizer.decode(r.tokens, { skipSpecialTokens: true });
          if (gradeAnswer(chunk[j].answer, text).equivalent) correct++;
        });
      }
      accuracy[`d${difficulty}`] = correct / tasks.length;
    }
    await generator.release();
    record({ event: "eval", split: "validation", tasks: evalTasks, accuracy });

    const trained: Record<string, HostTensor> = {};
    for (const name of trainer.runner.trainable) {
      trained[IO.param(name)] = await trainer.runner.readParam(name);
    }
    await saveEmbeddedModel(out, baseTensorsFromHost(spec, trained));
    record({ event: "saved", dir: out, seconds: (performance.now() - start) / 1000 });
  } finally {
    await trainer.release();
    await runtime.close();
  }
});
