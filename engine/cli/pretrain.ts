/**
 * `deno task pretrain`: trains the embedded base model on the pretraining corpus
 * (engine/pretrain/corpus.ts: synthetic arithmetic as drills and as the refine and debate presets'
 * turns, and with `--corpus search` the search preset's router, searcher and answerer turns,
 * packed into fixed-length rows), from scratch or continuing from `--init DIR`. It evaluates
 * greedy accuracy of every role on held-out problems every `--eval-every` steps, and writes an HF
 * checkpoint plus its training log at every evaluation (so an interrupted run keeps its last one).
 * A continued run's log starts with the log of the checkpoint it continued from, so the committed
 * model's log is its whole history. Everything is a pure function of the options (and of the
 * `--init` weights, whose sha256 the log records): weights from Philox keyed draws, the corpus
 * from the seed, batches in a fixed order, fixed cpu thread count.
 */
import { join, relative } from "node:path";
import { commandExitCode, defineCommand, UsageError } from "../../events/cli/mod.ts";
import { EMBEDDED_TOKENIZER_DIR, type HfTokenizer, loadTokenizer } from "../../adapters/hf/mod.ts";
import {
  baseTensorsFromHost,
  createGenerator,
  type DecoderSpec,
  decoderSpec,
  EMBEDDED_SIZES,
  embeddedModelConfig,
  type EmbeddedSize,
  initEmbeddedModel,
  openSupervisedTrainer,
  paramCount,
  saveEmbeddedModel,
  type SupervisedTrainer,
  trainableParams,
  weightsSha256,
} from "../../adapters/model/mod.ts";
import {
  type BackendChoice,
  type HostTensor,
  hostTensor,
  openRuntime,
  type Runtime,
} from "../../adapters/onnx/runtime/mod.ts";
import { IO } from "../../adapters/onnx/train-step/mod.ts";
import {
  type CorpusSource,
  itemText,
  MIXTURES,
  packRows,
  wrongAnswer,
} from "../pretrain/corpus.ts";
import {
  episodeStates,
  heldOutSearchTasks,
  SEARCH_HOPS,
  type SearchHops,
  searchPrompt,
  searchReplyTokens,
  searchWorldPool,
} from "../pretrain/search-corpus.ts";
import { fillNormal, randomStream, sampleLogits, uniformInt } from "../random/mod.ts";
import { type ArithmeticTask, generateArithmeticTasks } from "../tasks/arithmetic/mod.ts";
import { gradeAnswer } from "../tasks/math/mod.ts";
import { isCorrectAnswer } from "../trainer/group-rewards.ts";
import { progressReporter } from "../trainer/progress.ts";
import { parseAnswerText, parseQuery, parseRoute, parseVerdict } from "../workflows/mod.ts";
import { checkpointWeights } from "./checkpoint-weights.ts";

const USAGE =
  "deno task pretrain [--size base|small] [--corpus arithmetic|search|copy] [--init DIR] " +
  "[--max-hops 2|3] [--steps N] [--rows N] [--row-length N] [--seed N] --out DIR [--backend cpu]";
const BACKENDS: readonly BackendChoice[] = ["cpu", "wasm", "webgpu", "webgpu-web", "auto"];

const cli = defineCommand({
  name: "pretrain",
  usage: USAGE,
  summary: "Pretrains the embedded base model on synthetic arithmetic and search turns and " +
    "saves it with its log.",
  options: {
    corpus: {
      type: "string",
      default: "arithmetic",
      value: "arithmetic|search|copy",
      help: "arithmetic only (the first phase), with the search preset's turns, or copy drills " +
        "only (a warm-up before search) (default arithmetic)",
    },
    "max-hops": {
      type: "string",
      default: "2",
      value: "2|3",
      help: "facts a search question chains at most, in the search worlds, drills and " +
        "evaluation: the preset's 2, or 3 for a team whose runs ask three-hop questions " +
        "(default 2)",
    },
    init: {
      type: "string",
      value: "DIR",
      path: true,
      help: "continue from this checkpoint's weights (same size) instead of fresh ones",
    },
    steps: { type: "string", default: "1500", value: "N", help: "optimizer steps (default 1500)" },
    rows: { type: "string", default: "16", value: "N", help: "packed rows per step (default 16)" },
    "row-length": {
      type: "string",
      default: "512",
      value: "N",
      help: "tokens per row (default 512)",
    },
    seed: { type: "string", default: "1", value: "N", help: "seed of init and data (default 1)" },
    lr: {
      type: "string",
      default: "0.002",
      value: "X",
      help: "peak AdamW learning rate (default 0.002)",
    },
    difficulties: {
      type: "string",
      default: "1",
      value: "D,...",
      help: "task difficulties mixed (default 1)",
    },
    "eval-tasks": {
      type: "string",
      default: "200",
      value: "N",
      help: "held-out validation tasks per difficulty, and search questions up to the world's 64 " +
        "(default 200)",
    },
    "eval-every": {
      type: "string",
      default: "250",
      value: "N",
      help: "steps between evaluations and checkpoints (default 250)",
    },
    out: {
      type: "string",
      value: "DIR",
      path: true,
      output: true,
      help: "checkpoint directory (required: the committed model is written only when named, " +
        "as adapters/model/embedded)",
    },
    size: {
      type: "string",
      default: "base",
      value: "base|small",
      help: "model size: base or small (default base)",
    },
    backend: {
      type: "string",
      default: "cpu",
      value: "cpu|wasm|webgpu|webgpu-web|auto",
      help: "runtime: cpu, wasm, webgpu, webgpu-web or auto",
    },
    threads: {
      type: "string",
      default: "2",
      value: "N",
      help: "cpu threads; part of the result (default 2)",
    },
    "log-every": {
      type: "string",
      default: "25",
      value: "N",
      help: "steps between log lines (default 25)",
    },
  },
  allowPositionals: false,
  examples: [
    "deno task pretrain --size small --steps 800 --threads 1 --out /tmp/small-model",
    "deno task pretrain --init adapters/model/embedded --corpus search --steps 200 --rows 8 " +
    "--lr 0.0008 --threads 1 --out /tmp/search-model",
  ],
});

/** Distinct training tasks per difficulty; d1 has ~50k train problems in all, so this is most. */
const POOL_PER_DIFFICULTY = 40_000;

function positiveInt(name: string, value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--${name} must be a positive integer, got ${value}`);
  }
  return n;
}

/** The log lines of the checkpoint a run continues from (none when it has no log). */
async function previousLog(dir: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(join(dir, "pretrain-log.jsonl"))).split("\n").filter((l) =>
      l.trim() !== ""
    );
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** Linear warm-up over the first 5% of steps, then cosine decay to a tenth of the peak. */
function learningRate(step: number, steps: number, peak: number): number {
  const warm = Math.max(1, Math.floor(steps * 0.05));
  if (step < warm) return (peak * (step + 1)) / warm;
  const progress = (step - warm) / Math.max(1, steps - warm);
  return peak * (0.1 + 0.45 * (1 + Math.cos(Math.PI * progress)));
}

/** Greedy replies of the current parameters to chat prompts, 64 at a time. */
async function greedyReplies(
  runtime: Runtime,
  spec: DecoderSpec,
  trainer: SupervisedTrainer,
  tokenizer: HfTokenizer,
  prompts: readonly string[],
  maxTokens: number,
): Promise<string[]> {
  const imEnd = tokenizer.tokenToId("<|im_end|>")!;
  const generator = await createGenerator(runtime, spec);
  const replies: string[] = [];
  try {
    for (let i = 0; i < prompts.length; i += 64) {
      const rows = await generator.generate(trainer.feeds(), {
        prompts: prompts.slice(i, i + 64).map((p) =>
          tokenizer.encodeChat([{ role: "user", content: p }])
        ),
        maxTokens,
        temperature: 0,
        // Greedy: temperature 0 consumes no draws; the stream only names the purpose.
        choose: (logits, row, index) =>
          sampleLogits(
            randomStream({ seed: 0, purpose: "pretrain-eval", sample: i + row }),
            index,
            logits,
            {
              temperature: 0,
              topP: 1,
            },
          ),
        stopTokenIds: [imEnd],
      });
      for (const r of rows) replies.push(tokenizer.decode(r.tokens, { skipSpecialTokens: true }));
    }
  } finally {
    await generator.release();
  }
  return replies;
}

/**
 * Solver accuracy (first turn, graded like RL rewards), verifier verdict accuracy (a right
 * solution for even tasks, a wrong one for odd) and critic accuracy (after three opinions of which
 * zero to two are right) on each difficulty's validation tasks.
 */
async function evaluate(
  runtime: Runtime,
  spec: DecoderSpec,
  trainer: SupervisedTrainer,
  tokenizer: HfTokenizer,
  validation: ReadonlyMap<number, readonly ArithmeticTask[]>,
): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const [difficulty, tasks] of validation) {
    const solve = tasks.map((t) => itemText("solve", t, "", true).prompt);
    const answers = await greedyReplies(runtime, spec, trainer, tokenizer, solve, 64);
    result[`solver_d${difficulty}`] = answers.filter((a, i) =>
      gradeAnswer(tasks[i].answer, a).equivalent
    ).length / tasks.length;
    const wrong = tasks.map((t, i) => {
      const stream = randomStream({ seed: 0, purpose: "pretrain-eval-wrong", sample: i });
      let n = 0;
      return wrongAnswer(t.answer, (a, b) => uniformInt(stream, n++, a, b), "0");
    });
    const verify = tasks.map((t, i) => itemText("verify", t, wrong[i], i % 2 === 0).prompt);
    const verdicts = await greedyReplies(runtime, spec, trainer, tokenizer, verify, 64);
    result[`verifier_d${difficulty}`] =
      verdicts.filter((v, i) => parseVerdict(v) === (i % 2 === 0)).length / tasks.length;
    const critique = tasks.map((t, i) =>
      itemText("critique", t, wrong[i], true, [i % 2 === 0, false, i % 3 === 0]).prompt
    );
    const critiques = await greedyReplies(runtime, spec, trainer, tokenizer, critique, 64);
    result[`critic_d${difficulty}`] =
      critiques.filter((a, i) => gradeAnswer(tasks[i].answer, a).equivalent).length / tasks.length;
  }
  return result;
}

/**
 * The search roles on the first `count` held-out questions (the search preset's own validation
 * split, asking up to `hops` hops), each in every state of the episode the corpus teaches: router
 * verdict accuracy, the share of queries whose retrieved documents hold the missing fact, and
 * answer accuracy from complete evidence (graded as the run's reward grades it,
 * engine/trainer/group-rewards.ts). With three hops, the same shares on the three-hop questions
 * alone follow (`_3hop`): the skill a three-hop phase adds.
 */
async function evaluateSearch(
  runtime: Runtime,
  spec: DecoderSpec,
  trainer: SupervisedTrainer,
  tokenizer: HfTokenizer,
  count: number,
  hops: SearchHops,
): Promise<Record<string, number>> {
  const { playground, tasks } = heldOutSearchTasks("validation", hops);
  const cases = tasks.slice(0, count).flatMap((task) =>
    episodeStates(playground, task, []).map((state) => ({ task, state }))
  );
  const reply = (kind: "route" | "query" | "answer", of: typeof cases) =>
    greedyReplies(
      runtime,
      spec,
      trainer,
      tokenizer,
      of.map((c) => searchPrompt(kind, c.task.problem, c.state.evidence)),
      searchReplyTokens(hops),
    );
  const routes = await reply("route", cases);
  const asking = cases.filter((c) => c.state.query !== null);
  const queries = await reply("query", asking);
  const complete = cases.filter((c) => c.state.route === "answer");
  const answers = await reply("answer", complete);
  const routed = cases.map((c, i) => parseRoute(routes[i]) === c.state.route);
  const found = asking.map((c, i) => {
    const query = parseQuery(queries[i]);
    const wanted = episodeStates(playground, c.task, c.state.evidence)[1];
    return query !== null && wanted !== undefined &&
      playground.retriever.search(query, playground.topK).some((d) =>
        !c.state.evidence.includes(d) && wanted.found.includes(d)
      );
  });
  const answered = complete.map((c, i) =>
    isCorrectAnswer(c.task.answer, parseAnswerText(answers[i]))
  );
  const share = (hits: readonly boolean[], of: typeof cases, keep: (hops: number) => boolean) => {
    const kept = hits.filter((_, i) => keep(of[i].task.hops));
    return kept.length === 0 ? 0 : kept.filter(Boolean).length / kept.length;
  };
  const shares = (suffix: string, keep: (hops: number) => boolean) => ({
    [`router_search${suffix}`]: share(routed, cases, keep),
    [`searcher_search${suffix}`]: share(found, asking, keep),
    [`answerer_search${suffix}`]: share(answered, complete, keep),
  });
  return {
    ...shares("", () => true),
    ...(hops === 3 ? shares("_3hop", (h) => h === 3) : {}),
  };
}

/** `deno task pretrain ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values } = cli.parse(args);
    const steps = positiveInt("steps", values.steps);
    const rows = positiveInt("rows", values.rows);
    const rowLength = positiveInt("row-length", values["row-length"]);
    const seed = positiveInt("seed", values.seed);
    const evalTasks = positiveInt("eval-tasks", values["eval-tasks"]);
    const evalEvery = positiveInt("eval-every", values["eval-every"]);
    const threads = positiveInt("threads", values.threads);
    const logEvery = positiveInt("log-every", values["log-every"]);
    const peak = Number(values.lr);
    if (!(peak > 0)) throw new UsageError(`--lr must be a positive number, got ${values.lr}`);
    const difficulties = String(values.difficulties).split(",").map((d) =>
      positiveInt("difficulties", d)
    );
    if (values.out === undefined) {
      throw new UsageError(
        "--out DIR is required: the committed model is adapters/model/embedded, built in four " +
          'phases (README, "The embedded model"); name that directory to overwrite it',
      );
    }
    const out = values.out;
    const backend = values.backend as BackendChoice;
    if (!BACKENDS.includes(backend)) {
      throw new UsageError(`--backend must be one of ${BACKENDS.join(", ")}, got ${backend}`);
    }

    const size = values.size as EmbeddedSize;
    if (!EMBEDDED_SIZES.includes(size)) {
      throw new UsageError(`--size must be one of ${EMBEDDED_SIZES.join(", ")}, got ${size}`);
    }
    const corpus = String(values.corpus);
    const mixture = MIXTURES[corpus];
    if (mixture === undefined) {
      throw new UsageError(
        `--corpus must be one of ${Object.keys(MIXTURES).join(", ")}, got ${corpus}`,
      );
    }
    const init = values.init === undefined ? null : String(values.init);
    const hops = Number(values["max-hops"]) as SearchHops;
    if (!SEARCH_HOPS.includes(hops)) {
      throw new UsageError(
        `--max-hops must be one of ${SEARCH_HOPS.join(", ")}, got ${values["max-hops"]}`,
      );
    }

    const tokenizer = await loadTokenizer(EMBEDDED_TOKENIZER_DIR.pathname);
    const spec = decoderSpec(embeddedModelConfig(size));
    const fresh = initEmbeddedModel(
      (purpose, data, std) => fillNormal(randomStream({ seed, purpose }), data, { std }),
      size,
    );
    const initial = init === null ? fresh : await checkpointWeights(init, fresh, size);
    // Read before the log is rewritten: `--init` may name `--out` (continuing the committed model).
    const history = init === null ? [] : await previousLog(init);
    // Relative to the working directory (the repository root for `deno task`), so that a
    // committed log does not name one machine's paths.
    const initRecord = init === null
      ? null
      : { dir: relative(Deno.cwd(), init), sha256: await weightsSha256(init) };
    const runtime = await openRuntime(backend, { threads });
    const start = performance.now();
    // The log is written as the run goes, so an interrupted run still leaves its curve.
    await Deno.mkdir(out, { recursive: true });
    const logPath = join(out, "pretrain-log.jsonl");
    await Deno.writeTextFile(logPath, history.map((line) => line + "\n").join(""));
    // Train lines go to the log and the progress line (steps, rate, ETA); the rest also to stdout.
    const progress = progressReporter("pretrain");
    const record = (line: Record<string, unknown>) => {
      const text = JSON.stringify(line);
      Deno.writeTextFileSync(logPath, text + "\n", { append: true });
      if (line.event !== "train") console.log(text);
    };
    const source: CorpusSource = {
      seed,
      tokenizer,
      mixture,
      searchWorlds: mixture.route + mixture.query + mixture.answer > 0
        ? searchWorldPool(hops)
        : undefined,
      tasks: difficulties.flatMap((difficulty) =>
        generateArithmeticTasks({ seed, difficulty, split: "train", count: POOL_PER_DIFFICULTY })
      ),
    };
    const validation = new Map(difficulties.map((difficulty) => [
      difficulty,
      generateArithmeticTasks({ seed, difficulty, split: "validation", count: evalTasks }),
    ]));
    record({
      event: "start",
      params: paramCount(trainableParams(spec)),
      size,
      steps,
      rows,
      rowLength,
      seed,
      lr: peak,
      difficulties,
      corpus,
      maxHops: hops,
      mixture,
      init: initRecord,
      runtime: runtime.info,
    });
    const trainer = await openSupervisedTrainer(
      runtime,
      spec,
      Object.fromEntries(initial.map((t) => [t.name, hostTensor("float32", t.shape, t.data)])),
    );
    const checkpoint = async (step: number) => {
      const accuracy = {
        ...await evaluate(runtime, spec, trainer, tokenizer, validation),
        ...await evaluateSearch(runtime, spec, trainer, tokenizer, evalTasks, hops),
      };
      record({ event: "eval", step, split: "validation", tasks: evalTasks, accuracy });
      const trained: Record<string, HostTensor> = {};
      for (const name of trainer.runner.trainable) {
        trained[IO.param(name)] = await trainer.runner.readParam(name);
      }
      await saveEmbeddedModel(out, baseTensorsFromHost(spec, trained), size);
      record({
        event: "saved",
        step,
        dir: relative(Deno.cwd(), out),
        seconds: (performance.now() - start) / 1000,
      });
    };
    try {
      let item = 0;
      let window = 0;
      let windowTokens = 0;
      // A non-finite gradient skips its update in the graph; the log counts such steps.
      let skipped = 0;
      for (let step = 0; step < steps; step++) {
        const batch = packRows(source, item, rows, rowLength);
        item = batch.next;
        const lr = learningRate(step, steps, peak);
        const m = await trainer.step(batch.rows, { lr, weightDecay: 0.01, maxGradNorm: 1 });
        window += m.loss * m.lossTokens;
        windowTokens += m.lossTokens;
        if (m.skipped) skipped++;
        const logged = (step + 1) % logEvery === 0 || step === steps - 1;
        progress.update(
          step + 1,
          steps,
          "train",
          logged ? { loss: window / windowTokens, gradNorm: m.gradNorm } : undefined,
        );
        if (logged) {
          record({
            event: "train",
            step: step + 1,
            items: item,
            loss: window / windowTokens,
            gradNorm: m.gradNorm,
            skippedNonFinite: skipped,
            lr,
            seconds: (performance.now() - start) / 1000,
          });
          window = windowTokens = skipped = 0;
        }
        if ((step + 1) % evalEvery === 0 || step === steps - 1) await checkpoint(step + 1);
      }
      progress.finish();
    } finally {
      await trainer.release();
      await runtime.close();
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
