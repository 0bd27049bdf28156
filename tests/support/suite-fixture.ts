/**
 * A fixture made once per `deno task test` run and shared by every test file that asks for it.
 *
 * `deno test` gives each test file an isolate of its own, so a fixture kept in a module variable is
 * made again by every file that imports it: the dashboard's mixed store (five training processes)
 * was made by five files of two folders. tests/run.ts names a folder in $POLYRL_TEST_FIXTURES for
 * the whole run; the first process to ask for a fixture takes its lock file and makes it there,
 * the others wait for its `.ready` marker (or its `.failed` one, whose error they raise too). The
 * runner removes the folder when the run ends. A file run by `deno test` directly, without the
 * runner, makes the fixture in a temp folder of its own, removed when the process exits.
 *
 * A fixture is read by many processes at once: a test that changes one copies it first.
 *
 * @example
 * ```ts
 * import { suiteFixture } from "./suite-fixture.ts";
 *
 * const dir = await suiteFixture("hello", async (dir) => {
 *   await Deno.writeTextFile(`${dir}/hello.txt`, "hello");
 * });
 * await Deno.readTextFile(`${dir}/hello.txt`); // "hello"
 * ```
 */

/** The environment variable through which tests/run.ts shares one fixture folder per run. */
export const SUITE_FIXTURES_VAR = "POLYRL_TEST_FIXTURES";

/** How long a process waits for another to make a fixture before it gives up. */
const WAIT_MS = 15 * 60_000;

/** A fixture could not be made (here or in the process that made it), or never became ready. */
export class SuiteFixtureError extends Error {
  override name = "SuiteFixtureError";
}

/** This process's fixtures by name, so that a file's tests ask the file system once. */
const asked = new Map<string, Promise<string>>();

/**
 * The folder holding fixture `name`, made by `make` (given the empty folder) in the first process
 * of the run that asks for it. `name` must be a plain file name, distinct per kind of fixture.
 */
export function suiteFixture(name: string, make: (dir: string) => Promise<void>): Promise<string> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) {
    throw new SuiteFixtureError(`fixture name ${JSON.stringify(name)}: use a-z, 0-9 and -`);
  }
  let dir = asked.get(name);
  if (dir === undefined) {
    const root = Deno.env.get(SUITE_FIXTURES_VAR);
    dir = root === undefined ? makeForThisProcess(name, make) : shared(`${root}/${name}`, make);
    asked.set(name, dir);
  }
  return dir;
}

async function makeForThisProcess(
  name: string,
  make: (dir: string) => Promise<void>,
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: `polyrl-fixture-${name}-` });
  globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
  await make(dir);
  return dir;
}

async function shared(dir: string, make: (dir: string) => Promise<void>): Promise<string> {
  const lock = await Deno.open(`${dir}.lock`, { write: true, createNew: true }).catch((err) => {
    if (err instanceof Deno.errors.AlreadyExists) return undefined;
    throw err;
  });
  if (lock === undefined) return await madeElsewhere(dir);
  lock.close();
  try {
    await Deno.mkdir(dir);
    await make(dir);
  } catch (err) {
    const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    await Deno.writeTextFile(`${dir}.failed`, error);
    throw err;
  }
  await Deno.writeTextFile(`${dir}.ready`, "");
  return dir;
}

async function madeElsewhere(dir: string): Promise<string> {
  const exists = (path: string) => Deno.stat(path).then(() => true, () => false);
  const deadline = performance.now() + WAIT_MS;
  while (performance.now() < deadline) {
    if (await exists(`${dir}.ready`)) return dir;
    if (await exists(`${dir}.failed`)) {
      const error = await Deno.readTextFile(`${dir}.failed`);
      throw new SuiteFixtureError(`fixture ${dir} failed in the process that made it: ${error}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new SuiteFixtureError(
    `fixture ${dir} was not ready after ${WAIT_MS / 60_000} minutes: the process holding ` +
      `${dir}.lock died or hangs (remove the folder and run again)`,
  );
}
