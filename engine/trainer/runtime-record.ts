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
