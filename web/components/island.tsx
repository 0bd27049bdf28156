/**
 * Islands: a component rendered on the server inside a marked element, with its props beside it
 * as JSON, then hydrated in the browser by the island's bundle (see islands/hydrate.ts).
 */
import type { ComponentType } from "preact";
import { toWire } from "./wire-json.ts";

/**
 * Renders `component` with `props` and leaves what the browser needs to hydrate it.
 *
 * @example
 * ```tsx
 * <Island name="runs-table" component={RunsTable} props={{ runs }} />
 * ```
 */
export function Island<P extends object>(
  { name, component: Component, props }: {
    name: string;
    component: ComponentType<P>;
    props: P;
  },
) {
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
