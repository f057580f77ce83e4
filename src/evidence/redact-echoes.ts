/**
 * Redaction rules that need a command's or a message's context: passwords given as the short
 * flags of particular programs, JSON and object reprs inside strings, and values error messages
 * echo. Part of the one redactor (redact.ts); rules in docs/redaction.md.
 */

import { isSecretName } from './redact-names.js';
import {
  after,
  applySpans,
  BLANK,
  isReference,
  REDACTED,
  redactAfterHeads,
  type Span,
  valueEnd,
} from './redact-scan.js';

/**
 * Short flags that take a password only in certain commands (from their manuals): `docker login
 * -p` (and podman, nerdctl, buildah, skopeo, oras, helm registry login), `az login -p`,
 * `sshpass -p`, `mysql -pSECRET` (attached only: `mysql -p db` prompts), `redis-cli -a`,
 * `mongo -p`. Each program's flags are looked for up to the end of its command.
 */
const PASSWORD_FLAGS: ReadonlyMap<
  string,
  { flags: readonly string[]; login?: boolean; attachedOnly?: boolean }
> = new Map([
  ['docker', { flags: ['-p'], login: true }],
  ['podman', { flags: ['-p'], login: true }],
  ['nerdctl', { flags: ['-p'], login: true }],
  ['buildah', { flags: ['-p'], login: true }],
  ['skopeo', { flags: ['-p'], login: true }],
  ['oras', { flags: ['-p'], login: true }],
  ['helm', { flags: ['-p'], login: true }],
  ['az', { flags: ['-p'], login: true }],
  ['sshpass', { flags: ['-p'] }],
  ['mysql', { flags: ['-p'], attachedOnly: true }],
  ['mysqldump', { flags: ['-p'], attachedOnly: true }],
  ['mysqladmin', { flags: ['-p'], attachedOnly: true }],
  ['mariadb', { flags: ['-p'], attachedOnly: true }],
  ['redis-cli', { flags: ['-a'] }],
  ['mongo', { flags: ['-p'] }],
  ['mongosh', { flags: ['-p'] }],
]);
const PROGRAM =
  /(?<![\w./-])(docker|podman|nerdctl|buildah|skopeo|oras|helm|az|sshpass|mysql|mysqldump|mysqladmin|mariadb|redis-cli|mongo|mongosh)(?![\w.-])/g;
/** How far a program's flags are looked for: to the end of its command, at most this far. */
const COMMAND_SPAN = 2048;
export function redactProgramFlags(text: string): string {
  const spans: Span[] = [];
  PROGRAM.lastIndex = 0;
  for (let m = PROGRAM.exec(text); m !== null; m = PROGRAM.exec(text)) {
    const rule = PASSWORD_FLAGS.get(m[1] as string);
    if (rule === undefined) continue;
    let end = after(m);
    while (end < text.length && end - m.index < COMMAND_SPAN && !';|&\n'.includes(text[end] as string)) end++;
    const segment = text.slice(after(m), end);
    if (rule.login && !/(?<![\w-])login(?![\w-])/.test(segment)) continue;
    const flag = new RegExp(`(?<!\\S)(?:${rule.flags.join('|')})(?=[^\\s]|[ \\t]+[^\\s-])`, 'g');
    for (let f = flag.exec(segment); f !== null; f = flag.exec(segment)) {
      let start = after(m) + f.index + f[0].length;
      const attached = !BLANK.test(text[start] as string);
      if (!attached && rule.attachedOnly) continue;
      while (start < end && BLANK.test(text[start] as string)) start++;
      if (isReference(text, start)) continue;
      const valueStop = valueEnd(text, start, '');
      if (valueStop > start && text.slice(start, valueStop) !== REDACTED)
        spans.push({ start, end: valueStop });
    }
    PROGRAM.lastIndex = Math.max(PROGRAM.lastIndex, end);
  }
  return applySpans(text, spans);
}

/**
 * JSON inside a string (`{\\"password\\":\\"x\\"}` in a command, any depth of escaping) and
 * Python/JS object reprs (`{'password': 'x'}`): the value ends at the same escaped quote.
 */
const QUOTED_KEY = /(\\{0,8})(["'])([\w.-]{1,64})\1\2[ \t]*:[ \t]*(?=\1\2)/g;
export function redactQuotedKeys(text: string): string {
  return redactAfterHeads(text, QUOTED_KEY, (m) => {
    const slashes = m[1] as string;
    const quote = m[2] as string;
    if ((slashes === '' && quote === '"') || !isSecretName(m[3] as string)) return undefined;
    const start = after(m) + slashes.length + 1;
    for (let j = start; j < text.length; j++) {
      if (text[j] === '\n') break;
      if (text[j] !== quote) continue;
      let run = 0;
      while (j - run - 1 >= start && text[j - run - 1] === '\\') run++;
      if (run === slashes.length) return { start, end: j - slashes.length };
    }
    return undefined;
  });
}

/**
 * Values an error message echoes: `invalid token 'x'`, `password: "x"`, clap's
 * `invalid value 'x' for '--token <TOKEN>'`, argparse's `argument --password: invalid choice: 'x'`,
 * `--api-key must be …, got 'x'`. Only the quoted value goes.
 */
const ERROR_QUALIFIED =
  /(?<![\w-])(?:invalid|bad|wrong|incorrect|expired|unknown|malformed|rejected|revoked|unrecogni[sz]ed|unexpected)[ \t]+([A-Za-z][\w.-]{0,40}(?:[ \t][A-Za-z][\w.-]{0,40})?)[ \t]*[:=]?[ \t]*(?=['"`\u2018\u201c])/gi;
const KEY_COLON =
  /(?<![\w.-])([A-Za-z_][\w.-]{0,40})[ \t]*:[ \t]*(?=['`\u2018\u201c]|"(?![\w.-]{1,64}"[ \t]*:))/g;
const FOR_FLAG = /(['"`])[ \t]+for[ \t]+(?:(?:argument|option|flag)[ \t]+)?['"`<]?--?([A-Za-z][\w-]{0,63})/g;
const FLAG_THEN_VALUE =
  /(?<![\w-])--?([A-Za-z][\w-]{0,63})[^\n'"`]{0,120}?(?:got|value|received|choice)[ \t]*:?[ \t]*(?=['"`])/g;
const CLOSING: Readonly<Record<string, string>> = {
  "'": "'",
  '"': '"',
  '`': '`',
  '\u2018': '\u2019',
  '\u201c': '\u201d',
};

/** The span inside the quoted value at `i` (its quotes kept), up to 256 characters on one line. */
function quotedInside(text: string, i: number): Span | undefined {
  const close = CLOSING[text[i] as string];
  if (close === undefined) return undefined;
  for (let j = i + 1; j < text.length && j - i <= 256; j++) {
    if (text[j] === '\n') return undefined;
    if (text[j] === close) return j > i + 1 ? { start: i + 1, end: j } : undefined;
  }
  return undefined;
}

export function redactErrorEchoes(text: string): string {
  let out = redactAfterHeads(text, ERROR_QUALIFIED, (m) =>
    isSecretName(m[1] as string) ? quotedInside(text, after(m)) : undefined,
  );
  out = redactAfterHeads(out, KEY_COLON, (m) =>
    isSecretName(m[1] as string) ? quotedInside(out, after(m)) : undefined,
  );
  out = redactAfterHeads(out, FLAG_THEN_VALUE, (m) =>
    isSecretName(m[1] as string) && !/-(?:stdin|file|path|env|dir)$/.test(m[1] as string)
      ? quotedInside(out, after(m))
      : undefined,
  );
  // `'VALUE' for '--flag'`: the head is found after the value, so the value is found backwards.
  const spans: Span[] = [];
  FOR_FLAG.lastIndex = 0;
  for (let m = FOR_FLAG.exec(out); m !== null; m = FOR_FLAG.exec(out)) {
    if (!isSecretName(m[2] as string)) continue;
    const quote = m[1] as string;
    const close = m.index;
    let open = close - 1;
    while (open >= 0 && close - open <= 256 && out[open] !== quote && out[open] !== '\n') open--;
    const previous = spans[spans.length - 1];
    if (
      open >= 0 &&
      out[open] === quote &&
      close > open + 1 &&
      (previous === undefined || previous.end <= open)
    )
      if (out.slice(open + 1, close) !== REDACTED) spans.push({ start: open + 1, end: close });
  }
  return applySpans(out, spans);
}
