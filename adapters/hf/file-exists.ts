/** File checks shared by the loaders: presence (absence is an answer, not an error) and size. */

/**
 * The largest JSON or template file of a model folder read (config.json, tokenizer.json, ...): a
 * tokenizer.json of a 256k-token vocabulary is about 35 MiB; anything past this is not a model's.
 */
export const MODEL_JSON_MAX_BYTES = 128 * 1024 * 1024;

/**
 * True when `path` exists; any stat failure other than NotFound propagates.
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { exists } from "./file-exists.ts";
 *
 * declare const dir: string;
 * if (await exists(join(dir, "chat_template.jinja"))) {
 *   // ...
 * }
 * ```
 */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}
