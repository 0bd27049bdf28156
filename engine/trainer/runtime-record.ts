/** What a run records about the software it ran on, for replay to compare against. */
import type { RuntimeInfo } from "../../adapters/onnx/runtime/mod.ts";

/** The `runtime` field of `run.started`. */
export function runtimeRecord(info: RuntimeInfo) {
  return {
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    typescript: Deno.version.typescript,
    onnxruntime: `${info.onnxruntime.package}@${info.onnxruntime.version}`,
    executionProvider: info.executionProvider,
    adapter: info.adapter
      ? {
        vendor: info.adapter.vendor,
        architecture: info.adapter.architecture,
        device: info.adapter.device,
        description: info.adapter.description,
        fallback: String(info.adapter.isFallbackAdapter),
      }
      : null,
    threads: info.threads,
    os: Deno.build.os,
    arch: Deno.build.arch,
  };
}

/** The code version: the git commit (with `-dirty` for uncommitted changes), else "unknown". */
export async function codeVersion(): Promise<string> {
  try {
    const out = await new Deno.Command("git", {
      args: ["describe", "--always", "--dirty", "--abbrev=40"],
      cwd: new URL("../..", import.meta.url).pathname,
      stdout: "piped",
      stderr: "null",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    return out.success && text ? text : "unknown";
  } catch {
    return "unknown";
  }
}

/** One field in which two runtime records differ. */
export interface RuntimeDifference {
  readonly field: string;
  readonly recorded: string;
  readonly current: string;
}

/**
 * The fields in which `current` differs from `recorded` (adapter fields flattened as
 * `adapter.vendor` ...), in record order.
 *
 * @example
 * ```ts
 * import { runtimeDifferences } from "./runtime-record.ts";
 *
 * runtimeDifferences(
 *   { executionProvider: "cpu", adapter: null, threads: 4 },
 *   { executionProvider: "wasm", adapter: null, threads: 4 },
 * ); // [{ field: "executionProvider", recorded: "cpu", current: "wasm" }]
 * ```
 */
export function runtimeDifferences(
  recorded: Readonly<Record<string, unknown>>,
  current: Readonly<Record<string, unknown>>,
): RuntimeDifference[] {
  const flat = (r: Readonly<Record<string, unknown>>) => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(r)) {
      if (v !== null && typeof v === "object") {
        for (const [a, b] of Object.entries(v)) out[`${k}.${a}`] = String(b);
      } else out[k] = String(v);
    }
    return out;
  };
  const a = flat(recorded);
  const b = flat(current);
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((field) => a[field] !== b[field])
    .map((field) => ({ field, recorded: a[field] ?? "(none)", current: b[field] ?? "(none)" }));
}

/** Fields that decide the numbers a run computes; a difference in the others is cosmetic. */
export const NUMERIC_RUNTIME_FIELDS: readonly string[] = Object.freeze([
  "onnxruntime",
  "executionProvider",
  "threads",
  "arch",
]);
