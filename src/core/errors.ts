/**
 * The one base error of Tally. Each module defines its own subclass with a closed union of codes,
 * so callers (and the CLI) can branch on `code` instead of parsing messages. `cause` carries the
 * lower-level error a failure came from, when there is one.
 */
export class TallyError<C extends string = string> extends Error {
  readonly code: C;
  /** Extra machine-readable facts: the field, byte offset or sequence number at fault. */
  readonly detail: Record<string, unknown> | undefined;

  constructor(code: C, message: string, detail?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.detail = detail;
  }
}
