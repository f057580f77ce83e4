/**
 * Canonical JSON per RFC 8785 (JCS), and a strict JSON parser that refuses what JCS cannot
 * represent faithfully: duplicate keys, lone surrogates, integers beyond 2^53 - 1.
 *
 * Serialisation relies on two facts of ECMAScript: JSON.stringify on a string escapes exactly as
 * RFC 8785 §3.2.2.2 requires (once lone surrogates are excluded), and on a finite number it is the
 * Number-to-String algorithm RFC 8785 §3.2.2.3 names.
 */

import { CanonicalError } from './canonical-error.js';
import { pointerOf } from './json.js';

export { CanonicalError, type CanonicalErrorCode } from './canonical-error.js';

function serializeString(value: string, path: (string | number)[]): string {
  if (!value.isWellFormed()) {
    throw new CanonicalError(
      'lone-surrogate',
      `string at ${pointerOf(path) || '/'} contains a lone surrogate`,
      {
        pointer: pointerOf(path),
      },
    );
  }
  return JSON.stringify(value);
}

/**
 * RFC 8785 §3.2.2.3 number form (ECMAScript Number::toString; -0 becomes 0). This alone follows
 * the RFC for every finite double; `canonicalize` adds Tally's refusal of unsafe integers.
 */
export function canonicalNumber(value: number): string {
  if (!Number.isFinite(value)) throw new CanonicalError('non-finite', `${value} has no JSON form`);
  return JSON.stringify(value);
}

function serialize(value: unknown, path: (string | number)[], out: string[]): void {
  switch (typeof value) {
    case 'string':
      out.push(serializeString(value, path));
      return;
    case 'number':
      if (!Number.isFinite(value)) {
        throw new CanonicalError(
          'non-finite',
          `number at ${pointerOf(path) || '/'} is ${value}, which JSON cannot carry`,
          {
            pointer: pointerOf(path),
          },
        );
      }
      // A number printed as plain digits beyond 2^53 - 1 reads as an exact integer but is not one;
      // from 1e21 on ECMAScript prints exponent form, which no reader mistakes for exact.
      if (Number.isInteger(value) && !Number.isSafeInteger(value) && Math.abs(value) < 1e21) {
        throw new CanonicalError(
          'unsafe-integer',
          `integer at ${pointerOf(path) || '/'} (${value}) is outside ±(2^53 - 1) and would lose precision`,
          { pointer: pointerOf(path) },
        );
      }
      out.push(canonicalNumber(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'object': {
      if (value === null) {
        out.push('null');
        return;
      }
      if (Array.isArray(value)) {
        out.push('[');
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.push(',');
          path.push(i);
          serialize(value[i] === undefined ? null : value[i], path, out);
          path.pop();
        }
        out.push(']');
        return;
      }
      if (
        ArrayBuffer.isView(value) ||
        value instanceof Map ||
        value instanceof Set ||
        value instanceof Date
      ) {
        throw new CanonicalError(
          'not-json',
          `value at ${pointerOf(path) || '/'} is a ${value.constructor.name}, not JSON`,
          {
            pointer: pointerOf(path),
          },
        );
      }
      // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 requires.
      const keys = Object.keys(value).sort();
      out.push('{');
      let first = true;
      for (const key of keys) {
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined) continue;
        if (!first) out.push(',');
        first = false;
        path.push(key);
        out.push(serializeString(key, path), ':');
        serialize(member, path, out);
        path.pop();
      }
      out.push('}');
      return;
    }
    default:
      throw new CanonicalError(
        'not-json',
        `value at ${pointerOf(path) || '/'} is a ${typeof value}, not JSON`,
        {
          pointer: pointerOf(path),
        },
      );
  }
}

/** RFC 8785 canonical form. Object members whose value is `undefined` are omitted, as JSON.stringify does. */
export function canonicalize(value: unknown): string {
  const out: string[] = [];
  try {
    serialize(value, [], out);
  } catch (error) {
    // A cycle (or absurd nesting) exhausts the stack: JSON has no form for it.
    if (error instanceof RangeError)
      throw new CanonicalError('not-json', 'value is cyclic or nested too deeply to be JSON');
    throw error;
  }
  return out.join('');
}

/** Canonical form as UTF-8 bytes: what gets hashed and signed. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}

export { parseJson } from './json-parse.js';
