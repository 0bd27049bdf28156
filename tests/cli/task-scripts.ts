/** The tasks of deno.json that run one of the repository's TypeScript CLIs. */

const tasks: Record<string, { command: string }> = JSON.parse(
  await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
).tasks;

/**
 * `[task, script]` for every task whose command is `deno run -A SCRIPT.ts` (after environment
 * variables it sets), except `test`, which
 * hands its arguments to `deno test`.
 *
 * @example
 * ```ts
 * for (const [name, script] of taskScripts()) console.log(name, script); // train engine/cli/train.ts
 * ```
 */
export function taskScripts(): (readonly [string, string])[] {
  return Object.entries(tasks).flatMap(([name, { command }]) => {
    // An environment prefix (GLIBC_TUNABLES=...) may precede the command.
    const script = command.match(/^(?:[A-Z_]+=\S* )*deno run -A (\S+\.ts)$/)?.[1];
    return script && name !== "test" ? [[name, script] as const] : [];
  });
}
