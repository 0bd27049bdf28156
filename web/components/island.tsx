/**
 * Islands: a component rendered on the server inside a marked element, with its props beside it
 * as JSON, then hydrated in the browser by the island's bundle (see islands/hydrate.ts). Where
 * the bundles did not build, the page says so in place of the script (IslandsUnavailable).
 */
import { type ComponentType, createContext } from "preact";
import { useContext } from "preact/hooks";
import { toWire } from "./wire-json.ts";

/**
 * Why the islands' scripts are unavailable (the bundler's message), or null when they are; the
 * server provides it around each page.
 */
export const IslandsUnavailable = createContext<string | null>(null);

/**
 * Renders `component` with `props` and leaves what the browser needs to hydrate it.
 *
 * @example
 * ```tsx
 * import type { RunRow } from "../data/runs-list.ts";
 * import { RunsTable } from "../islands/runs-table.tsx";
 * declare const runs: readonly RunRow[];
 * declare const position: number; // the log position the rows were read at
 * <Island name="runs-table" component={RunsTable} props={{ position, runs }} />
 * ```
 */
export function Island<P extends object>(
  { name, component: Component, props }: {
    name: string;
    component: ComponentType<P>;
    props: P;
  },
) {
  const unavailable = useContext(IslandsUnavailable);
  if (unavailable !== null) {
    return (
      <>
        <div data-island={name}>
          <Component {...props} />
        </div>
        <p class="notice" data-island-unavailable={name}>
          The interactive part of this view is unavailable (this is its server-rendered state;
          reload to try again): <code>{unavailable}</code>
        </p>
      </>
    );
  }
  // "<" escaped so that no string in the props can close the script element.
  const json = toWire(props).replaceAll("<", "\\u003c");
  return (
    <>
      <div data-island={name}>
        <Component {...props} />
      </div>
      <script
        type="application/json"
        data-island-props={name}
        dangerouslySetInnerHTML={{ __html: json }}
      />
      <script type="module" src={`/islands/${name}.js`} />
    </>
  );
}
