/**
 * The off-policy diagnostics of gradient_step.applied (largest ratio, dual-clipped and KL-clamped
 * token shares) are projected into grad_steps where an update recorded them, NULL where not (runs
 * without a dual clip or KL clamp, and logs from before them).
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import type { NewEvent } from "../../events/mod.ts";
import { catchUp } from "../../analysis/projections/projector.ts";
import { runSpec, tempStore } from "./fixtures/fill-store.ts";
import { fakeRunEvents } from "../support/fake-run.ts";

Deno.test("grad_steps: max_ratio, dual_clip_fraction and kl_clamp_fraction as recorded, else NULL", async () => {
  const spec = runSpec({ runId: "off-policy", steps: 2 });
  // Step 1's updates recorded the diagnostics (a run with loss.clip_ratio_c and loss.kl_clamp).
  const withDiagnostics = (e: NewEvent): NewEvent =>
    e.type === "gradient_step.applied" && e.data.step === 1
      ? { ...e, data: { ...e.data, maxRatio: 4.5, dualClipFraction: 0.25, klClampFraction: 0.125 } }
      : e;
  const { store, dir } = await tempStore();
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    for (const events of fakeRunEvents(spec)) {
      await store.append(spec.runId, events.map(withDiagnostics));
    }
    await catchUp(conn, store);
    const rows = (await conn.runAndReadAll(
      `SELECT DISTINCT step::INTEGER AS step, max_ratio, dual_clip_fraction, kl_clamp_fraction
       FROM grad_steps WHERE run_id = 'off-policy' ORDER BY step`,
    )).getRowObjectsJS();
    assert.deepEqual(rows, [
      { step: 0, max_ratio: null, dual_clip_fraction: null, kl_clamp_fraction: null },
      { step: 1, max_ratio: 4.5, dual_clip_fraction: 0.25, kl_clamp_fraction: 0.125 },
    ]);
  } finally {
    conn.closeSync();
    instance.closeSync();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
