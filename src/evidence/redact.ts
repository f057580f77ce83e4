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
 * True for names that hold a credential: env vars, flags, query parameters, JSON keys. Judged on
 * the last word so `GITHUB_TOKEN`, `api-key`, `clientSecret` count and `token_count`, `max_tokens`,
 * `--token-file`, `session_id`, `PWD` do not.
 */
export function isSecretName(name: string): boolean {
  const parts = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[-_.\s]+/)
    .filter((p) => p !== '');
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
    isSecretName(m[1] as string) ? { start: after(m), end: valueEnd(text, after(m), '&;|<>`)') } : undefined,
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
    return { start, end: valueEnd(text, start, '') };
  });
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

const TEXT_RULES: readonly ((text: string) => string)[] = [
  redactPem,
  redactHeaders,
  redactBearer,
  redactUserinfo,
  redactAssignments,
  redactFlags,
  redactSettings,
  redactJsonKeys,
  redactTokenShapes,
];

/** Redacts secrets in a command line, a tool output or any free text. Deterministic and idempotent. */
export function redactText(text: string): string {
  let out = text;
  for (const rule of TEXT_RULES) out = rule(out);
  return out;
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
