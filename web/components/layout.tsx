import type { ComponentChildren } from "preact";
import { PAGE_CSS } from "./page-css.ts";

/**
 * The page shell: title, navigation, styles.
 *
 * @example
 * ```tsx
 * import type { RunRow } from "../data/runs-list.ts";
 * import { RunsPage } from "../pages/runs-page.tsx";
 * declare const runs: readonly RunRow[];
 * declare const position: number; // the log position the rows were read at
 * <Layout title="Runs" active="runs"><RunsPage position={position} runs={runs} /></Layout>
 * ```
 */
export function Layout(
  { title, active, children }: { title: string; active: string; children: ComponentChildren },
) {
  const nav = [["runs", "/", "Runs"], ["compare", "/compare", "Compare"], ["sql", "/sql", "SQL"]];
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · polyrl`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/static/uplot.css" />
        <style dangerouslySetInnerHTML={{ __html: PAGE_CSS }} />
      </head>
      <body>
        <header>
          <strong>polyrl</strong>
          <nav>
            {nav.map(([key, href, label]) => (
              <a key={key} href={href} class={key === active ? "active" : undefined}>{label}</a>
            ))}
          </nav>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
