/**
 * Reading files a user named, bounded: regular files only, up to a size limit, and errors that
 * never quote the contents. Used wherever the project reads such a file whole (tasks and
 * benchmark files, model and adapter JSON) or checks one it reads in ranges (safetensors).
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { readJsonFile, readRegularTextFile } from "../../events/files/mod.ts";
 *
 * declare const dir: string; // an adapter's folder
 * const config = await readJsonFile(join(dir, "adapter_config.json"), {
 *   maxBytes: 1 << 20,
 *   symlinks: "refuse",
 * });
 * const tasks = await readRegularTextFile("tasks.jsonl", { maxBytes: 256 * 1024 ** 2 });
 * ```
 *
 * @module
 */
export {
  FileReadError,
  jsonErrorPlace,
  readJsonFile,
  type ReadLimits,
  readRegularFile,
  readRegularTextFile,
  regularFileSize,
  type SymlinkPolicy,
} from "./regular-file.ts";
