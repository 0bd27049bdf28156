/**
 * Errors the model server answers with, in OpenAI's error shape:
 * `{"error": {"message", "type", "param", "code"}}` with the HTTP status of the problem. vLLM
 * answers the same envelope (vllm/entrypoints/openai/models/serving.py at 00153c8b,
 * `create_error_response` with `err_type`, `status_code` and `param`; e.g.
 * `OpenAIModelRegistry.check_model`: an unknown model is a 404 NotFoundError of param "model").
 */

/** The `type` of each status, as OpenAI names them. */
const TYPES: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  403: "permission_error",
  404: "not_found_error",
  413: "invalid_request_error",
  415: "invalid_request_error",
  421: "invalid_request_error",
  500: "server_error",
  503: "server_error",
};

/** A request the server refuses or could not serve; `param` names the field at fault. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: 400 | 403 | 404 | 413 | 415 | 421 | 500 | 503,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  /**
   * The JSON body.
   *
   * @example
   * ```ts
   * import { ApiError } from "./api-error.ts";
   *
   * new ApiError(404, "no model x", "model").body();
   * // { error: { message: "no model x", type: "not_found_error", param: "model", code: null } }
   * ```
   */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return {
      error: {
        message: this.message,
        type: TYPES[this.status] ?? "server_error",
        param: this.param,
        code: this.code,
      },
    };
  }
}
