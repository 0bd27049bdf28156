import assert from "node:assert/strict";
import { join } from "node:path";
import { startServe } from "../serve/server-process.ts";
import { completionProxy, runInto, smokeConfig, tempFolder } from "./support.ts";

/** Nats the proxy takes off the logprob of every even token id: a server that disagrees. */
const SHIFT = 1;

/** Lowers the returned logprob of every even token id by SHIFT: a server that disagrees. */
// deno-lint-ignore no-explicit-any
const lowerEvenTokens = (choice: any) => {
  choice.logprobs.token_logprobs = choice.logprobs.token_logprobs.map((l: number, i: number) =>
    choice.token_ids[i] % 2 === 0 ? l - SHIFT : l
  );
};

const even = (tokens: Int32Array) => tokens.filter((t) => t % 2 === 0).length;

Deno.test("TIS through the trainer: tokens whose server logprob is 1 nat low weigh min(e, cap) in the policy loss, as computed by hand", async () => {
  await using tmp = await tempFolder();
  await using server = await startServe("--model", "embedded", "--lora-dir", tmp.adapters);
  await using proxy = completionProxy(server.url, lowerEvenTokens);
  const endpoint = proxy.url;
  const run = async (cap: number) => {
    const config = smokeConfig(join(tmp.root, `cap${cap}.sqlite`), {
      backend: "openai",
      endpoints: [endpoint],
      adapter_dir: tmp.adapters,
      tis_cap: cap,
    }, { steps: 1 });
    assert.equal(config.loss.aggregation, "token-mean");
    const r = await runInto(config, "tis");
    assert.equal(r.error, null, String(r.error));
    return r.events;
  };
  const off = await run(0);
  const capped = await run(2);
  const wide = await run(5);
  const updates = (events: typeof off) =>
    events.flatMap((e) => e.type === "gradient_step.applied" ? [e.data] : []);
  const key = (p: number, s: number, t: number) => `${p}/${s}/${t}`;
  const advantage = new Map<string, number>();
  const evenTokens = new Map<string, number>();
  for (const e of off) {
    if (e.type === "advantages.computed") {
      for (const a of e.data.advantages) {
        advantage.set(key(e.data.prompt, a.sample, a.turn), a.advantage);
      }
    }
    if (e.type === "turn.generated" && e.data.phase === "rollout") {
      evenTokens.set(key(e.data.prompt, e.data.sample, e.data.turn), even(e.data.responseTokens));
    }
  }
  let checked = 0;
  for (const [i, u] of updates(off).entries()) {
    const m = u.rolloutMismatch!;
    const shifted = u.rows!.reduce(
      (n, r) => n + evenTokens.get(key(r.prompt, r.sample, r.turn))!,
      0,
    );
    // Even tokens differ by SHIFT, odd ones by float32 rounding of the two graphs.
    assert.ok(Math.abs(m.meanAbs - SHIFT * shifted / m.tokens) < 1e-3, `mean |delta| ${m.meanAbs}`);
    assert.equal(m.overThreshold, shifted / m.tokens);
    assert.equal(m.tisTruncated, 0);
    assert.equal(updates(capped)[i].rolloutMismatch!.tisTruncated, shifted / m.tokens);
    assert.equal(updates(wide)[i].rolloutMismatch!.tisTruncated, 0);
    if (u.update !== 0) continue;
    // Update 0 starts at ratio 1 (recomputed old logprobs): its policy loss is -sum(w A) / N
    // over the N loss tokens, so the weights add -(w - 1) * sum over rows of A * (even tokens) / N.
    const sumAE = u.rows!.reduce(
      (sum, r) =>
        sum + advantage.get(key(r.prompt, r.sample, r.turn))! *
          evenTokens.get(key(r.prompt, r.sample, r.turn))!,
      0,
    );
    for (const [events, w] of [[capped, 2], [wide, Math.E]] as const) {
      const expected = u.losses.policy - (w - 1) * sumAE / u.tokens;
      const got = updates(events)[i].losses.policy;
      assert.ok(
        Math.abs(got - expected) < 1e-4 * Math.max(1, Math.abs(expected)),
        `${u.workerGroup}, weight ${w}: policy loss ${got}, by hand ${expected}`,
      );
    }
    if (sumAE !== 0) checked++;
    console.log(
      `${u.workerGroup}: sum A*even = ${sumAE}, loss ${u.losses.policy} -> ${
        updates(capped)[i].losses.policy
      } (cap 2), ${updates(wide)[i].losses.policy} (cap 5)`,
    );
  }
  assert.ok(checked > 0, "no update had weights that change its loss");
});
