/**
 * Configuration errors: every problem names the key (a path like `agents[1].trainable.rank`), the
 * value found and what is allowed; one ConfigError carries all problems of a file at once.
 */

/** One problem with one key. */
export interface ConfigIssue {
  readonly key: string;
  readonly value: unknown;
  readonly allowed: string;
}

function show(value: unknown): string {
  if (value === undefined) return "(missing)";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Formats one issue as `key = value is not allowed; expected ...`. */
export function formatIssue(issue: ConfigIssue): string {
  const key = issue.key === "" ? "(config)" : issue.key;
  return `${key} = ${show(issue.value)} is not allowed; expected ${issue.allowed}`;
}

/**
 * An invalid experiment config.
 *
 * @example
 * ```ts
 * import { ConfigError, parseConfig } from "./mod.ts";
 * declare const raw: unknown; // the parsed JSON of exp.json
 * try { parseConfig(raw, "exp.json"); } catch (e) {
 *   if (e instanceof ConfigError) for (const i of e.issues) console.error(i.key, i.allowed);
 * }
 * ```
 */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(
    readonly source: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(
      `invalid config ${source}:\n${issues.map((i) => `  ${formatIssue(i)}`).join("\n")}`,
    );
  }
}
