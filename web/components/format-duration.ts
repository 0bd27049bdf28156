/**
 * A duration for tables, to the precision a glance needs: seconds with one decimal under a
 * minute, then minutes and seconds, then hours and minutes; "—" for missing.
 *
 * @example
 * ```ts
 * formatDuration(4.36); // "4.4 s"
 * formatDuration(185); // "3 m 05 s"
 * formatDuration(7380); // "2 h 03 m"
 * ```
 */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const s = Math.max(0, seconds);
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  const two = (n: number) => String(n).padStart(2, "0");
  if (whole < 3600) return `${Math.floor(whole / 60)} m ${two(whole % 60)} s`;
  return `${Math.floor(whole / 3600)} h ${two(Math.floor(whole / 60) % 60)} m`;
}
