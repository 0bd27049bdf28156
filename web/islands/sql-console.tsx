import { useMemo, useRef, useState } from "preact/hooks";
import { ChartGrid } from "../components/chart-grid.tsx";
import { formatCell } from "../components/format.ts";
import { quickChart } from "../components/quick-chart.ts";
import { fromWire } from "../components/wire-json.ts";

/** Props of the SQL console. */
export interface SqlConsoleProps {
  /** DuckDB-Wasm runner, given by the browser entry only (the server never loads DuckDB-Wasm) */
  readonly runInBrowser?: (
    sql: string,
    tables: readonly string[],
  ) => Promise<{ columns: string[]; rows: unknown[][] }>;
  /** tables exported under /data/TABLE.csv (loaded into DuckDB-Wasm) and /data/TABLE.parquet */
  readonly tables: readonly string[];
  readonly examples: readonly { readonly title: string; readonly sql: string }[];
}

/** A result as the console shows it. */
interface Result {
  readonly engine: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  /** the server sent its first rows only */
  readonly truncated?: boolean;
  readonly ms: number;
}

const SHOWN_ROWS = 200;

/**
 * DuckDB SQL in the browser (duckdb-wasm over the server's table exports); "run on server"
 * uses the server's read-only projection instead.
 *
 * @example
 * ```tsx
 * import { Island } from "../components/island.tsx";
 * declare const { tables, examples }: SqlConsoleProps;
 * <Island name="sql-console" component={SqlConsole} props={{ tables, examples }} />
 * ```
 */
export function SqlConsole({ tables, examples, runInBrowser }: SqlConsoleProps) {
  const [text, setText] = useState(examples[0]?.sql ?? "");
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState("");
  // Queries answered so far (result or error): a script waits on it for its own query's answer.
  const [answered, setAnswered] = useState(0);
  const version = useRef(0);
  const run = async (where: "browser" | "server") => {
    setBusy(where === "browser" ? "loading DuckDB-Wasm and tables…" : "querying server…");
    setError(null);
    const t0 = performance.now();
    try {
      let r: Omit<Result, "ms">;
      if (where === "browser") {
        if (!runInBrowser) throw new Error("DuckDB-Wasm has not loaded in this page");
        r = { engine: "duckdb-wasm (browser)", ...await runInBrowser(text, tables) };
      } else {
        // JSON, as the server takes no other POST body (a cross-site page cannot send it).
        const res = await fetch("/api/sql", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ sql: text }),
        });
        const body = fromWire<
          { columns: string[]; rows: unknown[][]; truncated?: boolean; error?: string }
        >(await res.text());
        if (!res.ok) throw new Error(body.error ?? res.statusText);
        r = { engine: "server projection (read-only)", ...body };
      }
      version.current++;
      setResult({ ...r, ms: performance.now() - t0 });
    } catch (err) {
      setResult(null);
      setError((err as Error).message);
    } finally {
      setBusy("");
      setAnswered((n) => n + 1);
    }
  };
  // Once per result: a new chart object would rebuild the plot on every render.
  const quick = useMemo(() => (result ? quickChart(result) : null), [result]);
  return (
    <div class="sql-console" data-answered={answered}>
      <div class="toolbar">
        <select
          aria-label="example queries"
          onChange={(e) => setText((e.target as HTMLSelectElement).value)}
        >
          {examples.map((ex) => <option key={ex.title} value={ex.sql}>{ex.title}</option>)}
        </select>
        <button type="button" id="run-browser" disabled={!!busy} onClick={() => run("browser")}>
          run in browser
        </button>
        <button type="button" id="run-server" disabled={!!busy} onClick={() => run("server")}>
          run on server
        </button>
        <span class="muted">{busy}</span>
      </div>
      <textarea
        spellcheck={false}
        rows={6}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      <p class="muted">tables: {tables.join(", ")}</p>
      {error && <pre class="error">{error}</pre>}
      {result && (
        <div class="result" data-rows={result.rows.length}>
          <p class="muted">
            {result.rows.length} rows{result.truncated ? " (the first ones only)" : ""} ·{" "}
            {result.engine} · {Math.round(result.ms)} ms
          </p>
          {quick?.chart && (
            <ChartGrid
              charts={[{ name: "sql", data: quick.chart }]}
              version={version.current}
              height={180}
            />
          )}
          {quick?.note && <p class="muted quick-note">{quick.note}</p>}
          <div class="scroll">
            <table>
              <thead>
                <tr>{result.columns.map((c) => <th key={c}>{c}</th>)}</tr>
              </thead>
              <tbody>
                {result.rows.slice(0, SHOWN_ROWS).map((row, i) => (
                  <tr key={i}>{row.map((v, j) => <td key={j}>{formatCell(v)}</td>)}</tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
    </div>
  );
}
