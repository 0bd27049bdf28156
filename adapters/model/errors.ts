/**
 * A model could not be built, fed or run as asked. The message names the field or tensor, the
 * value found and what would fix it.
 */
export class ModelError extends Error {
  override readonly name = "ModelError";
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
  }
}
