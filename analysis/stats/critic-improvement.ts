import { StatsInputError } from "./stats-input-error.ts";

/** One agent's parsed answer in one debate round; `answer` is null when none could be parsed. */
export interface DebateAnswer {
  readonly answer: string | null;
  readonly correct: boolean;
}

/** One question's debate: `rounds[0]` are the generators' answers, later rounds the critics'. */
export interface DebateQuestion {
  readonly rounds: readonly (readonly DebateAnswer[])[];
}

/** Critic effect of one round against the generators' consensus, over all questions. */
export interface CriticRoundEffect {
  readonly kind: "critic-round-effect";
  /** Round index (1 = first critic round). */
  readonly round: number;
  readonly questions: number;
  /** Questions whose generator majority was wrong. */
  readonly wrongConsensus: number;
  /** Wrong generator majority, right critic majority in this round. */
  readonly wrongToRight: number;
  /** Right generator majority, wrong critic majority in this round. */
  readonly rightToWrong: number;
  /** wrongToRight / questions: the critic improvement rate. */
  readonly improvementRate: number;
  /** rightToWrong / questions. */
  readonly degradationRate: number;
  /** wrongToRight / wrongConsensus (NaN when no consensus was wrong). */
  readonly correctionRate: number;
  /** Mean correctness of every individual answer in this round (MADA-RL's accuracy). */
  readonly accuracy: number;
}

/**
 * Whether a round's majority answer is correct. The most frequent parsed answer wins; a tie goes
 * to the answer given first (agent order), so the result is deterministic. An unparsed answer
 * votes for nothing; a round with no parsed answer has a wrong majority.
 *
 * @example
 * ```ts
 * majorityCorrect([{ answer: "2", correct: true }, { answer: "3", correct: false },
 *   { answer: "2", correct: true }]); // true
 * ```
 */
export function majorityCorrect(answers: readonly DebateAnswer[]): boolean {
  const votes = new Map<string, { count: number; correct: boolean }>();
  for (const a of answers) {
    if (a.answer === null) continue;
    const v = votes.get(a.answer);
    if (v) v.count++;
    else votes.set(a.answer, { count: 1, correct: a.correct });
  }
  let best: { count: number; correct: boolean } | undefined;
  for (const v of votes.values()) if (!best || v.count > best.count) best = v;
  return best?.correct ?? false;
}

/**
 * Critic improvement rate per round: for each critic round r, the share of questions whose
 * generators' majority answer was wrong and whose round-r critics' majority answer is right,
 * with the opposite (right turned wrong) and the round's accuracy. The last entry is the final
 * round, the one MADA-RL reports.
 *
 * @example
 * ```ts
 * const q = { rounds: [[{ answer: "1", correct: false }], [{ answer: "2", correct: true }]] };
 * criticImprovement([q])[0].improvementRate; // 1
 * ```
 */
export function criticImprovement(questions: readonly DebateQuestion[]): CriticRoundEffect[] {
  if (questions.length === 0) throw new StatsInputError("questions", 0, "need one question");
  const roundCount = questions[0].rounds.length;
  if (roundCount < 2) {
    throw new StatsInputError("rounds", roundCount, "need generator and at least one critic round");
  }
  questions.forEach((q, i) => {
    if (q.rounds.length !== roundCount) {
      throw new StatsInputError(
        `questions[${i}].rounds.length`,
        q.rounds.length,
        `expected ${roundCount}`,
      );
    }
    q.rounds.forEach((r, j) => {
      if (r.length === 0) {
        throw new StatsInputError(`questions[${i}].rounds[${j}]`, "[]", "no answers");
      }
    });
  });
  const consensus = questions.map((q) => majorityCorrect(q.rounds[0]));
  const wrongConsensus = consensus.filter((c) => !c).length;
  const effects: CriticRoundEffect[] = [];
  for (let round = 1; round < roundCount; round++) {
    let wrongToRight = 0;
    let rightToWrong = 0;
    let right = 0;
    let answers = 0;
    questions.forEach((q, i) => {
      const critics = majorityCorrect(q.rounds[round]);
      if (!consensus[i] && critics) wrongToRight++;
      if (consensus[i] && !critics) rightToWrong++;
      right += q.rounds[round].filter((a) => a.correct).length;
      answers += q.rounds[round].length;
    });
    effects.push(Object.freeze({
      kind: "critic-round-effect",
      round,
      questions: questions.length,
      wrongConsensus,
      wrongToRight,
      rightToWrong,
      improvementRate: wrongToRight / questions.length,
      degradationRate: rightToWrong / questions.length,
      correctionRate: wrongConsensus === 0 ? NaN : wrongToRight / wrongConsensus,
      accuracy: right / answers,
    }));
  }
  return effects;
}
