/**
 * Validation of endpoint identity bindings (`authentication` on a backend, `auth` on an upload).
 * A registration holds only references to credentials; a literal credential is an error, never a
 * warning, because the document has then already leaked it.
 */
import { isJsonObject } from '../../core/json.js';
import { isAbsoluteUri } from '../messages/formats.js';
import { secretRefSegments } from '../transports/secrets.js';
import {
  has,
  type IssueCollector,
  isNonEmptyString,
  type JsonObject,
  jsonType,
  pointerTo,
  warnUnknownFields,
} from './check.js';
import type { Authentication, OAuthPreset } from './types.js';

/** Member names that can only mean a credential value was written into the document. */
const LITERAL_CREDENTIAL_FIELDS = new Set([
  'token',
  'accessToken',
  'access_token',
  'bearerToken',
  'password',
  'secret',
  'clientSecret',
  'client_secret',
  'apiKey',
  'api_key',
  'privateKey',
]);

const BEARER_FIELDS = new Set(['type', 'tokenEnv', 'tokenRef']);
const OAUTH_FIELDS = new Set(['type', 'resource', 'issuer', 'clientId', 'clientSecretRef', 'flow', 'scopes']);
const OAUTH_FLOWS = new Set(['authorization_code_pkce', 'client_credentials']);
const TOKEN_ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Prefixes of widely used credential formats: GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_),
 * API secret keys (sk-, sk_live_, sk_test_), Slack (xoxb-, xoxp-), AWS access key ids (AKIA,
 * ASIA), JWTs (eyJ, the base64url of '{"'), GitLab (glpat-) and npm (npm_).
 */
const CREDENTIAL_PREFIXES = [
  'github_pat_',
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'sk_live_',
  'sk_test_',
  'sk-',
  'xoxb-',
  'xoxp-',
  'AKIA',
  'ASIA',
  'eyJ',
  'glpat-',
  'npm_',
];
/** What follows a token prefix: token characters only, at least 10 of them, at least one a digit. */
const TOKEN_BODY = /^(?=[^0-9]*[0-9])[A-Za-z0-9_.=+-]{10,}$/;
/** A long run of letters and digits with no separator: mixed case and digits, 24 or more. */
const RANDOM_RUN = /^(?=[^a-z]*[a-z])(?=[^A-Z]*[A-Z])(?=[^0-9]*[0-9])[A-Za-z0-9+=]{24,}$/;

/**
 * Whether a tokenEnv / tokenRef / clientSecretRef value looks like the credential itself rather
 * than the name of one: a known token prefix followed by a token body, or a long high-entropy run.
 * A heuristic behind a warning, never an error: a deployment may name its secrets oddly.
 */
export function looksLikeCredential(value: string): boolean {
  for (const prefix of CREDENTIAL_PREFIXES) {
    if (value.startsWith(prefix) && TOKEN_BODY.test(value.slice(prefix.length))) return true;
  }
  return RANDOM_RUN.test(value);
}

/** Warns, without repeating the value, when a reference field seems to hold a credential. */
function warnCredentialLike(c: IssueCollector, value: unknown, field: string, pointer: string): void {
  if (typeof value !== 'string' || !looksLikeCredential(value)) return;
  c.warn(
    pointer,
    'authentication.ref.looks-like-credential',
    `${field} looks like a credential (a known token prefix or a long random string), not the name of one; a registration holds only references: remove the value from the document and rotate the credential`,
  );
}

/** Validates one binding at `pointer`; returns it when it added no errors. */
export function checkAuthentication(
  c: IssueCollector,
  raw: unknown,
  pointer: string,
): Authentication | undefined {
  if (!isJsonObject(raw)) {
    c.error(pointer, 'authentication.object', `authentication must be an object, not ${jsonType(raw)}`);
    return undefined;
  }
  const mark = c.mark();
  for (const key of Object.keys(raw)) {
    if (LITERAL_CREDENTIAL_FIELDS.has(key)) {
      c.error(
        pointerTo(pointer, key),
        'authentication.literal-credential',
        `'${key}' is a literal credential; a registration may only reference one (tokenEnv or tokenRef)`,
      );
    }
  }
  const type = raw.type;
  let result: Authentication | undefined;
  if (type === 'bearer') {
    result = checkBearer(c, raw, pointer);
  } else if (type === 'oauth') {
    result = checkOAuth(c, raw, pointer);
  } else {
    c.error(
      pointerTo(pointer, 'type'),
      'authentication.type',
      type === undefined
        ? "authentication 'type' is required ('bearer' or 'oauth')"
        : `authentication type ${JSON.stringify(type)} is not supported ('bearer' or 'oauth')`,
    );
  }
  return c.errorsSince(mark) === 0 ? result : undefined;
}

function warnUnknown(
  c: IssueCollector,
  raw: JsonObject,
  pointer: string,
  known: ReadonlySet<string>,
  where: string,
) {
  const visible: JsonObject = {};
  for (const key of Object.keys(raw)) if (!LITERAL_CREDENTIAL_FIELDS.has(key)) visible[key] = true;
  warnUnknownFields(c, visible, pointer, known, where);
}

/**
 * A reference is the deployment's business, so any non-empty string is valid; but one Tally's own
 * secret provider cannot resolve (a relative name of [A-Za-z0-9._-] segments under
 * TALLY_HOME/secrets, never leaving it) is worth a warning before the first dispatch fails on it.
 */
function warnUnresolvableRef(c: IssueCollector, ref: string, pointer: string): void {
  try {
    secretRefSegments(ref);
  } catch {
    c.warn(
      pointer,
      'authentication.ref.unresolvable',
      "Tally's file secret provider cannot resolve this reference: it takes a relative name of [A-Za-z0-9._-] segments (not starting with '.') under TALLY_HOME/secrets",
    );
  }
}

function checkBearer(c: IssueCollector, raw: JsonObject, pointer: string): Authentication | undefined {
  warnUnknown(c, raw, pointer, BEARER_FIELDS, 'bearer authentication');
  const hasEnv = has(raw, 'tokenEnv');
  const hasRef = has(raw, 'tokenRef');
  if (hasEnv === hasRef) {
    c.error(
      pointer,
      'authentication.bearer.one-reference',
      hasEnv
        ? 'bearer authentication must use exactly one of tokenEnv or tokenRef, not both'
        : 'bearer authentication must reference its token with exactly one of tokenEnv or tokenRef',
    );
  }
  const { tokenEnv, tokenRef } = raw;
  if (hasEnv && !(typeof tokenEnv === 'string' && TOKEN_ENV_NAME.test(tokenEnv))) {
    c.error(
      pointerTo(pointer, 'tokenEnv'),
      'authentication.bearer.token-env',
      'tokenEnv must be an environment variable name (letters, digits and _, not starting with a digit)',
    );
  }
  if (hasRef && !isNonEmptyString(tokenRef)) {
    c.error(
      pointerTo(pointer, 'tokenRef'),
      'authentication.bearer.token-ref',
      'tokenRef must be a non-empty string',
    );
  }
  if (isNonEmptyString(tokenRef)) warnUnresolvableRef(c, tokenRef, pointerTo(pointer, 'tokenRef'));
  warnCredentialLike(c, tokenEnv, 'tokenEnv', pointerTo(pointer, 'tokenEnv'));
  warnCredentialLike(c, tokenRef, 'tokenRef', pointerTo(pointer, 'tokenRef'));
  if (hasEnv && !hasRef && typeof tokenEnv === 'string') return { type: 'bearer', tokenEnv };
  if (hasRef && !hasEnv && typeof tokenRef === 'string') return { type: 'bearer', tokenRef };
  return undefined;
}

function checkOAuth(c: IssueCollector, raw: JsonObject, pointer: string): OAuthPreset | undefined {
  warnUnknown(c, raw, pointer, OAUTH_FIELDS, 'oauth authentication');
  const bad = (field: string, message: string) =>
    c.error(pointerTo(pointer, field), 'authentication.oauth.field', `oauth ${field} ${message}`);
  const { resource, issuer, clientId, clientSecretRef, flow, scopes } = raw;
  if (!isNonEmptyString(resource)) bad('resource', 'is required and must be a non-empty string');
  if (!isHttpsUrl(issuer)) bad('issuer', 'is required and must be an absolute https URI (RFC 3986)');
  if (!isNonEmptyString(clientId)) bad('clientId', 'is required and must be a non-empty string');
  if (has(raw, 'clientSecretRef') && !isNonEmptyString(clientSecretRef)) {
    bad('clientSecretRef', 'must be a non-empty string (a secret reference)');
  }
  if (isNonEmptyString(clientSecretRef)) {
    warnUnresolvableRef(c, clientSecretRef, pointerTo(pointer, 'clientSecretRef'));
  }
  warnCredentialLike(c, clientSecretRef, 'clientSecretRef', pointerTo(pointer, 'clientSecretRef'));
  if (typeof flow !== 'string' || !OAUTH_FLOWS.has(flow)) {
    bad('flow', "is required and must be 'authorization_code_pkce' or 'client_credentials'");
  }
  let scopeList: string[] = [];
  if (has(raw, 'scopes')) {
    if (Array.isArray(scopes) && scopes.every(isNonEmptyString) && new Set(scopes).size === scopes.length) {
      scopeList = [...scopes];
    } else {
      bad('scopes', 'must be an array of distinct non-empty strings');
    }
  }
  if (
    !isNonEmptyString(resource) ||
    !isHttpsUrl(issuer) ||
    !isNonEmptyString(clientId) ||
    (flow !== 'authorization_code_pkce' && flow !== 'client_credentials')
  ) {
    return undefined;
  }
  const preset: OAuthPreset = { type: 'oauth', resource, issuer, clientId, flow, scopes: scopeList };
  if (typeof clientSecretRef === 'string') preset.clientSecretRef = clientSecretRef;
  return preset;
}

/** The schema's `format: uri` (RFC 3986 syntax) with its `^https://` pattern; it must also parse. */
function isHttpsUrl(value: unknown): value is string {
  return (
    typeof value === 'string' && value.startsWith('https://') && isAbsoluteUri(value) && URL.canParse(value)
  );
}
