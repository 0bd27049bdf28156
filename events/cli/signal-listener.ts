/**
 * A signal listener that ends with the scope holding it (`using`), so that a task run in a test's
 * process (tests/support/run-cli.ts) leaves no listener behind.
 *
 * @example
 * ```ts
 * import { listenForSignal } from "./signal-listener.ts";
 *
 * {
 *   using _ctrlC = listenForSignal("SIGINT", () => console.error("stopping"));
 * } // removed here
 * ```
 */
export function listenForSignal(signal: Deno.Signal, handler: () => void): Disposable {
  Deno.addSignalListener(signal, handler);
  return { [Symbol.dispose]: () => Deno.removeSignalListener(signal, handler) };
}
