/**
 * Which runs a report compares: run ids, a SQL predicate over the `runs` view and the run's
 * config, a status, a kind (training or evaluation) and a name pattern. The predicate is user SQL:
 * it runs under the rules of `deno task sql` (one read-only SELECT, see read-only-statement.ts),
 * and DuckDB's parser must read it as the WHERE clause of the selection and nothing more.
 */
import type { DuckDBConnection } from "@duckdb/node-api";
import { requireReadOnlyStatement } from "../sql/read-only-statement.ts";
import { runReadOnlyQuery } from "../sql/run-query.ts";
import { MalformedSqlError, WriteRefusedError } from "../sql/sql-errors.ts";
import { sqlString } from "../sql/sql-string.ts";

/** Run statuses the runs view reports. */
export const RUN_STATUSES = Object.freeze(["completed", "failed", "running", "interrupted"]);

/** Training runs (`deno task train`) or evaluation runs (`deno task eval`). */
export const RUN_KINDS = Object.freeze(["training", "eval"]);

/** What a report selects; absent fields do not filter. */
export interface RunSelection {
  /** run ids, resolved (`latest` already replaced); the other filters narrow them further */
  readonly runs?: readonly string[];
  /** a SQL boolean expression over the candidates' columns (see SELECTION_COLUMNS) */
  readonly where?: string;
  readonly status?: readonly string[];
  readonly kind?: string;
  /** a glob (`*`, `?`, `[...]`) on the whole name or id, else a case-insensitive substring */
  readonly name?: string;
  /** leave out runs hidden with `deno task runs hide` */
  readonly visibleOnly?: boolean;
}

/** The selection when no run is named: completed training runs that are not hidden. */
export const DEFAULT_SELECTION: RunSelection = Object.freeze({
  status: ["completed"],
  kind: "training",
  visibleOnly: true,
});

/** Filters as typed on the command line or in the Compare page's URL, before checking. */
export interface SelectionFilters {
  readonly where?: string;
  /** comma-separated statuses, or `all` */
  readonly status?: string;
  /** `training`, `eval` or `all` */
  readonly kind?: string;
  readonly name?: string;
  /** include hidden runs (they are left out by default when no run is named) */
  readonly hidden?: boolean;
}

function checkedStatus(text: string, flag: string): readonly string[] | undefined {
  if (text.trim() === "all") return undefined;
  const statuses = text.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = statuses.find((s) => !RUN_STATUSES.includes(s));
  if (bad !== undefined || statuses.length === 0) {
    throw new RunSelectionError(
      `${flag} ${JSON.stringify(text)}`,
      `expected all or a comma-separated list of ${RUN_STATUSES.join(", ")}`,
    );
  }
  return statuses;
}

/**
 * A selection from typed filters. With run ids named, only the filters given apply; without,
 * the status and kind default to DEFAULT_SELECTION's and hidden runs are left out unless
 * `hidden` is set. `prefix` names the filters in errors
 * (`--` for flags, "" for URL parameters). Throws RunSelectionError for a bad value.
 *
 * @example
 * ```ts
 * import { parseSelection } from "./run-selection.ts";
 *
 * parseSelection({ status: "completed,failed" }, []); // { status: [...], kind: "training" }
 * parseSelection({}, ["r1"]); // { runs: ["r1"] }
 * ```
 */
export function parseSelection(
  filters: SelectionFilters,
  runs: readonly string[],
  prefix = "--",
): RunSelection {
  const defaults = runs.length === 0 ? DEFAULT_SELECTION : {};
  const kind = filters.kind?.trim();
  if (kind !== undefined && kind !== "all" && !RUN_KINDS.includes(kind)) {
    throw new RunSelectionError(
      `${prefix}kind ${JSON.stringify(kind)}`,
      `expected ${RUN_KINDS.join(", ")} or all`,
    );
  }
  const name = filters.name?.trim();
  if (name?.includes("\0")) {
    throw new RunSelectionError(`${prefix}name`, "the pattern contains a NUL character");
  }
  return Object.freeze({
    ...(runs.length ? { runs } : {}),
    ...(filters.where?.trim() ? { where: filters.where } : {}),
    status: filters.status === undefined
      ? defaults.status
      : checkedStatus(filters.status, `${prefix}status`),
    kind: kind === undefined ? defaults.kind : kind === "all" ? undefined : kind,
    ...(name ? { name } : {}),
    ...(defaults.visibleOnly && !filters.hidden ? { visibleOnly: true } : {}),
  });
}

/** The columns a `--where` predicate sees besides those of the `runs` view. */
export const SELECTION_COLUMNS =
  "every column of the runs view (run_id, estimator, workflow, seed, models, status, last_step, " +
  "started_at, ...), plus name (config name), kind ('training' or 'eval') and config (a MAP " +
  "of every run_config key to its text value: config['steps'])";

/** A selection that cannot run: a bad filter value or a predicate DuckDB refuses. */
export class RunSelectionError extends Error {
  override name = "RunSelectionError";
  constructor(readonly filter: string, readonly reason: string) {
    super(`${filter}: ${reason}`);
  }
}

/** No run passes the selection; the message says what the store holds and how to widen it. */
export class NoRunsSelectedError extends Error {
  override name = "NoRunsSelectedError";
  constructor(readonly description: string, readonly held: readonly string[]) {
    super(
      held.length === 0
        ? "no runs to report on: the store has no runs yet"
        : `no run matches ${description}; the store holds ${held.join(", ")}. Widen the ` +
          `selection (status all, kind all, another where predicate) or name runs`,
    );
  }
}

// The candidates' extra columns are computed here; COLUMNS drops any runs column of the same
// name, so the runs view may gain such a column without making the predicate ambiguous.
const CANDIDATES = `SELECT COLUMNS(c -> c NOT IN ('name', 'kind', 'config')),
    (SELECT c.value FROM run_config c WHERE c.run_id = r.run_id AND c.key = 'name') AS name,
    CASE WHEN EXISTS (SELECT 1 FROM run_config c WHERE c.run_id = r.run_id
                      AND c.key LIKE 'eval.%')
         THEN 'eval' ELSE 'training' END AS kind,
    (SELECT map(list(c.key), list(c.value)) FROM run_config c WHERE c.run_id = r.run_id)
      AS config
  FROM runs r`;

function fixedFilters(selection: RunSelection): string[] {
  const list = (xs: readonly string[]) => `(${xs.map(sqlString).join(", ")})`;
  const out: string[] = [];
  if (selection.runs) out.push(`run_id IN ${list(selection.runs.length ? selection.runs : [""])}`);
  if (selection.status) out.push(`status IN ${list(selection.status)}`);
  if (selection.kind) out.push(`kind = ${sqlString(selection.kind)}`);
  if (selection.visibleOnly) out.push("NOT hidden");
  if (selection.name !== undefined) {
    const p = sqlString(selection.name);
    out.push(
      /[*?[]/.test(selection.name)
        ? `(coalesce(name, '') GLOB ${p} OR run_id GLOB ${p})`
        : `(contains(lower(coalesce(name, '')), lower(${p})) OR contains(lower(run_id), lower(${p})))`,
    );
  }
  return out;
}

// The predicate sits on lines of its own so a `--` comment in it ends before the closing
// parenthesis; whatever it closes early is caught by the parse-tree comparison below.
function statement(selection: RunSelection, predicate: string): string {
  return `WITH candidates AS (${CANDIDATES})\nSELECT run_id FROM candidates\nWHERE ${
    [...fixedFilters(selection), `(\n${predicate}\n)`].join(" AND ")
  }\nORDER BY started_position`;
}

/** A WHERE clause as json_serialize_sql writes it: a conjunction has its children. */
interface Conjunction {
  readonly type: string;
  readonly children: readonly unknown[];
}

async function parseTree(conn: DuckDBConnection, sql: string): Promise<Record<string, unknown>> {
  const reader = await conn.runAndReadAll(`SELECT json_serialize_sql(${sqlString(sql)})::VARCHAR`);
  const parsed = JSON.parse(String(reader.getRowsJS()[0][0]));
  return parsed.statements[0].node;
}

/**
 * The one SELECT of a selection, checked: the predicate must be one boolean expression that
 * DuckDB's parser reads as (part of) the WHERE clause, so `1=1) UNION SELECT ...`, a `LIMIT`, a
 * second statement or a write is refused before anything runs. Throws RunSelectionError.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { selectionStatement } from "./run-selection.ts";
 * declare const conn: DuckDBConnection;
 *
 * const sql = await selectionStatement(conn, { where: "seed < 3", status: ["completed"] });
 * ```
 */
export async function selectionStatement(
  conn: DuckDBConnection,
  selection: RunSelection,
): Promise<string> {
  const predicate = selection.where?.trim() || "true";
  const sql = statement(selection, predicate);
  try {
    await requireReadOnlyStatement(conn, sql);
  } catch (err) {
    if (err instanceof MalformedSqlError || err instanceof WriteRefusedError) {
      throw new RunSelectionError(
        `where ${JSON.stringify(predicate)}`,
        `${err instanceof MalformedSqlError ? err.reason : err.message}; it must be one SQL ` +
          `boolean expression over ${SELECTION_COLUMNS}, e.g. "estimator = 'grpo' AND seed < 3"`,
      );
    }
    throw err;
  }
  // Everything but the WHERE clause must parse as it does with a predicate of `true`, and in the
  // WHERE clause the fixed filters must stay conjuncts (`false) OR (true` would bypass them).
  const own = await parseTree(conn, sql);
  const reference = await parseTree(conn, statement(selection, "true"));
  const { where_clause: ownWhere, ...ownRest } = own as { where_clause: Conjunction };
  const { where_clause: refWhere, ...refRest } = reference as { where_clause: Conjunction };
  const fixed = refWhere.type === "CONJUNCTION_AND" ? refWhere.children.slice(0, -1) : [];
  // Text offsets after the predicate move with its length; the structure must not.
  const shape = (tree: unknown) =>
    JSON.stringify(tree, (key, value) => key === "query_location" ? undefined : value);
  if (
    shape(ownRest) !== shape(refRest) ||
    (fixed.length > 0 && (ownWhere.type !== "CONJUNCTION_AND" ||
      shape(ownWhere.children.slice(0, fixed.length)) !== shape(fixed)))
  ) {
    throw new RunSelectionError(
      `where ${JSON.stringify(predicate)}`,
      "it reaches outside its parentheses (a closing parenthesis followed by OR, UNION, " +
        "GROUP BY, ORDER BY, LIMIT or the like); give one boolean expression, with subqueries " +
        "in parentheses",
    );
  }
  return sql;
}

/**
 * The run ids a selection's result names: in the order the runs were named, else in start order.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import { runReadOnlyQuery } from "../sql/run-query.ts";
 * import { type RunSelection, selectedRunIds } from "./run-selection.ts";
 * declare const conn: DuckDBConnection;
 * declare const sql: string;
 * declare const selection: RunSelection;
 *
 * selectedRunIds(await runReadOnlyQuery(conn, sql), selection); // ["r1", "r2"]
 * ```
 */
export function selectedRunIds(
  table: { readonly rows: readonly (readonly unknown[])[] },
  selection: RunSelection,
): string[] {
  const ids = [...new Set(table.rows.map((r) => String(r[0])))];
  if (!selection.runs) return ids;
  const kept = new Set(ids);
  return selection.runs.filter((id) => kept.has(id));
}

/**
 * Runs a selection on `conn`: its checked statement, then its rows. A predicate that fails to
 * bind or evaluate (an unknown column, a type error) is a RunSelectionError naming the columns;
 * no run selected is a NoRunsSelectedError saying what the store holds.
 *
 * @example
 * ```ts
 * import type { Analysis } from "./open-analysis.ts";
 * import { DEFAULT_SELECTION, selectRuns } from "./run-selection.ts";
 * declare const a: Analysis;
 *
 * await selectRuns(a.conn, DEFAULT_SELECTION); // the completed training runs
 * ```
 */
export async function selectRuns(
  conn: DuckDBConnection,
  selection: RunSelection,
  limits: { readonly timeoutMs?: number } = {},
): Promise<string[]> {
  const sql = await selectionStatement(conn, selection);
  let ids: string[];
  try {
    ids = selectedRunIds(await runReadOnlyQuery(conn, sql, limits), selection);
  } catch (err) {
    throw selectionFailure(selection, err);
  }
  if (ids.length === 0) {
    throw new NoRunsSelectedError(describeSelection(selection), await heldRuns(conn));
  }
  return ids;
}

/**
 * The error to show for a checked selection that failed while running: DuckDB's message as a
 * RunSelectionError (a QueryTimeoutError and other errors pass through).
 *
 * @example
 * ```ts
 * import { type RunSelection, selectionFailure } from "./run-selection.ts";
 * declare const selection: RunSelection;
 * declare const err: unknown;
 *
 * throw selectionFailure(selection, err);
 * ```
 */
export function selectionFailure(selection: RunSelection, err: unknown): unknown {
  if (!(err instanceof MalformedSqlError)) return err;
  return new RunSelectionError(
    `where ${JSON.stringify(selection.where ?? "")}`,
    `${err.reason}; the predicate sees ${SELECTION_COLUMNS}`,
  );
}

/**
 * A selection in words, for messages: "status completed, kind training, where seed < 3".
 *
 * @example
 * ```ts
 * import { DEFAULT_SELECTION, describeSelection } from "./run-selection.ts";
 *
 * describeSelection(DEFAULT_SELECTION); // "status completed, kind training, not hidden"
 * ```
 */
export function describeSelection(selection: RunSelection): string {
  const parts: string[] = [];
  if (selection.runs) parts.push(`runs ${selection.runs.join(", ")}`);
  if (selection.status) parts.push(`status ${selection.status.join(" or ")}`);
  if (selection.kind) parts.push(`kind ${selection.kind}`);
  if (selection.visibleOnly) parts.push("not hidden");
  if (selection.name !== undefined) {
    parts.push(`name ${/[*?[]/.test(selection.name) ? "glob" : "containing"} ${selection.name}`);
  }
  if (selection.where?.trim()) parts.push(`where ${selection.where.trim()}`);
  return parts.length ? parts.join(", ") : "every run";
}

/**
 * What the store holds by status and kind, for the message of an empty selection:
 * ["2 completed training", "1 failed training", "1 completed eval"].
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import {
 *   describeSelection,
 *   heldRuns,
 *   NoRunsSelectedError,
 *   type RunSelection,
 * } from "./run-selection.ts";
 * declare const conn: DuckDBConnection;
 * declare const s: RunSelection;
 *
 * throw new NoRunsSelectedError(describeSelection(s), await heldRuns(conn));
 * ```
 */
export async function heldRuns(conn: DuckDBConnection): Promise<string[]> {
  const reader = await conn.runAndReadAll(
    `WITH candidates AS (${CANDIDATES})
     SELECT count(*)::INTEGER, status, kind FROM candidates GROUP BY ALL ORDER BY 1 DESC, 2, 3`,
  );
  return reader.getRowsJS().map(([n, status, kind]) => `${n} ${status} ${kind}`);
}
