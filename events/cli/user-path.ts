/**
 * Paths as the user typed them. `deno task` runs every command in the folder of deno.json and
 * sets INIT_CWD to the directory the user ran it from; a relative path on the command line means
 * that directory, not the repository root.
 *
 * @example
 * ```ts
 * import { userPath } from "./user-path.ts";
 *
 * // cd ~/polyrl/web && deno task sql --store runs.sqlite
 * userPath("runs.sqlite"); // "/home/me/polyrl/web/runs.sqlite"
 * ```
 */
import { isAbsolute, resolve } from "node:path";

// Read once and removed from the environment: the paths this process hands to its children
// (study's training workers, the test runner's `deno test`) are already resolved, so a child
// must not resolve them a second time against the user's directory.
const INVOCATION_DIR = Deno.env.get("INIT_CWD") || undefined;
if (INVOCATION_DIR !== undefined) Deno.env.delete("INIT_CWD");

// `postgres://…` and other URLs are not paths.
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The directory the user ran the task from, or undefined outside `deno task`. */
export function invocationDir(): string | undefined {
  return INVOCATION_DIR;
}

/**
 * A path argument resolved against the directory the user ran the task from. Absolute paths,
 * URLs and `-` (stdin/stdout) pass through; outside `deno task` a relative path is returned as
 * typed (it already means the working directory).
 *
 * @example
 * ```ts
 * import { userPath } from "./user-path.ts";
 *
 * userPath("/tmp/a.sqlite"); // "/tmp/a.sqlite"
 * userPath("postgres://db/x"); // "postgres://db/x"
 * ```
 */
export function userPath(path: string): string {
  if (INVOCATION_DIR === undefined || path === "" || path === "-") return path;
  if (isAbsolute(path) || URL_SCHEME.test(path)) return path;
  return resolve(INVOCATION_DIR, path);
}

/**
 * For an argument that is either a path or a name (`--model DIR|embedded|RUN`): the resolved
 * path when something exists there, otherwise the argument unchanged, to be read as a name.
 *
 * @example
 * ```ts
 * import { userPathIfExists } from "./user-path.ts";
 *
 * await userPathIfExists("embedded"); // "embedded" (no such file in the user's directory)
 * ```
 */
export async function userPathIfExists(text: string): Promise<string> {
  const path = userPath(text);
  if (path === text) return text;
  try {
    await Deno.stat(path);
    return path;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return text;
    throw err;
  }
}
