/**
 * `deno task web [--port P] [--host H] [--store PATH|URL]`: serves the dashboard (runs, a run
 * followed live, comparisons, a SQL console) on 127.0.0.1:8000 unless told otherwise. It reads
 * the store and never appends to it.
 */
import { defineCommand, runCommand, storeOption, UsageError } from "../../events/cli/command.ts";
import { serveDashboard } from "../server/serve.ts";

const USAGE = "deno task web [--port P] [--host H] [--store PATH|URL]";

const cli = defineCommand({
  name: "web",
  usage: USAGE,
  summary: "Serves the dashboard over the event store (read-only): runs, live run pages with " +
    "per-agent stability charts, comparisons across seeds, and DuckDB SQL in the browser.",
  options: {
    ...storeOption,
    port: {
      type: "string",
      default: "8000",
      help: "port to listen on (default 8000; 0 = any free)",
    },
    host: { type: "string", default: "127.0.0.1", help: "address to bind (default 127.0.0.1)" },
  },
});

await runCommand(USAGE, async () => {
  const { values } = cli.parse(Deno.args);
  if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) {
    throw new UsageError(`--port ${values.port}: expected a port number 0-65535`);
  }
  const dashboard = await serveDashboard(values.store, {
    hostname: values.host,
    port: Number(values.port),
  });
  console.log(`dashboard of ${values.store} at ${dashboard.url}`);
  const stop = () => dashboard.close();
  Deno.addSignalListener("SIGINT", stop);
  await dashboard.finished;
});
