/**
 * Splits a shell command line into the simple commands it would run, so that action patterns can be
 * matched against each one: `a && b`, `a; b`, `a | b`, `a || b`, `a & b`, newlines, subshells,
 * `$(…)`, backticks, `<(…)`, and the script inside `bash -c '…'` / `sh -lc …` / `eval …`.
 * This is a matcher's view of shell syntax, not an interpreter: what it covers is listed in
 * docs/policy.md. It runs in one pass (nesting is capped), so hostile input cannot make it slow.
 */

import { posix } from 'node:path';

export interface SimpleCommand {
  /** The source text of this command, trimmed. */
  raw: string;
  /** Words with quotes and backslashes removed, leading keywords (`if`, `then`, `{`, `!` …) dropped. */
  words: string[];
  /** `words` joined with single spaces. */
  text: string;
  /** `text` without leading `VAR=value` assignments and wrappers (`sudo`, `env`, `nohup`, `xargs` …), program by basename. */
  stripped: string;
  /** True when this command only runs an inline script (`bash -c '…'`, `eval …`) whose commands are listed too. */
  wrapper: boolean;
  /** 0 for the top level, +1 per `$(…)`, subshell, backtick or inline script. */
  depth: number;
}

export interface ShellAnalysis {
  commands: SimpleCommand[];
  /** False when nesting went deeper than the cap or a quote/paren was left open: the list may be short. */
  complete: boolean;
}

/** Deeper nesting than this is not parsed; the analysis is then marked incomplete. */
export const MAX_SHELL_NESTING = 24;

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'fish', 'ash', 'busybox']);
const LEADING_KEYWORDS = new Set([
  '!',
  '{',
  '}',
  '(',
  ')',
  'then',
  'do',
  'else',
  'elif',
  'if',
  'while',
  'until',
]);
const CLOSING_KEYWORDS = new Set(['}', 'fi', 'done', 'esac', 'then', 'do', 'else', ';;']);
const STRUCTURAL = new Set(['for', 'case', 'select', 'function', 'in']);
/** Wrappers that run the rest of their words as a command, with their options that take a value. */
const WRAPPERS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['sudo', new Set(['-u', '-g', '-C', '-h', '-p', '-r', '-t', '-U', '-D'])],
  ['doas', new Set(['-u', '-C'])],
  ['env', new Set(['-u', '-C', '-S'])],
  ['command', new Set<string>()],
  ['builtin', new Set<string>()],
  ['exec', new Set(['-a'])],
  ['nohup', new Set<string>()],
  ['nice', new Set(['-n'])],
  ['ionice', new Set(['-c', '-n', '-p'])],
  ['time', new Set(['-f', '-o'])],
  ['timeout', new Set(['-s', '-k'])],
  ['stdbuf', new Set(['-i', '-o', '-e'])],
  ['setsid', new Set<string>()],
  ['xargs', new Set(['-I', '-L', '-n', '-P', '-s', '-d', '-E', '-a'])],
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;
const SEPARATORS = ';&|\n';
const BLANKS = ' \t\r\f\v';

/** Drop leading assignments and wrapper commands (with their options); the program goes by its basename. */
function stripPrefixes(words: readonly string[]): string[] {
  let i = 0;
  for (;;) {
    while (i < words.length && ASSIGNMENT.test(words[i] ?? '')) i++;
    const program = words[i];
    if (program === undefined) break;
    const withValue = WRAPPERS.get(posix.basename(program));
    if (withValue === undefined) break;
    const wrapper = posix.basename(program);
    i++;
    while (i < words.length) {
      const word = words[i] ?? '';
      if (word === '--') {
        i++;
        break;
      }
      if (word.startsWith('-') && word.length > 1) {
        i += withValue.has(word) ? 2 : 1;
      } else if (wrapper === 'timeout' && /^[0-9.]+[smhd]?$/.test(word)) {
        i++;
      } else if (wrapper === 'env' && ASSIGNMENT.test(word)) {
        i++;
      } else break;
    }
  }
  const rest = words.slice(i);
  if (rest[0] !== undefined) rest[0] = posix.basename(rest[0]);
  return rest;
}

/** The inline script a command runs, when it is `<shell> [opts] -c <script>` or `eval <words…>`. */
function inlineScript(stripped: readonly string[]): string | undefined {
  const program = stripped[0];
  if (program === 'eval') return stripped.slice(1).join(' ');
  if (program === undefined || !SHELLS.has(program)) return undefined;
  for (let i = 1; i < stripped.length; i++) {
    const word = stripped[i] ?? '';
    if (!word.startsWith('-') || word === '-' || word === '--') return undefined;
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(word)) return stripped[i + 1];
  }
  return undefined;
}

class Scanner {
  constructor(
    private readonly src: string,
    private readonly analysis: ShellAnalysis,
  ) {}

  /**
   * Scans commands from `pos` until the end, or (when `nested`) an unmatched `)`.
   * Returns the index of that `)` or the length of the source.
   */
  script(pos: number, depth: number, nested: boolean): number {
    const src = this.src;
    const n = src.length;
    let segmentStart = pos;
    let words: string[] = [];
    let word = '';
    let inWord = false;
    const endWord = (): void => {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    };
    const endSegment = (end: number): void => {
      endWord();
      this.emit(src.slice(segmentStart, end), words, depth);
      words = [];
    };
    let i = pos;
    while (i < n) {
      const c = src[i] as string;
      const next = src[i + 1];
      if (c === "'") {
        const close = src.indexOf("'", i + 1);
        if (close < 0) this.analysis.complete = false;
        const stop = close < 0 ? n : close;
        word += src.slice(i + 1, stop);
        inWord = true;
        i = stop + 1;
      } else if (c === '"') {
        const [text, end] = this.doubleQuoted(i + 1, depth);
        word += text;
        inWord = true;
        i = end;
      } else if (c === '\\') {
        if (next !== undefined && next !== '\n') {
          word += next;
          inWord = true;
        }
        i += 2;
      } else if (c === '`') {
        const end = this.backtick(i, depth);
        word += src.slice(i, end);
        inWord = true;
        i = end;
      } else if ((c === '$' || c === '<' || c === '>') && next === '(') {
        const end = this.nested(i + 2, depth);
        word += src.slice(i, end);
        inWord = true;
        i = end;
      } else if (c === '(' && !inWord) {
        endSegment(i);
        i = this.nested(i + 1, depth);
        segmentStart = i;
      } else if (c === ')') {
        if (nested) {
          endSegment(i);
          return i;
        }
        endSegment(i);
        i++;
        segmentStart = i;
      } else if (c === '#' && !inWord) {
        while (i < n && src[i] !== '\n') i++;
        endSegment(i);
        segmentStart = i;
      } else if ((c === '>' || c === '<') && (next === '&' || next === '|')) {
        word += c + next;
        inWord = true;
        i += 2;
      } else if (c === '&' && next === '>') {
        word += c;
        inWord = true;
        i++;
      } else if (SEPARATORS.includes(c)) {
        endSegment(i);
        while (i < n && SEPARATORS.includes(src[i] as string)) i++;
        segmentStart = i;
      } else if (BLANKS.includes(c)) {
        endWord();
        i++;
      } else {
        word += c;
        inWord = true;
        i++;
      }
    }
    if (nested) this.analysis.complete = false;
    endSegment(n);
    return n;
  }

  /** Scans `"…"` from just after the opening quote; returns the unquoted text and the index after the close. */
  private doubleQuoted(pos: number, depth: number): [string, number] {
    const src = this.src;
    let text = '';
    let i = pos;
    while (i < src.length) {
      const c = src[i] as string;
      if (c === '"') return [text, i + 1];
      if (c === '\\' && i + 1 < src.length && '$`"\\\n'.includes(src[i + 1] as string)) {
        if (src[i + 1] !== '\n') text += src[i + 1];
        i += 2;
      } else if (c === '$' && src[i + 1] === '(') {
        const end = this.nested(i + 2, depth);
        text += src.slice(i, end);
        i = end;
      } else if (c === '`') {
        const end = this.backtick(i, depth);
        text += src.slice(i, end);
        i = end;
      } else {
        text += c;
        i++;
      }
    }
    this.analysis.complete = false;
    return [text, i];
  }

  /** Scans a `(…)` body starting just after `(`; returns the index after the matching `)`. */
  private nested(pos: number, depth: number): number {
    if (depth + 1 > MAX_SHELL_NESTING) {
      this.analysis.complete = false;
      return this.skipBalanced(pos);
    }
    const close = this.script(pos, depth + 1, true);
    return Math.min(close + 1, this.src.length);
  }

  /** Past the nesting cap: find the matching `)` by counting, without looking inside. */
  private skipBalanced(pos: number): number {
    let open = 1;
    for (let i = pos; i < this.src.length; i++) {
      const c = this.src[i];
      if (c === '(') open++;
      else if (c === ')' && --open === 0) return i + 1;
    }
    return this.src.length;
  }

  /** Scans a backtick substitution starting at the opening backtick; returns the index after the close. */
  private backtick(pos: number, depth: number): number {
    const src = this.src;
    let i = pos + 1;
    while (i < src.length && src[i] !== '`') i += src[i] === '\\' ? 2 : 1;
    if (i >= src.length) this.analysis.complete = false;
    const body = src.slice(pos + 1, Math.min(i, src.length)).replace(/\\([`\\$])/g, '$1');
    this.inline(body, depth + 1);
    return Math.min(i + 1, src.length);
  }

  /** Scans a script given as text (backtick body, `bash -c` argument) as its own nested level. */
  private inline(script: string, depth: number): void {
    if (depth > MAX_SHELL_NESTING) {
      this.analysis.complete = false;
      return;
    }
    new Scanner(script, this.analysis).script(0, depth, false);
  }

  private emit(rawText: string, rawWords: string[], depth: number): void {
    let start = 0;
    while (start < rawWords.length && LEADING_KEYWORDS.has(rawWords[start] ?? '')) start++;
    const words = rawWords.slice(start);
    const first = words[0];
    if (first === undefined || STRUCTURAL.has(first)) return;
    if (words.length === 1 && CLOSING_KEYWORDS.has(first)) return;
    const stripped = stripPrefixes(words);
    const script = inlineScript(stripped);
    this.analysis.commands.push({
      raw: rawText.trim(),
      words,
      text: words.join(' '),
      stripped: stripped.join(' '),
      wrapper: script !== undefined,
      depth,
    });
    if (script !== undefined) this.inline(script, depth + 1);
  }
}

/** Every simple command a command line runs, each listed when its text ends (inner substitutions first). */
export function splitShellCommand(command: string): ShellAnalysis {
  const analysis: ShellAnalysis = { commands: [], complete: true };
  new Scanner(command, analysis).script(0, 0, false);
  return analysis;
}
