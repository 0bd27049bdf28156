import { useState } from "preact/hooks";
import type { RunRow } from "../data/runs-list.ts";
import { formatNumber } from "../components/format.ts";

type SortKey = keyof RunRow;

const COLUMNS: readonly { key: SortKey; title: string }[] = [
  { key: "runId", title: "run" },
  { key: "status", title: "status" },
  { key: "workflow", title: "workflow" },
  { key: "estimator", title: "estimator" },
  { key: "agents", title: "agents" },
  { key: "models", title: "models" },
  { key: "seed", title: "seed" },
  { key: "steps", title: "steps" },
  { key: "avgAtK", title: "avg@k" },
  { key: "passAtK", title: "pass@k" },
  { key: "startedAt", title: "started (UTC)" },
  { key: "endedAt", title: "finished (UTC)" },
];

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return typeof a === "number" && typeof b === "number"
    ? a - b
    : String(a).localeCompare(String(b));
}

/**
 * The Runs page table: filter by any text, sort by any column, tick runs and compare them grouped
 * by a config key.
 *
 * @example
 * ```tsx
 * <Island name="runs-table" component={RunsTable} props={{ runs }} />
 * ```
 */
export function RunsTable({ runs }: { runs: readonly RunRow[] }) {
  const [filter, setFilter] = useState("");
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean } | null>(null);
  const [selected, setSelected] = useState<readonly string[]>([]);
  const [groupBy, setGroupBy] = useState("estimator");
  const needle = filter.trim().toLowerCase();
  const shown = runs.filter((r) =>
    needle === "" ||
    Object.values(r).some((v) => v !== null && String(v).toLowerCase().includes(needle))
  );
  if (sort) {
    shown.sort((a, b) => (sort.desc ? -1 : 1) * compareValues(a[sort.key], b[sort.key]));
  }
  const toggle = (id: string) =>
    setSelected(selected.includes(id) ? selected.filter((s) => s !== id) : [...selected, id]);
  const compareHref = `/compare?runs=${selected.map(encodeURIComponent).join(",")}&by=${
    encodeURIComponent(groupBy)
  }`;
  return (
    <div class="runs-table">
      <div class="toolbar">
        <input
          type="search"
          placeholder="filter runs (any column)"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
        <label>
          group by{" "}
          <input
            value={groupBy}
            size={14}
            onInput={(e) => setGroupBy((e.target as HTMLInputElement).value)}
          />
        </label>
        <a
          class={`button${selected.length < 2 ? " disabled" : ""}`}
          href={selected.length < 2 ? undefined : compareHref}
        >
          compare {selected.length} selected
        </a>
        <span class="muted">{shown.length} of {runs.length} runs</span>
      </div>
      <table>
        <thead>
          <tr>
            <th />
            {COLUMNS.map((c) => (
              <th
                key={c.key}
                class="sortable"
                onClick={() =>
                  setSort({ key: c.key, desc: sort?.key === c.key ? !sort.desc : false })}
              >
                {c.title}
                {sort?.key === c.key ? (sort.desc ? " ▼" : " ▲") : ""}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.runId}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`select ${r.runId}`}
                  checked={selected.includes(r.runId)}
                  onChange={() => toggle(r.runId)}
                />
              </td>
              <td>
                <a href={`/runs/${encodeURIComponent(r.runId)}`}>{r.runId}</a>
              </td>
              <td>
                <span class={`status ${r.status}`}>{r.status}</span>
              </td>
              <td>{r.workflow ?? "—"}</td>
              <td>{r.estimator ?? "—"}</td>
              <td>{r.agents ?? "—"}</td>
              <td>{r.models ?? "—"}</td>
              <td class="num">{r.seed ?? "—"}</td>
              <td class="num">{r.steps}</td>
              <td class="num" title={r.k ? `avg@${r.k}` : ""}>{formatNumber(r.avgAtK)}</td>
              <td class="num" title={r.k ? `pass@${r.k}` : ""}>{formatNumber(r.passAtK)}</td>
              <td>{r.startedAt ?? "—"}</td>
              <td>{r.endedAt ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
