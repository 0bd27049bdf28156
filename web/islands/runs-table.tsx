import { useEffect, useState } from "preact/hooks";
import type { RunRow } from "../data/runs-list.ts";
import { formatNumber } from "../components/format.ts";
import { formatDuration } from "../components/format-duration.ts";
import { fromWire } from "../components/wire-json.ts";

type SortKey = keyof RunRow;

const COLUMNS: readonly { key: SortKey; title: string }[] = [
  { key: "runId", title: "run" },
  { key: "status", title: "status" },
  { key: "tags", title: "tags" },
  { key: "workflow", title: "workflow" },
  { key: "estimator", title: "estimator" },
  { key: "agents", title: "agents" },
  { key: "models", title: "models" },
  { key: "seed", title: "seed" },
  { key: "stepsDone", title: "steps done" },
  { key: "avgAtK", title: "avg@k" },
  { key: "passAtK", title: "pass@k" },
  { key: "startedAt", title: "started (UTC)" },
  { key: "endedAt", title: "finished (UTC)" },
  { key: "durationS", title: "duration" },
];

/** What `GET /api/runs` answers: every run, as of a log position. */
export interface RunsSnapshot {
  readonly position: number;
  readonly runs: readonly RunRow[];
}

/** How often the table asks for the runs again (ms): new runs and status changes show up. */
export const RUNS_POLL_MS = 2_000;

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return typeof a === "number" && typeof b === "number"
    ? a - b
    : String(a).localeCompare(String(b));
}

/**
 * The runs as the server last sent them, asked again every `pollMs`: `live` is false while the
 * dashboard cannot be reached (the table keeps its last runs and keeps asking).
 */
function useLiveRuns(initial: RunsSnapshot, pollMs: number) {
  const [snapshot, setSnapshot] = useState(initial);
  const [live, setLive] = useState(true);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const res = await fetch("/api/runs", { headers: { accept: "application/json" } });
        if (!res.ok) throw new Error(`GET /api/runs answered ${res.status}`);
        const next = fromWire<RunsSnapshot>(await res.text());
        if (!stopped) {
          setSnapshot(next);
          setLive(true);
        }
      } catch {
        if (!stopped) setLive(false);
      }
      if (!stopped) timer = setTimeout(poll, pollMs);
    };
    timer = setTimeout(poll, pollMs);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [pollMs]);
  return { ...snapshot, live };
}

/**
 * The Runs page table: one row per run, kept up to date while the page is open. Filter by any
 * text or by tag, show or leave out hidden runs, sort by any column, tick runs and compare them
 * grouped by a config key.
 *
 * @example
 * ```tsx
 * import { Island } from "../components/island.tsx";
 * import type { RunRow } from "../data/runs-list.ts";
 * declare const runs: readonly RunRow[];
 * declare const position: number; // the log position the rows were read at
 * <Island name="runs-table" component={RunsTable} props={{ position, runs }} />
 * ```
 */
export function RunsTable(
  props: { position: number; runs: readonly RunRow[]; pollMs?: number },
) {
  const { runs, live } = useLiveRuns(props, props.pollMs ?? RUNS_POLL_MS);
  const [filter, setFilter] = useState("");
  const [tag, setTag] = useState("");
  const [showHidden, setShowHidden] = useState(false);
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean } | null>(null);
  const [selected, setSelected] = useState<readonly string[]>([]);
  const [groupBy, setGroupBy] = useState("estimator");
  const needle = filter.trim().toLowerCase();
  const hiddenCount = runs.filter((r) => r.hidden).length;
  const allTags = [...new Set(runs.flatMap((r) => r.tags))].sort();
  const shown = runs.filter((r) =>
    (showHidden || !r.hidden) && (tag === "" || r.tags.includes(tag)) &&
    (needle === "" ||
      Object.values(r).some((v) => v !== null && String(v).toLowerCase().includes(needle)))
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
          tag{" "}
          <select
            name="tag"
            value={tag}
            onChange={(e) => setTag((e.target as HTMLSelectElement).value)}
          >
            <option value="">any</option>
            {allTags.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </label>
        <label>
          <input
            type="checkbox"
            name="show-hidden"
            checked={showHidden}
            onChange={() => setShowHidden(!showHidden)}
          />{" "}
          show hidden ({hiddenCount})
        </label>
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
        <span
          class={`live-state ${live ? "live" : "offline"}`}
          title="the table asks the dashboard for the runs every few seconds"
        >
          {live ? "● live" : "○ offline, retrying"}
        </span>
      </div>
      {runs.length === 0
        ? (
          <p class="notice">
            The store has no runs yet. Start one with{" "}
            <code>deno task train</code>; it appears here as soon as it starts.
          </p>
        )
        : null}
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
            <tr key={r.runId} data-run={r.runId} class={r.hidden ? "hidden-run" : undefined}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`select ${r.runId}`}
                  checked={selected.includes(r.runId)}
                  onChange={() =>
                    toggle(r.runId)}
                />
              </td>
              <td>
                <a href={`/runs/${encodeURIComponent(r.runId)}`}>{r.runId}</a>
                {r.hidden ? <span class="muted">(hidden)</span> : null}
              </td>
              <td>
                <span class={`status ${r.status}`}>{r.status}</span>
                {r.attempts > 1
                  ? (
                    <span class="muted" title="attempts: the first and each resume">
                      ×{r.attempts}
                    </span>
                  )
                  : null}
              </td>
              <td>
                {r.tags.map((t) => (
                  <button
                    type="button"
                    key={t}
                    class={`tag${t === tag ? " active" : ""}`}
                    title={`show only runs tagged ${t}`}
                    onClick={() => setTag(t === tag ? "" : t)}
                  >
                    {t}
                  </button>
                ))}
              </td>
              <td>{r.workflow ?? "—"}</td>
              <td>{r.estimator ?? "—"}</td>
              <td>{r.agents ?? "—"}</td>
              <td>{r.models ?? "—"}</td>
              <td class="num">{r.seed ?? "—"}</td>
              <td class="num" data-steps-done={r.stepsDone}>
                {r.steps === null ? r.stepsDone : `${r.stepsDone} of ${r.steps}`}
              </td>
              <td class="num" title={r.k ? `avg@${r.k}` : ""}>{formatNumber(r.avgAtK)}</td>
              <td class="num" title={r.k ? `pass@${r.k}` : ""}>{formatNumber(r.passAtK)}</td>
              <td>{r.startedAt ?? "—"}</td>
              <td>{r.endedAt ?? "—"}</td>
              <td class="num">{formatDuration(r.durationS)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
