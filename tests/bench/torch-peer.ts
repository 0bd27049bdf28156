/**
 * The PyTorch peer of `deno task bench models` (`peers/torch_decoder_bench.py`: the embedded
 * model's shape in plain PyTorch on OpenBLAS, the same four workloads), run right after the suite
 * with the same thread count, and the ratios ours / PyTorch of each workload's tokens/s.
 */

/** The peer script, beside this file. */
export const PEER_SCRIPT = new URL("./peers/torch_decoder_bench.py", import.meta.url).pathname;

/** Tokens/s of the four workloads both benchmarks measure. */
export interface PeerFigures {
  readonly nextToken128: number;
  readonly nextToken512: number;
  readonly generation: number;
  readonly trainStep: number;
  /**
   * CPU seconds per train step (the process's user + system time): what the load of a shared
   * machine does not move as it moves the wall-clock rates above.
   */
  readonly trainStepCpu: number;
}

const patterns: Record<keyof PeerFigures, RegExp> = {
  nextToken128: /next token at context 128: KV cache ([\d.]+) tok\/s/,
  nextToken512: /next token at context 512: KV cache ([\d.]+) tok\/s/,
  generation: /generation, batch 64 x 32 new tokens \(16-token prompts\): ([\d.]+) tok\/s/,
  trainStep: /train step \(full, AdamW\), batch 8 x 128: ([\d.]+) tok\/s/,
  trainStepCpu: /train step \(full, AdamW\), batch 8 x 128: .*?([\d.]+) s CPU\/step/,
};

/** Reads the figures from the peer's report. */
export function parsePeerReport(text: string): PeerFigures {
  const read = (key: keyof PeerFigures) => {
    const m = patterns[key].exec(text);
    if (!m) throw new Error(`the report has no ${key} line (${patterns[key].source}):\n${text}`);
    return Number(m[1]);
  };
  return {
    nextToken128: read("nextToken128"),
    nextToken512: read("nextToken512"),
    generation: read("generation"),
    trainStep: read("trainStep"),
    trainStepCpu: read("trainStepCpu"),
  };
}

/**
 * Runs the peer script with Debian's python3 (the one python3-torch installs into), prints its
 * report and each ratio ours / PyTorch.
 *
 * @example
 * ```ts
 * import { comparePeer, PEER_SCRIPT, type PeerFigures } from "./torch-peer.ts";
 *
 * declare const ours: PeerFigures; // this project's figures at 2 threads
 * await comparePeer(PEER_SCRIPT, 2, ours);
 * ```
 */
export async function comparePeer(script: string, threads: number, ours: PeerFigures) {
  const out = await new Deno.Command("/usr/bin/python3", {
    args: [script, String(threads)],
    // torch.set_num_threads sizes only torch's own pool: Debian's torch calls whatever
    // libblas.so.3 is, and OpenBLAS (when the alternatives link points there) would otherwise
    // start a thread per core under a "1 thread" peer (its train step then swung from 1675 to
    // 4981 tok/s between runs, against 5747-5881 held to one thread).
    env: { OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.code !== 0) {
    throw new Error(
      `the peer ${script} failed (exit ${out.code}): ${new TextDecoder().decode(out.stderr)}; ` +
        "it needs Debian's python3-torch on OpenBLAS " +
        "(apt-get install -y python3-torch libopenblas0-pthread)",
    );
  }
  console.log(text.trimEnd());
  const peer = parsePeerReport(text);
  const names: Record<Exclude<keyof PeerFigures, "trainStepCpu">, string> = {
    nextToken128: "next token, context 128, batch 1",
    nextToken512: "next token, context 512, batch 1",
    generation: "generation, batch 64 x 32",
    trainStep: "train step, batch 8 x 128",
  };
  console.log(`ours / PyTorch at ${threads} thread(s), tokens/s (> 1: ours is faster):`);
  for (const key of Object.keys(names) as (keyof typeof names)[]) {
    console.log(
      `  ${names[key].padEnd(34)} ${ours[key].toFixed(0).padStart(6)} / ` +
        `${peer[key].toFixed(0).padStart(6)} = ${(ours[key] / peer[key]).toFixed(2)}x`,
    );
  }
  // Seconds, so the ratio is PyTorch / ours: > 1 is ours faster here too.
  console.log(
    `  ${"train step, CPU s/step (PyTorch/ours)".padEnd(34)} ${
      peer.trainStepCpu.toFixed(3).padStart(6)
    } / ${ours.trainStepCpu.toFixed(3).padStart(6)} = ` +
      `${(peer.trainStepCpu / ours.trainStepCpu).toFixed(2)}x`,
  );
}
