/**
 * What a run id may be. A run id names a stream, and commands derive file names from it (the
 * default folder of `deno task export`), so it is kept to one harmless path segment: 1 to 128
 * characters of `A-Z a-z 0-9 . _ -`, not starting with `.` or `-`, with no `..` anywhere.
 *
 * @example
 * ```ts
 * import { checkRunId, runIdSlug } from "./run-id.ts";
 *
 * checkRunId("smoke-20261202T1630-ab12cd"); // returns it
 * checkRunId("a/../../elsewhere"); // throws RunIdError
 * runIdSlug("a/../../elsewhere"); // "a-elsewhere-3f2a9c1d": safe, and distinct per input
 * ```
 */
import { sha256Hex } from "./hash-chain.ts";

/** The longest run id. */
export const MAX_RUN_ID_LENGTH = 128;

/** The rule in words, for error messages and help texts. */
export const RUN_ID_RULE = `1 to ${MAX_RUN_ID_LENGTH} characters of A-Z a-z 0-9 . _ -, ` +
  `not starting with . or -, and no ".."`;

const PATTERN = new RegExp(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,${MAX_RUN_ID_LENGTH - 1}}$`);

/** A run id that breaks {@link RUN_ID_RULE}. */
export class RunIdError extends Error {
  override name = "RunIdError";
  constructor(readonly runId: string, readonly where: string) {
    super(
      `${where} ${JSON.stringify(runId)} is not a valid run id: a run id is ${RUN_ID_RULE} ` +
        `(e.g. smoke-1); choose another`,
    );
  }
}

/** Whether `id` keeps {@link RUN_ID_RULE}. */
export function isRunId(id: string): boolean {
  return PATTERN.test(id) && !id.includes("..");
}

/**
 * Returns `id` if it keeps {@link RUN_ID_RULE}, else throws RunIdError naming `where` it came
 * from (a flag such as `--run-id`, or `run id`).
 */
export function checkRunId(id: string, where = "run id"): string {
  if (!isRunId(id)) throw new RunIdError(id, where);
  return id;
}

/**
 * A name that keeps {@link RUN_ID_RULE}, made from any text (a config name, a stored run id
 * recorded by older code or written behind the store's back): an id is returned as it is; other
 * text has each run of other characters (and of dots) replaced by `-`, is cut to fit, and gets
 * 8 hex digits of its SHA-256, so two different texts never give the same name.
 */
export function runIdSlug(text: string): string {
  if (isRunId(text)) return text;
  const tag = sha256Hex(text).slice(0, 8);
  const stem = text.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "")
    .slice(0, MAX_RUN_ID_LENGTH - tag.length - 1).replace(/-+$/, "");
  return stem === "" ? tag : `${stem}-${tag}`;
}
