/**
 * What a command does with its `--store` and input files before it touches a store, run as a
 * user runs it: an unknown URL scheme is refused by every command that takes `--store` (exit 2,
 * the accepted forms named); a zero-byte file is no store, also for the commands that write;
 * missing or bad tasks and benchmark files are refused before the store is made or opened. Each
 * refusal leaves the folder as it was (sha256 of every file before and after): no store file, no
 * folder, no blob folder.
 */
import assert from "node:assert/strict";
import { presetInput } from "../../engine/config/mod.ts";
import {
  type CliResult,
  errorLines,
  fingerprint,
  runCli,
  runsStore,
  withTempDir,
} from "./store-helpers.ts";

/** Every command that takes `--store`, with the arguments it needs to get that far. */
const STORE_COMMANDS: readonly (readonly [string, readonly string[]])[] = [
  ["engine/cli/train.ts", ["--preset", "smoke", "--steps", "1", "--device", "cpu"]],
  ["engine/cli/train.ts", ["--resume", "latest"]],
  ["engine/cli/eval.ts", ["--model", "embedded", "--data", "bench.jsonl", "--n", "1"]],
  ["engine/cli/replay.ts", ["latest"]],
  ["engine/cli/export-model.ts", ["latest", "--out", "adapter", "--format", "peft"]],
  ["events/cli/verify.ts", []],
  ["analysis/cli/sql.ts", ["SELECT 1"]],
  ["analysis/cli/report.ts", []],
  ["analysis/cli/export.ts", ["latest"]],
  ["analysis/cli/runs.ts", []],
  ["web/cli/web.ts", ["--port", "0"]],
  ["study/cli/study.ts", ["--report-only"]],
  ["study/cli/study.ts", ["estimate"]],
];

/** One benchmark problem, enough for `eval --model embedded` to get to its store. */
const BENCH = '{"problem": "What is 1 + 1?", "answer": "2"}\n';

function assertRefused(result: CliResult, code: number, pattern: RegExp, what: string): void {
  assert.equal(result.code, code, `${what}: ${result.stderr}`);
  const lines = errorLines(result);
  assert.equal(lines.length, 1, `${what}: ${result.stderr}`);
  assert.match(lines[0], pattern, what);
  assert.doesNotMatch(result.stdout + result.stderr, /run id:/, what);
}

Deno.test("--store with an unknown URL scheme: every command refuses it, exit 2, creates nothing", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/bench.jsonl`, BENCH);
    const before = await fingerprint(dir);
    for (const [script, args] of STORE_COMMANDS) {
      const what = `${script} ${args.join(" ")}`;
      // Run in `dir`: read as a relative path, mysql://x/y would be the file dir/mysql:/x/y.
      const result = await runCli(script, [...args, "--store", "mysql://x/y"], dir);
      assertRefused(
        result,
        2,
        /^error: --store "mysql:\/\/x\/y": mysql:\/\/ is not a store's URL scheme; give an SQLite file path or a postgres:\/\/ \(postgresql:\/\/\) URL$/,
        what,
      );
      assert.deepEqual(await fingerprint(dir), before, what);
    }
  });
});

Deno.test("a config whose store has an unknown URL scheme: train exits 2 and creates nothing", async () => {
  await withTempDir(async (dir) => {
    const config = `${dir}/config.json`;
    await Deno.writeTextFile(config, JSON.stringify({ extends: "smoke", store: "mysql://x/y" }));
    const before = await fingerprint(dir);
    const result = await runCli("engine/cli/train.ts", ["--config", config], dir);
    assertRefused(
      result,
      2,
      /^error: invalid config .*config\.json:$/,
      "train --config",
    );
    assert.match(
      result.stderr,
      /store = "mysql:\/\/x\/y" is not allowed; expected an SQLite file path or a postgres:\/\/ \(postgresql:\/\/\) URL/,
    );
    assert.deepEqual(await fingerprint(dir), before);
  });
});

Deno.test("a zero-byte --store is no store: train and eval refuse it and leave it zero bytes", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await Deno.writeFile(path, new Uint8Array());
    await Deno.writeTextFile(`${dir}/bench.jsonl`, BENCH);
    const before = await fingerprint(dir);
    const writers: readonly (readonly [string, readonly string[]])[] = [
      ["engine/cli/train.ts", ["--preset", "smoke", "--steps", "1", "--device", "cpu"]],
      [
        "engine/cli/eval.ts",
        ["--model", "embedded", "--data", `${dir}/bench.jsonl`, "--n", "1", "--device", "cpu"],
      ],
    ];
    for (const [script, args] of writers) {
      const result = await runCli(script, [...args, "--store", path], dir);
      // The refusal every reading command gives for the same file (store-cli_test.ts).
      assertRefused(
        result,
        1,
        /^error: .*events\.sqlite is not a polyrl event store \(an empty file, no events table\); point --store at a store/,
        script,
      );
      assert.deepEqual(await fingerprint(dir), before, script);
    }
  });
});

Deno.test("missing or bad problem files: train and eval exit 2 naming the file, no store made", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/bad.jsonl`, "not json\n");
    const smoke = presetInput("smoke") as Record<string, unknown>;
    const configs = {
      "missing-train.json": { ...smoke, tasks: { kind: "math-files", train: `${dir}/gone.jsonl` } },
      "bad-benchmark.json": {
        ...smoke,
        evaluation: { ...smoke.evaluation as object, benchmarks: [`${dir}/bad.jsonl`] },
      },
    };
    for (const [name, config] of Object.entries(configs)) {
      await Deno.writeTextFile(`${dir}/${name}`, JSON.stringify(config));
    }
    // A store that exists (its blobs included) is left byte-identical; one in a folder that does
    // not exist yet is not made, nor is its folder.
    const existing = `${dir}/existing.sqlite`;
    await runsStore(existing, ["run-a"]);
    const before = await fingerprint(dir);
    const cases: readonly (readonly [string, readonly string[], RegExp])[] = [
      [
        "engine/cli/train.ts",
        ["--config", `${dir}/missing-train.json`, "--device", "cpu"],
        /^error: a problems file of the config: .*gone\.jsonl: cannot open \(No such file/,
      ],
      [
        "engine/cli/train.ts",
        ["--config", `${dir}/bad-benchmark.json`, "--device", "cpu"],
        /^error: a problems file of the config: .*bad\.jsonl line 1: invalid JSON/,
      ],
      [
        "engine/cli/eval.ts",
        ["--model", "embedded", "--data", `${dir}/gone.jsonl`, "--device", "cpu"],
        /^error: --data .*gone\.jsonl: cannot open \(No such file/,
      ],
      [
        "engine/cli/eval.ts",
        ["--model", "embedded", "--data", `${dir}/bad.jsonl`, "--device", "cpu"],
        /^error: --data .*bad\.jsonl line 1: invalid JSON/,
      ],
    ];
    for (const store of [existing, `${dir}/runs/events.sqlite`]) {
      for (const [script, args, pattern] of cases) {
        const what = `${script} ${args.join(" ")} --store ${store}`;
        const result = await runCli(script, [...args, "--store", store], dir);
        assertRefused(result, 2, pattern, what);
        assert.deepEqual(await fingerprint(dir), before, what);
      }
    }
  });
});

Deno.test("eval of a run on a store that does not exist: refused, and no store is made", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/bench.jsonl`, BENCH);
    const before = await fingerprint(dir);
    // A run's team, and a --model that is no directory, so names a run's checkpoint.
    const cases: readonly (readonly [readonly string[], number, RegExp])[] = [
      [["latest"], 1, /^error: no event store at .*events\.sqlite \(no such file\)/],
      [
        ["--model", "latest", "--data", `${dir}/bench.jsonl`],
        2,
        /^error: --model latest: no such model directory, and the store .*events\.sqlite has no run latest: there is no store at that path/,
      ],
    ];
    for (const [args, code, pattern] of cases) {
      const what = `eval ${args.join(" ")}`;
      const result = await runCli(
        "engine/cli/eval.ts",
        [...args, "--store", `${dir}/runs/events.sqlite`],
        dir,
      );
      assertRefused(result, code, pattern, what);
      assert.deepEqual(await fingerprint(dir), before, what);
    }
  });
});
