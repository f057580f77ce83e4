/**
 * The pieces of the static bash reader (shell-grammar.ts) that are data, not scanning: what a
 * word, a redirection and a simple command are, the operators, and how `cd` moves the directory
 * the rest of a line runs in.
 */

import { posix } from 'node:path';

/** Longer than any real path (PATH_MAX is 4096 on Linux). */
const MAX_CWD_LENGTH = 4096;

export interface ShellWord {
  /** The word as written. */
  raw: string;
  /** What bash passes for it when it is not `dynamic`; otherwise the text with the expansions as written. */
  value: string;
  /** Holds a parameter expansion, command or process substitution: known only at run time. */
  dynamic: boolean;
  /** Holds an unquoted `*`, `?` or `[`: bash matches it against the file system. */
  glob: boolean;
  /** Starts with an unquoted `~`: relative to a home directory. */
  tilde: boolean;
}

export type RedirectOp = '<' | '>' | '>>' | '>|' | '<>' | '&>' | '&>>' | '>&' | '<&' | '<<' | '<<-' | '<<<';

export interface Redirection {
  fd?: number;
  op: RedirectOp;
  target: ShellWord;
  /** A here-document's body (`<<`), once its lines have been read. */
  body?: string;
}

export interface ShellCommand {
  /** The source text of the command, trimmed. */
  raw: string;
  /** 0 at the top level, +1 per substitution, subshell or inline script. */
  depth: number;
  assignments: ShellWord[];
  /** Words after reserved words and assignments, braces expanded. */
  words: ShellWord[];
  redirections: Redirection[];
  /** True when a pipe feeds this command's standard input. */
  pipedInput: boolean;
  /** Read inside `((…))` or `$((…))`: its words are an arithmetic expression, not a command. */
  arithmetic?: boolean;
  /** The directory the command runs in, relative to where the line started (`.`); undefined when a `cd` made it unknowable. */
  cwd: string | undefined;
  /**
   * Where the command runs when each `cd` operand is read as written, backslashes and all, where
   * that is another folder than `cwd` (`cd a\\b`: `a\\b`, where bash goes to `ab`); undefined when it is
   * unknowable. Codex applies `cd DIR && apply_patch <<EOF` itself, in DIR as written
   * (src/evidence/policy/shell-patch.ts).
   */
  asWritten?: { cwd: string | undefined };
}

export interface ShellParse {
  commands: ShellCommand[];
  /** False when nesting went past the cap, or a quote or substitution was left open. */
  complete: boolean;
}

export type Connector = ';' | '&&' | '||' | '|' | '&' | '\n' | 'end';

export interface PendingHeredoc {
  redirection: Redirection;
  delimiter: string;
  stripTabs: boolean;
  expands: boolean;
}

/** A word being read: its value, and where unquoted braces and commas are (for brace expansion). */
export class WordBuffer {
  value = '';
  dynamic = false;
  glob = false;
  tilde = false;
  quoted = false;
  braceMarks: number[] = [];
  start = -1;

  add(text: string): void {
    this.value += text;
  }
  reset(): void {
    this.value = '';
    this.dynamic = this.glob = this.tilde = this.quoted = false;
    this.braceMarks = [];
    this.start = -1;
  }
}

/** The redirection operator at `i` (longest match first). */
export function redirectOperator(src: string, i: number): RedirectOp {
  for (const op of ['&>>', '<<<', '<<-', '&>', '>>', '>|', '<>', '>&', '<&', '<<', '<', '>'] as const) {
    if (src.startsWith(op, i)) return op;
  }
  return '>';
}

/**
 * A `cd` operand as written, as Codex's reading of `cd DIR && apply_patch` takes it (tree-sitter's
 * source text of the word, of a double-quoted string's contents, or of a single-quoted string's):
 * nothing unescaped, one pair of enclosing quotes taken off.
 */
export function writtenValue(word: ShellWord): string {
  const raw = word.raw;
  const quote = raw[0];
  if (raw.length >= 2 && (quote === '"' || quote === "'") && raw.endsWith(quote)) {
    const inner = raw.slice(1, -1);
    if (quote === '"' || !inner.includes("'")) return inner;
  }
  return raw;
}

/** The directory after a command: `cd DIR` (or `pushd`) moves it for what follows with `;`, `&&` or a newline. */
export function nextCwd(
  command: ShellCommand | undefined,
  connector: Connector,
  cwd: string | undefined,
  /** How an operand is read: as bash passes it, or as written (writtenValue). */
  read: (word: ShellWord) => string = (word) => word.value,
): string | undefined {
  if (command === undefined) return cwd;
  let words = command.words;
  while (words[0] !== undefined && (words[0].value === 'builtin' || words[0].value === 'command'))
    words = words.slice(1);
  const program = words[0]?.value;
  if (program !== 'cd' && program !== 'pushd' && program !== 'popd') return cwd;
  if (connector === '|' || connector === '&') return cwd;
  const operands = words.slice(1).filter((word) => !/^-[LPe@]+$/.test(word.value));
  const target = operands[0];
  if (connector === '||' || program === 'popd' || target === undefined || operands.length > 1)
    return undefined;
  // `pushd +N` / `-N` rotates the directory stack: which folder comes up is the run's.
  if (program === 'pushd' && /^[+-]\d+$/.test(target.value)) return undefined;
  if (target.dynamic || target.glob || target.tilde || target.value === '-' || cwd === undefined)
    return undefined;
  const dir = read(target);
  const next = posix.normalize(posix.isAbsolute(dir) ? dir : posix.join(cwd, dir));
  // A directory deeper than any real one is a hostile line: past this length it is unknown.
  return next.length > MAX_CWD_LENGTH ? undefined : next;
}
