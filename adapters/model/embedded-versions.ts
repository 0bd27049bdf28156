/**
 * Which weights `"embedded"` meant for a recorded run. A run records the embedded model it
 * started from in `policy.initialized`'s `source` (`embedded sha256:<hex of model.safetensors>`),
 * and replay, `train --resume`, evaluation and export of the run load those weights: the
 * committed model's, or those of a directory in `ARCHIVED_EMBEDDED_MODEL_DIRS`. Whoever replaces
 * the committed model moves the one it replaces into such a directory (git stores the same bytes
 * once), so older runs keep working; a run whose weights are nowhere stops with a message naming
 * the hash and that fix. Runs recorded before sources named a hash wrote `source: "embedded"`;
 * every one of them used the first pretrained model, `UNVERSIONED_EMBEDDED_SHA256`.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { EMBEDDED_MODEL_DIR } from "./embedded-model.ts";

/**
 * Replaced embedded models, newest first. Replacing the committed model means moving it to the
 * next `embedded-vN/` and listing that here.
 */
export const ARCHIVED_EMBEDDED_MODEL_DIRS: readonly URL[] = Object.freeze([
  // The first pretrained model: arithmetic, refine and debate turns (README, "The embedded model").
  new URL("./embedded-v1/", import.meta.url),
]);

/** The weights a run whose source is the bare `"embedded"` was recorded with. */
export const UNVERSIONED_EMBEDDED_SHA256 =
  "63c884adacece9c4e168ee5bc4b4a32b85c28198ac2db65acb63c30c003b804f";

/** One committed embedded model: where it is and the source string a run records for it. */
export interface EmbeddedVersion {
  readonly dir: string;
  readonly sha256: string;
  /** What `policy.initialized` records (and a replay regenerates). */
  readonly source: string;
  readonly current: boolean;
}

/** A recorded run's embedded model is not among the committed ones. */
export class EmbeddedVersionError extends Error {
  override name = "EmbeddedVersionError";
}

const hashes = new Map<string, Promise<string>>();

/** sha256 of a checkpoint directory's model.safetensors (memoized per directory). */
export function weightsSha256(dir: string): Promise<string> {
  let hash = hashes.get(dir);
  if (hash === undefined) {
    hash = Deno.readFile(join(dir, "model.safetensors")).then((bytes) =>
      createHash("sha256").update(bytes).digest("hex")
    );
    hashes.set(dir, hash);
  }
  return hash;
}

/** The source string of embedded weights with this hash. */
function sourceOf(sha256: string): string {
  return `embedded sha256:${sha256}`;
}

/**
 * The committed embedded model a new run starts from.
 *
 * @example
 * ```ts
 * import { currentEmbeddedVersion } from "./embedded-versions.ts";
 *
 * (await currentEmbeddedVersion()).source; // "embedded sha256:..."
 * ```
 */
export async function currentEmbeddedVersion(): Promise<EmbeddedVersion> {
  const dir = EMBEDDED_MODEL_DIR.pathname;
  const sha256 = await weightsSha256(dir);
  return Object.freeze({ dir, sha256, source: sourceOf(sha256), current: true });
}

/**
 * The committed embedded model a run recorded as `source` (its `policy.initialized` source); the
 * bare `"embedded"` of older runs is the first pretrained model. Throws an EmbeddedVersionError
 * naming the hashes and the fix when no committed directory holds those weights.
 *
 * @example
 * ```ts
 * import { recordedEmbeddedVersion } from "./embedded-versions.ts";
 *
 * await recordedEmbeddedVersion("embedded", "run-1"); // embedded-v1/, source "embedded"
 * ```
 */
export async function recordedEmbeddedVersion(
  source: string,
  runId: string,
  archived: readonly string[] = ARCHIVED_EMBEDDED_MODEL_DIRS.map((u) => u.pathname),
): Promise<EmbeddedVersion> {
  const unversioned = source === "embedded";
  const match = /^embedded sha256:([0-9a-f]{64})$/.exec(source);
  if (!unversioned && match === null) {
    throw new EmbeddedVersionError(
      `run ${runId} recorded its embedded model as "${source}", which is neither "embedded" ` +
        `nor "embedded sha256:<hex>"`,
    );
  }
  const wanted = unversioned ? UNVERSIONED_EMBEDDED_SHA256 : match![1];
  const current = await currentEmbeddedVersion();
  const dirs = [current.dir, ...archived];
  const found: string[] = [];
  for (const dir of dirs) {
    let sha256: string;
    try {
      sha256 = await weightsSha256(dir);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    if (sha256 === wanted) {
      return Object.freeze({ dir, sha256, source, current: dir === current.dir });
    }
    found.push(`${sha256.slice(0, 12)} in ${dir}`);
  }
  throw new EmbeddedVersionError(
    `run ${runId} was trained on the embedded model with weights sha256 ${wanted.slice(0, 12)}, ` +
      `and no committed embedded model has them (${found.join("; ")}); put that checkpoint ` +
      `back in a directory listed in ARCHIVED_EMBEDDED_MODEL_DIRS ` +
      `(adapters/model/embedded-versions.ts), or use the code version the run recorded`,
  );
}
