/**
 * `deno task test [PATH...] [-- DENO_TEST_ARGS]`: runs the test suite with `deno test` and closes
 * with the line `N passed, N failed` (Deno's own summary is not in that form). Exit status is
 * Deno's: non-zero on any failure.
 */
import { userPathIfExists } from "../events/cli/user-path.ts";

const junitPath = await Deno.makeTempFile({ prefix: "polyrl-junit-", suffix: ".xml" });
// A PATH given from a subdirectory means that directory; importing user-path also keeps the
// user's directory from reaching the tests' own task subprocesses.
const paths = Deno.args.length > 0
  ? await Promise.all(Deno.args.map(userPathIfExists))
  : ["tests/"];
const child = new Deno.Command(Deno.execPath(), {
  args: ["test", "-A", `--junit-path=${junitPath}`, ...paths],
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
const status = await child.status;

const xml = await Deno.readTextFile(junitPath).catch(() => "");
await Deno.remove(junitPath).catch(() => {});
const root = xml.match(/<testsuites\b[^>]*>/)?.[0] ?? "";
const attr = (name: string) => Number(root.match(new RegExp(`\\b${name}="(\\d+)"`))?.[1] ?? 0);
const total = attr("tests");
const failed = attr("failures") + attr("errors");
const skipped = xml.match(/<skipped\b/g)?.length ?? 0;
const passed = Math.max(0, total - failed - skipped);
// A run that dies before writing its report (a type error, say) has failed even with no counts.
const failedShown = status.success ? failed : Math.max(failed, 1);
console.log(`${passed} passed, ${failedShown} failed${skipped ? `, ${skipped} skipped` : ""}`);
Deno.exit(status.code);
