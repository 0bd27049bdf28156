/**
 * What every command-line task shares, the one entry point into `events/cli/` from outside it:
 * the command shape (`--help` with value names and examples, exit codes, `--store`, `--format`)
 * and paths resolved against the directory the user ran the task from. It lives at the bottom
 * layer because every layer has tasks (docs/ARCHITECTURE.md, "Layers").
 *
 * @example
 * ```ts
 * import { commandExitCode, defineCommand, storeOption } from "../../events/cli/mod.ts";
 * const cli = defineCommand({
 *   name: "verify",
 *   usage: "deno task verify [RUN] [--store PATH|URL]",
 *   summary: "Walk the hash chains and blob references of a store.",
 *   examples: ["deno task verify latest"],
 *   options: { ...storeOption },
 * });
 * export const main = (args: string[]) =>
 *   commandExitCode(cli.usage, () => {
 *     const { values } = cli.parse(args);
 *     console.log(values.store);
 *   });
 * if (import.meta.main) Deno.exit(await main(Deno.args));
 * ```
 *
 * @module
 */
export {
  commandExitCode,
  type CommandSpec,
  DEFAULT_STORE,
  defineCommand,
  ExitCode,
  formatOption,
  type OptionHelp,
  type OutputFormat,
  parseFormat,
  storeOption,
  UsageError,
} from "./command.ts";
export { invocationDir, userPath, userPathIfExists } from "./user-path.ts";
export {
  OutputPathError,
  refuseStoreOutput,
  resolveLinks,
  type StoreFiles,
  storeFiles,
} from "./output-path.ts";
export { listenOrSuggestPort } from "./port-in-use.ts";
export { listenForSignal } from "./signal-listener.ts";
export { cellText } from "./cell-text.ts";
export { toCsv } from "./csv.ts";
export { textTable } from "./text-table.ts";
