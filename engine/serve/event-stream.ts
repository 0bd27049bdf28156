/**
 * Server-sent events as OpenAI streams them: one `data: {json}` event per chunk, in order, and
 * `data: [DONE]` at the end. An error after the stream began is sent as a `data: {"error": ...}`
 * chunk before `[DONE]`, since the status line is already out (vLLM's
 * completion/serving.py at 030ea52e, `completion_stream_generator`, does both). A client that goes away aborts `abort`, which ends
 * its sequences' generation; nothing more is written. The request log's line waits for the end.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { ApiError } from "./api-error.ts";
import { noteStreamEnd } from "./request-log.ts";

/** Queues one chunk (serialized to JSON); a no-op once the client is gone. */
export type SendChunk = (chunk: unknown) => void;

/**
 * Streams the chunks `body` sends.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { eventStream } from "./event-stream.ts";
 * import { clientAbort } from "./request-context.ts";
 * import type { ServeEnv } from "./request-log.ts";
 *
 * declare const pieces: AsyncIterable<string>; // a choice's text as it comes
 * const app = new Hono<ServeEnv>();
 * app.post("/v1/completions", (c) =>
 *   eventStream(c, clientAbort(c), async (send) => {
 *     for await (const text of pieces) send({ choices: [{ index: 0, text }] });
 *   }));
 * ```
 */
export function eventStream(
  c: Context,
  abort: AbortController,
  body: (send: SendChunk) => Promise<void>,
): Response {
  const end = Promise.withResolvers<boolean>();
  noteStreamEnd(c, end.promise);
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => abort.abort());
    const gone = () => stream.aborted || abort.signal.aborted;
    let queue = Promise.resolve();
    const send: SendChunk = (chunk) => {
      if (gone()) return;
      const data = JSON.stringify(chunk);
      queue = queue.then(() => stream.writeSSE({ data }));
    };
    try {
      try {
        await body(send);
      } catch (err) {
        const error = err instanceof ApiError
          ? err
          : new ApiError(500, `generation failed: ${(err as Error).message}`);
        send(error.body());
      }
      await queue;
      if (!gone()) await stream.writeSSE({ data: "[DONE]" });
    } finally {
      end.resolve(gone());
    }
  });
}
