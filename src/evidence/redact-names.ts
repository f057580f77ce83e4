/**
 * Which names hold a credential (env vars, flags, query parameters, JSON keys): the name test of
 * every redaction rule. Rules in docs/redaction.md, "Secret-looking names".
 */
import { memoString } from '../core/memo.js';

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
export const isSecretName: (name: string) => boolean = memoString(secretName, {
  entries: 4096,
  maxLength: 128,
});

function secretName(name: string): boolean {
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
