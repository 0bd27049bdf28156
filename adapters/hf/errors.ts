/**
 * Typed errors of the HF checkpoint/tokenizer adapter. Every error names the file, tensor or field
 * it is about and says what was expected, so a user can fix a model directory without reading code.
 */

/** Base class: `code` tells callers which failure it is without string matching. */
export class HfError extends Error {
  constructor(
    readonly code: HfErrorCode,
    message: string,
    readonly context: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = "HfError";
  }
}

/** The kinds of failure the adapter reports. */
export type HfErrorCode =
  | "missing-file"
  | "corrupt-safetensors"
  | "non-finite-weight"
  | "unsupported-dtype"
  | "shape-mismatch"
  | "missing-tensor"
  | "unexpected-tensor"
  | "unsupported-architecture"
  | "invalid-config"
  | "unsupported-config"
  | "invalid-tokenizer"
  | "invalid-adapter";

/** A file the loader needs is absent; `expected` says what it should contain. */
export class MissingFileError extends HfError {
  constructor(readonly path: string, expected: string) {
    super("missing-file", `missing file ${path}: expected ${expected}`, { path, expected });
    this.name = "MissingFileError";
  }
}

/** A safetensors file whose header or byte layout cannot be trusted. */
export class CorruptSafetensorsError extends HfError {
  constructor(readonly path: string, detail: string) {
    super("corrupt-safetensors", `corrupt safetensors file ${path}: ${detail}`, { path, detail });
    this.name = "CorruptSafetensorsError";
  }
}

/** A weight that is NaN or infinite: every logit computed from it would be NaN. */
export class NonFiniteWeightError extends HfError {
  constructor(
    readonly dir: string,
    readonly tensor: string,
    readonly index: number,
    value: number,
  ) {
    super(
      "non-finite-weight",
      `${dir}: tensor ${tensor} holds ${value} at element ${index}; a model's weights must be ` +
        "finite numbers (re-export or re-download the checkpoint)",
      { dir, tensor, index, value },
    );
    this.name = "NonFiniteWeightError";
  }
}

/** A tensor stored in a dtype this adapter does not convert. */
export class UnsupportedDtypeError extends HfError {
  constructor(readonly tensor: string, readonly dtype: string, supported: readonly string[]) {
    super(
      "unsupported-dtype",
      `tensor ${tensor} has dtype ${dtype}; supported dtypes: ${supported.join(", ")}`,
      { tensor, dtype, supported },
    );
    this.name = "UnsupportedDtypeError";
  }
}

/** A tensor whose shape differs from the one the model config implies. */
export class ShapeMismatchError extends HfError {
  constructor(
    readonly tensor: string,
    readonly expected: readonly number[],
    readonly actual: readonly number[],
  ) {
    super(
      "shape-mismatch",
      `tensor ${tensor} has shape [${actual.join(", ")}] but [${expected.join(", ")}] is expected`,
      { tensor, expected, actual },
    );
    this.name = "ShapeMismatchError";
  }
}

/** A tensor the config requires is not in the checkpoint. */
export class MissingTensorError extends HfError {
  constructor(readonly tensor: string, where: string) {
    super("missing-tensor", `tensor ${tensor} is missing from ${where}`, { tensor, where });
    this.name = "MissingTensorError";
  }
}

/** A tensor in the checkpoint that the config does not account for. */
export class UnexpectedTensorError extends HfError {
  constructor(readonly tensor: string, where: string) {
    super(
      "unexpected-tensor",
      `tensor ${tensor} in ${where} is not part of the architecture the config describes`,
      { tensor, where },
    );
    this.name = "UnexpectedTensorError";
  }
}

/** config.json names an architecture no builder here implements. */
export class UnsupportedArchitectureError extends HfError {
  constructor(readonly architecture: string, supported: readonly string[]) {
    super(
      "unsupported-architecture",
      `unsupported architecture ${architecture}; supported: ${supported.join(", ")}`,
      { architecture, supported },
    );
    this.name = "UnsupportedArchitectureError";
  }
}

/** A config field that is missing, mistyped or inconsistent; names the field and its value. */
export class InvalidConfigError extends HfError {
  constructor(readonly file: string, readonly field: string, detail: string) {
    super("invalid-config", `${file}: field ${field} ${detail}`, { file, field, detail });
    this.name = "InvalidConfigError";
  }
}

/** A valid config option the model builder does not implement (e.g. sliding-window attention). */
export class UnsupportedConfigError extends HfError {
  constructor(readonly field: string, value: unknown, detail: string) {
    super(
      "unsupported-config",
      `config field ${field} = ${JSON.stringify(value)} is not supported: ${detail}`,
      { field, value, detail },
    );
    this.name = "UnsupportedConfigError";
  }
}

/** tokenizer.json / tokenizer_config.json content the tokenizer cannot use. */
export class InvalidTokenizerError extends HfError {
  constructor(readonly file: string, detail: string) {
    super("invalid-tokenizer", `${file}: ${detail}`, { file, detail });
    this.name = "InvalidTokenizerError";
  }
}

/** A LoRA adapter (PEFT format) that does not fit its config or base model. */
export class InvalidAdapterError extends HfError {
  constructor(readonly where: string, detail: string) {
    super("invalid-adapter", `${where}: ${detail}`, { where, detail });
    this.name = "InvalidAdapterError";
  }
}
