/**
 * `deno task bench serve`: tokens/s of 64 concurrent HTTP clients against `deno task serve`
 * (the real process on 127.0.0.1, one completion request each, 64 new tokens, ignore_eos so every
 * request costs the same) against the same 64 generations made in-process as one batch on the
 * same model and runtime settings (embedded model, cpu, 1 thread, keyed sampling). The ratio is
 * the cost of HTTP, JSON, tokenizing and per-request scheduling; the target is >= 0.8. Median of
 * 3 rounds each, taken in turn after a warm-up of each (the idle server waits while in-process
 * rounds run).
 */
import { loadEmbeddedModel } from "../../adapters/model/mod.ts";
import { inProcess } from "../serve/in-process.ts";
import { startServe } from "../serve/server-process.ts";

const CLIENTS = 64;
const TOKENS = 64;
const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Prints the suite's report. */
export async function run(): Promise<void> {
  const tokenizer = (await loadEmbeddedModel()).tokenizer!;
  const prompts = Array.from(
    { length: CLIENTS },
    (_, i) => `Question: ${i}+${2 * i + 1}=?\nAnswer:`,
  );
  const ids = prompts.map((p) => tokenizer.encode(p));
  const body = (i: number) => ({
    prompt: prompts[i],
    max_tokens: TOKENS,
    temperature: 1,
    // One seed for all: each client's choice 0 draws what in-process row i (sample 0) draws.
    seed: 1000,
    ignore_eos: true,
  });

  await using server = await startServe(
    "--model",
    "embedded",
    "--threads",
    "1",
    "--max-batch",
    "64",
  );
  const serverRound = async () => {
    const started = performance.now();
    const answers = await Promise.all(
      prompts.map(async (_, i) => {
        const res = await server.post("/v1/completions", body(i));
        if (res.status !== 200) throw new Error(`client ${i}: ${res.status} ${await res.text()}`);
        return await res.json();
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const tokens = answers.reduce((n, a) => n + a.usage.completion_tokens, 0);
    return tokens / seconds;
  };
  // In-process: the model loads and compiles outside the timed part (the server's did too).
  const localRound = async () => {
    let seconds = 0;
    const rows = await inProcess({
      prompts: ids,
      samples: ids.map(() => 0),
      seed: 1000,
      maxTokens: TOKENS,
      temperature: 1,
      topP: 1,
      ignoreEos: true,
      timed: (s) => seconds = s,
    });
    return rows.reduce((n, row) => n + row.tokens.length, 0) / seconds;
  };
  // Warm-ups, then rounds taken in turn, so that both sides see the same machine load.
  await serverRound();
  await localRound();
  const served: number[] = [];
  const local: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    served.push(await serverRound());
    local.push(await localRound());
  }
  const health = await (await server.get("/health")).json();
  await server.stop();
  const s = median(served);
  const l = median(local);
  console.log(
    `serve: ${CLIENTS} clients x ${TOKENS} tokens over HTTP ${s.toFixed(0)} tokens/s; the same ` +
      `generations in-process ${l.toFixed(0)} tokens/s; ratio ${(s / l).toFixed(2)} ` +
      `(target >= 0.8); the server ran ${health.sequences} sequences in ${health.batches} ` +
      `continuous batches`,
  );
}
