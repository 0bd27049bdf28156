import { Island } from "../components/island.tsx";
import { SqlConsole, type SqlConsoleProps } from "../islands/sql-console.tsx";

/** Queries offered on the SQL page, over the tables of analysis/TABLES.md. */
export const EXAMPLE_QUERIES: SqlConsoleProps["examples"] = [
  {
    title: "runs: status and estimator",
    sql: "SELECT run_id, status, estimator, workflow, seed, last_step FROM runs ORDER BY run_id",
  },
  {
    title: "reward per step (rollout)",
    sql:
      "SELECT step, avg(total) AS reward FROM rewards\nWHERE phase = 'rollout' AND agent IS NULL\nGROUP BY step ORDER BY step",
  },
  {
    title: "gradient norm per step, one line per worker group",
    sql:
      "SELECT step, wg, avg(grad_norm) AS grad_norm FROM grad_steps\nWHERE run_id = (SELECT run_id FROM runs ORDER BY started_position DESC LIMIT 1)\nGROUP BY step, wg ORDER BY step, wg",
  },
  {
    title: "gradient norm per worker group",
    sql:
      "SELECT wg, median(grad_norm) AS median, max(grad_norm) AS max,\n  count(*) FILTER (skipped_non_finite) AS skipped\nFROM grad_steps GROUP BY wg ORDER BY wg",
  },
  {
    title: "Lemma 4.2 multiplier per agent",
    sql:
      "SELECT step, agent, avg(multiplier) AS multiplier FROM lemma_multipliers\nGROUP BY step, agent ORDER BY step, agent",
  },
  {
    title: "turns per agent",
    sql:
      "SELECT agent, count(*) AS turns, avg(response_tokens) AS tokens FROM turns GROUP BY agent ORDER BY agent",
  },
];

/**
 * The SQL console.
 *
 * @example
 * ```tsx
 * import { EXPORTED } from "../../analysis/mod.ts";
 * <SqlPage tables={EXPORTED} />
 * ```
 */
export function SqlPage({ tables }: { tables: readonly string[] }) {
  return (
    <>
      <h1>SQL</h1>
      <p class="muted">
        DuckDB SQL runs in your browser (DuckDB-Wasm) over exports of the analysis tables (each also
        downloadable as /data/TABLE.parquet) (analysis/TABLES.md). "run on server" queries the
        server's projection instead; only read-only statements are accepted there. The quick chart
        draws a numeric first column as x and one line per value of the text columns (GROUP BY step,
        agent draws a line per agent).
      </p>
      <Island
        name="sql-console"
        component={SqlConsole}
        props={{ tables, examples: EXAMPLE_QUERIES }}
      />
    </>
  );
}
