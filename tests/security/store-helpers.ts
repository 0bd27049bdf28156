/**
 * What the store-integrity tests share: file fingerprints (sha256 of every file under a folder,
 * so "byte-identical and nothing created" is one deepEqual), the CLIs run as a user runs them,
 * small stores to probe, and whether this machine lets a test mount file systems (a read-only
 * bind mount, a tiny tmpfs), which needs root with CAP_SYS_ADMIN and `unshare`.
 */
import { DatabaseSync } from "node:sqlite";
import { type NewEvent, openStore, sha256Hex } from "../../events/mod.ts";
import { stepEvent, turnEvent } from "../events/sample-events.ts";
import { runSpec } from "../analysis/fixtures/fill-store.ts";
import { writeFakeRun } from "../support/fake-run.ts";

/** sha256 (hex) of every file under `dir`, by path relative to it; folders listed with "dir". */
export async function fingerprint(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for await (const entry of Deno.readDir(rel ? `${dir}/${rel}` : dir)) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory) {
        out[path] = "dir";
        await walk(path);
      } else {
        out[path] = sha256Hex(await Deno.readFile(`${dir}/${path}`));
      }
    }
  };
  await walk("");
  return out;
}

/** A fresh temp folder, removed after `fn`. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-store-probe-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The output of one CLI run. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a repository script (path from the repository root) as `deno task` would, in `cwd`
 * (default: this process's), where a Postgres store's projections land (`.polyrl/`).
 */
export async function runCli(
  script: string,
  args: readonly string[],
  cwd?: string,
): Promise<CliResult> {
  const path = new URL(`../../${script}`, import.meta.url).pathname;
  const config = new URL("../../deno.json", import.meta.url).pathname;
  return await runCommand(Deno.execPath(), ["run", "-A", "--config", config, path, ...args], cwd);
}

/** Runs a program and collects its output. */
export async function runCommand(
  program: string,
  args: readonly string[],
  cwd?: string,
): Promise<CliResult> {
  const out = await new Deno.Command(program, {
    args: [...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** The error lines a CLI printed (Deno's warnings about npm bins left out). */
export function errorLines(result: CliResult): string[] {
  return result.stderr.split("\n").filter((l) => l.startsWith("error: "));
}

/** A small store of two runs at `path` (12 events, no blobs). */
export async function smallStore(path: string, runs = ["run-a", "run-b"]): Promise<void> {
  const store = await openStore(path);
  try {
    for (const run of runs) {
      const events: NewEvent[] = [stepEvent(0)];
      for (let turn = 0; turn < 5; turn++) {
        events.push(turnEvent({ step: 0, prompt: 0, sample: 0, turn }));
      }
      await store.append(run, events);
    }
  } finally {
    await store.close();
  }
}

/**
 * A store at `target` holding the generated runs `runIds` (every event type the projections
 * read), their checkpoint blobs stored, so that `verify` finds it intact. Returns how many
 * events and blobs it holds, the line `verify` prints.
 */
export async function runsStore(
  target: string,
  runIds: readonly string[],
): Promise<{ events: number; blobs: number; verified: RegExp }> {
  const store = await openStore(target);
  let events = 0;
  const blobs = new Set<string>();
  try {
    for (const runId of runIds) {
      const spec = runSpec({ runId });
      events += (await writeFakeRun(store, spec)).length;
      for (const { wg } of spec.agents) {
        blobs.add(await store.blobs.put(new TextEncoder().encode(`blob/${runId}/${wg}`)));
      }
    }
  } finally {
    await store.close();
  }
  return {
    events,
    blobs: blobs.size,
    verified: new RegExp(`events: ${events} {2}blobs: ${blobs.size}\\nok: `),
  };
}

/** An SQLite database of another application (rollback journal, one table). */
export function foreignDatabase(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) " +
      "VALUES ('hello')",
  );
  db.close();
}

/** Whether this machine lets a test make mounts in a private mount namespace. */
export const canMount: boolean = await (async () => {
  if (Deno.build.os !== "linux") return false;
  try {
    const probe = await runCommand("unshare", [
      "-m",
      "sh",
      "-c",
      'd="$(mktemp -d)" && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d" && rmdir "$d"',
    ]);
    return probe.code === 0;
  } catch {
    return false;
  }
})();

/**
 * Runs a repository script with `dir` mounted read-only at `mountPoint` (a private mount
 * namespace: nothing leaks out of the command).
 */
export async function runCliOnReadOnlyMount(
  dir: string,
  mountPoint: string,
  script: string,
  args: readonly string[],
): Promise<CliResult> {
  const path = new URL(`../../${script}`, import.meta.url).pathname;
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const command = [
    `mount --bind ${quote(dir)} ${quote(mountPoint)}`,
    `mount -o remount,bind,ro ${quote(mountPoint)}`,
    [Deno.execPath(), "run", "-A", path, ...args].map(quote).join(" "),
  ].join(" && ");
  return await runCommand("unshare", ["-m", "sh", "-c", command]);
}
