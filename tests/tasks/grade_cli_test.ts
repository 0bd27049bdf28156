/**
 * `deno task grade` end to end: single mode (text and --json), batch mode with malformed lines
 * and a pathological item that must time out without stopping the batch, and bad usage (exit 2).
 */
import assert from "node:assert/strict";
import { runCli } from "../support/run-cli.ts";

const grade = (...args: string[]) => runCli("engine/cli/grade.ts", ...args);

/** Three nested 1999-term sums: about 8e9 evaluations, far beyond any time limit. */
const PATHOLOGICAL = "$\\sum_{a=1}^{1999}\\sum_{b=1}^{1999}\\sum_{c=1}^{1999} abc$";

Deno.test("grade: single mode prints verdict, extractions and reason; exit 0 either way", async () => {
  const yes = await grade("--gold", "$\\frac{1}{3}$", "--pred", "so $\\boxed{1/3}$");
  assert.equal(yes.code, 0, yes.stderr);
  assert.match(yes.stdout, /^equivalent: yes$/m);
  assert.match(yes.stdout, /^gold: "\\\\frac\{1\}\{3\}" \(from latex\) -> 1\/3$/m);
  assert.match(yes.stdout, /^pred: "1\/3" \(from boxed\) -> 1\/3$/m);
  const no = await grade("--gold", "$[0,1)$", "--pred", "$(0,1)$", "--json");
  assert.equal(no.code, 0, no.stderr);
  const result = JSON.parse(no.stdout);
  assert.equal(result.equivalent, false);
  assert.equal(result.gold.parsed, "[0, 1)");
  assert.match(result.reason, /open\/closed/);
});

Deno.test("grade: options reach the comparison", async () => {
  const loose = await grade(
    "--gold",
    "2.67",
    "--pred",
    "2.6667",
    "--float-rounding",
    "2",
    "--json",
  );
  assert.equal(JSON.parse(loose.stdout).equivalent, true);
  const tight = await grade(
    "--gold",
    "2.67",
    "--pred",
    "2.6667",
    "--float-rounding",
    "4",
    "--json",
  );
  assert.equal(JSON.parse(tight.stdout).equivalent, false);
  const renamed = await grade("--gold", "$f(x)$", "--pred", "$f(y)$", "--no-strict", "--json");
  assert.equal(JSON.parse(renamed.stdout).equivalent, true);
  const setRel = ["--gold", "$x \\in [-2,7]$", "--pred", "$-2 \\le x \\le 7$", "--json"];
  assert.equal(JSON.parse((await grade(...setRel)).stdout).equivalent, false);
  assert.equal(
    JSON.parse((await grade(...setRel, "--allow-set-relation")).stdout).equivalent,
    true,
  );
});

Deno.test("grade: batch reports malformed lines and timeouts and goes on", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/batch.jsonl`;
    await Deno.writeTextFile(
      file,
      [
        JSON.stringify({ gold: "$1/2$", pred: "0.5", equivalent: true }),
        "{not json",
        JSON.stringify({ gold: "$5$" }),
        JSON.stringify({ gold: "$5$", pred: PATHOLOGICAL }),
        "",
        JSON.stringify({ gold: "$2.67$", pred: "2.6667", options: { float_rounding: 2 } }),
        JSON.stringify({ gold: "1", pred: "1", options: { rounding: 2 } }),
      ].join("\n"),
    );
    const started = performance.now();
    const out = await grade(file, "--timeout-ms", "1500");
    const elapsed = performance.now() - started;
    assert.equal(out.code, 0, out.stderr);
    const records = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(records.map((r) => r.line), [1, 2, 3, 4, 6, 7]);
    assert.equal(records[0].equivalent, true);
    assert.equal(records[0].expected, true);
    assert.match(records[1].error, /^line 2: invalid JSON/);
    assert.match(records[2].error, /^line 3: field pred must be a string, got nothing/);
    assert.equal(records[3].equivalent, false);
    assert.equal(records[3].reason, "timeout");
    assert.equal(records[4].equivalent, true, "the batch goes on after a timeout");
    assert.match(records[5].error, /^line 7: option rounding=2 is invalid/);
    assert.match(
      out.stderr,
      /graded 3 of 6 lines: 2 equivalent, 1 not \(1 timeouts\), 3 malformed/,
    );
    assert.ok(elapsed < 20_000, `batch took ${elapsed} ms; the timeout did not cut the item off`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("grade: single mode also enforces the time limit", async () => {
  const out = await grade("--gold", "5", "--pred", PATHOLOGICAL, "--timeout-ms", "500", "--json");
  assert.equal(out.code, 0, out.stderr);
  assert.equal(JSON.parse(out.stdout).reason, "timeout");
});

Deno.test("grade: bad usage exits 2 with the usage line", async () => {
  const cases: string[][] = [
    [],
    ["--gold", "1"],
    ["--gold", "1", "--pred", "1", "extra.jsonl"],
    ["a.jsonl", "b.jsonl"],
    ["--gold", "1", "--pred", "1", "--float-rounding", "x"],
    ["--gold", "1", "--pred", "1", "--timeout-ms", "0"],
    ["--bogus"],
    ["/nonexistent/file.jsonl"],
    ["--gold", "1", "--pred", "1", "--strict", "--no-strict"],
  ];
  for (const args of cases) {
    const out = await grade(...args);
    assert.equal(out.code, 2, `${JSON.stringify(args)} exited ${out.code}: ${out.stderr}`);
    assert.match(out.stderr, /usage: deno task grade/);
  }
});
