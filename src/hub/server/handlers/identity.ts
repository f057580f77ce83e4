/** The hub itself, ships (registered on first contact by a signed request) and agents. */
import { decodeBase64 } from '../../../core/dsse.js';
import { keyId, shipId, toPublicKey } from '../../../core/keys.js';
import type { AgentRow, ShipRow } from '../../store/hub-store.js';
import { type Handler, iso, listQuery, nextLink, timeCursor } from '../context.js';
import { HubHttpError, sendJson } from '../errors.js';
import { signedJson } from '../signed-write.js';
import { packageView } from './artifacts.js';

export const hubInfo: Handler = async (hub, x) => {
  const head = await hub.store.logHead();
  sendJson(x.res, 200, {
    type: 'tally/hub/v1',
    origin: hub.identity.origin,
    key_id: hub.identity.keyId,
    public_key: hub.identity.publicKey,
    verifier_key: hub.identity.verifierKey,
    store: hub.store.dialect,
    log: { size: head.size, checkpoint: '/log/checkpoint', tiles: '/log/tile/' },
    limits: hub.limits,
  });
};

function shipView(s: ShipRow) {
  return {
    ship_id: s.ship_id,
    key_id: s.key_id,
    public_key: s.public_key,
    registered_at: iso(s.registered_at),
  };
}

function agentView(a: AgentRow) {
  return { slug: a.slug, ship_id: a.ship_id, first_seen: iso(a.first_seen) };
}

/** PUT /v1/ships/{ship_id} with {public_key}: the request must be signed by that very key. */
export const registerShip: Handler = async (hub, x) => {
  const presented = (body: unknown) => {
    const text = (body as { public_key?: unknown } | null)?.public_key;
    if (typeof text !== 'string')
      throw new HubHttpError('bad-request', 'the body must be {"public_key": "<base64 Ed25519 key>"}');
    try {
      return toPublicKey(decodeBase64(text, 'public_key'));
    } catch (error) {
      throw new HubHttpError('bad-request', `public_key: ${(error as Error).message}`);
    }
  };
  const { auth } = await signedJson(hub, x, presented);
  if (auth.shipId !== x.params.ship_id)
    throw new HubHttpError('bad-request', `the key's ship id is ${auth.shipId}, not ${x.params.ship_id}`);
  const row: ShipRow = {
    ship_id: auth.shipId,
    key_id: keyId(auth.publicKey),
    public_key: toPublicKey(auth.publicKey)
      .export({ format: 'der', type: 'spki' })
      .subarray(-32)
      .toString('base64'),
    registered_at: hub.now().getTime(),
  };
  if (shipId(auth.publicKey) !== row.ship_id)
    throw new HubHttpError('internal', 'ship id derivation disagrees');
  const status = await hub.store.registerShip(row);
  const stored = (await hub.store.ship(row.ship_id))!;
  sendJson(x.res, status === 'created' ? 201 : 200, { status, ship: shipView(stored) });
};

export const getShip: Handler = async (hub, x) => {
  const ship = await hub.store.ship(x.params.ship_id!);
  if (!ship) throw new HubHttpError('not-found', `no ship ${x.params.ship_id}`);
  sendJson(x.res, 200, shipView(ship));
};

export const listShips: Handler = async (hub, x) => {
  const page = await hub.store.ships(listQuery(x.query, timeCursor));
  sendJson(x.res, 200, {
    items: page.items.map(shipView),
    next: nextLink('/v1/ships', x.query, page.next, timeCursor),
  });
};

export const listAgents: Handler = async (hub, x) => {
  const page = await hub.store.agents(listQuery(x.query, timeCursor));
  sendJson(x.res, 200, {
    items: page.items.map(agentView),
    next: nextLink('/v1/agents', x.query, page.next, timeCursor),
  });
};

/** An agent: its owner, its certificates (newest first) and its recent packages. */
export const getAgent: Handler = async (hub, x) => {
  const agent = await hub.store.agent(x.params.slug!);
  if (!agent) throw new HubHttpError('not-found', `no agent ${x.params.slug}`);
  const certificates = await hub.store.certificates({ agent: agent.slug, limit: 20 });
  const packages = await hub.store.packages({ agent: agent.slug, limit: 20 });
  sendJson(x.res, 200, {
    ...agentView(agent),
    certificates: certificates.items.map((c) => ({
      serial: c.serial,
      valid_from: iso(c.valid_from),
      valid_until: iso(c.valid_until),
      log_index: c.log_index,
    })),
    packages: packages.items.map((p) => packageView(p)),
  });
};
