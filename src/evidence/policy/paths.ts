/**
 * Path arguments of action patterns (`Edit(src/**)`, `Read(.env)`). Forbid and escalate patterns
 * compare paths case-insensitively (Unicode NFC, lower case) on every machine, since the same
 * file is `.ENV` on a case-insensitive disk; allow patterns compare them exactly. Shell words that
 * bash expands against the file system (`.e*`) or at run time (`$f`) are judged here too.
 * Semantics: docs/policy.md, "Paths".
 */

import { posix } from 'node:path';
import { compileGlob, type Glob, type GlobPart, globMatches } from '../../core/glob.js';
import type { ShellWord } from './shell-grammar.js';

export interface PathArgument {
  exact: Glob;
  /** `exact` behind an optional leading directory run: matches any tail of a path. */
  exactAnywhere: Glob;
  folded: Glob;
  foldedAnywhere: Glob;
  absolute: boolean;
  hasSlash: boolean;
  /** The folded pattern text when it has no star (`.env`, `/etc/passwd`). */
  literal?: string;
  /**
   * The folded folder every path the pattern names lies in, as far as its leading literal text
   * says (`protected/**`: `protected`; `/etc/ssh/*.pub`: `/etc/ssh`; `a/b.txt`: `a/b.txt`); `''`
   * when the pattern starts with a star.
   */
  prefix: string;
}

/** Case folding that gives the same answer everywhere: NFC, then the locale-independent lower case. */
export function foldPath(text: string): string {
  return (/[^\x00-\x7f]/.test(text) ? text.normalize('NFC') : text).toLowerCase();
}

function stripDotSlash(parts: GlobPart[]): GlobPart[] {
  const first = parts[0];
  if (first === undefined || !('lit' in first) || !first.lit.startsWith('./')) return parts;
  const rest = first.lit.slice(2);
  return rest === '' ? parts.slice(1) : [{ lit: rest }, ...parts.slice(1)];
}

function literalPrefix(parts: readonly GlobPart[]): string {
  let text = '';
  let whole = true;
  for (const part of parts) {
    if (!('lit' in part)) {
      whole = false;
      break;
    }
    text += part.lit;
  }
  const folder = whole ? text : text.slice(0, text.lastIndexOf('/') + 1);
  return folder === '' ? '' : posix.normalize(folder).replace(/(.)\/+$/, '$1');
}

export function compilePathArgument(parts: GlobPart[], source: string): PathArgument {
  const pathParts = stripDotSlash(parts);
  const foldedParts = pathParts.map((p) => ('lit' in p ? { lit: foldPath(p.lit) } : p));
  const first = pathParts[0];
  const pathSource = source.startsWith('./') ? source.slice(2) : source;
  const anywhere = (p: GlobPart[]): Glob => compileGlob([{ star: 2 }, { lit: '/' }, ...p], 'path');
  const argument: PathArgument = {
    exact: compileGlob(pathParts, 'path'),
    exactAnywhere: anywhere(pathParts),
    folded: compileGlob(foldedParts, 'path'),
    foldedAnywhere: anywhere(foldedParts),
    absolute: first !== undefined && 'lit' in first && first.lit.startsWith('/'),
    hasSlash: pathSource.replace(/\/+$/, '').includes('/'),
    prefix: literalPrefix(foldedParts),
  };
  if (pathParts.every((p) => 'lit' in p)) {
    argument.literal = posix.normalize(foldPath(pathParts.map((p) => ('lit' in p ? p.lit : '')).join('')));
  }
  return argument;
}

/**
 * The path forms a pattern may see. Strict (allow): the path relative to `cwd` (only when inside
 * it) or the absolute path, compared exactly. Lenient (forbid/escalate): folded, and every tail of
 * an absolute path too, since without a working directory any of them could be the project-relative name.
 */
export function pathMatches(
  argument: PathArgument,
  rawPath: string,
  rawCwd: string | undefined,
  lenient: boolean,
): boolean {
  const path = lenient ? foldPath(rawPath) : rawPath;
  const cwd = rawCwd === undefined || !lenient ? rawCwd : foldPath(rawCwd);
  const glob = lenient ? argument.folded : argument.exact;
  const normal = posix.normalize(path).replace(/(.)\/+$/, '$1');
  const isAbsolute = normal.startsWith('/');
  const test = (candidate: string): boolean =>
    globMatches(glob, candidate) || (!argument.hasSlash && globMatches(glob, posix.basename(candidate)));
  if (argument.absolute) {
    const absolute = isAbsolute ? normal : cwd === undefined ? undefined : posix.resolve(cwd, normal);
    return absolute !== undefined && globMatches(glob, absolute);
  }
  let relative: string | undefined;
  if (!isAbsolute) relative = normal;
  else if (cwd !== undefined) relative = posix.relative(posix.normalize(cwd), normal) || '.';
  if (relative !== undefined && (relative === '..' || relative.startsWith('../'))) relative = undefined;
  if (relative !== undefined && test(relative)) return true;
  if (!lenient) return false;
  const tail = normal.startsWith('/') ? normal.slice(1) : normal;
  return (
    globMatches(argument.foldedAnywhere, tail) ||
    (!argument.hasSlash && globMatches(glob, posix.basename(normal)))
  );
}

/** A shell glob segment (`.e*`, `*.pem`, `id_[rd]sa`) as a Tally glob: `?` and `[…]` widen to `*`. */
/**
 * Where a bracket expression opened at `open` ends (its `]`), as bash reads it: `!` or `^`, then a
 * `]` taken as a member, and classes `[:alpha:]`, `[.x.]`, `[=e=]` inside; `open` itself when it
 * does not close (a plain `[`, still read as a wildcard here).
 */
function bracketEnd(segment: string, open: number): number {
  let j = open + 1;
  if (segment[j] === '!' || segment[j] === '^') j++;
  if (segment[j] === ']') j++;
  while (j < segment.length && segment[j] !== ']') {
    const kind = segment[j + 1];
    if (segment[j] === '[' && (kind === ':' || kind === '.' || kind === '=')) {
      const close = segment.indexOf(`${kind}]`, j + 2);
      j = close < 0 ? j + 1 : close + 2;
    } else j++;
  }
  return j < segment.length ? j : open;
}

function shellSegmentGlob(segment: string): Glob {
  const parts: GlobPart[] = [];
  let lit = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    // extglob: `@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)` stand for any text here.
    const extglob = '?*+@!'.includes(c) && segment[i + 1] === '(';
    if (c === '*' || c === '?' || c === '[' || extglob) {
      if (extglob) i = Math.max(i, segment.indexOf(')', i));
      else if (c === '[') i = bracketEnd(segment, i);
      if (lit !== '') parts.push({ lit });
      lit = '';
      parts.push({ star: 1 });
    } else lit += c;
  }
  if (lit !== '') parts.push({ lit });
  return compileGlob(parts, 'path');
}

/** True when the shell glob segment could name `name` (a leading dot is never matched by a wildcard). */
function segmentCouldBe(segment: string, name: string): boolean {
  if (name.startsWith('.') && !segment.startsWith('.') && !segment.includes('(')) return false;
  return globMatches(shellSegmentGlob(segment), name);
}

/** The last path segment of a word, unless an expansion reaches into it. */
function staticLastSegment(word: ShellWord): string | undefined {
  const segment = word.value.slice(word.value.lastIndexOf('/') + 1);
  return word.dynamic && /[$`)}]/.test(segment) ? undefined : segment;
}

/**
 * How a forbid/escalate path pattern meets a shell word: `yes` when it names the file (or, for
 * a glob, may expand to it), `possible` when the word is computed at run time and could be it.
 */
export function shellPathMatch(
  argument: PathArgument,
  word: ShellWord,
  cwd: string | undefined,
): 'yes' | 'possible' | 'no' {
  const path = foldPath(word.value);
  if (!word.dynamic && !word.glob) return pathMatches(argument, path, cwd, true) ? 'yes' : 'no';
  if (pathMatches(argument, path, cwd, true)) return 'yes';
  const last = staticLastSegment(word);
  const literal = argument.literal;
  if (literal !== undefined && !argument.hasSlash) {
    if (last === undefined) return 'possible';
    if (!word.glob || /[$`]/.test(last)) return last === literal ? 'yes' : 'no';
    return segmentCouldBe(last, literal) ? 'yes' : 'no';
  }
  if (literal !== undefined && argument.absolute && word.glob && !word.dynamic) {
    const segments = path.split('/');
    const target = literal.split('/');
    return segments.length === target.length &&
      segments.every((s, i) => segmentCouldBe(s, target[i] as string))
      ? 'yes'
      : 'no';
  }
  if (word.glob && !word.dynamic && argument.prefix !== '' && globReaches(argument, path, cwd))
    return 'possible';
  return word.dynamic ? 'possible' : 'no';
}

/**
 * True when a glob (`protec?ed/x`, `p*`) may expand to a path at or under the folder a pattern's
 * leading text names, or to a folder holding it: bash expands it against files that exist only
 * when the command runs, so each of its segments is compared with the folder's.
 */
function globReaches(argument: PathArgument, path: string, rawCwd: string | undefined): boolean {
  const cwd = rawCwd === undefined ? undefined : foldPath(rawCwd);
  const normal = posix.normalize(path).replace(/(.)\/+$/, '$1');
  let at: string | undefined = normal;
  if (argument.absolute)
    at = normal.startsWith('/') ? normal : cwd === undefined ? undefined : posix.resolve(cwd, normal);
  else if (normal.startsWith('/'))
    at = cwd === undefined ? undefined : posix.relative(posix.normalize(cwd), normal);
  return at !== undefined && at !== '..' && !at.startsWith('../') && globMeets(at, argument.prefix);
}

/**
 * True when a shell glob path may name `folder`, a path under it, or a folder holding it (both
 * relative to one place, or both absolute; folded): each segment the two share could be equal.
 */
export function globMeets(glob: string, folder: string): boolean {
  const segments = glob.split('/');
  const held = folder.split('/');
  // `~/…` in a pattern is the home folder, which no glob expands to (a folder named `~` is not it).
  return segments.every(
    (s, i) =>
      i >= held.length ||
      s === held[i] ||
      (s !== '' && !(i === 0 && held[0] === '~') && segmentCouldBe(s, held[i] as string)),
  );
}
