/**
 * Reads an AHP portable registration document: validates every rule, reports every problem at
 * once (each with a JSON pointer and a rule id), and returns the normalised `Registration` the
 * dispatcher uses. Unknown fields are ignored with a warning; recognised fields are always checked.
 */

import { parseJson } from '../../core/canonical.js';
import { TallyError } from '../../core/errors.js';
import { isJsonObject } from '../../core/json.js';
import { firstBadUtf8Byte } from '../../core/utf8.js';
import { isAbsoluteUri } from '../messages/formats.js';
import { checkAuthentication } from './auth.js';
import {
  has,
  IssueCollector,
  isLoopbackHost,
  isNonEmptyString,
  isUsableEnvName,
  isUsableEnvValue,
  type JsonObject,
  jsonType,
  pointerTo,
  warnUnknownFields,
} from './check.js';
import { checkSubscription } from './subscription.js';
import {
  type Authentication,
  type Backend,
  type Issue,
  type Registration,
  SUPPORTED_PROTOCOL_VERSION,
  type Subscription,
  type TransportConfig,
} from './types.js';

export type RegistrationErrorCode =
  | 'syntax' // the text is not strict JSON (bad UTF-8, syntax, duplicate keys, unsafe integers)
  | 'invalid'; // valid JSON that breaks one or more registration rules

export class RegistrationError extends TallyError<RegistrationErrorCode> {
  /** Every problem found, in document order. */
  readonly issues: Issue[];
  /** Warnings collected before the document was rejected. */
  readonly warnings: Issue[];

  constructor(
    code: RegistrationErrorCode,
    issues: Issue[],
    warnings: Issue[] = [],
    detail?: Record<string, unknown>,
  ) {
    const first = issues[0];
    const summary = first
      ? `${first.pointer || '/'}: ${first.message} [${first.rule}]`
      : 'invalid registration';
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
    super(
      code,
      `registration ${code === 'syntax' ? 'is not JSON' : 'is invalid'}: ${summary}${more}`,
      detail,
    );
    this.issues = issues;
    this.warnings = warnings;
  }
}

export interface ParsedRegistration {
  registration: Registration;
  warnings: Issue[];
}

/** A reverse-DNS name: at least two dot-separated labels, each starting with a letter. */
const REVERSE_DNS = /^(?:[A-Za-z][A-Za-z0-9_-]*\.)+[A-Za-z][A-Za-z0-9_-]*$/;
const DOCUMENT_FIELDS = new Set(['protocolVersion', 'hooks', '$schema']);
const BACKEND_FIELDS = new Set(['id', 'transport', 'authentication', 'subscriptions']);
const STDIO_FIELDS = new Set(['type', 'command', 'args', 'lifecycle', 'cwd', 'env']);
const HTTP_FIELDS = new Set(['type', 'url']);
/** Environment names that suggest a secret was pasted into the document as a literal value. */
const SECRET_ENV_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL/i;

/**
 * Validates a parsed JSON value as a registration document. Throws RegistrationError('invalid')
 * listing every problem; otherwise returns the normalised registration and any warnings.
 */
export function parseRegistration(doc: unknown): ParsedRegistration {
  const c = new IssueCollector();
  const registration = checkDocument(c, doc);
  if (c.issues.length > 0 || registration === undefined) {
    throw new RegistrationError('invalid', c.issues, c.warnings);
  }
  return { registration, warnings: c.warnings };
}

/**
 * Parses registration text (or UTF-8 bytes) strictly, then validates it. Text that is not JSON
 * (bad UTF-8, syntax error, duplicate key) throws RegistrationError('syntax') whose single issue
 * names the byte offset; `detail.byte` carries it too.
 */
export function parseRegistrationText(text: string | Uint8Array): ParsedRegistration {
  let doc: unknown;
  try {
    doc = parseJson(text);
  } catch (error) {
    const byte = typeof text === 'string' ? errorByte(error) : (errorByte(error) ?? firstBadUtf8Byte(text));
    const reason = error instanceof TallyError ? error.message : 'the bytes are not valid UTF-8';
    const message = byte !== undefined && !reason.includes('at byte') ? `${reason} at byte ${byte}` : reason;
    throw new RegistrationError('syntax', [{ pointer: '', rule: 'document.json', message }], [], { byte });
  }
  return parseRegistration(doc);
}

function errorByte(error: unknown): number | undefined {
  if (error instanceof TallyError && typeof error.detail?.byte === 'number') return error.detail.byte;
  return undefined;
}

function checkDocument(c: IssueCollector, doc: unknown): Registration | undefined {
  if (!isJsonObject(doc)) {
    c.error('', 'document.object', `a registration must be a JSON object, not ${jsonType(doc)}`);
    return undefined;
  }
  warnUnknownFields(c, doc, '', DOCUMENT_FIELDS, 'registration');
  if (doc.protocolVersion !== SUPPORTED_PROTOCOL_VERSION) {
    c.error(
      '/protocolVersion',
      'document.protocol-version',
      doc.protocolVersion === undefined
        ? `'protocolVersion' is required and must be "${SUPPORTED_PROTOCOL_VERSION}"`
        : `protocolVersion ${JSON.stringify(doc.protocolVersion)} is not supported (this harness speaks "${SUPPORTED_PROTOCOL_VERSION}")`,
    );
  }
  const hooks = doc.hooks;
  if (!Array.isArray(hooks) || hooks.length === 0) {
    c.error(
      '/hooks',
      'document.hooks',
      hooks === undefined
        ? "'hooks' is required: an ordered, non-empty array of backends"
        : `'hooks' must be an ordered, non-empty array of backends, not ${Array.isArray(hooks) ? 'an empty array' : jsonType(hooks)}`,
    );
    return undefined;
  }
  const ids = new Map<string, number>();
  const backends = hooks.map((raw: unknown, i) => checkBackend(c, raw, pointerTo('/hooks', i), i, ids));
  if (c.issues.length > 0) return undefined;
  return { protocolVersion: SUPPORTED_PROTOCOL_VERSION, hooks: backends.filter((b) => b !== undefined) };
}

function checkBackend(
  c: IssueCollector,
  raw: unknown,
  pointer: string,
  index: number,
  ids: Map<string, number>,
): Backend | undefined {
  if (!isJsonObject(raw)) {
    c.error(pointer, 'backend.object', `backend must be an object, not ${jsonType(raw)}`);
    return undefined;
  }
  const mark = c.mark();
  const at = (field: string) => pointerTo(pointer, field);
  const { id } = raw;
  if (typeof id !== 'string') {
    c.error(
      at('id'),
      'backend.id',
      "backend 'id' is required: a reverse-DNS name such as 'com.example.policy'",
    );
  } else if (!REVERSE_DNS.test(id)) {
    c.error(
      at('id'),
      'backend.id.reverse-dns',
      `backend id '${id}' is not a reverse-DNS name such as 'com.example.policy'`,
    );
  } else if (ids.has(id)) {
    c.error(at('id'), 'backend.id.duplicate', `backend id '${id}' is already used by /hooks/${ids.get(id)}`);
  } else {
    ids.set(id, index);
  }
  if (has(raw, 'contentReceiver')) {
    c.error(
      at('contentReceiver'),
      'backend.content-receiver',
      "'contentReceiver' is a removed field; configure 'upload' on each subscription instead",
    );
  }
  const known = new Set(BACKEND_FIELDS).add('contentReceiver');
  warnUnknownFields(c, raw, pointer, known, 'backend');

  const transport = checkTransport(c, raw.transport, at('transport'));
  let authentication: Authentication | undefined;
  if (has(raw, 'authentication')) {
    if (isJsonObject(raw.transport) && raw.transport.type === 'stdio') {
      c.error(
        at('authentication'),
        'backend.authentication.stdio',
        "a stdio backend cannot have 'authentication' (it is an HTTP endpoint binding)",
      );
    }
    authentication = checkAuthentication(c, raw.authentication, at('authentication'));
  }
  const subscriptions = checkSubscriptions(c, raw.subscriptions, at('subscriptions'));
  if (
    c.errorsSince(mark) > 0 ||
    typeof id !== 'string' ||
    transport === undefined ||
    subscriptions === undefined
  ) {
    return undefined;
  }
  const backend: Backend = { index, id, transport, subscriptions };
  if (authentication !== undefined) backend.authentication = authentication;
  return backend;
}

function checkSubscriptions(c: IssueCollector, raw: unknown, pointer: string): Subscription[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) {
    c.error(
      pointer,
      'backend.subscriptions',
      raw === undefined
        ? "'subscriptions' is required: a non-empty array"
        : `'subscriptions' must be a non-empty array, not ${Array.isArray(raw) ? 'an empty array' : jsonType(raw)}`,
    );
    return undefined;
  }
  const mark = c.mark();
  const subs = raw.map((s: unknown, i) => checkSubscription(c, s, pointerTo(pointer, i), i));
  if (c.errorsSince(mark) > 0) return undefined;
  return subs.filter((s) => s !== undefined);
}

function checkTransport(c: IssueCollector, raw: unknown, pointer: string): TransportConfig | undefined {
  if (!isJsonObject(raw)) {
    c.error(
      pointer,
      'transport.object',
      raw === undefined
        ? "'transport' is required: exactly one stdio or http transport object"
        : `'transport' must be one transport object, not ${jsonType(raw)}`,
    );
    return undefined;
  }
  if (raw.type === 'stdio') return checkStdio(c, raw, pointer);
  if (raw.type === 'http') return checkHttp(c, raw, pointer);
  c.error(
    pointerTo(pointer, 'type'),
    'transport.type',
    raw.type === undefined
      ? "transport 'type' is required: 'stdio' or 'http'"
      : `transport type ${JSON.stringify(raw.type)} is not supported ('stdio' or 'http')`,
  );
  return undefined;
}

function checkStdio(c: IssueCollector, raw: JsonObject, pointer: string): TransportConfig | undefined {
  const mark = c.mark();
  const at = (field: string) => pointerTo(pointer, field);
  warnUnknownFields(c, raw, pointer, STDIO_FIELDS, 'stdio transport');
  const { command, args, lifecycle, cwd, env } = raw;
  if (!isNonEmptyString(command)) {
    c.error(
      at('command'),
      'transport.stdio.command',
      "stdio 'command' is required: a non-empty executable path or name",
    );
  }
  if (has(raw, 'args') && !(Array.isArray(args) && args.every((a) => typeof a === 'string'))) {
    c.error(at('args'), 'transport.stdio.args', "stdio 'args' must be an array of strings");
  }
  if (lifecycle !== 'persistent' && lifecycle !== 'per_event') {
    c.error(
      at('lifecycle'),
      'transport.stdio.lifecycle',
      "stdio 'lifecycle' is required: 'persistent' or 'per_event'",
    );
  }
  if (has(raw, 'cwd') && !isNonEmptyString(cwd)) {
    c.error(at('cwd'), 'transport.stdio.cwd', "stdio 'cwd' must be a non-empty string");
  }
  const environment: Record<string, string> = {};
  if (has(raw, 'env')) {
    if (!isJsonObject(env)) {
      c.error(at('env'), 'transport.stdio.env', "stdio 'env' must be an object of literal string values");
    } else {
      for (const [name, value] of Object.entries(env)) {
        const where = pointerTo(at('env'), name);
        // The same predicates as the runtime (transports/stdio-process.ts), so a valid registration
        // never fails at dispatch for its env.
        if (!isUsableEnvName(name)) {
          c.error(
            where,
            'transport.stdio.env',
            'an environment variable name must be non-empty and contain neither = nor NUL',
          );
        } else if (!isUsableEnvValue(value)) {
          c.error(
            where,
            'transport.stdio.env',
            typeof value === 'string'
              ? `env '${name}' must be a literal string without NUL`
              : `env '${name}' must be a literal string, not ${jsonType(value)}`,
          );
        } else {
          environment[name] = value;
          if (SECRET_ENV_NAME.test(name)) {
            c.warn(
              where,
              'transport.stdio.env.secret',
              `env '${name}' looks like a credential; a registration should hold references, never secrets`,
            );
          }
        }
      }
    }
  }
  if (c.errorsSince(mark) > 0) return undefined;
  const transport: TransportConfig = {
    kind: 'stdio',
    command: command as string,
    args: Array.isArray(args) ? [...(args as string[])] : [],
    lifecycle: lifecycle as 'persistent' | 'per_event',
    env: environment,
  };
  if (typeof cwd === 'string') transport.cwd = cwd;
  return transport;
}

function checkHttp(c: IssueCollector, raw: JsonObject, pointer: string): TransportConfig | undefined {
  warnUnknownFields(c, raw, pointer, HTTP_FIELDS, 'http transport');
  const at = pointerTo(pointer, 'url');
  const { url } = raw;
  // The schema's `format: uri` (RFC 3986 syntax: no space, brace or backslash unless
  // percent-encoded) and its `^https?://` pattern, and the URL must also parse for dispatch.
  if (typeof url !== 'string' || !/^https?:\/\//.test(url) || !isAbsoluteUri(url) || !URL.canParse(url)) {
    c.error(
      at,
      'transport.http.url',
      "http 'url' is required: an absolute http:// or https:// URI (RFC 3986; percent-encode spaces, braces and backslashes)",
    );
    return undefined;
  }
  const parsed = new URL(url);
  if (parsed.username !== '' || parsed.password !== '') {
    c.error(
      at,
      'transport.http.url.credentials',
      'http url must not embed credentials (user info); use authentication',
    );
    return undefined;
  }
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
    c.warn(
      at,
      'transport.http.url.insecure',
      'plain http is acceptable only for loopback or explicit local tests; use https',
    );
  }
  return { kind: 'http', url };
}
