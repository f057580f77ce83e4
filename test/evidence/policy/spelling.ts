/**
 * Random spellings of shell words and commands for the property tests. Each spelling method is
 * a quoting rule of the bash manual (QUOTING); whether a spelling means what it should is decided
 * by the real bash (bash-oracle.ts), never by this file or the parser.
 */
import type { Prng } from './prng.js';

const BARE = /^[A-Za-z0-9_/.,:@%+=-]+$/;

function singleQuoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function doubleQuoted(word: string): string {
  return `"${word.replace(/[\\"$`]/g, '\\$&')}"`;
}

function backslashed(word: string): string {
  return word.replace(/[^A-Za-z0-9]/g, '\\$&');
}

function ansiC(word: string, random: Prng): string {
  let out = "$'";
  for (const c of word) {
    const code = c.codePointAt(0) as number;
    if (c === "'" || c === '\\') out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if (code < 0x80 && random.chance(0.3)) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code < 0x80 && random.chance(0.2)) out += `\\${code.toString(8).padStart(3, '0')}`;
    else if (code >= 0x80 && random.chance(0.5)) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return `${out}'`;
}

/** One spelling of `word` that bash reads back as exactly `word`. */
export function spellWord(word: string, random: Prng, depth = 0): string {
  if (word === '') return random.pick(["''", '""', "$''"]);
  if (depth < 2 && word.length > 1 && random.chance(0.3)) {
    const cut = 1 + random.int(word.length - 1);
    return spellWord(word.slice(0, cut), random, depth + 1) + spellWord(word.slice(cut), random, depth + 1);
  }
  const methods = ['single', 'double', 'ansi'];
  if (!word.includes('\n')) methods.push('backslash');
  if (BARE.test(word) && !word.startsWith('-') && !word.startsWith('=')) methods.push('bare', 'bare', 'bare');
  else if (BARE.test(word)) methods.push('bare');
  switch (random.pick(methods)) {
    case 'bare':
      return word;
    case 'single':
      return singleQuoted(word);
    case 'double':
      return doubleQuoted(word);
    case 'backslash':
      return backslashed(word);
    default:
      return ansiC(word, random);
  }
}

/** A spelling of a whole argv: every word spelled on its own, blanks between them varied. */
export function spellArgv(argv: readonly string[], random: Prng): string {
  return argv.map((w) => spellWord(w, random)).join(random.pick([' ', '  ', '\t', ' \\\n ']));
}

/** Quotes a whole script as one word for `bash -c`. */
export function quoteScript(script: string, random: Prng): string {
  return random.chance(0.5)
    ? singleQuoted(script)
    : random.chance(0.5)
      ? doubleQuoted(script)
      : ansiC(script, random);
}
