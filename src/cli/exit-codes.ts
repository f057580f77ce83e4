/**
 * The CLI's exit codes, from one table: 0 ok; 1 a verification or policy check failed — anything
 * that reached a package, log, record or certificate check and failed it; 2 a usage or input
 * error — a bad flag, a missing or unreadable path, input that is not what the command takes.
 */
import { TallyError } from '../core/errors.js';
import { FailureError, UsageError } from './command.js';

export type Exit = 1 | 2;

/** Error class name → exit code, with per-code exceptions. */
const TABLE: Record<string, { exit: Exit; codes?: Record<string, Exit> }> = {
  RecordError: { exit: 1 },
  PackageError: { exit: 1 },
  ReceiptError: { exit: 1 },
  CertificateError: { exit: 1 },
  DsseError: { exit: 1 },
  StoreError: { exit: 1 },
  CanonicalError: { exit: 2 },
  SessionError: { exit: 2, codes: { corrupt: 1 } },
  KeyError: { exit: 2 },
  BoundaryError: { exit: 2 },
  RegistrationError: { exit: 2 },
  HarnessError: { exit: 2 },
  DispatchError: { exit: 2 },
  LockError: { exit: 2 },
  PolicyError: { exit: 2 },
  SecretError: { exit: 2 },
  RulesError: { exit: 2 },
  OAuthClientsError: { exit: 2 },
};

/** The exit code and machine code of an error the CLI reports, or undefined for a bug (rethrown). */
export function exitOf(error: unknown): { exit: Exit; code: string } | undefined {
  if (error instanceof UsageError) return { exit: 2, code: 'usage' };
  if (error instanceof FailureError) return { exit: 1, code: 'failure' };
  if (!(error instanceof TallyError)) return undefined;
  const row = TABLE[error.name];
  return { exit: row?.codes?.[error.code] ?? row?.exit ?? 2, code: error.code };
}
