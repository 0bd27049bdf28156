/** A study that cannot do what it was asked (e.g. report on a store without any of its runs). */
export class StudyError extends Error {
  override name = "StudyError";
}
