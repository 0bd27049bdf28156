/**
 * Finite-difference gradient checker for the ONNX autodiff, run on onnxruntime-node CPU in float64.
 *
 * A case builds outputs f_j from float64 inputs. The checker adds random weight inputs r_j with
 * f_j's (possibly symbolic) shape and the loss L = sum_j sum(f_j * r_j), so every element of every
 * output gets its own random cotangent. One model outputs L and dL/dx for every checked input;
 * a second model, written from the same graph before gradients were added, outputs L alone and
 * serves the central differences (L(x + eps e_k) - L(x - eps e_k)) / 2 eps.
 *
 * Bound: |analytic - numeric| <= RTOL * max(1, |analytic|, |numeric|) per element, RTOL = 1e-6.
 * With eps = 1e-6 in float64 the central-difference truncation error is O(eps^2) and the
 * round-off O(1e-16 / eps) = O(1e-10), so a correct rule passes with wide margin and a wrong one
 * (a missing factor, a transposed or unreduced gradient) misses by orders of magnitude.
 */
import assert from "node:assert/strict";
import * as ort from "onnxruntime-node";
import type { Dim, Graph, Value } from "../../adapters/onnx/mod.ts";
import * as onnx from "../../adapters/onnx/mod.ts";
import { mulberry32 as rng } from "../support/mulberry32.ts";
export { mulberry32 as rng } from "../support/mulberry32.ts";

/** Per-element relative error bound of every gradient check. */
export const RTOL = 1e-6;
const EPS = 1e-6;

/** One graph input of a case. */
export interface CaseInput {
  /** Concrete shape fed at run time. */
  readonly shape: readonly number[];
  /** Declared shape (symbolic dims allowed); default `shape`. */
  readonly dims?: readonly Dim[];
  /** "float64" (default; checked unless `check` is false) or "int32"/"bool" (never checked). */
  readonly dtype?: "float64" | "int32" | "bool";
  /** Value range of random floats: "normal" (default), "positive" (0.5..2), or explicit data. */
  readonly init?: "normal" | "positive" | readonly number[];
  readonly check?: boolean;
}

/** A gradient-check case: named inputs and a builder of the outputs to differentiate. */
export interface GradCase {
  readonly name: string;
  readonly inputs: Readonly<Record<string, CaseInput>>;
  readonly build: (g: Graph, x: Readonly<Record<string, Value>>) => Value | readonly Value[];
  readonly seed?: number;
  /**
   * Overrides for cases that must pass through float32 (onnxruntime CPU has no float64 kernel
   * for some ops, e.g. Erf); the case states why next to its values.
   */
  readonly eps?: number;
  readonly rtol?: number;
}

/** Result of one check, for reporting. */
export interface GradReport {
  readonly name: string;
  readonly maxError: number;
  readonly elements: number;
}

type Feeds = Record<string, ort.Tensor>;

// Extended optimizations fuse patterns into com.microsoft ops that lack float64 kernels (a
// sigmoid gate becomes QuickGelu, float only); basic still folds constants and checks our graph.
const SESSION_OPTIONS: ort.InferenceSession.SessionOptions = { graphOptimizationLevel: "basic" };

function session(model: Uint8Array): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(model, SESSION_OPTIONS);
}

function declare(g: Graph, c: GradCase): Record<string, Value> {
  const values: Record<string, Value> = {};
  for (const [name, spec] of Object.entries(c.inputs)) {
    values[name] = g.input(name, spec.dtype ?? "float64", spec.dims ?? spec.shape);
  }
  return values;
}

function outputsOf(c: GradCase, g: Graph, x: Record<string, Value>): Value[] {
  const out = c.build(g, x);
  return Array.isArray(out) ? [...out] : [out as Value];
}

function randomFeeds(c: GradCase, next: () => number): Feeds {
  const feeds: Feeds = {};
  for (const [name, spec] of Object.entries(c.inputs)) {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const dtype = spec.dtype ?? "float64";
    const init = spec.init ?? "normal";
    const draw = () => {
      if (Array.isArray(init)) return 0;
      if (init === "positive") return 0.5 + 1.5 * next();
      return normal(next);
    };
    const values = Array.from({ length: n }, (_, i) => Array.isArray(init) ? init[i] : draw());
    const data = dtype === "int32"
      ? Int32Array.from(values)
      : dtype === "bool"
      ? Uint8Array.from(values)
      : Float64Array.from(values);
    feeds[name] = new ort.Tensor(dtype, data, [...spec.shape]);
  }
  return feeds;
}

function normal(next: () => number): number {
  const u = Math.max(next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

/**
 * Checks every differentiable input of `c` against central finite differences; throws an
 * assertion error naming the case, input and element on the first element over the bound.
 */
export async function checkGradients(c: GradCase): Promise<GradReport> {
  const next = rng(c.seed ?? 1234);
  const feeds = randomFeeds(c, next);

  // Pass 1: learn the concrete output shapes, so random cotangents can be fed.
  const probe = new onnx.Graph(`${c.name}-probe`);
  outputsOf(c, probe, declare(probe, c)).forEach((v, i) => probe.output(v, `f${i}`));
  const probeSession = await session(onnx.toOnnxModel(probe));
  const probed = await probeSession.run(feeds);
  await probeSession.release();

  const g = new onnx.Graph(c.name);
  const x = declare(g, c);
  const outs = outputsOf(c, g, x);
  const terms = outs.map((f, j) => {
    const r = g.input(`r${j}`, f.dtype, f.shape);
    const dims = probed[`f${j}`].dims;
    const n = dims.reduce((a, b) => a * b, 1);
    feeds[`r${j}`] = new ort.Tensor(
      "float64",
      Float64Array.from({ length: n }, () => normal(next)),
      [
        ...dims,
      ],
    );
    return onnx.reduceSum(onnx.mul(f, r));
  });
  const loss = terms.reduce((a, b) => onnx.add(a, b));
  g.output(loss, "loss");
  const forward = await session(onnx.toOnnxModel(g));

  const checked = Object.entries(c.inputs).filter(([, s]) =>
    (s.dtype ?? "float64") === "float64" && s.check !== false
  ).map(([name]) => name);
  const grads = onnx.gradients(g, loss, checked.map((n) => x[n]));
  grads.forEach((gv, i) => g.output(gv, `grad_${checked[i]}`));
  const full = await session(onnx.toOnnxModel(g));
  const analytic = await full.run(feeds);
  await full.release();

  const eps = c.eps ?? EPS;
  const rtol = c.rtol ?? RTOL;
  let maxError = 0;
  let elements = 0;
  // The 2N perturbed losses of an input are independent runs of one forward session, issued
  // together: onnxruntime-node overlaps them, about half the cost of awaiting each in turn.
  const lossWith = async (name: string, values: Float64Array, dims: readonly number[]) => {
    const out = await forward.run({ ...feeds, [name]: new ort.Tensor("float64", values, dims) });
    return (out.loss.data as Float64Array)[0];
  };
  for (const name of checked) {
    const base = feeds[name];
    const data = base.data as Float64Array;
    const grad = analytic[`grad_${name}`];
    assert.deepEqual(grad.dims, base.dims, `${c.name}: grad_${name} shape`);
    const ga = grad.data as Float64Array;
    const shifted = (k: number, delta: number) => {
      const v = Float64Array.from(data);
      v[k] = data[k] + delta;
      return lossWith(name, v, base.dims);
    };
    const losses = await Promise.all(
      [...data.keys()].flatMap((k) => [shifted(k, eps), shifted(k, -eps)]),
    );
    for (let k = 0; k < data.length; k++) {
      const numeric = (losses[2 * k] - losses[2 * k + 1]) / (2 * eps);
      const err = Math.abs(ga[k] - numeric) / Math.max(1, Math.abs(ga[k]), Math.abs(numeric));
      maxError = Math.max(maxError, err);
      elements++;
      assert.ok(
        err <= rtol,
        `${c.name}: d loss / d ${name}[${k}] analytic ${ga[k]} vs numeric ${numeric} (err ${err})`,
      );
    }
  }
  await forward.release();
  return { name: c.name, maxError, elements };
}

/** Registers one Deno test per case. */
export function gradTests(family: string, cases: readonly GradCase[]): void {
  for (const c of cases) {
    Deno.test(`grad ${family}: ${c.name}`, async () => {
      const report = await checkGradients(c);
      assert.ok(report.elements > 0, `${c.name}: nothing was checked`);
    });
  }
}
