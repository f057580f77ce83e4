/** The error of canonical JSON: serialising (canonical.ts) and strict parsing (json-parse.ts). */
import { TallyError } from './errors.js';

export type CanonicalErrorCode =
  | 'not-json'
  | 'non-finite'
  | 'unsafe-integer'
  | 'lone-surrogate'
  | 'duplicate-key'
  | 'syntax';

export class CanonicalError extends TallyError<CanonicalErrorCode> {}
