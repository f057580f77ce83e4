/**
 * Validation of one subscription: mode, events, the intercept-only deadline and failure policy,
 * content selection, native opt-in, upload binding and the optional local fields (id, filters,
 * scope, disableable).
 */
import { isJsonObject } from '../../core/json.js';
import { isAbsoluteUri } from '../messages/formats.js';
import { checkAuthentication } from './auth.js';
import {
  has,
  type IssueCollector,
  isLoopbackHost,
  isNonEmptyString,
  isNonNegativeInteger,
  isPositiveInteger,
  type JsonObject,
  jsonType,
  pointerTo,
  warnUnknownFields,
} from './check.js';
import { checkEvents, type SubscriptionMode } from './events.js';
import type { ContentDisposition, ContentSelection, Subscription, UploadBinding } from './types.js';

const SUBSCRIPTION_FIELDS = new Set([
  'id',
  'events',
  'mode',
  'timeoutMs',
  'failurePolicy',
  'content',
  'includeNative',
  'upload',
  'filters',
  'scope',
  'disableable',
]);
const UPLOAD_FIELDS = new Set(['endpoint', 'timeoutMs', 'maxBytes', 'auth']);
const FILTER_FIELDS = new Set(['toolKinds', 'paths']);
const DISPOSITIONS = new Set(['body', 'metadata', 'omit']);
const SCOPES = new Set(['managed', 'project', 'user']);
/** https anywhere; plain http only to a loopback host (the upload schema's own pattern). */
const UPLOAD_ENDPOINT =
  /^(?:https:\/\/|http:\/\/(?:localhost|127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|\[::1\])(?::[0-9]+)?(?:[/?#]|$))/;
/** The deadline range the protocol recommends harnesses support. */
const RECOMMENDED_TIMEOUT_MS = { min: 100, max: 30_000 };

export function checkSubscription(
  c: IssueCollector,
  raw: unknown,
  pointer: string,
  index: number,
): Subscription | undefined {
  if (!isJsonObject(raw)) {
    c.error(pointer, 'subscription.object', `subscription must be an object, not ${jsonType(raw)}`);
    return undefined;
  }
  const mark = c.mark();
  warnUnknownFields(c, raw, pointer, SUBSCRIPTION_FIELDS, 'subscription');
  const at = (field: string) => pointerTo(pointer, field);

  let mode: SubscriptionMode | undefined;
  if (raw.mode === 'intercept' || raw.mode === 'observe') {
    mode = raw.mode;
  } else {
    c.error(
      at('mode'),
      'subscription.mode',
      raw.mode === undefined
        ? "'mode' is required: 'intercept' or 'observe'"
        : "'mode' must be 'intercept' or 'observe'",
    );
  }
  const events = checkEvents(c, raw.events, at('events'), mode);
  checkPolicyFields(c, raw, pointer, mode);
  const content = checkContent(c, raw.content, at('content'));

  if (has(raw, 'id') && !isNonEmptyString(raw.id)) {
    c.error(at('id'), 'subscription.id', "subscription 'id' must be a non-empty string");
  }
  if (has(raw, 'includeNative') && typeof raw.includeNative !== 'boolean') {
    c.error(at('includeNative'), 'subscription.include-native', "'includeNative' must be a boolean");
  }
  const upload = has(raw, 'upload') ? checkUpload(c, raw.upload, at('upload')) : undefined;
  const filters = has(raw, 'filters') ? checkFilters(c, raw.filters, at('filters')) : undefined;
  checkScope(c, raw, pointer);

  if (c.errorsSince(mark) > 0 || mode === undefined || events === undefined || content === undefined) {
    return undefined;
  }
  const sub: Subscription = { index, events, mode, content, includeNative: raw.includeNative === true };
  if (typeof raw.id === 'string') sub.id = raw.id;
  if (mode === 'intercept') {
    sub.timeoutMs = raw.timeoutMs as number;
    sub.failurePolicy = raw.failurePolicy as 'fail-open' | 'fail-closed';
  }
  if (upload !== undefined) sub.upload = upload;
  if (filters !== undefined) sub.filters = filters;
  if (raw.scope === 'managed' || raw.scope === 'project' || raw.scope === 'user') sub.scope = raw.scope;
  if (typeof raw.disableable === 'boolean') sub.disableable = raw.disableable;
  return sub;
}

/** timeoutMs and failurePolicy: required on intercept, forbidden on observe. */
function checkPolicyFields(
  c: IssueCollector,
  raw: JsonObject,
  pointer: string,
  mode: SubscriptionMode | undefined,
) {
  const at = (field: string) => pointerTo(pointer, field);
  if (mode === 'observe') {
    for (const field of ['timeoutMs', 'failurePolicy']) {
      if (has(raw, field)) {
        c.error(
          at(field),
          'subscription.observe-policy-fields',
          `an observe subscription must not carry '${field}' (observers are never waited on)`,
        );
      }
    }
    return;
  }
  const required = mode === 'intercept';
  if (has(raw, 'timeoutMs') || required) {
    if (!isPositiveInteger(raw.timeoutMs)) {
      c.error(
        at('timeoutMs'),
        'subscription.timeout-ms',
        raw.timeoutMs === undefined
          ? "an intercept subscription requires 'timeoutMs', a positive integer deadline in milliseconds"
          : "'timeoutMs' must be a positive integer (milliseconds)",
      );
    } else if (raw.timeoutMs < RECOMMENDED_TIMEOUT_MS.min || raw.timeoutMs > RECOMMENDED_TIMEOUT_MS.max) {
      c.warn(
        at('timeoutMs'),
        'subscription.timeout-ms.range',
        `timeoutMs ${raw.timeoutMs} is outside the recommended ${RECOMMENDED_TIMEOUT_MS.min}-${RECOMMENDED_TIMEOUT_MS.max} ms`,
      );
    }
  }
  if (has(raw, 'failurePolicy') || required) {
    if (raw.failurePolicy !== 'fail-open' && raw.failurePolicy !== 'fail-closed') {
      c.error(
        at('failurePolicy'),
        'subscription.failure-policy',
        raw.failurePolicy === undefined
          ? "an intercept subscription requires 'failurePolicy' ('fail-open' or 'fail-closed'); there is no default"
          : "'failurePolicy' must be 'fail-open' or 'fail-closed'",
      );
    }
  }
}

/** The flat selection object: required `default`, any other key is a category name. */
function checkContent(c: IssueCollector, raw: unknown, pointer: string): ContentSelection | undefined {
  if (!isJsonObject(raw)) {
    c.error(
      pointer,
      'subscription.content',
      raw === undefined
        ? "'content' is required: an object with a 'default' of 'body', 'metadata' or 'omit'"
        : `'content' must be an object, not ${jsonType(raw)}`,
    );
    return undefined;
  }
  const mark = c.mark();
  if (!has(raw, 'default')) {
    c.error(pointerTo(pointer, 'default'), 'content.default', "content selection requires 'default'");
  }
  const categories: Record<string, ContentDisposition> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string' || !DISPOSITIONS.has(value)) {
      c.error(
        pointerTo(pointer, key),
        key === 'default' ? 'content.default' : 'content.category',
        `content '${key}' must be 'body', 'metadata' or 'omit'`,
      );
    } else if (key !== 'default') {
      categories[key] = value as ContentDisposition;
    }
  }
  if (c.errorsSince(mark) > 0) return undefined;
  return { default: raw.default as ContentDisposition, categories };
}

function checkUpload(c: IssueCollector, raw: unknown, pointer: string): UploadBinding | undefined {
  if (!isJsonObject(raw)) {
    c.error(pointer, 'upload.object', `'upload' must be an object, not ${jsonType(raw)}`);
    return undefined;
  }
  const mark = c.mark();
  warnUnknownFields(c, raw, pointer, UPLOAD_FIELDS, 'upload');
  const { endpoint, timeoutMs, maxBytes } = raw;
  if (!isUploadEndpoint(endpoint)) {
    c.error(
      pointerTo(pointer, 'endpoint'),
      'upload.endpoint',
      "upload 'endpoint' is required: an absolute https URI (RFC 3986; http only to a loopback host), without user info",
    );
  }
  if (!isPositiveInteger(timeoutMs)) {
    c.error(
      pointerTo(pointer, 'timeoutMs'),
      'upload.timeout-ms',
      "upload 'timeoutMs' is required: a positive integer",
    );
  }
  if (!isNonNegativeInteger(maxBytes)) {
    c.error(
      pointerTo(pointer, 'maxBytes'),
      'upload.max-bytes',
      "upload 'maxBytes' is required: a non-negative integer",
    );
  }
  const auth = has(raw, 'auth') ? checkAuthentication(c, raw.auth, pointerTo(pointer, 'auth')) : undefined;
  if (c.errorsSince(mark) > 0) return undefined;
  const binding: UploadBinding = {
    endpoint: endpoint as string,
    timeoutMs: timeoutMs as number,
    maxBytes: maxBytes as number,
  };
  if (auth !== undefined) binding.auth = auth;
  return binding;
}

function isUploadEndpoint(value: unknown): value is string {
  // The schema's `format: uri` (RFC 3986 syntax) and pattern, and the URL must parse for dispatch.
  if (
    typeof value !== 'string' ||
    !UPLOAD_ENDPOINT.test(value) ||
    !isAbsoluteUri(value) ||
    !URL.canParse(value)
  ) {
    return false;
  }
  const url = new URL(value);
  if (url.username !== '' || url.password !== '') return false;
  return url.protocol === 'https:' || isLoopbackHost(url.hostname);
}

function checkFilters(c: IssueCollector, raw: unknown, pointer: string): Subscription['filters'] {
  if (!isJsonObject(raw)) {
    c.error(pointer, 'subscription.filters', `'filters' must be an object, not ${jsonType(raw)}`);
    return undefined;
  }
  warnUnknownFields(c, raw, pointer, FILTER_FIELDS, 'filters');
  const filters: NonNullable<Subscription['filters']> = {};
  for (const key of ['toolKinds', 'paths'] as const) {
    if (!has(raw, key)) continue;
    const list = raw[key];
    if (Array.isArray(list) && list.every(isNonEmptyString) && new Set(list).size === list.length) {
      filters[key] = [...list];
    } else {
      c.error(
        pointerTo(pointer, key),
        'subscription.filters',
        `filters '${key}' must be an array of distinct non-empty strings`,
      );
    }
  }
  return filters;
}

function checkScope(c: IssueCollector, raw: JsonObject, pointer: string): void {
  if (has(raw, 'scope') && (typeof raw.scope !== 'string' || !SCOPES.has(raw.scope))) {
    c.error(
      pointerTo(pointer, 'scope'),
      'subscription.scope',
      "'scope' must be 'managed', 'project' or 'user'",
    );
  }
  if (has(raw, 'disableable') && typeof raw.disableable !== 'boolean') {
    c.error(pointerTo(pointer, 'disableable'), 'subscription.disableable', "'disableable' must be a boolean");
  } else if (raw.scope === 'managed' && raw.disableable !== false) {
    c.error(
      pointerTo(pointer, 'disableable'),
      'subscription.disableable',
      "a managed subscription requires 'disableable': false",
    );
  }
}
