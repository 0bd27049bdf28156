/**
 * Worker body for time-limited grading: receives `{ id, gold, pred, options }`, replies
 * `{ id, result }` or `{ id, error }`. Run by `grade-runner.ts`, which terminates the worker
 * when an item exceeds its time limit (a synchronous parse cannot be interrupted otherwise).
 */
import { gradeAnswer } from "./grade.ts";
import type { GradeOptions } from "./options.ts";

interface Request {
  readonly id: number;
  readonly gold: string;
  readonly pred: string;
  readonly options: GradeOptions;
}

self.onmessage = (event: MessageEvent<Request>) => {
  const { id, gold, pred, options } = event.data;
  try {
    self.postMessage({ id, result: gradeAnswer(gold, pred, options) });
  } catch (err) {
    self.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
};
