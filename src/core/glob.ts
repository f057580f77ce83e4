/**
 * Tally's one glob dialect, used by certificate action patterns (`Bash(git status*)`,
 * `Edit(src/**)`) and by the rule file of `tally ahp serve`: only `*` and `**` are special, `\`
 * makes the next character literal. Globs compile to a small NFA run in one pass over the text:
 * time is (text length × pattern length) whatever the input, with no regex backtracking, so a
 * hostile command or path cannot stall a matcher. Semantics per argument type: docs/policy.md.
 */
import { TallyError } from './errors.js';

export type GlobErrorCode = 'bad-escape' | 'bad-wildcard';

/** A glob that cannot be parsed; `detail.position` is the index in the text at fault. */
export class GlobError extends TallyError<GlobErrorCode> {}

/** One piece of a parsed glob: literal text (escapes already removed), `*` or `**`. */
export type GlobPart = { lit: string } | { star: 1 | 2 };

/** How stars behave: in commands and URLs every star crosses `/`; in paths `*` stays inside one segment. */
export type GlobMode = 'command' | 'path';

/**
 * Splits glob text (from `start` to `end`) into parts: `*` and `**` are stars, `\` makes the next
 * character literal. Three stars in a row or a trailing lone `\` throw a GlobError naming the
 * position.
 */
export function globParts(text: string, start = 0, end = text.length): GlobPart[] {
  const parts: GlobPart[] = [];
  let lit = '';
  for (let i = start; i < end; i++) {
    const c = text[i] as string;
    if (c === '\\') {
      if (i + 1 >= end) {
        throw new GlobError('bad-escape', 'a backslash must escape a character', { position: i });
      }
      lit += text[++i];
    } else if (c === '*') {
      if (lit !== '') parts.push({ lit });
      lit = '';
      const double = text[i + 1] === '*';
      if (double) i++;
      if (text[i + 1] === '*' && i + 1 < end) {
        throw new GlobError('bad-wildcard', 'at most two stars in a row', { position: i + 1 });
      }
      parts.push({ star: double ? 2 : 1 });
    } else lit += c;
  }
  if (lit !== '') parts.push({ lit });
  return parts;
}

const ANY = -1;
const SEGMENT = -2;

export interface Glob {
  /** Per state: a char code to consume, ANY (any char, stay) or SEGMENT (any but `/`, stay). */
  readonly steps: Int32Array;
  /** Per state: forward epsilon edges. */
  readonly skips: readonly (readonly number[])[];
}

class Builder {
  steps: number[] = [];
  skips: number[][] = [];

  state(step: number): number {
    this.steps.push(step);
    this.skips.push([]);
    return this.steps.length - 1;
  }
  literal(text: string): void {
    for (let i = 0; i < text.length; i++) this.state(text.charCodeAt(i));
  }
  star(step: number): void {
    const s = this.state(step);
    this.skips[s]?.push(s + 1);
  }
  /** Everything added by `body` may be skipped as a whole. */
  optional(body: () => void): void {
    const start = this.steps.length;
    body();
    const end = this.steps.length;
    if (end > start) this.skips[start]?.push(end);
  }
  build(): Glob {
    return { steps: Int32Array.from(this.steps), skips: [...this.skips, []] };
  }
}

const SLASH = '/'.charCodeAt(0);

/**
 * Compiles glob parts. With `prefixWord` (Claude Code's `cmd:*` form) the parts are a command prefix
 * that must end the text or be followed by a space. In path mode `**` followed by `/` may match no
 * directory at all (so `src/` + `**` + `/x` matches `src/x`), and a trailing `/` + `**` also matches
 * the directory itself.
 */
export function compileGlob(parts: readonly GlobPart[], mode: GlobMode, prefixWord = false): Glob {
  const b = new Builder();
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as GlobPart;
    if ('lit' in part) {
      b.literal(part.lit);
      continue;
    }
    if (mode === 'command' || part.star === 1) {
      b.star(mode === 'command' ? ANY : SEGMENT);
      continue;
    }
    const next = parts[i + 1];
    const prev = b.steps[b.steps.length - 1];
    const atSegmentStart = b.steps.length === 0 || prev === SLASH;
    if (atSegmentStart && next !== undefined && 'lit' in next && next.lit.startsWith('/')) {
      // `**/rest`: either nothing, or anything ending in `/`.
      b.optional(() => {
        b.star(ANY);
        b.literal('/');
      });
      b.literal(next.lit.slice(1));
      i++;
    } else if (next === undefined && prev === SLASH) {
      // trailing `/**`: the directory itself, or anything below it.
      b.steps.pop();
      b.skips.pop();
      b.optional(() => {
        b.literal('/');
        b.star(ANY);
      });
    } else {
      b.star(ANY);
    }
  }
  if (prefixWord) {
    b.optional(() => {
      b.literal(' ');
      b.star(ANY);
    });
  }
  return b.build();
}

function close(glob: Glob, active: Uint8Array): void {
  for (let s = 0; s < active.length; s++) {
    if (active[s] !== 1) continue;
    for (const target of glob.skips[s] ?? []) active[target] = 1;
  }
}

/** True when the glob matches the whole text. */
export function globMatches(glob: Glob, text: string): boolean {
  const size = glob.steps.length + 1;
  let active = new Uint8Array(size);
  let next = new Uint8Array(size);
  active[0] = 1;
  close(glob, active);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    next.fill(0);
    let any = false;
    for (let s = 0; s < size - 1; s++) {
      if (active[s] !== 1) continue;
      const step = glob.steps[s] as number;
      if (step === ANY || (step === SEGMENT && c !== SLASH)) {
        next[s] = 1;
        any = true;
      } else if (step === c) {
        next[s + 1] = 1;
        any = true;
      }
    }
    if (!any) return false;
    close(glob, next);
    [active, next] = [next, active];
  }
  return active[size - 1] === 1;
}
