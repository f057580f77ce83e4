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

/**
 * A number printed as plain digits beyond 2^53 - 1 reads as an exact integer but is not one; from
 * 1e21 on ECMAScript prints exponent form, which no reader mistakes for exact.
 */
function unsafeInteger(value: number): boolean {
  return Number.isInteger(value) && !Number.isSafeInteger(value) && Math.abs(value) < 1e21;
}

function serialize(value: unknown, path: (string | number)[]): string {
  switch (typeof value) {
    case 'string':
      return serializeString(value, path);
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
      if (unsafeInteger(value)) {
        throw new CanonicalError(
          'unsafe-integer',
          `integer at ${pointerOf(path) || '/'} (${value}) is outside ±(2^53 - 1) and would lose precision`,
          { pointer: pointerOf(path) },
        );
      }
      return canonicalNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let text = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) text += ',';
          path.push(i);
          text += serialize(value[i] === undefined ? null : value[i], path);
          path.pop();
        }
        return `${text}]`;
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
      // Built by concatenation (V8 joins the pieces once, when the text is used).
      const keys = Object.keys(value).sort();
      let text = '{';
      let first = true;
      for (const key of keys) {
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined) continue;
        if (!first) text += ',';
        first = false;
        path.push(key);
        text += `${serializeString(key, path)}:${serialize(member, path)}`;
        path.pop();
      }
      return `${text}}`;
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

/** What `sortedCopy` cannot take: the serialiser above then says why, at which member. */
const SLOW: unique symbol = Symbol('slow');

/**
 * A copy of a JSON value whose objects hold their members in RFC 8785 order, for JSON.stringify to
 * print (its string and number forms are the RFC's, see above), or SLOW for anything the serialiser
 * refuses and for what the copy cannot order: a member name an engine would put first whatever
 * the order it was added in (an array index), and `__proto__`.
 */
function sortedCopy(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw SLOW;
      return value;
    case 'number':
      if (!Number.isFinite(value) || unsafeInteger(value)) throw SLOW;
      return value;
    case 'boolean':
      return value;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) {
        const out = new Array<unknown>(value.length);
        for (let i = 0; i < value.length; i++) out[i] = value[i] === undefined ? null : sortedCopy(value[i]);
        return out;
      }
      if (ArrayBuffer.isView(value) || value instanceof Map || value instanceof Set || value instanceof Date)
        throw SLOW;
      const keys = Object.keys(value).sort();
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        const member = (value as Record<string, unknown>)[key];
        if (member === undefined) continue;
        const first = key.charCodeAt(0);
        if ((first >= 0x30 && first <= 0x39) || key === '__proto__' || !key.isWellFormed()) throw SLOW;
        out[key] = sortedCopy(member);
      }
      return out;
    }
    default:
      throw SLOW;
  }
}

/** RFC 8785 canonical form. Object members whose value is `undefined` are omitted, as JSON.stringify does. */
export function canonicalize(value: unknown): string {
  try {
    // The common case, in the engine's own printer; anything else (and every error, said where it
    // is) by the serialiser. test/core/canonical.test.ts holds both to the RFC's vectors.
    try {
      return JSON.stringify(sortedCopy(value));
    } catch (error) {
      if (error !== SLOW && !(error instanceof RangeError)) throw error;
    }
    return serialize(value, []);
  } catch (error) {
    // A cycle (or absurd nesting) exhausts the stack: JSON has no form for it.
    if (error instanceof RangeError)
      throw new CanonicalError('not-json', 'value is cyclic or nested too deeply to be JSON');
    throw error;
  }
}

/** Canonical form as UTF-8 bytes: what gets hashed and signed. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalize(value), 'utf8');
}

export { parseJson } from './json-parse.js';
