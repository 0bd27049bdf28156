/** File presence checks shared by the loaders (absence is an answer, not an error). */

/**
 * True when `path` exists; any stat failure other than NotFound propagates.
 * @example if (await exists(join(dir, "chat_template.jinja"))) { ... }
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
