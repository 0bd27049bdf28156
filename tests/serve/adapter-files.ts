/** PEFT adapter folders of the embedded model for the serve tests. */
import { saveLoraAdapter } from "../../adapters/hf/mod.ts";
import {
  embeddedModelConfig,
  loraAdapter,
  loraSpec,
  loraTargets,
} from "../../adapters/model/mod.ts";

/** Writes a PEFT adapter of `config` with small nonzero values (a valid adapter of that base). */
export async function writeAdapter(
  dir: string,
  options: { rank: number; targets: string[]; size?: "base" | "small"; fill?: number },
) {
  const config = embeddedModelConfig(options.size ?? "base");
  const spec = loraSpec({
    rank: options.rank,
    alpha: 2 * options.rank,
    targetModules: options.targets,
  });
  const adapter = loraAdapter(config, spec, (t) => ({
    a: new Float32Array(options.rank * t.inFeatures).fill(options.fill ?? 0.01),
    b: new Float32Array(t.outFeatures * options.rank).fill(options.fill ?? 0.01),
  }));
  await saveLoraAdapter(dir, adapter);
  return loraTargets(config, spec).length;
}
