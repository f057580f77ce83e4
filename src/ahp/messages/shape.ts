/**
 * Small structural checkers for AHP wire data. A `Check` looks at one value at one JSON pointer and
 * appends an `Issue` for everything wrong with it; it never throws and never changes the value.
 * The message validators are built from these, written out by hand for each protocol shape.
 */
import { childPointer, isJsonObject, type JsonObject } from '../../core/json.js';
import type { Issue } from '../registration/types.js';

export type { Issue };

export type Check = (value: unknown, pointer: string, out: Issue[]) => void;

/**
 * Whether checks build JSON pointers. A first pass over a message runs without them (most messages
 * are valid, and building a pointer for every member was about 40% of the work); only when it
 * finds an issue does a second pass run with them, for the report (see `collect`).
 */
let trackPointers = true;

/**
 * The issues `run` finds, with exact pointers: one pass without pointers decides whether there are
 * any; only then a second pass, with pointers, lists them.
 */
export function collect(run: (out: Issue[]) => void): Issue[] {
  const quick: Issue[] = [];
  if (onlyThe !== 'report') {
    const previous = trackPointers;
    trackPointers = false;
    try {
      run(quick);
    } finally {
      trackPointers = previous;
    }
    if (quick.length === 0 || onlyThe === 'first') return quick;
  }
  const out: Issue[] = [];
  run(out);
  return out;
}

/** Set only while `onlyPass` runs. */
let onlyThe: 'first' | 'report' | undefined;

/**
 * Runs `fn` with every `collect` making only one of its passes: the first (it decides, its issues
 * are placeholders) or the report pass. For tests that hold the two to the same verdict.
 */
export function onlyPass<T>(pass: 'first' | 'report', fn: () => T): T {
  const previous = onlyThe;
  onlyThe = pass;
  try {
    return fn();
  } finally {
    onlyThe = previous;
  }
}

/** The pointer of member `key` under `pointer`, when pointers are being tracked. */
export function at(pointer: string, key: string | number): string {
  return trackPointers ? childPointer(pointer, key) : pointer;
}

export function issue(out: Issue[], pointer: string, rule: string, message: string): void {
  out.push({ pointer, rule, message });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'an integer';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Any JSON value. */
export const anyValue: Check = () => {};

/** Reverse-DNS name: extension keys, extension effect names, deny codes. */
export const REVERSE_DNS = /^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$/;

export interface StringRules {
  /** Minimum length in code points. */
  min?: number;
  max?: number;
  pattern?: RegExp;
  /** Human name of the pattern, used in the message. */
  patternName?: string;
  /** Extra check run only when the value is a string (formats). */
  format?: (text: string, pointer: string, out: Issue[]) => void;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function str(rules: StringRules = {}): Check {
  return (value, pointer, out) => {
    if (typeof value !== 'string')
      return issue(out, pointer, 'type', `must be a string, got ${describe(value)}`);
    // Code points lie between half the UTF-16 length and the UTF-16 length: count them only
    // when that range straddles a bound (so a typical string is never spread into an array).
    const { min, max } = rules;
    const undecided =
      (min !== undefined && value.length < 2 * min && value.length >= min) ||
      (max !== undefined && value.length > max && value.length <= 2 * max);
    const length = undecided ? codePoints(value) : value.length;
    if (min !== undefined && length < min) {
      issue(
        out,
        pointer,
        'min-length',
        rules.min === 1 ? 'must not be empty' : `must have at least ${rules.min} characters`,
      );
    }
    if (rules.max !== undefined && length > rules.max)
      issue(out, pointer, 'max-length', `must have at most ${rules.max} characters`);
    if (rules.pattern && !rules.pattern.test(value)) {
      issue(
        out,
        pointer,
        'pattern',
        `must be ${rules.patternName ?? `a string matching ${rules.pattern.source}`}`,
      );
    }
    rules.format?.(value, pointer, out);
  };
}

/** A non-empty string: the most common protocol field. */
export const nonEmpty: Check = str({ min: 1 });

export const bool: Check = (value, pointer, out) => {
  if (typeof value !== 'boolean') issue(out, pointer, 'type', `must be a boolean, got ${describe(value)}`);
};

export function int(min?: number): Check {
  return (value, pointer, out) => {
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      return issue(out, pointer, 'type', `must be an integer, got ${describe(value)}`);
    }
    if (min !== undefined && value < min) issue(out, pointer, 'minimum', `must be at least ${min}`);
  };
}

export function num(min?: number): Check {
  return (value, pointer, out) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      return issue(out, pointer, 'type', `must be a number, got ${describe(value)}`);
    }
    if (min !== undefined && value < min) issue(out, pointer, 'minimum', `must be at least ${min}`);
  };
}

export function oneOfValues(values: readonly (string | number | boolean | null)[]): Check {
  return (value, pointer, out) => {
    if (!values.includes(value as string)) {
      issue(
        out,
        pointer,
        'enum',
        `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(value) ?? 'nothing'}`,
      );
    }
  };
}

export function constant(expected: string | number | boolean): Check {
  return (value, pointer, out) => {
    if (value !== expected)
      issue(
        out,
        pointer,
        'const',
        `must be ${JSON.stringify(expected)}, got ${JSON.stringify(value) ?? 'nothing'}`,
      );
  };
}

/** A JSON object whose members are not inspected. */
export const anyObject: Check = (value, pointer, out) => {
  if (!isJsonObject(value)) issue(out, pointer, 'type', `must be an object, got ${describe(value)}`);
};

export interface ArrayRules {
  min?: number;
  max?: number;
  unique?: boolean;
}

/** Deep equality over parsed JSON, with object key order ignored. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

export function arr(item: Check, rules: ArrayRules = {}): Check {
  return (value, pointer, out) => {
    if (!Array.isArray(value)) return issue(out, pointer, 'type', `must be an array, got ${describe(value)}`);
    if (rules.min !== undefined && value.length < rules.min) {
      issue(
        out,
        pointer,
        'min-items',
        rules.min === 1 ? 'must not be empty' : `must have at least ${rules.min} items`,
      );
    }
    if (rules.max !== undefined && value.length > rules.max) {
      issue(
        out,
        pointer,
        'max-items',
        rules.max === 0 ? 'must be empty' : `must have at most ${rules.max} items`,
      );
    }
    value.forEach((element, index) => {
      item(element, at(pointer, index), out);
      if (rules.unique && value.slice(0, index).some((earlier) => jsonEqual(earlier, element))) {
        issue(out, at(pointer, index), 'unique', 'repeats an earlier item');
      }
    });
  };
}

export interface ObjectRules {
  required?: readonly string[];
  /** Reject members not listed in `props` (a closed protocol payload). Defaults to false (open). */
  closed?: boolean;
  /** Members that must be absent even though the object is otherwise open. */
  forbidden?: readonly string[];
  /** Checks every member not listed in `props` (for maps such as counters). */
  rest?: Check;
  minProperties?: number;
  /** Cross-field rules, run after the members when the value is an object. */
  also?: (value: JsonObject, pointer: string, out: Issue[]) => void;
}

export type Props = Record<string, Check>;

/** The one issue a first pass reports: it only has to decide whether there is any. */
function fail(out: Issue[]): void {
  out.push({ pointer: '', rule: 'invalid', message: 'invalid' });
}

/** Names an object may inherit (from Object.prototype): their presence is tested as own properties. */
const INHERITED = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * The first-pass form of an object checker (see `collect`): generated code reading each declared
 * member by name, so every object shape gets its own property-access sites instead of one map
 * lookup per member through a shared closure. It decides only whether the value has an issue and
 * may stop at the first; the report pass runs the general checker. Exact for plain and
 * null-prototype objects; any other prototype goes to the general checker.
 */
function quickObject(props: Props, rules: ObjectRules, full: Check): Check {
  const required = new Set(rules.required ?? []);
  const forbidden = new Set(rules.forbidden ?? []);
  const checks: Check[] = [];
  const lines: string[] = [];
  /**
   * The generated test that member `name`, as read by `read`, is present. A member holding
   * undefined is absent (it is not JSON and is not sent), as in the general checker; on a plain or
   * null-prototype object only a name Object.prototype also has can be read without being own.
   */
  const present = (name: string, read = `value[${JSON.stringify(name)}]`) =>
    INHERITED.has(name)
      ? `${read} !== undefined && hasOwn(value, ${JSON.stringify(name)})`
      : `${read} !== undefined`;
  for (const [name, check] of Object.entries(props)) {
    if (forbidden.has(name)) continue;
    checks.push(check);
    lines.push(
      `v = value[${JSON.stringify(name)}];`,
      `if (${present(name, 'v')}) { seen++; checks[${checks.length - 1}](v, pointer, out); }`,
    );
    if (required.has(name)) lines.push('else return fail(out);');
  }
  for (const name of required) {
    if (Object.hasOwn(props, name) || forbidden.has(name)) continue;
    // A required member with no checker is present (counted) or missing; in a closed object the
    // general checker refuses it either way, as a member it does not list.
    lines.push(rules.closed ? 'return fail(out);' : `if (${present(name)}) seen++; else return fail(out);`);
  }
  for (const name of forbidden) lines.push(`if (${present(name)}) return fail(out);`);
  if (rules.closed || rules.rest !== undefined || rules.minProperties !== undefined) {
    lines.push('const names = Object.keys(value);');
  }
  if (rules.minProperties !== undefined)
    lines.push(`if (names.length < ${rules.minProperties}) return fail(out);`);
  // Every member counted in `seen` is a listed one, so more names than that means an unlisted one.
  // (Names holding undefined are absent here too.)
  if (rules.closed) {
    lines.push(
      'if (names.length > seen) for (const name of names) if (!hasOwn(props, name) && value[name] !== undefined) return fail(out);',
    );
  } else if (rules.rest !== undefined) {
    lines.push(
      'if (names.length > seen) for (const name of names) if (!hasOwn(props, name) && value[name] !== undefined) rest(value[name], pointer, out);',
    );
  }
  if (rules.also !== undefined) lines.push('also(value, pointer, out);');
  const source = [
    'return function quick(value, pointer, out) {',
    "if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(out);",
    'const proto = Object.getPrototypeOf(value);',
    'if (proto !== Object.prototype && proto !== null) return full(value, pointer, out);',
    'let seen = 0;',
    'let v;',
    ...lines,
    '};',
  ].join('\n');
  const make = new Function('checks', 'fail', 'hasOwn', 'props', 'rest', 'also', 'full', source);
  return make(checks, fail, Object.hasOwn, props, rules.rest, rules.also, full) as Check;
}

export function obj(props: Props, rules: ObjectRules = {}): Check {
  // Resolved once per checker, not per value: these run for every object of every message. One
  // lookup per member answers everything about it (its check, required, forbidden), and the
  // required names are searched for only when some are missing.
  const required = rules.required ?? [];
  const forbidden = new Set(rules.forbidden ?? []);
  const { closed, rest, also, minProperties } = rules;
  const members = new Map<string, { check: Check | undefined; required: boolean }>();
  for (const [name, check] of Object.entries(props)) members.set(name, { check, required: false });
  for (const name of required) {
    const known = members.get(name);
    if (known) known.required = true;
    else members.set(name, { check: undefined, required: true });
  }
  const full: Check = (value, pointer, out) => {
    if (!isJsonObject(value)) return issue(out, pointer, 'type', `must be an object, got ${describe(value)}`);
    // Own enumerable string keys, once: cheaper than for-in with an own-property test.
    const names = Object.keys(value);
    const start = out.length;
    let present = 0;
    if (minProperties !== undefined && names.length < minProperties) {
      issue(out, pointer, 'min-properties', `must have at least ${minProperties} member(s)`);
    }
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      // A member holding undefined is not JSON (it is not sent): absent, like a missing one.
      if (value[name] === undefined) continue;
      const member = members.get(name);
      if (member?.required) present++;
      if (forbidden.has(name)) {
        issue(out, at(pointer, name), 'forbidden', `'${name}' is not allowed here`);
      } else if (member?.check !== undefined) {
        member.check(value[name], at(pointer, name), out);
      } else if (closed) {
        issue(out, at(pointer, name), 'unknown-field', `'${name}' is not a field of this closed object`);
      } else if (rest) rest(value[name], at(pointer, name), out);
    }
    if (present < required.length) {
      // Reported before the members' own issues, as a reader expects: what is missing first.
      const missing: Issue[] = [];
      for (const name of required) {
        if (value[name] === undefined || !Object.hasOwn(value, name))
          missing.push({ pointer: at(pointer, name), rule: 'required', message: `'${name}' is required` });
      }
      out.splice(start, 0, ...missing);
    }
    also?.(value, pointer, out);
  };
  const quick = quickObject(props, rules, full);
  return (value, pointer, out) => (trackPointers ? full(value, pointer, out) : quick(value, pointer, out));
}

/** Run a check and report whether it passed, without keeping its issues. */
export function passes(check: Check, value: unknown): boolean {
  const scratch: Issue[] = [];
  check(value, '', scratch);
  return scratch.length === 0;
}

/** All checks apply to the same value. */
export function all(...checks: Check[]): Check {
  return (value, pointer, out) => {
    for (const check of checks) check(value, pointer, out);
  };
}

export type { JsonObject };
