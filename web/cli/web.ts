/**
 * `deno task web [--port P] [--host H] [--allow-host NAME]... [--query-timeout-ms MS]
 * [--store PATH|URL]`: serves the dashboard (runs, a run followed live, comparisons, a SQL
 * console) on 127.0.0.1:8100 unless told otherwise (not 8000: that is `deno task serve`'s, as vLLM's,
 * so both run side by side). It reads the store and never appends to it. A port in use is exit 2
 * naming a free one.
 * It answers only requests whose Host is the bound address, localhost or an `--allow-host` name,
 * and interrupts a SQL query after `--query-timeout-ms` (10 s by default).
 */
import {
  commandExitCode,
  defineCommand,
  listenOrSuggestPort,
  storeOption,
  UsageError,
} from "../../events/cli/mod.ts";
import { HOST_NAME } from "../../events/http/mod.ts";
import { serveDashboard } from "../server/serve.ts";
import { USER_SQL_LIMITS } from "../server/user-sql.ts";

const USAGE = "deno task web [--port P] [--host H] [--allow-host NAME]... " +
  "[--query-timeout-ms MS] [--store PATH|URL]";

/** The longest query time limit taken: one hour. */
const MAX_QUERY_TIMEOUT_MS = 3_600_000;

const cli = defineCommand({
  name: "web",
  usage: USAGE,
  summary: "Serves the dashboard over the event store (read-only): runs, live run pages with " +
    "per-agent stability charts, comparisons across seeds, and DuckDB SQL in the browser.",
  options: {
    ...storeOption,
    port: {
      type: "string",
      default: "8100",
      value: "N",
      help: "port to listen on (default 8100; 0 = any free)",
    },
    host: {
      type: "string",
      default: "127.0.0.1",
      value: "ADDR",
      help: "address to bind (default 127.0.0.1)",
    },
    "allow-host": {
      type: "string",
      multiple: true,
      default: [],
      value: "HOST",
      help: "also answer requests for this host name (repeatable), e.g. behind a proxy",
    },
    "query-timeout-ms": {
      type: "string",
      default: String(USER_SQL_LIMITS.timeoutMs),
      value: "MS",
      help: `interrupt a SQL query after this many ms (default ${USER_SQL_LIMITS.timeoutMs})`,
    },
  },
  examples: ["deno task web", "deno task web --store runs.sqlite --port 8080"],
});

/** `deno task web ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values } = cli.parse(args);
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) {
      throw new UsageError(`--port ${values.port}: expected a port number 0-65535`);
    }
    for (const name of values["allow-host"]) {
      if (!HOST_NAME.test(name)) {
        throw new UsageError(
          `--allow-host ${name}: expected a host name or address without scheme, port or path ` +
            `(e.g. --allow-host lab.example.org)`,
        );
      }
    }
    const timeout = values["query-timeout-ms"];
    if (!/^\d+$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > MAX_QUERY_TIMEOUT_MS) {
      throw new UsageError(
        `--query-timeout-ms ${timeout}: expected a whole number of milliseconds from 1 to ` +
          `${MAX_QUERY_TIMEOUT_MS}`,
      );
    }
    const port = Number(values.port);
    const dashboard = await listenOrSuggestPort(
      values.host,
      port,
      () =>
        serveDashboard(values.store, {
          hostname: values.host,
          port,
          allowHosts: values["allow-host"],
          queryTimeoutMs: Number(timeout),
        }),
    );
    console.log(`dashboard of ${values.store} at ${dashboard.url}`);
    const stop = () => dashboard.close();
    Deno.addSignalListener("SIGINT", stop);
    await dashboard.finished;
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
