import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { dashboardRun } from "./fixtures/dashboard-store.ts";

const CLI = new URL("../../web/cli/web.ts", import.meta.url).pathname;

function web(args: string[]) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    stdout: "piped",
    stderr: "piped",
  });
}

Deno.test("deno task web: usage errors exit 2, a missing store exits 1", async () => {
  const help = await web(["--help"]).output();
  assert.equal(help.code, 0);
  const bad = await web(["--port", "http"]).output();
  assert.equal(bad.code, 2);
  assert.match(new TextDecoder().decode(bad.stderr), /--port http: expected a port number/);
  for (
    const [args, message] of [
      [
        ["--allow-host", "http://lab.example/"],
        /--allow-host http:\/\/lab.example\/: expected a host name/,
      ],
      [
        ["--allow-host", "lab.example:8080"],
        /expected a host name or address without scheme, port/,
      ],
      [
        ["--query-timeout-ms", "0"],
        /--query-timeout-ms 0: expected a whole number of milliseconds/,
      ],
      [["--query-timeout-ms", "1e4"], /--query-timeout-ms 1e4: expected a whole number/],
    ] as const
  ) {
    const r = await web([...args]).output();
    assert.equal(r.code, 2, args.join(" "));
    assert.match(new TextDecoder().decode(r.stderr), message);
  }
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-cli-" });
  try {
    const missing = await web(["--store", `${dir}/none.sqlite`, "--port", "0"]).output();
    assert.equal(missing.code, 1);
    // The dashboard never creates a store.
    assert.equal(await Deno.stat(`${dir}/none.sqlite`).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task web serves on 127.0.0.1 by default", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-cli-" });
  const path = `${dir}/events.sqlite`;
  {
    await using store = await openStore(path);
    await writeFakeRun(
      store,
      dashboardRun({
        runId: "cli-run",
        seed: 1,
        estimator: "grpo",
        steps: 2,
        prompts: 1,
        groupSize: 2,
        evalEvery: 1,
      }),
    );
  }
  const child = web(["--store", path, "--port", "0"]).spawn();
  try {
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) break;
      out += value;
    }
    const url = out.match(/at (http:\/\/\S+)/)?.[1];
    assert.ok(url?.startsWith("http://127.0.0.1:"), out);
    const page = await (await fetch(url!)).text();
    assert.match(page, /href="\/runs\/cli-run"/);
    await lines.cancel();
  } finally {
    child.kill("SIGINT");
    await child.status;
    await child.stderr.cancel();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task web: a port in use is exit 2 naming a free port to pass instead", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-web-cli-" });
  try {
    const path = `${dir}/events.sqlite`;
    await (await openStore(path)).close();
    using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = taken.addr.port;
    const r = await web(["--store", path, "--port", String(port)]).output();
    const stderr = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 2, stderr);
    const message = new RegExp(
      `^error: port ${port} is in use; pass --port (\\d+), or stop the process listening on ` +
        `127\\.0\\.0\\.1:${port}$`,
      "m",
    );
    assert.match(stderr, message);
    const suggested = Number(stderr.match(message)![1]);
    assert.notEqual(suggested, port);
    // Free when suggested: it binds (unless another process took it since, which is rare).
    Deno.listen({ hostname: "127.0.0.1", port: suggested }).close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
