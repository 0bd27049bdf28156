/**
 * `--store`'s value, checked as it is parsed by every command that takes one (command.ts
 * `storeOption`): an SQLite file path, resolved against the user's directory, or a
 * `postgres://`/`postgresql://` URL. An empty value or any other URL scheme is a usage error
 * before anything is opened, so `--store mysql://x/y` cannot become a file at `mysql:/x/y`.
 *
 * @example
 * ```ts
 * import { storeArgument } from "./store-argument.ts";
 *
 * storeArgument("postgres://db/lab"); // "postgres://db/lab"
 * storeArgument("mysql://db/lab"); // UsageError naming the accepted forms
 * ```
 */
import { StoreTargetError } from "../errors.ts";
import { parseStoreTarget } from "../store/store-target.ts";
import { UsageError } from "./usage-error.ts";
import { userPath } from "./user-path.ts";

/** The store `text` names, a path resolved as the user meant it; a UsageError if it names none. */
export function storeArgument(text: string): string {
  try {
    parseStoreTarget(text);
  } catch (err) {
    if (err instanceof StoreTargetError) throw new UsageError(`--${err.message}`);
    throw err;
  }
  return userPath(text);
}
