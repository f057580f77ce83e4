/**
 * What an awk program does beyond reading its input and printing: the files its `print`/`printf`
 * redirections write (`print > "f"`, `>> "f"`), the files `getline < "f"` reads, and whether it
 * runs or loads anything (`system()`, a pipe `|` or coprocess `|&`, gawk's `@load`, `@include` and
 * indirect calls `@f()`). Read with the lexical rules the awk grammar gives (POSIX awk, "Lexical
 * Conventions"; gawk's manual): in a print statement an unparenthesized `>` is a redirection, not a
 * comparison, and `/` starts a regular expression only where an operand may start. The tests hold
 * it to the real gawk and mawk: the files a program creates.
 */

export interface AwkProgram {
  /** Files written: a string literal's text, or null when the name is computed at run time. */
  writes: (string | null)[];
  /** Files `getline` reads by name, the same way. */
  reads: (string | null)[];
  /** Why the program runs or loads code beyond itself, when it does. */
  runs?: string;
  /** `@include "inplace"`: the input files are rewritten in place. */
  inPlace: boolean;
  /** Why the program could not be read to its end. */
  error?: string;
}

type Kind = 'name' | 'number' | 'string' | 'regex' | 'op' | 'newline';

interface Token {
  kind: Kind;
  text: string;
  /** A string literal's value, escapes decoded. */
  value?: string;
  /** A `)` that closes `if (…)`, `while (…)`, `for (…)` or `switch (…)`: a statement starts after it. */
  control?: boolean;
}

const CONTROL = new Set(['if', 'while', 'for', 'switch']);
/** Words gawk reserves and mawk (or gawk --posix) takes for variables. */
const GAWK_ONLY = new Set(['case', 'default', 'switch', 'BEGINFILE', 'ENDFILE', 'func']);

const KEYWORDS = new Set(
  'BEGIN END BEGINFILE ENDFILE function func if else while for do break continue next nextfile exit return delete getline print printf in case default switch'.split(
    ' ',
  ),
);
const OPERATORS = [
  '**=',
  '>>',
  '>=',
  '<=',
  '==',
  '!=',
  '!~',
  '&&',
  '||',
  '|&',
  '++',
  '--',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '^=',
  '**',
  '::',
];
const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

/** True when an operand ends at this token: a `/` after it divides. */
function endsOperand(t: Token | undefined): boolean {
  if (t === undefined) return false;
  if (t.kind === 'name') return !KEYWORDS.has(t.text) || t.text === 'getline';
  if (t.kind === 'number' || t.kind === 'string' || t.kind === 'regex') return true;
  return (
    t.kind === 'op' &&
    ((t.text === ')' && !t.control) || t.text === ']' || t.text === '++' || t.text === '--')
  );
}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const last = () => out[out.length - 1];
  // For each open `(`: whether it follows a control keyword.
  const parens: boolean[] = [];
  while (i < src.length) {
    const c = src[i] as string;
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
    } else if (c === '\\' && src[i + 1] === '\n') {
      i += 2;
    } else if (c === '\\' && src[i + 1] === '\r' && src[i + 2] === '\n') {
      i += 3;
    } else if (c === '\n') {
      out.push({ kind: 'newline', text: '\n' });
      i++;
    } else if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const d = src[j];
        if (d === undefined || d === '\n') throw new Error(`an unterminated string at character ${i + 1}`);
        if (d === '"') break;
        if (d === '\\') {
          const e = src[j + 1];
          if (e === undefined) throw new Error(`an unterminated string at character ${i + 1}`);
          if (e === 'x' && /[0-9a-fA-F]/.test(src[j + 2] ?? '')) {
            const digits = /^[0-9a-fA-F]{1,2}/.exec(src.slice(j + 2))![0];
            value += String.fromCharCode(Number.parseInt(digits, 16));
            j += 2 + digits.length;
            continue;
          }
          if (/[0-7]/.test(e)) {
            const digits = /^[0-7]{1,3}/.exec(src.slice(j + 1))![0];
            value += String.fromCharCode(Number.parseInt(digits, 8));
            j += 1 + digits.length;
            continue;
          }
          value += e === '\n' ? '' : (ESCAPES[e] ?? e);
          j += 2;
          continue;
        }
        value += d;
        j++;
      }
      out.push({ kind: 'string', text: src.slice(i, j + 1), value });
      i = j + 1;
    } else if (c === '/' && GAWK_ONLY.has(last()?.text ?? '') && last()?.kind === 'name') {
      // gawk reads `case / 2 /` as a keyword and a regular expression, mawk (and gawk --posix) as a
      // variable divided: the two readings disagree on what is code.
      throw new Error(`\`${last()?.text} /\` is read differently by gawk and mawk`);
    } else if (c === '/' && !endsOperand(last())) {
      let j = i + 1;
      for (;;) {
        const d = src[j];
        if (d === undefined || d === '\n')
          throw new Error(`an unterminated regular expression at character ${i + 1}`);
        if (d === '/') break;
        if (d === '\\') j += 2;
        else if (d === '[') {
          j++;
          if (src[j] === '^') j++;
          if (src[j] === ']') j++;
          while (j < src.length && src[j] !== ']' && src[j] !== '\n') {
            if (src[j] === '[' && /[:=.]/.test(src[j + 1] ?? '')) {
              // A class both awks read alike; `[.` and `[=` end where gawk and mawk disagree.
              const m = /^\[:[a-z]+:\]/.exec(src.slice(j));
              if (m === null)
                throw new Error(
                  `a bracket expression at character ${j + 1} that gawk and mawk read differently`,
                );
              j += m[0].length;
            } else j += src[j] === '\\' ? 2 : 1;
          }
          j++;
        } else j++;
      }
      out.push({ kind: 'regex', text: src.slice(i, j + 1) });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))![0];
      out.push({ kind: 'name', text: m });
      i += m.length;
    } else if (/[0-9.]/.test(c) && /^\.?[0-9]/.test(src.slice(i, i + 2))) {
      const m = /^(?:0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)/.exec(
        src.slice(i),
      )![0];
      out.push({ kind: 'number', text: m });
      i += m.length;
    } else {
      const op = OPERATORS.find((o) => src.startsWith(o, i)) ?? c;
      const before = last();
      if (op === '(') parens.push(before?.kind === 'name' && CONTROL.has(before.text));
      if (op === ')' && parens.pop() === true) out.push({ kind: 'op', text: op, control: true });
      else out.push({ kind: 'op', text: op });
      i += op.length;
    }
  }
  return out;
}

/** The name a redirection's target gives: one string literal or whole number (parenthesized or not), else null. */
function targetName(tokens: readonly Token[]): string | null {
  let t = tokens;
  while (t.length >= 3 && t[0]?.text === '(' && t[t.length - 1]?.text === ')') t = t.slice(1, -1);
  const only = t.length === 1 ? t[0] : undefined;
  if (only?.kind === 'string') return only.value ?? null;
  return only?.kind === 'number' && /^[0-9]+$/.test(only.text) ? only.text : null;
}

/** True where a statement ends: `;`, `}`, or a newline not continued by the token before it. */
function endsStatement(tokens: readonly Token[], at: number): boolean {
  const t = tokens[at];
  if (t === undefined) return true;
  if (t.text === ';' || t.text === '}') return true;
  if (t.kind !== 'newline') return false;
  const before = tokens[at - 1]?.text;
  return !(
    before === ',' ||
    before === '&&' ||
    before === '||' ||
    before === '{' ||
    before === 'do' ||
    before === 'else'
  );
}

/** Reads an awk program's text. */
export function readAwkProgram(text: string): AwkProgram {
  const out: AwkProgram = { writes: [], reads: [], inPlace: false };
  let tokens: Token[];
  try {
    tokens = tokenize(text);
  } catch (error) {
    out.error = (error as Error).message;
    return out;
  }
  const runs = (why: string) => {
    out.runs ??= why;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const next = tokens[i + 1];
    if (t.kind === 'name' && t.text === 'system' && next?.text === '(') runs('its program calls system()');
    else if (t.kind === 'op' && (t.text === '|' || t.text === '|&'))
      runs('its program pipes to or from a command');
    else if (t.kind === 'op' && t.text === '@') {
      if (next?.text === 'namespace') continue;
      if (next?.text === 'include' && /^inplace(?:\.awk)?$/.test(tokens[i + 2]?.value ?? ''))
        out.inPlace = true;
      else
        runs(
          next?.text === 'load' || next?.text === 'include'
            ? `its program runs @${next.text}`
            : 'its program calls a function by name',
        );
    } else if (t.kind === 'name' && t.text === 'getline') {
      // getline [VAR] < FILE
      let j = i + 1;
      if (tokens[j]?.kind === 'name' && !KEYWORDS.has(tokens[j]!.text)) j++;
      if (tokens[j]?.text === '<')
        out.reads.push(tokens[j + 1]?.kind === 'string' ? (tokens[j + 1]!.value ?? null) : null);
    } else if (t.kind === 'name' && (t.text === 'print' || t.text === 'printf')) {
      // The statement's unparenthesized `>` or `>>` redirects its output to the file after it.
      let depth = 0;
      let j = i + 1;
      for (; j < tokens.length && !(depth === 0 && endsStatement(tokens, j)); j++) {
        const u = tokens[j] as Token;
        if (u.text === '(') depth++;
        else if (u.text === ')') {
          if (depth === 0) break;
          depth--;
        } else if (depth === 0 && (u.text === '>' || u.text === '>>')) {
          let k = j + 1;
          while (k < tokens.length && !endsStatement(tokens, k)) k++;
          out.writes.push(targetName(tokens.slice(j + 1, k)));
          j = k - 1;
        }
      }
    }
  }
  return out;
}
