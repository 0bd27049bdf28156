/**
 * Browser side of islands: finds each element rendered by `Island` with this name and hydrates
 * the same component with the props the server left beside it.
 */
import { type ComponentType, h, hydrate } from "preact";
import { fromWire } from "../components/wire-json.ts";

/**
 * @example
 * ```ts
 * import { RunsTable } from "./runs-table.tsx";
 * hydrateIslands("runs-table", RunsTable); // in web/islands/runs-table-entry.ts
 * ```
 */
export function hydrateIslands<P extends object>(name: string, component: ComponentType<P>): void {
  for (const el of document.querySelectorAll<HTMLElement>(`[data-island="${name}"]`)) {
    const script = el.nextElementSibling;
    if (!(script instanceof HTMLScriptElement) || script.dataset.islandProps !== name) {
      throw new Error(`island ${name}: its props script is missing after the element`);
    }
    hydrate(h(component, fromWire<P>(script.textContent ?? "{}")), el);
  }
}
