/**
 * The machine a report is generated on: CPU model and core count from /proc/cpuinfo (Linux), the
 * count the runtime reports elsewhere. The event log records each run's software (Deno,
 * onnxruntime, execution provider, threads) but not the CPU, so the report states this as the
 * machine it was generated on, which is the one the study ran on when both happen together.
 */

/** CPU model and logical cores. */
export interface Hardware {
  readonly cpuModel: string;
  readonly cores: number;
  readonly os: string;
  readonly arch: string;
}

/**
 * Parses /proc/cpuinfo text: the first `model name` and the number of `processor` entries.
 *
 * @example
 * ```ts
 * parseCpuInfo("processor\t: 0\nmodel name\t: Xeon\n\nprocessor\t: 1\nmodel name\t: Xeon\n");
 * // { cpuModel: "Xeon", cores: 2 }
 * ```
 */
export function parseCpuInfo(text: string): { cpuModel: string | null; cores: number } {
  const model = text.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? null;
  const cores = text.match(/^processor\s*:/gm)?.length ?? 0;
  return { cpuModel: model, cores };
}

/**
 * This machine's hardware.
 *
 * @example
 * ```ts
 * const hw = await readHardware(); // { cpuModel: "Intel(R) Xeon(R) ...", cores: 2, ... }
 * ```
 */
export async function readHardware(): Promise<Hardware> {
  const info = await Deno.readTextFile("/proc/cpuinfo")
    .then(parseCpuInfo)
    .catch(() => ({ cpuModel: null, cores: 0 }));
  return {
    cpuModel: info.cpuModel ?? "unknown (no /proc/cpuinfo)",
    cores: info.cores || navigator.hardwareConcurrency,
    os: Deno.build.os,
    arch: Deno.build.arch,
  };
}
