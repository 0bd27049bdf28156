import type { EventStore, NewEvent } from "../../events/mod.ts";

/** The widest stretch of the log read for one page of turns (a step's events sit together). */
export const MAX_TEXT_SPAN = 50_000;

/**
 * The generated text of the turns at these global log positions, read from the store itself:
 * the projections keep token counts, not text. Turns of one step lie close together in the
 * log, so this reads one short stretch; a wider stretch than MAX_TEXT_SPAN is not read and the
 * page shows no text.
 *
 * @example
 * ```ts
 * const texts = await turnTexts(store, [120, 121]); // Map { 120 => "solver says 42", ... }
 * ```
 */
export async function turnTexts(
  store: EventStore<NewEvent>,
  positions: readonly number[],
): Promise<ReadonlyMap<number, string>> {
  const out = new Map<number, string>();
  if (positions.length === 0) return out;
  const wanted = new Set(positions);
  const [first, last] = [Math.min(...positions), Math.max(...positions)];
  if (last - first > MAX_TEXT_SPAN) return out;
  for await (const e of store.readAll({ from: first })) {
    if (e.position > last) break;
    if (e.type === "turn.generated" && wanted.has(e.position)) out.set(e.position, e.data.text);
  }
  return out;
}
