/**
 * Shared helpers for validating a registration document: an issue collector that keeps going
 * after the first problem, RFC 6901 pointers, the closed list of rule ids, and small type guards.
 */
import { childPointer, type JsonObject } from '../../core/json.js';
import type { Issue } from './types.js';

/** Every rule id an issue or warning can carry. docs/ahp-registration.md explains each one. */
export type RegistrationRule =
  | 'document.json'
  | 'document.object'
  | 'document.protocol-version'
  | 'document.hooks'
  | 'backend.object'
  | 'backend.id'
  | 'backend.id.reverse-dns'
  | 'backend.id.duplicate'
  | 'backend.content-receiver'
  | 'backend.authentication.stdio'
  | 'backend.subscriptions'
  | 'transport.object'
  | 'transport.type'
  | 'transport.stdio.command'
  | 'transport.stdio.args'
  | 'transport.stdio.lifecycle'
  | 'transport.stdio.cwd'
  | 'transport.stdio.env'
  | 'transport.stdio.env.secret'
  | 'transport.http.url'
  | 'transport.http.url.credentials'
  | 'transport.http.url.insecure'
  | 'authentication.object'
  | 'authentication.type'
  | 'authentication.literal-credential'
  | 'authentication.bearer.one-reference'
  | 'authentication.bearer.token-env'
  | 'authentication.bearer.token-ref'
  | 'authentication.ref.unresolvable'
  | 'authentication.ref.looks-like-credential'
  | 'authentication.oauth.field'
  | 'subscription.object'
  | 'subscription.id'
  | 'subscription.mode'
  | 'subscription.events'
  | 'subscription.events.pattern'
  | 'subscription.events.unknown'
  | 'subscription.events.duplicate'
  | 'subscription.events.not-interceptable'
  | 'subscription.events.redundant'
  | 'subscription.events.partly-interceptable'
  | 'subscription.timeout-ms'
  | 'subscription.timeout-ms.range'
  | 'subscription.failure-policy'
  | 'subscription.observe-policy-fields'
  | 'subscription.include-native'
  | 'subscription.filters'
  | 'subscription.scope'
  | 'subscription.disableable'
  | 'subscription.content'
  | 'content.default'
  | 'content.category'
  | 'upload.object'
  | 'upload.endpoint'
  | 'upload.timeout-ms'
  | 'upload.max-bytes'
  | 'unknown-field';

/** Collects every error and warning instead of stopping at the first. */
export class IssueCollector {
  readonly issues: Issue[] = [];
  readonly warnings: Issue[] = [];

  error(pointer: string, rule: RegistrationRule, message: string): void {
    this.issues.push({ pointer, rule, message });
  }

  warn(pointer: string, rule: RegistrationRule, message: string): void {
    this.warnings.push({ pointer, rule, message });
  }

  /** A mark to ask later whether a subtree added errors: `c.errorsSince(mark) === 0`. */
  mark(): number {
    return this.issues.length;
  }

  errorsSince(mark: number): number {
    return this.issues.length - mark;
  }
}

/** Appends one reference token to an RFC 6901 pointer, escaping '~' and '/'. */
export const pointerTo = childPointer;

export function has(obj: JsonObject, key: string): boolean {
  return Object.hasOwn(obj, key);
}

export function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

export function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** A short description of a JSON value's type for messages; never echoes the value itself. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/**
 * Warns about each member the receiver does not recognise. The spec says receivers ignore unknown
 * registration fields (they change nothing) and may warn. The value is never echoed: it might be
 * a secret pasted into the wrong place.
 */
export function warnUnknownFields(
  c: IssueCollector,
  obj: JsonObject,
  pointer: string,
  known: ReadonlySet<string>,
  where: string,
): void {
  for (const key of Object.keys(obj)) {
    if (!known.has(key)) {
      c.warn(pointerTo(pointer, key), 'unknown-field', `unknown ${where} field '${key}' is ignored`);
    }
  }
}

/**
 * A stdio `env` name the registration accepts and the process spawn honours: non-empty, without
 * `=` (the name/value separator of an environment entry) or NUL (the entry terminator). Nothing
 * else is required: the spec's `env` is an object of literal strings, and POSIX and Windows both
 * pass any such name to the process.
 */
export function isUsableEnvName(name: string): boolean {
  return name !== '' && !name.includes('=') && !name.includes('\0');
}

/** A stdio `env` value: a literal string without NUL. */
export function isUsableEnvValue(value: unknown): value is string {
  return typeof value === 'string' && !value.includes('\0');
}

/** Whether a URL host names the local machine (the only place plain http is acceptable). */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

export type { JsonObject };
