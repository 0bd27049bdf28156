/**
 * The shared shape of every command-line task: `--help`, exit codes (0 success, 1 failed check,
 * 2 bad usage, 130 stopped with Ctrl-C), `--store`, `--format`, and one entry point: every task
 * module exports `main(args)`, resolving to its exit code (`commandExitCode`), and calls it when it
 * is the program, so that tests can run a task in their own process. Built on `node:util`
 * parseArgs because JSR's @std/cli is unreachable from this project's registries.
 *
 * @example
 * ```ts
 * import { defineCommand, storeOption } from "./command.ts";
 *
 * const cli = defineCommand({
 *   name: "verify",
 *   usage: "deno task verify [RUN] [--store PATH|postgres://URL]",
 *   summary: "Walk the hash chains and blob references of a store.",
 *   options: { ...storeOption },
 *   examples: ["deno task verify --store runs.sqlite"],
 * });
 * const { values, positionals } = cli.parse(Deno.args);
 * ```
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestMatch } from "leven";
import { DEFAULT_STORE } from "../store/store-target.ts";
import { refuseStoreOutput } from "./output-path.ts";
import { storeArgument } from "./store-argument.ts";
import { UsageError } from "./usage-error.ts";
import { userPath } from "./user-path.ts";

export { DEFAULT_STORE, UsageError };

/** Exit codes every task uses; `interrupted` (128 + SIGINT, as shells report it) for Ctrl-C. */
export const ExitCode = Object.freeze({ ok: 0, failedCheck: 1, badUsage: 2, interrupted: 130 });

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Describes one option for `--help`. */
export interface OptionHelp {
  readonly help: string;
  /** The value's name in `--help` (`--steps N`, `--store PATH|URL`); string options need one. */
  readonly value?: string;
  /**
   * A file or folder path: a value given on the command line resolves against the directory the
   * user ran the task from (see user-path.ts); the default stays relative to the repository root.
   */
  readonly path?: boolean;
  /**
   * A path option's value as typed, checked and resolved (default: userPath); throws a
   * UsageError for a value it refuses. The default value is taken as it is.
   */
  readonly parse?: (typed: string) => string;
  /**
   * A path the command writes (a file, or a folder it writes into): refused with exit 2 before
   * the command runs when it reaches the command's `--store` or the default store, their blobs,
   * projections or SQLite side files, through links included, or an existing database
   * (output-path.ts).
   */
  readonly output?: boolean;
}

/** A command definition: name, usage line, summary and options (parseArgs shape plus help). */
export interface CommandSpec<O extends Options> {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly options: O & { [K in keyof O]: OptionHelp };
  readonly allowPositionals?: boolean;
  /** Complete command lines shown under `examples:` in `--help`; at least one. */
  readonly examples: readonly [string, ...string[]];
}

/** `--store PATH|postgres://URL`, shared by every command that touches a store. */
export const storeOption = {
  store: {
    type: "string",
    default: DEFAULT_STORE,
    value: "PATH|URL",
    path: true,
    parse: storeArgument,
    help: `event store: a SQLite file path or a postgres:// URL (default ${DEFAULT_STORE})`,
  },
} as const;

/** Output formats for commands that print results. */
export type OutputFormat = "table" | "json" | "csv";

/** `--format table|json|csv`. */
export const formatOption = {
  format: {
    type: "string",
    default: "table",
    value: "table|json|csv",
    help: "output format: table, json or csv",
  },
} as const;

/** Validates a `--format` value, raising a UsageError naming the allowed values. */
export function parseFormat<F extends string = OutputFormat>(
  value: unknown,
  allowed: readonly F[] = ["table", "json", "csv"] as unknown as F[],
): F {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) {
    return value as F;
  }
  throw new UsageError(`--format must be one of ${allowed.join(", ")}; got ${String(value)}`);
}

function helpText<O extends Options>(spec: CommandSpec<O>): string {
  const entries = [
    ...Object.entries(spec.options) as [string, Options[string] & OptionHelp][],
    ["help", { type: "boolean", help: "show this help" }] as const,
  ];
  const flags = entries.map(([name, opt]) =>
    opt.type === "string" ? `--${name} ${opt.value ?? "VALUE"}` : `--${name}`
  );
  const width = Math.max(...flags.map((f) => f.length)) + 2;
  return [
    `usage: ${spec.usage}`,
    "",
    spec.summary,
    "",
    "options:",
    ...entries.map(([, opt], i) => `  ${flags[i].padEnd(width)} ${opt.help}`),
    "",
    "examples:",
    ...spec.examples.map((example) => `  ${example}`),
  ].join("\n");
}

/** `--help` was asked for and printed: the command ends there, with exit 0. */
class HelpShown extends Error {
  override name = "HelpShown";
}

/**
 * Builds a parser for one command. On `--help`, `parse` prints the help and throws, ending the
 * command with exit 0 (parse inside `commandExitCode`).
 */
export function defineCommand<O extends Options>(spec: CommandSpec<O>) {
  const optionEntries = Object.entries(spec.options) as [string, Options[string] & OptionHelp][];
  // Path options parse without their default, so that only a value the user typed is resolved.
  const parseOptions = Object.fromEntries(
    optionEntries.map(([k, v]) => {
      const { help: _help, value: _value, path, parse: _parse, output: _output, ...rest } = v;
      if (path) delete rest.default;
      return [k, rest];
    }),
  ) as O;
  const pathOptions = optionEntries.filter(([, v]) => v.path);
  const resolvePaths = (values: Record<string, unknown>) => {
    for (const [name, opt] of pathOptions) {
      const given = values[name];
      if (given === undefined) {
        if (opt.default !== undefined) values[name] = opt.default;
      } else {
        const parse = opt.parse ?? userPath;
        values[name] = Array.isArray(given) ? given.map(parse) : parse(given as string);
      }
    }
  };
  const outputOptions = optionEntries.filter(([, v]) => v.output);
  const refuseStoreOutputs = (values: Record<string, unknown>) => {
    const stores = [DEFAULT_STORE];
    if (typeof values.store === "string") stores.push(values.store);
    for (const [name] of outputOptions) {
      const value = values[name];
      if (typeof value === "string") refuseStoreOutput(value, stores, `--${name}`);
    }
  };
  return {
    /** The usage line, as `commandExitCode` prints it after a usage error. */
    usage: spec.usage,
    help: () => helpText(spec),
    parse(args: string[]) {
      if (args.includes("--help") || args.includes("-h")) {
        console.log(helpText(spec));
        throw new HelpShown();
      }
      let parsed;
      try {
        parsed = parseArgs({
          args,
          options: parseOptions,
          allowPositionals: spec.allowPositionals ?? true,
          strict: true,
        });
      } catch (err) {
        if ((err as { code?: string }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
          throw new UsageError(unknownOptionText(args, Object.keys(spec.options)));
        }
        throw new UsageError((err as Error).message);
      }
      resolvePaths(parsed.values as Record<string, unknown>);
      refuseStoreOutputs(parsed.values as Record<string, unknown>);
      return parsed;
    },
  };
}

/**
 * `unknown option --stpes; did you mean --steps?` for the first option in `args` that is not one
 * of `known` (or `--help`), the suggestion the closest known name by edit distance when it is at
 * most 2 edits away and shorter than the typed name (so `-x` suggests nothing).
 */
function unknownOptionText(args: string[], known: readonly string[]): string {
  // Tokens rather than parseArgs' message: they give the option as typed, `--stpes=3` included.
  const { tokens } = parseArgs({ args, strict: false, allowPositionals: true, tokens: true });
  const unknown = tokens.find((t) => t.kind === "option" && !known.includes(t.name));
  if (unknown?.kind !== "option") return "unknown option";
  const near = closestMatch(unknown.name, [...known, "help"], {
    maxDistance: Math.min(2, unknown.name.length - 1),
  });
  return `unknown option ${unknown.rawName}; ` +
    (near === undefined ? "--help lists the options" : `did you mean --${near}?`);
}

/**
 * Runs a command body with the project's exit-code conventions and resolves to the exit code: a
 * UsageError prints the message and the usage line (2), `--help` has printed the help (0), any
 * other error prints its message (1), else the body's code (default 0). A task exports it as
 * `main` and exits with it only when it is the program (tests/support/run-cli.ts runs some in the
 * test's process):
 *
 * @example
 * ```ts
 * import { commandExitCode, defineCommand } from "./command.ts";
 *
 * const cli = defineCommand({
 *   name: "hello",
 *   usage: "deno task hello",
 *   summary: "Says hello.",
 *   options: {},
 *   examples: ["deno task hello"],
 * });
 * export const main = (args: string[]) =>
 *   commandExitCode(cli.usage, () => {
 *     cli.parse(args);
 *     console.log("hello");
 *   });
 * if (import.meta.main) Deno.exit(await main(Deno.args));
 * ```
 */
export async function commandExitCode(
  usage: string,
  body: () => Promise<number | void> | number | void,
): Promise<number> {
  try {
    return (await body()) ?? ExitCode.ok;
  } catch (err) {
    if (err instanceof HelpShown) return ExitCode.ok;
    if (err instanceof UsageError) {
      console.error(`error: ${err.message}\nusage: ${usage}`);
      return ExitCode.badUsage;
    }
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    return ExitCode.failedCheck;
  }
}
