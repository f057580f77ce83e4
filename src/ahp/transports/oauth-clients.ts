/**
 * The local OAuth client file: which client identity Tally may present, and to which protected
 * resources, when an endpoint without an authentication binding challenges (auth.ts, discovery).
 *
 *   { "clients": [ { "issuer": "https://auth.example.com", "clientId": "tally",
 *                    "clientSecretRef": "team/ahp-client",
 *                    "resources": ["https://policy.example.com/agent-hooks"], "scopes": ["hooks"] } ] }
 *
 * A client is chosen only for a resource it lists, exactly, and only with an issuer the endpoint
 * named: a client secret is never offered to an endpoint it was not configured for, even one that
 * names the same authorization server. The file holds no secret; `clientSecretRef` names one in
 * the secret provider, and a literal `clientSecret` is refused without its value being repeated.
 * Errors name the JSON pointer at fault and say what to write instead; they never echo a value.
 */

import { CanonicalError, type CanonicalErrorCode, parseJson } from '../../core/canonical.js';
import { TallyError } from '../../core/errors.js';
import { isJsonObject } from '../../core/json.js';
import { pointerTo } from '../registration/check.js';
import { checkEndpoint } from './http-exchange.js';
import type { OAuthClientChoice, OAuthClientPolicy } from './options.js';
import { secretRefSegments } from './secrets.js';

export type OAuthClientsErrorCode = 'bad-oauth-clients';

/** A fault in an OAuth client file; `detail.pointer` is the JSON pointer at fault. */
export class OAuthClientsError extends TallyError<OAuthClientsErrorCode> {}

interface Client extends OAuthClientChoice {
  resources: readonly string[];
}

const CLIENT_KEYS = ['issuer', 'clientId', 'clientSecretRef', 'resources', 'scopes'];
/** Keys someone might use for a literal secret; each gets its own refusal. */
const LITERAL_SECRET_KEYS = ['clientSecret', 'client_secret'];
const JSON_FAULTS: Record<CanonicalErrorCode, string> = {
  'not-json': 'not JSON',
  syntax: 'a syntax error',
  'duplicate-key': 'a duplicate key',
  'non-finite': 'a number too large to represent',
  'unsafe-integer': 'an integer beyond ±(2^53 - 1)',
  'lone-surrogate': 'a lone surrogate in a string',
};
/** RFC 6749 §3.3 scope-token: %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

function fail(pointer: string, message: string): never {
  throw new OAuthClientsError('bad-oauth-clients', `${pointer === '' ? '(document)' : pointer}: ${message}`, {
    pointer,
  });
}

/**
 * Parses and checks an OAuth client file and returns the policy it describes: for a discovered
 * resource and its authorization servers, the first client listing that resource whose issuer is
 * among the servers, or undefined.
 */
export function parseOAuthClients(text: string | Uint8Array): OAuthClientPolicy {
  let doc: unknown;
  try {
    doc = parseJson(text);
  } catch (error) {
    // The parser's own message may quote a key or a number from the file; only its facts are kept.
    const detail = error instanceof CanonicalError ? error.detail : undefined;
    const at = typeof detail?.pointer === 'string' ? detail.pointer : '';
    const byte = typeof detail?.byte === 'number' ? ` at byte ${detail.byte}` : '';
    const what = error instanceof CanonicalError ? JSON_FAULTS[error.code] : 'malformed UTF-8';
    fail(at, `not strict JSON: ${what}${byte}`);
  }
  if (!isJsonObject(doc)) fail('', 'the file must be an object with a "clients" array');
  for (const key of Object.keys(doc)) if (key !== 'clients') fail(pointerTo('', key), 'unknown field');
  if (!Array.isArray(doc.clients)) fail('/clients', 'must be an array of clients');
  const clients = doc.clients.map((raw, i) => parseClient(raw, `/clients/${i}`));
  return (resource, authorizationServers) => {
    const client = clients.find(
      (c) => c.resources.includes(resource) && authorizationServers.includes(c.issuer),
    );
    if (client === undefined) return undefined;
    const choice: OAuthClientChoice = {
      issuer: client.issuer,
      clientId: client.clientId,
      clientSecretRef: client.clientSecretRef,
    };
    if (client.scopes !== undefined) choice.scopes = [...client.scopes];
    return choice;
  };
}

function parseClient(raw: unknown, at: string): Client {
  if (!isJsonObject(raw)) fail(at, 'a client must be an object');
  for (const key of Object.keys(raw)) {
    if (LITERAL_SECRET_KEYS.includes(key)) {
      fail(
        pointerTo(at, key),
        'a client secret is never written in this file; store it under TALLY_HOME/secrets (mode 0600) and name it with clientSecretRef',
      );
    }
    if (!CLIENT_KEYS.includes(key)) fail(pointerTo(at, key), 'unknown field');
  }
  const client: Client = {
    issuer: issuer(raw.issuer, `${at}/issuer`),
    clientId: clientId(raw.clientId, `${at}/clientId`),
    clientSecretRef: secretRef(raw.clientSecretRef, `${at}/clientSecretRef`),
    resources: resources(raw.resources, `${at}/resources`),
  };
  if (raw.scopes !== undefined) client.scopes = scopes(raw.scopes, `${at}/scopes`);
  return client;
}

/** Absolute https (http to loopback) without credentials, query or fragment: RFC 8414 §2. */
function issuer(raw: unknown, at: string): string {
  if (typeof raw !== 'string') fail(at, 'required: the authorization server issuer URL');
  const url = destination(raw, at, 'the issuer');
  if (url.search !== '' || url.hash !== '' || raw.includes('?') || raw.includes('#'))
    fail(at, 'an issuer URL has no query or fragment');
  return raw;
}

function clientId(raw: unknown, at: string): string {
  if (typeof raw !== 'string' || raw === '') fail(at, 'required: a non-empty client id');
  return raw;
}

function secretRef(raw: unknown, at: string): string {
  if (typeof raw !== 'string') fail(at, 'required: the secret provider reference of the client secret');
  try {
    secretRefSegments(raw);
  } catch {
    fail(
      at,
      "not a secret reference: '/'-separated segments of [A-Za-z0-9._-], not starting with '.', at most 255 characters, naming a file under TALLY_HOME/secrets",
    );
  }
  return raw;
}

/**
 * Each resource in the one spelling discovery can produce (origin and path, or the bare origin):
 * another spelling would never match, so it is refused with the spelling to use.
 */
function resources(raw: unknown, at: string): string[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    fail(at, 'required: a non-empty array of the resource URLs this client may be used for');
  }
  return raw.map((value, i) => {
    const where = `${at}/${i}`;
    if (typeof value !== 'string') fail(where, 'must be a resource URL string');
    const url = destination(value, where, 'a resource');
    if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#'))
      fail(where, 'a resource URL is matched as origin and path; remove the query or fragment');
    const written = `${url.origin}${url.pathname}`;
    if (value !== written && value !== url.origin)
      fail(where, `write the resource as it is matched: ${written}`);
    return value;
  });
}

function scopes(raw: unknown, at: string): string[] {
  if (!Array.isArray(raw) || raw.length === 0) fail(at, 'must be a non-empty array (omit it for no scope)');
  return raw.map((value, i) => {
    if (typeof value !== 'string' || !SCOPE_TOKEN.test(value))
      fail(`${at}/${i}`, 'must be a scope token (printable ASCII, no space, quote or backslash)');
    return value;
  });
}

/** The endpoint destination rule (https, or http to a loopback host; no user:password@). */
function destination(raw: string, at: string, what: string): URL {
  let url: URL;
  try {
    url = checkEndpoint(raw);
  } catch (error) {
    const credentials = (error as TallyError).code === 'auth';
    fail(
      at,
      credentials
        ? `${what} URL must not carry credentials`
        : `${what} must be an absolute https URL (plain http only to a loopback host)`,
    );
  }
  return url;
}
