/** Prompt templates: `{name}` placeholders filled from a record; `{{` and `}}` are literal braces. */

/** A template names a placeholder the workflow does not provide. */
export class PromptTemplateError extends Error {
  override name = "PromptTemplateError";
}

/** The template grammar: a literal brace, or a placeholder (`name` in group 1). */
const TEMPLATE_TOKEN = /\{\{|\}\}|\{([a-z_]+)\}/g;

/** A placeholder's name as the template grammar reads it. */
export const PLACEHOLDER_NAME = /^[a-z_]+$/;

/**
 * Renders a prompt template.
 *
 * @example
 * ```ts
 * import { renderPrompt } from "./template.ts";
 * renderPrompt("Q: {question}\nA:", { question: "1+1" }); // "Q: 1+1\nA:"
 * ```
 */
export function renderPrompt(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(TEMPLATE_TOKEN, (match, name: string | undefined) => {
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

/**
 * The placeholders a template uses, each once, in order of first use (what renderPrompt would
 * ask its values for).
 *
 * @example
 * ```ts
 * import { templatePlaceholders } from "./template.ts";
 * templatePlaceholders("{question} {{x}} {plan} {question}"); // ["question", "plan"]
 * ```
 */
export function templatePlaceholders(template: string): string[] {
  const names = [...template.matchAll(TEMPLATE_TOKEN)].flatMap((m) => m[1] ?? []);
  return [...new Set(names)];
}
