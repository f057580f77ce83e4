/**
 * The one redactor of Tally: commands, outputs, free text and JSON values pass through it before
 * anything is recorded. Secrets become `[REDACTED]`; the text around them (flag names, header names,
 * schemes, user names, hosts) is kept, because it is the evidence. Rules and their limits are in
 * docs/redaction.md. Every rule runs in time linear in the input: regexes only find short, bounded
 * heads, and values are then measured by a single forward scan.
 */

export const REDACTED = '[REDACTED]';

const SECRET_SUFFIX =
  /(?:token|secret|password|passwd|passphrase|apikey|accesskey|secretkey|privatekey|cookie|signature|credentials?|authorization)$/;
/** Words that make a trailing `key` a credential: `api_key`, `AWS_SECRET_ACCESS_KEY`, `--client-key`. */
const KEY_QUALIFIERS = new Set([
  'api',
  'access',
  'secret',
  'private',
  'client',
  'master',
  'signing',
  'encryption',
  'license',
  'auth',
  'session',
  'account',
  'admin',
  'service',
]);

/**
 * Words that say which copy of a secret a name holds, not what it is: `SECRET_KEY_BASE`,
 * `DB_PASSWORD_PROD`, `API_KEY_V2` are judged by the words before them.
 */
const VARIANT_WORDS = new Set([
  'base',
  'prod',
  'production',
  'dev',
  'development',
  'staging',
  'stage',
  'test',
  'live',
  'old',
  'new',
  'current',
  'next',
  'prev',
  'previous',
  'primary',
  'secondary',
  'backup',
  'default',
  'local',
  'main',
  'raw',
  'enc',
  'encoded',
  'b64',
  'base64',
  'hex',
  'value',
  'plain',
  'plaintext',
  'str',
  'string',
  'data',
  'bytes',
]);

/**
 * True for names that hold a credential: env vars, flags, query parameters, JSON keys. Judged on
 * the last word (after variant words such as `_BASE`, `_PROD`, `_V2`) so `GITHUB_TOKEN`,
 * `api-key`, `clientSecret`, `SECRET_KEY_BASE` count and `token_count`, `max_tokens`,
 * `--token-file`, `session_id`, `PWD` do not.
 */
export function isSecretName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[-_.\s]+/)
    .filter((p) => p !== '');
  let end = words.length;
  while (end > 1 && (VARIANT_WORDS.has(words[end - 1] as string) || /^v?\d+$/.test(words[end - 1] as string)))
    end--;
  return isSecretWords(end === words.length ? words : words.slice(0, end));
}

function isSecretWords(parts: readonly string[]): boolean {
  const last = parts[parts.length - 1];
  const prev = parts[parts.length - 2];
  if (last === undefined || parts[0] === 'no') return false;
  const joined = parts.join('');
  if (
    SECRET_SUFFIX.test(last) ||
    (parts.length > 1 && /(?:apikey|accesstoken|authtoken|secretkey|privatekey|clientsecret)$/.test(joined))
  ) {
    return true;
  }
  if (last === 'key') return parts.length === 1 || (prev !== undefined && KEY_QUALIFIERS.has(prev));
  if (last === 'pass' || last === 'pat' || last === 'auth') return true;
  if (last === 'pwd') return parts.length > 1 && joined !== 'oldpwd';
  if (last === 'sig') return parts.length === 1;
  return false;
}

type Span = { start: number; end: number };

/** Replaces each span (sorted, disjoint) with the marker. */
function applySpans(text: string, spans: Span[]): string {
  if (spans.length === 0) return text;
  let out = '';
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start) + REDACTED;
    at = span.end;
  }
  return out + text.slice(at);
}

const BLANK = /\s/;

/**
 * A value that names where the secret comes from at run time (`$(cat tok)`, `"$TOKEN"`, `${X}`,
 * a backtick substitution) holds no secret literal: the command is recorded as written.
 */
function isReference(text: string, i: number): boolean {
  const at = text[i] === '"' ? i + 1 : i;
  const c = text[at];
  const next = text[at + 1] ?? '';
  return c === '`' || (c === '$' && (next === '(' || next === '{' || /[A-Za-z_]/.test(next)));
}

/**
 * The end of a value starting at `i`: a quoted string (to its closing quote, or the end of the text),
 * else a run of characters up to whitespace or one of `stops`.
 */
function valueEnd(text: string, i: number, stops: string): number {
  const quote = text[i];
  if (quote === '"' || quote === "'") {
    let j = i + 1;
    while (j < text.length && text[j] !== quote) j += quote === '"' && text[j] === '\\' ? 2 : 1;
    return Math.min(j + 1, text.length);
  }
  let j = i;
  while (j < text.length && !BLANK.test(text[j] as string) && !stops.includes(text[j] as string)) j++;
  return j;
}

/**
 * Runs `head` (a global regex) over the text; for each hit `pick` returns the span to redact (or
 * undefined) and the scan resumes after that span, so nothing is scanned twice.
 */
function redactAfterHeads(
  text: string,
  head: RegExp,
  pick: (m: RegExpExecArray) => Span | undefined,
): string {
  const spans: Span[] = [];
  head.lastIndex = 0;
  for (let m = head.exec(text); m !== null; m = head.exec(text)) {
    const span = pick(m);
    if (span !== undefined && span.end > span.start && text.slice(span.start, span.end) !== REDACTED) {
      spans.push(span);
      head.lastIndex = Math.max(head.lastIndex, span.end);
    }
    if (m[0].length === 0) head.lastIndex++;
  }
  return applySpans(text, spans);
}

const after = (m: RegExpExecArray): number => m.index + m[0].length;

/** PEM private key blocks, header included; an unterminated block runs to the end of the text. */
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----/g;
function redactPem(text: string): string {
  return redactAfterHeads(text, PEM_BEGIN, (m) => {
    PEM_END.lastIndex = after(m);
    const end = PEM_END.exec(text);
    return { start: m.index, end: end === null ? text.length : after(end) };
  });
}

/** `Authorization: Bearer x`, `Cookie: …`, `X-Api-Key: …`: the header name and auth scheme stay. */
const HEADER =
  /(?<![\w./:-])(?:proxy-authorization|authorization|x-api-key|api-key|x-auth-token|auth-token|private-token|x-access-token|x-vault-token|x-amz-security-token|x-goog-api-key|set-cookie|cookie)[ \t]*:[ \t]*(?:(bearer|basic|digest|token|dpop|negotiate|ntlm|mac)[ \t]+)?/gi;
function redactHeaders(text: string): string {
  return redactAfterHeads(text, HEADER, (m) => {
    const start = after(m);
    if (m[1] !== undefined) return { start, end: valueEnd(text, start, '"\'') };
    let end = start;
    while (end < text.length && !'\r\n"\''.includes(text[end] as string)) end++;
    while (end > start && BLANK.test(text[end - 1] as string)) end--;
    return { start, end };
  });
}

/** A bare `Bearer <token>` outside any header. */
const BEARER = /(?<![\w-])bearer[ \t]+(?=[\w.~+/-]{8,})/gi;
function redactBearer(text: string): string {
  return redactAfterHeads(text, BEARER, (m) => ({
    start: after(m),
    end: valueEnd(text, after(m), '"\'`,;)'),
  }));
}

/** `scheme://user:password@host`: the user and host stay. */
const USERINFO = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,20}:\/\/[^\s/:@]{0,256}:(?=[^\s/@]{1,256}@)/gi;
function redactUserinfo(text: string): string {
  return redactAfterHeads(text, USERINFO, (m) => ({ start: after(m), end: text.indexOf('@', after(m)) }));
}

/** `NAME=value` (env assignments, `export`, query strings, form bodies) for secret-looking names. */
const ASSIGNMENT = /(?<![\w.-])([A-Za-z_][\w.-]{0,63})=/g;
function redactAssignments(text: string): string {
  return redactAfterHeads(text, ASSIGNMENT, (m) =>
    isSecretName(m[1] as string) && !isReference(text, after(m))
      ? { start: after(m), end: valueEnd(text, after(m), '&;|<>`)') }
      : undefined,
  );
}

/** `--token x`, `--token=x`, `-password x`; a following flag is never taken as the value. */
const FLAG = /(?<!\S)--?([A-Za-z][\w-]{0,63})(=|[ \t]+)/g;
function redactFlags(text: string): string {
  return redactAfterHeads(text, FLAG, (m) => {
    const name = m[1] as string;
    const start = after(m);
    if (/^(?:u|user|proxy-user)$/.test(name)) {
      // curl -u user:password: the user stays; `sudo -u root` has no colon and is left alone.
      const end = valueEnd(text, start, '');
      const colon = text.indexOf(':', start);
      return colon >= 0 && colon + 1 < end ? { start: colon + 1, end } : undefined;
    }
    if (!isSecretName(name) || /-(?:stdin|file|path|env|dir|cmd|command|type|name|url|helper)$/.test(name)) {
      return undefined;
    }
    if (m[2] !== '=' && (start >= text.length || '-<>|&;'.includes(text[start] as string))) return undefined;
    if (isReference(text, start)) return undefined;
    return { start, end: valueEnd(text, start, '') };
  });
}

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
function redactProgramFlags(text: string): string {
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

/** Positional secrets after a setting name: `aws configure set aws_secret_access_key X`. */
const SETTING = /(?<![\w-])(?:aws_secret_access_key|aws_session_token)[ \t]+(?=[^\s-])/gi;
function redactSettings(text: string): string {
  return redactAfterHeads(text, SETTING, (m) => ({ start: after(m), end: valueEnd(text, after(m), '') }));
}

/** `"password": "…"` inside JSON or JSON-like text. */
const JSON_KEY = /"([\w.-]{1,64})"[ \t]*:[ \t]*(?=")/g;
function redactJsonKeys(text: string): string {
  return redactAfterHeads(text, JSON_KEY, (m) => {
    if (!isSecretName(m[1] as string)) return undefined;
    const end = valueEnd(text, after(m), '');
    const closed = end - 1 > after(m) && text[end - 1] === '"';
    return { start: after(m) + 1, end: closed ? end - 1 : end };
  });
}

/**
 * JSON inside a string (`{\\"password\\":\\"x\\"}` in a command, any depth of escaping) and
 * Python/JS object reprs (`{'password': 'x'}`): the value ends at the same escaped quote.
 */
const QUOTED_KEY = /(\\{0,8})(["'])([\w.-]{1,64})\1\2[ \t]*:[ \t]*(?=\1\2)/g;
function redactQuotedKeys(text: string): string {
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

/** Credentials recognisable by shape alone. Each starts only where no token character precedes it. */
const TOKEN_SHAPES = [
  'gh[pousr]_[A-Za-z0-9]{10,}', // GitHub
  'github_pat_\\w{20,}',
  'glpat-[\\w-]{20,}', // GitLab
  '(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Z0-9])', // AWS key ids
  'xox[abposre]-[A-Za-z0-9-]{4,}', // Slack
  'hooks\\.slack\\.com/services/[\\w/]+',
  'sk-[\\w-]{16,}', // OpenAI, Anthropic (sk-ant-…)
  '(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{6,}', // Stripe secret / restricted keys
  'whsec_[A-Za-z0-9]{16,}',
  'AIza[\\w-]{30,}', // Google API key
  'ya29\\.[\\w-]{10,}', // Google OAuth access token
  'GOCSPX-[\\w-]{10,}',
  'npm_[A-Za-z0-9]{30,}',
  'pypi-[\\w-]{50,}',
  'hf_[A-Za-z0-9]{30,}',
  'SG\\.[\\w-]{16,}\\.[\\w-]{16,}', // SendGrid
  'eyJ[\\w-]{4,}\\.eyJ[\\w-]{4,}\\.[\\w-]*', // JWT
].join('|');
const TOKEN_HEAD = new RegExp(`(?<![\\w-])(?:${TOKEN_SHAPES})`, 'g');
function redactTokenShapes(text: string): string {
  return redactAfterHeads(text, TOKEN_HEAD, (m) => ({ start: m.index, end: after(m) }));
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

function redactErrorEchoes(text: string): string {
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

const TEXT_RULES: readonly ((text: string) => string)[] = [
  redactPem,
  redactHeaders,
  redactBearer,
  redactUserinfo,
  redactAssignments,
  redactFlags,
  redactProgramFlags,
  redactSettings,
  redactJsonKeys,
  redactQuotedKeys,
  redactErrorEchoes,
  redactTokenShapes,
];

/** Redacts secrets in a command line, a tool output or any free text. Deterministic and idempotent. */
export function redactText(text: string): string {
  let out = text;
  for (const rule of TEXT_RULES) out = rule(out);
  return out;
}

/**
 * The text of an error, redacted, for anything that echoes errors (the CLI prints these): the
 * message, and the messages of its `cause` chain, which tools fill with the input they refused.
 */
export function redactErrorMessage(error: unknown): string {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    messages.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return redactText(messages.join(': '));
}

function redactSecretLeaf(value: unknown, key: string): unknown {
  if (typeof value === 'string') {
    if (value === '') return value;
    const scheme = /^(bearer|basic|digest|token|dpop|negotiate|ntlm|mac)[ \t]+\S/i.exec(value);
    return scheme !== null && /authorization$/i.test(key) ? `${scheme[1]} ${REDACTED}` : REDACTED;
  }
  if (typeof value === 'number' || typeof value === 'bigint') return REDACTED;
  if (Array.isArray(value))
    return value.map((item) =>
      typeof item === 'object' && item !== null ? redactValue(item) : redactSecretLeaf(item, key),
    );
  return redactValue(value);
}

/**
 * Redacts a JSON value deeply and returns a new value (the input is never changed): strings go
 * through `redactText`; under a secret-looking key (`password`, `token`, `api_key`, `Authorization`…)
 * strings and numbers become the marker, keeping an auth scheme. Booleans and null are kept.
 */
export function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (typeof value !== 'object' || value === null) return value;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      isSecretName(key) ? redactSecretLeaf(inner, key) : redactValue(inner),
    ]),
  );
}
