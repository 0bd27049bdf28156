/**
 * Where `load_lora_adapter` may read: only folders inside the `--lora-dir` roots the server was
 * started with, after symbolic links are followed (a link inside a root pointing elsewhere is
 * refused too). vLLM reads any path its process can (it guards the route behind
 * VLLM_ALLOW_RUNTIME_LORA_UPDATING and warns it is for local development); this server is
 * stricter because any local page could otherwise make it read files by path.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { ApiError } from "./api-error.ts";

/**
 * The real path of `path` if it is a folder inside one of `roots`; an ApiError naming the
 * problem otherwise (403 outside the roots or with none, 404 when absent, 400 for a file).
 *
 * @example
 * ```ts
 * import { allowedAdapterFolder } from "./adapter-path.ts";
 *
 * const folder = await allowedAdapterFolder("/srv/adapters/solver-v3", ["/srv/adapters"]);
 * // its real path; an ApiError 403 for "/etc", 404 when solver-v3 is absent
 * ```
 */
export async function allowedAdapterFolder(
  path: string,
  roots: readonly string[],
): Promise<string> {
  if (roots.length === 0) {
    throw new ApiError(
      403,
      "this server loads no adapters by path: start it with --lora-dir DIR to allow the " +
        "adapter folders under DIR",
      "lora_path",
    );
  }
  if (path.includes("\0")) throw new ApiError(400, "lora_path holds a NUL character", "lora_path");
  let real: string;
  try {
    real = await Deno.realPath(resolve(path));
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new ApiError(404, `lora_path ${path} does not exist`, "lora_path");
    }
    throw new ApiError(
      400,
      `lora_path ${path} cannot be read: ${(err as Error).message}`,
      "lora_path",
    );
  }
  const realRoots = await Promise.all(
    roots.map((root) => Deno.realPath(root).catch(() => resolve(root))),
  );
  const inside = realRoots.some((root) => {
    const rel = relative(root, real);
    return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
  });
  if (!inside) {
    throw new ApiError(
      403,
      `lora_path ${path} is outside the adapter folders this server reads ` +
        `(${roots.join(", ")}); put the adapter under one of them or start the server with ` +
        "--lora-dir naming its parent",
      "lora_path",
    );
  }
  if (!(await Deno.stat(real)).isDirectory) {
    throw new ApiError(
      400,
      `lora_path ${path} is a file; give the adapter's folder (adapter_config.json, ` +
        "adapter_model.safetensors)",
      "lora_path",
    );
  }
  return real;
}
