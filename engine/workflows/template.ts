/** Prompt templates: `{name}` placeholders filled from a record; `{{` and `}}` are literal braces. */

/** A template names a placeholder the workflow does not provide. */
export class PromptTemplateError extends Error {
  override name = "PromptTemplateError";
}

/**
 * Renders a prompt template.
 *
 * @example
 * ```ts
 * renderPrompt("Q: {question}\nA:", { question: "1+1" }); // "Q: 1+1\nA:"
 * ```
 */
export function renderPrompt(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{|\}\}|\{([a-z_]+)\}/g, (match, name: string | undefined) => {
    if (match === "{{") return "{";
    if (match === "}}") return "}";
    const value = values[name!];
    if (value === undefined) {
      throw new PromptTemplateError(
        `prompt template uses {${name}}, which this workflow does not provide; ` +
          `available: ${Object.keys(values).map((k) => `{${k}}`).join(", ")}`,
      );
    }
    return value;
  });
}
