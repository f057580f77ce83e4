/**
 * The one base error of Tally. Each module defines its own subclass with a closed union of codes,
 * so callers (and the CLI) can branch on `code` instead of parsing messages.
 */
export class TallyError<C extends string = string> extends Error {
  readonly code: C;
  /** Extra machine-readable facts: the field, byte offset or sequence number at fault. */
  readonly detail: Record<string, unknown> | undefined;

  constructor(code: C, message: string, detail?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.detail = detail;
  }
}
