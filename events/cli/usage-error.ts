/** A usage mistake by the caller: printed with the command's usage line, exit 2 (command.ts). */
export class UsageError extends Error {
  override name = "UsageError";
}
