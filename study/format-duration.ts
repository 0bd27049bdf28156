/**
 * Seconds as the study prints them: `12.3s`, `4m05s`, `2h03m`.
 *
 * @example
 * ```ts
 * formatDuration(245); // "4m05s"
 * ```
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const s = Math.round(seconds);
  const pad = (n: number) => String(n).padStart(2, "0");
  return s < 3600
    ? `${Math.floor(s / 60)}m${pad(s % 60)}s`
    : `${Math.floor(s / 3600)}h${pad(Math.floor(s / 60) % 60)}m`;
}
