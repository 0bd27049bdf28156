/**
 * What a trajectory was asked and the answer it was graded against, shown above its turns so a
 * reader can judge the agents' outputs without looking the problem up elsewhere.
 */

/** Shown for a field the run's log does not carry (its trajectories predate the field). */
export const NOT_RECORDED = "not recorded (run made before trajectory.completed v2)";

/**
 * The question and gold answer of one trajectory; null reads as not recorded.
 *
 * @example
 * ```tsx
 * <TrajectoryTask question="What is 2 + 3?" gold="5" />
 * ```
 */
export function TrajectoryTask(props: { question: string | null; gold: string | null }) {
  // Both fields arrived with v2, so one null means the run predates them; a v2 task without a
  // reference answer carries its question and a null gold.
  const old = props.question === null;
  return (
    <dl class="task">
      <dt>question</dt>
      <dd data-field="question" class={old ? "muted" : undefined}>
        {props.question ?? NOT_RECORDED}
      </dd>
      <dt>gold answer</dt>
      <dd data-field="gold" class={props.gold === null ? "muted" : undefined}>
        {props.gold ?? (old ? NOT_RECORDED : "none (the task has no reference answer)")}
      </dd>
    </dl>
  );
}
