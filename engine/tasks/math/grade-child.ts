/**
 * Child-process body for time-limited grading (see `grade-runner.ts`): reads one JSON request
 * per stdin line, `{ id, gold, pred, options }`, and writes one JSON reply per stdout line,
 * `{ id, result }` or `{ id, error }`, after a first `{ id: -1 }` line saying it is ready.
 * Needs no permissions.
 */
import { gradeAnswer } from "./grade.ts";

const encoder = new TextEncoder();
// Id -1 announces that the grader is loaded; the parent starts item clocks only after it.
await Deno.stdout.write(encoder.encode(JSON.stringify({ id: -1 }) + "\n"));
let buffered = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  buffered += chunk;
  let newline = buffered.indexOf("\n");
  while (newline >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    newline = buffered.indexOf("\n");
    if (line.trim() === "") continue;
    const { id, gold, pred, options } = JSON.parse(line);
    let reply: unknown;
    try {
      reply = { id, result: gradeAnswer(gold, pred, options) };
    } catch (err) {
      reply = { id, error: err instanceof Error ? err.message : String(err) };
    }
    await Deno.stdout.write(encoder.encode(JSON.stringify(reply) + "\n"));
  }
}
