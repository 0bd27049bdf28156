/** The stable identity of a normalized config, for the run-started event. */
import { hashConfig } from "../../events/mod.ts";
import type { NormalizedConfig } from "./normalize.ts";

/**
 * The `configHash` that `run.started` checks: SHA-256 (hex) of the config's canonical JSON
 * (sorted keys, the event log's encoding), so two configs that differ only in key order or in
 * spelling out defaults hash the same.
 *
 * @example
 * ```ts
 * import { configHash, parseConfig, presetInput } from "./mod.ts";
 * configHash(parseConfig(presetInput("smoke"))); // 64 hex characters, the same on every machine
 * ```
 */
export function configHash(config: NormalizedConfig): string {
  return hashConfig(config as unknown as Readonly<Record<string, unknown>>);
}
