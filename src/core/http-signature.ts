/**
 * HTTP Message Signatures (RFC 9421) for requests, with Ed25519 (`alg="ed25519"`).
 *
 * The signature base is one line per covered component, `"<name>": <value>`, then
 * `"@signature-params": <the inner list of components and its parameters>`, joined with LF and no
 * final newline. Derived components supported: @method, @target-uri, @authority, @scheme,
 * @request-target, @path, @query; any other name is an HTTP field, its values joined with ", ".
 * Component parameters (;sf, ;req, …) are refused rather than half supported.
 */
import { type KeyObject, sign, verify } from 'node:crypto';
import { TallyError } from './errors.js';
import {
  type BareItem,
  type InnerList,
  type Parameters,
  parseDictionary,
  serializeInnerList,
} from './structured-fields.js';

export type HttpSignatureErrorCode = 'missing' | 'malformed' | 'unsupported' | 'component';

export class HttpSignatureError extends TallyError<HttpSignatureErrorCode> {}

export interface SignedRequest {
  method: string;
  /** The absolute target URI, e.g. https://hub.example/v1/packages/x?y=1 */
  url: string;
  /** Header lookup by lower-case name; undefined when absent. */
  header(name: string): string | undefined;
}

export interface SignatureParameters {
  created?: number;
  expires?: number;
  nonce?: string;
  keyid?: string;
  alg?: string;
  tag?: string;
}

export interface ParsedSignature {
  label: string;
  components: string[];
  params: SignatureParameters;
  /** The serialized inner list, exactly as it enters the signature base. */
  paramsText: string;
  signature: Buffer;
}

function authorityOf(url: URL): string {
  // URL already lower-cases the host and drops a default port.
  return url.host;
}

export function componentValue(request: SignedRequest, name: string): string {
  const url = new URL(request.url);
  switch (name) {
    case '@method':
      return request.method.toUpperCase();
    case '@target-uri':
      return request.url;
    case '@authority':
      return authorityOf(url);
    case '@scheme':
      return url.protocol.slice(0, -1).toLowerCase();
    case '@path':
      return url.pathname || '/';
    case '@query':
      return url.search || '?';
    case '@request-target':
      return `${url.pathname || '/'}${url.search}`;
    default: {
      if (name.startsWith('@'))
        throw new HttpSignatureError('unsupported', `derived component ${name} is not supported`);
      const value = request.header(name.toLowerCase());
      if (value === undefined)
        throw new HttpSignatureError('component', `covered field ${name} is not in the request`, { name });
      return value
        .split(',')
        .map((v) => v.trim())
        .join(', ');
    }
  }
}

export function signatureBase(
  request: SignedRequest,
  components: readonly string[],
  paramsText: string,
): string {
  const lines = components.map((name) => `"${name}": ${componentValue(request, name)}`);
  lines.push(`"@signature-params": ${paramsText}`);
  const base = lines.join('\n');
  if (/[\r\n]/.test(lines.slice(0, -1).join('')))
    throw new HttpSignatureError('malformed', 'a value has a newline');
  return base;
}

function paramsList(components: readonly string[], params: SignatureParameters): InnerList {
  const list: Parameters = [];
  const add = (name: string, value: BareItem) => list.push([name, value]);
  if (params.created !== undefined) add('created', { type: 'integer', value: params.created });
  if (params.expires !== undefined) add('expires', { type: 'integer', value: params.expires });
  if (params.nonce !== undefined) add('nonce', { type: 'string', value: params.nonce });
  if (params.keyid !== undefined) add('keyid', { type: 'string', value: params.keyid });
  if (params.alg !== undefined) add('alg', { type: 'string', value: params.alg });
  if (params.tag !== undefined) add('tag', { type: 'string', value: params.tag });
  return {
    kind: 'list',
    items: components.map((c) => ({ kind: 'item', value: { type: 'string', value: c }, params: [] })),
    params: list,
  };
}

export interface SignOptions extends SignatureParameters {
  components: readonly string[];
  privateKey: KeyObject;
  label?: string;
}

/** Signs a request; returns the Signature-Input and Signature field values. */
export function signRequest(
  request: SignedRequest,
  options: SignOptions,
): { input: string; signature: string } {
  const label = options.label ?? 'sig1';
  const paramsText = serializeInnerList(paramsList(options.components, options));
  const base = signatureBase(request, options.components, paramsText);
  const signature = sign(null, Buffer.from(base, 'utf8'), options.privateKey);
  return { input: `${label}=${paramsText}`, signature: `${label}=:${signature.toString('base64')}:` };
}

function stringParam(value: BareItem, name: string): string {
  if (value.type !== 'string')
    throw new HttpSignatureError('malformed', `signature parameter ${name} is not a string`);
  return value.value;
}

function intParam(value: BareItem, name: string): number {
  if (value.type !== 'integer')
    throw new HttpSignatureError('malformed', `signature parameter ${name} is not an integer`);
  return value.value;
}

/** Reads every signature of a request from its Signature-Input and Signature fields. */
export function parseSignatures(request: SignedRequest): ParsedSignature[] {
  const inputText = request.header('signature-input');
  const signatureText = request.header('signature');
  if (inputText === undefined || signatureText === undefined)
    throw new HttpSignatureError('missing', 'the request has no Signature-Input and Signature fields');
  let inputs: ReturnType<typeof parseDictionary>;
  let signatures: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(inputText);
    signatures = parseDictionary(signatureText);
  } catch (error) {
    throw new HttpSignatureError('malformed', (error as Error).message);
  }
  const out: ParsedSignature[] = [];
  for (const [label, input] of inputs) {
    if (input.kind !== 'list')
      throw new HttpSignatureError('malformed', `Signature-Input ${label} is not an inner list`);
    const sig = signatures.get(label);
    if (sig?.kind !== 'item' || sig.value.type !== 'bytes')
      throw new HttpSignatureError('malformed', `Signature ${label} is missing or not a byte sequence`);
    const components = input.items.map((item) => {
      if (item.value.type !== 'string')
        throw new HttpSignatureError('malformed', 'a covered component is not a string');
      if (item.params.length > 0)
        throw new HttpSignatureError(
          'unsupported',
          `component parameters on ${item.value.value} are not supported`,
        );
      return item.value.value;
    });
    if (new Set(components).size !== components.length)
      throw new HttpSignatureError('malformed', 'a component is covered twice');
    const params: SignatureParameters = {};
    for (const [name, value] of input.params) {
      if (name === 'created') params.created = intParam(value, name);
      else if (name === 'expires') params.expires = intParam(value, name);
      else if (name === 'nonce') params.nonce = stringParam(value, name);
      else if (name === 'keyid') params.keyid = stringParam(value, name);
      else if (name === 'alg') params.alg = stringParam(value, name);
      else if (name === 'tag') params.tag = stringParam(value, name);
      else throw new HttpSignatureError('unsupported', `signature parameter ${name} is not supported`);
    }
    out.push({
      label,
      components,
      params,
      paramsText: serializeInnerList(input),
      signature: sig.value.value,
    });
  }
  if (out.length === 0) throw new HttpSignatureError('missing', 'Signature-Input names no signature');
  return out;
}

/** True when `parsed` is an Ed25519 signature of this request by `publicKey`. */
export function verifyRequestSignature(
  request: SignedRequest,
  parsed: ParsedSignature,
  publicKey: KeyObject,
): boolean {
  if (parsed.params.alg !== undefined && parsed.params.alg !== 'ed25519') return false;
  if (parsed.signature.length !== 64) return false;
  const base = signatureBase(request, parsed.components, parsed.paramsText);
  return verify(null, Buffer.from(base, 'utf8'), publicKey, parsed.signature);
}
