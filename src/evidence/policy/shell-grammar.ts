/**
 * A static reading of bash command lines: the simple commands a line runs, each with its words as
 * bash would pass them (quotes removed, `$'…'` decoded, braces expanded), its leading assignments,
 * its redirections and the directory it runs in as far as `cd` shows. Words that depend on the run
 * time (`$X`, `$(…)`, backticks) are kept as written and flagged `dynamic`; the commands inside
 * substitutions are listed too. One pass over the text with nesting capped, so hostile input cannot
 * make it slow. Grammar and limits: docs/policy.md, "Shell commands".
 */

import {
  type Connector,
  nextCwd,
  type PendingHeredoc,
  type Redirection,
  type RedirectOp,
  redirectOperator,
  type ShellCommand,
  type ShellParse,
  type ShellWord,
  WordBuffer,
  writtenValue,
} from './shell-syntax.js';
import { decodeAnsiC, expandBraces } from './shell-words.js';

export type { Redirection, RedirectOp, ShellCommand, ShellParse, ShellWord } from './shell-syntax.js';

/** Deeper nesting than this is not parsed; the parse is then incomplete. */
export const MAX_SHELL_NESTING = 24;

const LEADING_RESERVED = new Set(['!', '{', '}', 'then', 'do', 'else', 'elif', 'if', 'while', 'until']);
const CLOSING_RESERVED = new Set(['}', 'fi', 'done', 'esac', 'then', 'do', 'else', ';;']);
const BLANKS = ' \t\r\f\v';
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const SPECIAL_PARAMETERS = '@*#?$!-0123456789';

class Scanner {
  private heredocs: PendingHeredoc[] = [];
  /** How many `((` the scan is inside: what is read there is arithmetic. */
  private arithmetic = 0;

  constructor(
    private readonly src: string,
    private readonly parse: ShellParse,
  ) {}

  /** Scans commands from `pos` to the end, or (when `nested`) to an unmatched `)`; returns that index. */
  script(pos: number, depth: number, nested: boolean, startCwd: string | undefined): number {
    const src = this.src;
    const n = src.length;
    let cwd = startCwd;
    // The same directory with each `cd` operand read as written (ShellCommand.asWritten).
    let writtenCwd = startCwd;
    let segmentStart = pos;
    let words: ShellWord[] = [];
    let redirections: Redirection[] = [];
    let pendingRedirect: { fd?: number; op: RedirectOp } | undefined;
    let piped = false;
    let casePattern = false;
    let noPatternBefore = -1;
    const w = new WordBuffer();
    const inWord = (): boolean => w.start >= 0;
    const begin = (at: number): void => {
      if (w.start < 0) w.start = at;
    };
    const endWord = (end: number): void => {
      if (!inWord()) return;
      const raw = src.slice(w.start, end);
      const word: ShellWord = { raw, value: w.value, dynamic: w.dynamic, glob: w.glob, tilde: w.tilde };
      if (pendingRedirect !== undefined) {
        const redirection: Redirection = { ...pendingRedirect, target: word };
        redirections.push(redirection);
        if (pendingRedirect.op === '<<' || pendingRedirect.op === '<<-') {
          this.heredocs.push({
            redirection,
            delimiter: word.value,
            stripTabs: pendingRedirect.op === '<<-',
            expands: !w.quoted && !raw.includes('\\'),
          });
        }
        pendingRedirect = undefined;
      } else if (w.braceMarks.length > 0 && !w.dynamic && !ASSIGNMENT.test(raw)) {
        const marks = new Uint8Array(w.value.length);
        for (const m of w.braceMarks) marks[m] = 1;
        const expanded = expandBraces(w.value, marks);
        if (expanded === undefined) this.parse.complete = false;
        for (const value of expanded ?? [w.value]) {
          if (value !== '' || w.quoted) words.push({ ...word, value });
        }
      } else words.push(word);
      w.reset();
    };
    const endSegment = (end: number, connector: Connector): void => {
      endWord(end);
      const command = this.emit(src.slice(segmentStart, end), words, redirections, depth, piped, cwd);
      if (command !== undefined && writtenCwd !== cwd) command.asWritten = { cwd: writtenCwd };
      writtenCwd = nextCwd(command, connector, writtenCwd, writtenValue);
      cwd = nextCwd(command, connector, cwd);
      piped = connector === '|';
      words = [];
      redirections = [];
      pendingRedirect = undefined;
    };
    let i = pos;
    while (i < n) {
      const c = src[i] as string;
      const next = src[i + 1];
      if (!inWord() && words.length === 2 && words[0]?.raw === 'function') {
        // `function NAME`: a definition header; what follows is its body, an ordinary compound command.
        words = [];
        segmentStart = i;
      }
      if (!inWord() && words.length === 3 && words[0]?.raw === 'case' && words[2]?.raw === 'in') {
        endSegment(i, ';');
        segmentStart = i;
        casePattern = true;
      }
      if (casePattern && !inWord() && words.length === 0 && !BLANKS.includes(c) && c !== '\n' && c !== ';') {
        // A case arm's pattern up to its `)`; `esac` ends the case instead.
        if (src.startsWith('esac', i) && !NAME_CHAR.test(src[i + 4] ?? '')) {
          casePattern = false;
          continue;
        }
        casePattern = false;
        const close = i < noPatternBefore ? -1 : casePatternEnd(src, i);
        if (close < 0) {
          // No `)` before the next operator: no later start before it can find one either.
          noPatternBefore = Math.max(noPatternBefore, -close - 1);
          // Not a pattern after all: read on as commands, and say the reading is unsure.
          this.parse.complete = false;
          continue;
        }
        i = close;
        segmentStart = i;
        continue;
      }
      if (c === "'") {
        begin(i);
        w.quoted = true;
        const close = src.indexOf("'", i + 1);
        if (close < 0) this.parse.complete = false;
        const stop = close < 0 ? n : close;
        w.add(src.slice(i + 1, stop));
        i = stop + 1;
      } else if (c === '"') {
        begin(i);
        w.quoted = true;
        i = this.doubleQuoted(i + 1, depth, w, cwd);
      } else if (c === '$' && next === "'") {
        begin(i);
        w.quoted = true;
        const decoded = decodeAnsiC(src, i + 2);
        if (!decoded.closed) this.parse.complete = false;
        w.add(decoded.text);
        i = decoded.end;
      } else if (c === '$' && next === '"') {
        begin(i);
        w.quoted = true;
        i = this.doubleQuoted(i + 2, depth, w, cwd);
      } else if (c === '$') {
        begin(i);
        i = this.dollar(i, depth, w, cwd);
      } else if (c === '\\') {
        if (next === '\n') {
          i += 2;
          continue;
        }
        begin(i);
        w.quoted = true;
        if (next !== undefined) w.add(next);
        i += 2;
      } else if (c === '`') {
        begin(i);
        i = this.backtick(i, depth, w, cwd);
      } else if ((c === '<' || c === '>') && next === '(') {
        begin(i);
        const end = this.nested(i + 2, depth, cwd);
        w.add(src.slice(i, end));
        w.dynamic = true;
        i = end;
      } else if (c === '(' && inWord() && next === ')') {
        // `name()`: a function definition header; its body is an ordinary compound command.
        w.reset();
        words = [];
        i += 2;
        segmentStart = i;
      } else if (
        c === '(' &&
        inWord() &&
        /[?*+@!]$/.test(w.value) &&
        i > 0 &&
        /[?*+@!]/.test(src[i - 1] ?? '')
      ) {
        // An extglob (`@(a|b)`, `!(f)`, `+(x)`) is one word, a glob bash expands when `shopt -s
        // extglob` is on (without it, bash refuses the line).
        let open = 0;
        let j = i;
        for (; j < n; j++) {
          if (src[j] === '(') open++;
          else if (src[j] === ')' && --open === 0) break;
        }
        w.glob = true;
        w.add(src.slice(i, j + 1));
        i = Math.min(n, j + 1);
      } else if (c === '(' && inWord() && ASSIGNMENT.test(src.slice(w.start, i))) {
        const end = this.nested(i + 1, depth, cwd);
        w.add(src.slice(i, end));
        i = end;
      } else if (c === '(') {
        endSegment(i, ';');
        i = this.nested(i + 1, depth, cwd, next === '(');
        segmentStart = i;
      } else if (c === ')') {
        endSegment(i, ';');
        if (nested) return i;
        i++;
        segmentStart = i;
      } else if (c === '#' && !inWord()) {
        while (i < n && src[i] !== '\n') i++;
      } else if (c === '<' || c === '>' || (c === '&' && next === '>')) {
        let fd: number | undefined;
        if (inWord() && /^\d+$/.test(src.slice(w.start, i))) {
          fd = Number(src.slice(w.start, i));
          w.reset();
        } else endWord(i);
        const op = redirectOperator(src, i);
        pendingRedirect = fd === undefined ? { op } : { fd, op };
        i += op.length;
      } else if (c === ';' || c === '&' || c === '|' || c === '\n') {
        let connector: Connector = c === '\n' ? '\n' : c === '&' ? '&' : c === '|' ? '|' : ';';
        let width = 1;
        if (c === '&' && next === '&') [connector, width] = ['&&', 2];
        else if (c === '|' && next === '|') [connector, width] = ['||', 2];
        else if (c === '|' && next === '&') width = 2;
        else if (c === ';' && (next === ';' || next === '&'))
          width = next === ';' && src[i + 2] === '&' ? 3 : 2;
        endSegment(i, connector);
        // `;;`, `;&` and `;;&` end a case arm: a pattern comes next.
        if (width > 1 && c === ';') casePattern = true;
        i += width;
        if (c === '\n') i = this.readHeredocs(i, depth, cwd);
        segmentStart = i;
      } else if (BLANKS.includes(c)) {
        endWord(i);
        i++;
      } else {
        begin(i);
        if (c === '*' || c === '?' || c === '[') w.glob = true;
        else if (c === '{' || c === ',' || c === '}') w.braceMarks.push(w.value.length);
        else if (c === '~' && w.value === '' && !w.quoted) w.tilde = true;
        w.add(c);
        i++;
      }
    }
    if (nested) this.parse.complete = false;
    endSegment(n, 'end');
    if (this.heredocs.length > 0) this.parse.complete = false;
    return n;
  }

  /** `$name`, `${…}`, `$(…)`, `$((…))` or a lone `$`; returns the index after it. */
  private dollar(i: number, depth: number, w: WordBuffer, cwd: string | undefined): number {
    const src = this.src;
    const next = src[i + 1];
    if (next === '(') {
      const end = this.nested(i + 2, depth, cwd, src[i + 2] === '(');
      w.add(src.slice(i, end));
      w.dynamic = true;
      return end;
    }
    if (next === '{') {
      let j = i + 2;
      let open = 1;
      while (j < src.length && open > 0) {
        const c = src[j];
        if (c === '$' && src[j + 1] === '(') j = this.nested(j + 2, depth, cwd);
        else if (c === '`') j = this.backtick(j, depth, new WordBuffer(), cwd);
        else if (c === '\\') j += 2;
        else {
          if (c === '{') open++;
          else if (c === '}') open--;
          j++;
        }
      }
      if (open > 0) this.parse.complete = false;
      const end = Math.min(j, src.length);
      w.add(src.slice(i, end));
      w.dynamic = true;
      return end;
    }
    if (next !== undefined && (NAME_START.test(next) || SPECIAL_PARAMETERS.includes(next))) {
      let j = i + 2;
      if (NAME_START.test(next)) while (j < src.length && NAME_CHAR.test(src[j] as string)) j++;
      w.add(src.slice(i, j));
      w.dynamic = true;
      return j;
    }
    w.add('$');
    return i + 1;
  }

  /** Scans `"…"` from just after the opening quote into `w`; returns the index after the close. */
  private doubleQuoted(
    pos: number,
    depth: number,
    w: WordBuffer,
    cwd: string | undefined,
    quoted = true,
  ): number {
    const src = this.src;
    const escapable = quoted ? '$`"\\\n' : '$`\\\n';
    let i = pos;
    while (i < src.length) {
      const c = src[i] as string;
      if (c === '"' && quoted) return i + 1;
      if (c === '\\' && i + 1 < src.length && escapable.includes(src[i + 1] as string)) {
        if (src[i + 1] !== '\n') w.add(src[i + 1] as string);
        i += 2;
      } else if (c === '$') {
        i = this.dollar(i, depth, w, cwd);
      } else if (c === '`') {
        i = this.backtick(i, depth, w, cwd);
      } else {
        w.add(c);
        i++;
      }
    }
    if (quoted) this.parse.complete = false;
    return i;
  }

  /** Scans a `(…)` body starting just after `(`; returns the index after the matching `)`. */
  private nested(pos: number, depth: number, cwd: string | undefined, arithmetic = false): number {
    if (depth + 1 > MAX_SHELL_NESTING) {
      this.parse.complete = false;
      return this.skipBalanced(pos);
    }
    if (arithmetic) this.arithmetic++;
    const close = this.script(pos, depth + 1, true, cwd);
    if (arithmetic) this.arithmetic--;
    return Math.min(close + 1, this.src.length);
  }

  /** Past the nesting cap: the matching `)` by counting, without looking inside. */
  private skipBalanced(pos: number): number {
    let open = 1;
    for (let i = pos; i < this.src.length; i++) {
      const c = this.src[i];
      if (c === '(') open++;
      else if (c === ')' && --open === 0) return i + 1;
    }
    return this.src.length;
  }

  /** A backtick substitution starting at its opening backtick; returns the index after the close. */
  private backtick(pos: number, depth: number, w: WordBuffer, cwd: string | undefined): number {
    const src = this.src;
    let i = pos + 1;
    while (i < src.length && src[i] !== '`') i += src[i] === '\\' ? 2 : 1;
    if (i >= src.length) this.parse.complete = false;
    const end = Math.min(i + 1, src.length);
    const body = src.slice(pos + 1, Math.min(i, src.length)).replace(/\\([`\\$])/g, '$1');
    parseInto(body, this.parse, depth + 1, cwd);
    w.add(src.slice(pos, end));
    w.dynamic = true;
    return end;
  }

  /** After a newline: the bodies of the here-documents opened on the line just ended. */
  private readHeredocs(pos: number, depth: number, cwd: string | undefined): number {
    let i = pos;
    const pending = this.heredocs;
    this.heredocs = [];
    for (const doc of pending) {
      const lines: string[] = [];
      let closed = false;
      while (i < this.src.length) {
        const newline = this.src.indexOf('\n', i);
        const lineEnd = newline < 0 ? this.src.length : newline;
        let line = this.src.slice(i, lineEnd);
        i = newline < 0 ? this.src.length : newline + 1;
        if (doc.stripTabs) line = line.replace(/^\t+/, '');
        if (line === doc.delimiter) {
          closed = true;
          break;
        }
        lines.push(line);
      }
      if (!closed) this.parse.complete = false;
      const body = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
      doc.redirection.body = body;
      // An unquoted delimiter expands the body like double quotes: its substitutions run.
      if (doc.expands) new Scanner(body, this.parse).doubleQuoted(0, depth, new WordBuffer(), cwd, false);
    }
    return i;
  }

  private emit(
    rawText: string,
    rawWords: ShellWord[],
    redirections: Redirection[],
    depth: number,
    pipedInput: boolean,
    cwd: string | undefined,
  ): ShellCommand | undefined {
    let start = 0;
    while (start < rawWords.length && LEADING_RESERVED.has(rawWords[start]?.raw ?? '')) start++;
    const assignments: ShellWord[] = [];
    while (start < rawWords.length && ASSIGNMENT.test(rawWords[start]?.raw ?? '')) {
      assignments.push(rawWords[start] as ShellWord);
      start++;
    }
    const words = rawWords.slice(start);
    const first = words[0]?.raw;
    if (words.length === 1 && first !== undefined && CLOSING_RESERVED.has(first)) words.length = 0;
    if (words.length === 0 && assignments.length === 0 && redirections.length === 0) return undefined;
    const command: ShellCommand = {
      raw: rawText.trim(),
      depth,
      assignments,
      words,
      redirections,
      pipedInput,
      cwd,
      ...(this.arithmetic > 0 ? { arithmetic: true } : {}),
    };
    this.parse.commands.push(command);
    return command;
  }
}

/**
 * The index just after a case arm's pattern (`a|"b)"|c)`), skipping quoted text. When an
 * operator or the end comes first (no pattern holds one), `-(its index) - 1`.
 */
function casePatternEnd(src: string, pos: number): number {
  for (let i = pos; i < src.length; i++) {
    const c = src[i];
    if (c === ')') return i + 1;
    if (c === '\\') i++;
    else if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close < 0) return -src.length - 1;
      i = close;
    } else if (c === '"') {
      for (i++; i < src.length && src[i] !== '"'; i++) if (src[i] === '\\') i++;
    } else if (c === ';' || c === '\n' || c === '&' || c === '<' || c === '>') return -i - 1;
  }
  return -src.length - 1;
}

function parseInto(script: string, parse: ShellParse, depth: number, cwd: string | undefined): void {
  if (depth > MAX_SHELL_NESTING) {
    parse.complete = false;
    return;
  }
  new Scanner(script, parse).script(0, depth, false, cwd);
}

/**
 * Every simple command a command line runs, in the order their text ends (inner substitutions
 * first). `depth` and `at.cwd` place an inline script (`bash -c '…'`) inside the command that runs
 * it (`at.cwd` undefined: a folder not known now, as for a trap's action, which runs later).
 */
export function parseShell(
  script: string,
  depth = 0,
  at: { cwd: string | undefined } = { cwd: '.' },
): ShellParse {
  const parse: ShellParse = { commands: [], complete: true };
  parseInto(script, parse, depth, at.cwd);
  return parse;
}
