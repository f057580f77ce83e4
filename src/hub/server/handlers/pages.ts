/**
 * The hub's HTML pages and the verifier script they load. Pages show what stored bytes claim;
 * the receipt page's panel verifies the bytes again in the browser with the script served here.
 */
import type { ServerResponse } from 'node:http';
import {
  agentPage,
  contentSecurityPolicy,
  indexPage,
  receiptPage,
  verifierScript,
  viewPackage,
} from '../../pages/index.js';
import type { PackageRow } from '../../store/hub-store.js';
import { type Handler, iso } from '../context.js';
import { HubHttpError } from '../errors.js';

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function sendPage(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'content-security-policy': contentSecurityPolicy(),
    ...SECURITY_HEADERS,
  });
  res.end(body);
}

const checksOf = (p: PackageRow): unknown => {
  try {
    return JSON.parse(p.checks) as unknown;
  } catch {
    return [];
  }
};

export const verifierJs: Handler = async (_hub, x) => {
  let script: string;
  try {
    script = verifierScript();
  } catch (error) {
    throw new HubHttpError('unavailable', (error as Error).message);
  }
  x.res.writeHead(200, {
    'content-type': 'text/javascript; charset=utf-8',
    'content-length': Buffer.byteLength(script),
    'cache-control': 'no-cache',
    ...SECURITY_HEADERS,
  });
  x.res.end(script);
};

export const receipt: Handler = async (hub, x) => {
  const id = x.params.id!;
  const row = await hub.store.package(id);
  const bytes = row === null ? null : await hub.store.packageBytes(id);
  const ship = row === null ? null : await hub.store.ship(row.ship_id);
  if (row === null || bytes === null || ship === null)
    throw new HubHttpError('not-found', `no receipt ${id}`);
  const base = `/v1/packages/${encodeURIComponent(id)}`;
  sendPage(
    x.res,
    200,
    receiptPage({
      view: viewPackage(bytes),
      data: {
        mode: 'hub',
        raw: `${base}/raw`,
        ship_key: ship.public_key,
        ship_id: ship.ship_id,
        log_index: row.log_index,
        verifier_key: hub.identity.verifierKey,
        checkpoint: '/log/checkpoint',
        proof: '/v1/log/proof/inclusion',
        heads: `/v1/sessions/${encodeURIComponent(id)}/heads`,
      },
      hub: {
        ship_id: row.ship_id,
        agent: row.agent,
        digest: row.digest,
        log_index: row.log_index,
        received_at: iso(row.received_at) ?? '',
        checks: checksOf(row),
      },
      scriptSrc: '/pages/verifier.js',
    }),
  );
};

export const agent: Handler = async (hub, x) => {
  const slug = x.params.slug!;
  const row = await hub.store.agent(slug);
  if (row === null) throw new HubHttpError('not-found', `no agent ${slug}`);
  const [certificates, packages, ship] = await Promise.all([
    hub.store.certificates({ agent: slug, limit: 20 }),
    hub.store.packages({ agent: slug, limit: 20 }),
    hub.store.ship(row.ship_id),
  ]);
  const newest = certificates.items[0];
  let certificate: unknown = null;
  if (newest !== undefined) {
    try {
      const envelope = JSON.parse(newest.envelope) as { payload?: unknown };
      certificate = JSON.parse(Buffer.from(String(envelope.payload), 'base64').toString('utf8')) as unknown;
    } catch {
      certificate = {};
    }
  }
  sendPage(
    x.res,
    200,
    agentPage({
      slug,
      owner: row.ship_id,
      shipKeyId: ship?.key_id ?? null,
      certificate,
      certificates: certificates.items.map((c) => ({
        serial: c.serial,
        valid_from: iso(c.valid_from) ?? '',
        valid_until: iso(c.valid_until) ?? '',
      })),
      receipts: packages.items.map((p) => ({
        session: p.session,
        started_at: iso(p.started_at),
        record_count: p.record_count,
        checks: checksOf(p),
      })),
      now: hub.now(),
    }),
  );
};

/** `/?q=`: a session id, an agent slug or a ship id; without q, the newest of each. */
export const home: Handler = async (hub, x) => {
  const q = (x.query.get('q') ?? '').trim().slice(0, 200);
  let packages: PackageRow[];
  let agents: { slug: string; ship_id: string }[];
  if (q === '') {
    packages = (await hub.store.packages({ limit: 20 })).items;
    agents = (await hub.store.agents({ limit: 20 })).items;
  } else {
    const [bySession, byAgent, byShip, allAgents] = await Promise.all([
      hub.store.package(q),
      hub.store.packages({ agent: q, limit: 20 }),
      hub.store.packages({ ship: q, limit: 20 }),
      hub.store.agents({ limit: 500 }),
    ]);
    const bySessionId = new Map<string, PackageRow>();
    for (const p of [...(bySession ? [bySession] : []), ...byAgent.items, ...byShip.items])
      if (!bySessionId.has(p.session)) bySessionId.set(p.session, p);
    packages = [...bySessionId.values()];
    const needle = q.toLowerCase();
    agents = allAgents.items.filter((a) => a.slug.toLowerCase().includes(needle) || a.ship_id === q);
  }
  sendPage(
    x.res,
    200,
    indexPage({
      query: q === '' ? null : q,
      origin: hub.identity.origin,
      receipts: packages.map((p) => ({
        session: p.session,
        agent: p.agent,
        ship_id: p.ship_id,
        started_at: iso(p.started_at),
        checks: checksOf(p),
      })),
      agents: agents.map((a) => ({ slug: a.slug, ship_id: a.ship_id })),
    }),
  );
};

export function isPagePath(path: string): boolean {
  return path === '/' || path.startsWith('/receipt/') || path.startsWith('/agent/');
}

/** The server's error path for pages: a page that is not found is an HTML page too. */
export function sendPageError(res: ServerResponse, status: number, message: string): void {
  sendPage(
    res,
    status,
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${status} · Tally</title></head><body><main><h1>${status}</h1><p>${message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</p><p><a href="/">Tally hub</a></p></main></body></html>`,
  );
}
