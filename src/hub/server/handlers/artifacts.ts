/** Certificates, packages and witnessed chain heads: the signed uploads, and their reads. */
import { canonicalize } from '../../../core/canonical.js';
import { digest } from '../../../core/hash.js';
import { readCertificateUnverified, verifyCertificate } from '../../../evidence/certificate.js';
import { PACKAGE_MEDIA_TYPE } from '../../../hub-client/wire.js';
import { fetchGuarded } from '../../ingest/fetch.js';
import { verifyHead } from '../../ingest/head.js';
import { verifyUpload } from '../../ingest/package.js';
import type { CertificateRow, PackageRow, Published } from '../../store/hub-store.js';
import { authenticate } from '../auth.js';
import {
  type Exchange,
  type Handler,
  type Hub,
  iso,
  listQuery,
  logIndexCursor,
  nextLink,
} from '../context.js';
import { HubHttpError, sendJson } from '../errors.js';
import { parseJsonBody, rateLimit } from '../limits.js';
import { requireMediaType, signedJson } from '../signed-write.js';

export function certificateView(c: CertificateRow, withEnvelope = false) {
  return {
    serial: c.serial,
    ship_id: c.ship_id,
    agent: c.agent,
    digest: c.digest,
    issued_at: iso(c.issued_at),
    valid_from: iso(c.valid_from),
    valid_until: iso(c.valid_until),
    received_at: iso(c.received_at),
    log_index: c.log_index,
    ...(withEnvelope ? { envelope: JSON.parse(c.envelope) as unknown } : {}),
  };
}

export function packageView(p: PackageRow, withChecks = false) {
  return {
    session: p.session,
    ship_id: p.ship_id,
    agent: p.agent,
    certificate: p.certificate,
    digest: p.digest,
    size: p.size,
    record_count: p.record_count,
    merkle_root: p.merkle_root,
    started_at: iso(p.started_at),
    ended_at: iso(p.ended_at),
    received_at: iso(p.received_at),
    log_index: p.log_index,
    links: { self: `/v1/packages/${p.session}`, raw: `/v1/packages/${p.session}/raw` },
    ...(withChecks ? { checks: JSON.parse(p.checks) as unknown } : {}),
  };
}

/** 201 created, 200 already there with the same bytes, 409 other bytes, 403 someone else's id. */
function answer(x: Exchange, published: Published, what: string, body: Record<string, unknown>): void {
  if (published.status === 'forbidden')
    throw new HubHttpError('forbidden', `the ${published.subject} ${what} belongs to ${published.owner}`, {
      detail: { owner: published.owner, subject: published.subject },
    });
  if (published.status === 'conflict')
    throw new HubHttpError('conflict', `${what} is already stored with other bytes; it is write-once`, {
      detail: { log_index: published.log_index, subject: published.subject },
    });
  sendJson(x.res, published.status === 'created' ? 201 : 200, {
    status: published.status,
    log_index: published.log_index,
    ...body,
  });
}

export const postCertificate: Handler = async (hub, x) => {
  const { auth, body } = await signedJson(hub, x);
  let verified: ReturnType<typeof verifyCertificate>;
  try {
    verified = verifyCertificate(body, [auth.publicKey]);
  } catch (error) {
    throw new HubHttpError(
      'verification-failed',
      `the certificate does not verify under the uploading ship's key: ${(error as Error).message}`,
      {
        check: 'certificate_signature',
      },
    );
  }
  const c = verified.certificate;
  const envelope = canonicalize(body);
  const published = await hub.store.publishCertificate({
    serial: c.serial,
    ship_id: c.ship_id,
    agent: c.agent.name,
    digest: digest(envelope),
    envelope,
    issued_at: Date.parse(c.issued_at),
    valid_from: Date.parse(c.valid_from),
    valid_until: Date.parse(c.valid_until),
    received_at: hub.now().getTime(),
  });
  answer(x, published, `certificate ${c.serial} (agent ${c.agent.name})`, {
    serial: c.serial,
    agent: c.agent.name,
  });
};

export const getCertificate: Handler = async (hub, x) => {
  const c = await hub.store.certificate(x.params.serial!);
  if (!c) throw new HubHttpError('not-found', `no certificate ${x.params.serial}`);
  sendJson(x.res, 200, certificateView(c, true));
};

export const listCertificates: Handler = async (hub, x) => {
  const page = await hub.store.certificates(listQuery(x.query, logIndexCursor));
  sendJson(x.res, 200, {
    items: page.items.map((c) => certificateView(c)),
    next: nextLink('/v1/certificates', x.query, page.next, logIndexCursor),
  });
};

/** The certificate an upload names: one already on the hub (by serial), or one at a URL. */
async function namedCertificate(hub: Hub, x: Exchange, shipId: string) {
  const serial = x.req.headers['tally-certificate'];
  const url = x.req.headers['tally-certificate-url'];
  if (typeof serial === 'string') {
    const row = await hub.store.certificate(serial);
    if (!row) throw new HubHttpError('bad-request', `no certificate ${serial} on this hub; push it first`);
    if (row.ship_id !== shipId)
      throw new HubHttpError('forbidden', `certificate ${serial} belongs to ${row.ship_id}`);
    return { envelope: JSON.parse(row.envelope) as unknown, serial, agent: row.agent };
  }
  if (typeof url === 'string') {
    const bytes = await fetchGuarded(url, { limit: hub.limits.jsonBytes, timeoutMs: 5000 });
    const envelope = parseJsonBody(bytes, hub.limits);
    const c = readCertificateUnverified(envelope);
    const owner = await hub.store.agent(c.agent.name);
    if (owner && owner.ship_id !== shipId)
      throw new HubHttpError('forbidden', `the agent ${c.agent.name} belongs to ${owner.ship_id}`);
    return { envelope, serial: c.serial, agent: c.agent.name };
  }
  return undefined;
}

/** PUT /v1/packages/{session}: the body is the package, verified while it streams in. */
export const putPackage: Handler = async (hub, x) => {
  requireMediaType(x, PACKAGE_MEDIA_TYPE);
  const declared = Number(x.req.headers['content-length']);
  if (Number.isFinite(declared) && declared > hub.limits.packageBytes)
    throw new HubHttpError(
      'body-too-large',
      `the package is ${declared} bytes; at most ${hub.limits.packageBytes} are accepted`,
    );
  const auth = await authenticate(x.req, {
    store: hub.store,
    publicUrl: hub.publicUrl,
    windowSeconds: hub.limits.signatureWindow,
    now: hub.now().getTime(),
  });
  await rateLimit(hub.store, [[`key:${auth.keyId}`, hub.limits.perKey]]);
  const certificate = await namedCertificate(hub, x, auth.shipId);
  const upload = await verifyUpload(x.req, {
    session: x.params.session!,
    auth,
    ...(certificate ? { certificate } : {}),
    limit: hub.limits.packageBytes,
    now: hub.now(),
    // The same tolerance as for a signature's created time.
    clockSkewMs: hub.limits.signatureWindow * 1000,
  });
  const published = await hub.store.publishPackage(upload.row, upload.bytes);
  const failedPolicy = upload.result.checks.filter((c) => !c.ok && c.code !== 'skipped').map((c) => c.check);
  // Refused for the agent slug or the certificate serial it names: say which.
  const what =
    published.subject === 'agent'
      ? `${upload.row.agent} (named by session ${upload.row.session})`
      : published.subject === 'certificate'
        ? `${upload.row.certificate} (named by session ${upload.row.session})`
        : `session ${upload.row.session}`;
  answer(x, published, what, {
    session: upload.row.session,
    digest: upload.row.digest,
    policy_failures: failedPolicy,
  });
};

export const getPackage: Handler = async (hub, x) => {
  const p = await hub.store.package(x.params.session!);
  if (!p) throw new HubHttpError('not-found', `no package ${x.params.session}`);
  sendJson(x.res, 200, packageView(p, true));
};

export const getPackageRaw: Handler = async (hub, x) => {
  const bytes = await hub.store.packageBytes(x.params.session!);
  if (!bytes) throw new HubHttpError('not-found', `no package ${x.params.session}`);
  x.res.writeHead(200, {
    'content-type': PACKAGE_MEDIA_TYPE,
    'content-length': bytes.length,
    'content-disposition': `attachment; filename="${x.params.session}.tally"`,
  });
  x.res.end(bytes);
};

export const listPackages: Handler = async (hub, x) => {
  const page = await hub.store.packages(listQuery(x.query, logIndexCursor));
  sendJson(x.res, 200, {
    items: page.items.map((p) => packageView(p)),
    next: nextLink('/v1/packages', x.query, page.next, logIndexCursor),
  });
};

/** POST /v1/sessions/{session}/heads: a signed chain head of a running session. */
export const postHead: Handler = async (hub, x) => {
  const { auth, body } = await signedJson(hub, x);
  const row = verifyHead(body, auth, x.params.session!, hub.now());
  const published = await hub.store.witnessHead(row);
  answer(x, published, `head ${row.seq} of session ${row.session}`, { session: row.session, seq: row.seq });
};

export const listHeads: Handler = async (hub, x) => {
  const heads = await hub.store.heads(x.params.session!);
  sendJson(x.res, 200, {
    session: x.params.session,
    heads: heads.map((h) => ({
      seq: h.seq,
      digest: h.record_digest,
      time: iso(h.time),
      ship_id: h.ship_id,
      log_index: h.log_index,
      envelope: JSON.parse(h.envelope) as unknown,
    })),
  });
};
