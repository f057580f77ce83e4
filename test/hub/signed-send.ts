/** Hand-built signed requests, for replaying and bending them in tests. */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { contentDigest } from '../../src/core/content-digest.js';
import { signRequest } from '../../src/core/http-signature.js';
import type { ShipKey } from '../../src/hub-client/http.js';
import { SIGNED_COMPONENTS } from '../../src/hub-client/wire.js';

export interface Sent {
  status: number;
  json: { error?: { code: string; message: string; check?: string } } & Record<string, unknown>;
  headers: http.IncomingHttpHeaders;
}

export function signedHeaders(
  url: string,
  method: string,
  body: Buffer,
  key: ShipKey,
  options: {
    created?: number;
    nonce?: string;
    contentType?: string;
    components?: readonly string[];
    /** Header fields sent and signed (each one covered, unless `components` says otherwise). */
    fields?: Record<string, string>;
  } = {},
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': options.contentType ?? 'application/json',
    'content-length': String(body.length),
    'content-digest': contentDigest(body),
    ...options.fields,
  };
  const signed = signRequest(
    { method, url, header: (name) => headers[name] },
    {
      components: options.components ?? [...SIGNED_COMPONENTS, ...Object.keys(options.fields ?? {})],
      created: options.created ?? Math.floor(Date.now() / 1000),
      nonce: options.nonce ?? randomBytes(12).toString('hex'),
      keyid: key.keyId,
      privateKey: key.privateKey,
    },
  );
  return { ...headers, 'signature-input': signed.input, signature: signed.signature };
}

export function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  body: Buffer = Buffer.alloc(0),
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Sent['json'] = {};
        try {
          json = JSON.parse(text) as Sent['json'];
        } catch {
          json = { raw: text };
        }
        resolve({ status: response.statusCode ?? 0, json, headers: response.headers });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}
