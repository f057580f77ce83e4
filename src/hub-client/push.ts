/**
 * `tally push`: register the ship (first contact: the request is signed by the very key it
 * registers), then upload a package or a certificate. Pushing is always explicit.
 */

import { canonicalize } from '../core/canonical.js';
import { rawPublicKey, shipId as shipIdOf } from '../core/keys.js';
import { hubJson, hubUrl, type ShipKey } from './http.js';
import { CERTIFICATE_MEDIA_TYPE, PACKAGE_MEDIA_TYPE } from './wire.js';

export interface PushResult {
  status: 'created' | 'exists';
  log_index: number;
  [field: string]: unknown;
}

export async function registerShip(
  hub: string,
  signer: ShipKey,
): Promise<{ status: string; ship_id: string }> {
  const ship = shipIdOf(signer.privateKey);
  const body = Buffer.from(
    JSON.stringify({ public_key: rawPublicKey(signer.privateKey).toString('base64') }),
  );
  const { json } = await hubJson<{ status: string }>(hubUrl(hub, `/v1/ships/${ship}`), {
    method: 'PUT',
    body,
    signer,
  });
  return { status: json.status, ship_id: ship };
}

export async function pushPackage(
  hub: string,
  session: string,
  bytes: Buffer,
  signer: ShipKey,
  options: { certificate?: string } = {},
): Promise<PushResult> {
  const { json } = await hubJson<PushResult>(hubUrl(hub, `/v1/packages/${encodeURIComponent(session)}`), {
    method: 'PUT',
    body: bytes,
    contentType: PACKAGE_MEDIA_TYPE,
    signer,
    ...(options.certificate ? { headers: { 'tally-certificate': options.certificate } } : {}),
  });
  return json;
}

export async function pushCertificate(hub: string, envelope: unknown, signer: ShipKey): Promise<PushResult> {
  const body = Buffer.from(canonicalize(envelope));
  const { json } = await hubJson<PushResult>(hubUrl(hub, '/v1/certificates'), {
    method: 'POST',
    body,
    signer,
  });
  return json;
}

export { CERTIFICATE_MEDIA_TYPE };
