/**
 * Minor page faults of this process so far (field 10 of /proc/self/stat), Linux only: what memory
 * mapped anew costs, which the load of a shared machine does not move as it moves time.
 *
 * @example
 * ```ts
 * import { minorPageFaults } from "./page-faults.ts";
 *
 * declare function step(): Promise<void>; // what is measured
 * const before = minorPageFaults();
 * await step();
 * console.log(`${minorPageFaults() - before} page faults`);
 * ```
 */
export function minorPageFaults(): number {
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  return Number(fields[7]);
}
