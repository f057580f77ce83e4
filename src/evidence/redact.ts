/**
 * The one redactor of Tally: commands, outputs, free text and JSON values pass through it before
 * anything is recorded. Secrets become `[REDACTED]`; the text around them (flag names, header names,
 * schemes, user names, hosts) is kept, because it is the evidence. Rules and their limits are in
 * docs/redaction.md. Every rule runs in time linear in the input: regexes only find short, bounded
 * heads, and values are then measured by a single forward scan.
 */

import { memoString } from '../core/memo.js';
import { redactErrorEchoes, redactProgramFlags, redactQuotedKeys } from './redact-echoes.js';
import { isSecretName } from './redact-names.js';
import { after, BLANK, isReference, REDACTED, redactAfterHeads, valueEnd } from './redact-scan.js';

export { isSecretName } from './redact-names.js';
export { REDACTED } from './redact-scan.js';

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
  redactProgramFlags,
  redactSettings,
  redactJsonKeys,
  redactQuotedKeys,
  redactErrorEchoes,
  redactTokenShapes,
];

function redactAll(text: string): string {
  let out = text;
  for (const rule of TEXT_RULES) out = rule(out);
  return out;
}

/**
 * Redacts secrets in a command line, a tool output or any free text. Deterministic and idempotent
 * (so short texts, which repeat from event to event — paths, ids, names — are memoised).
 */
export const redactText: (text: string) => string = memoString(redactAll, { entries: 4096, maxLength: 256 });

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
  // Built member by member (every event passes here): no array of entries made and dropped.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const inner = (value as Record<string, unknown>)[key];
    const redacted = isSecretName(key) ? redactSecretLeaf(inner, key) : redactValue(inner);
    // A member named __proto__ (JSON.parse makes it an own member) stays one, as fromEntries kept it.
    if (key === '__proto__')
      Object.defineProperty(out, key, {
        value: redacted,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[key] = redacted;
  }
  return out;
}
