/**
 * The transparency log: the C2SP tlog-tiles resources (checkpoint, tiles, entry bundles) under
 * /log/, and JSON conveniences under /v1/log/ (an entry, inclusion and consistency proofs) for
 * clients that would rather not assemble proofs from tiles. Both read the same stored hashes.
 */
import { leafHash } from '../../../core/merkle.js';
import { encodeEntryBundle, parseTilePath, TILE_WIDTH } from '../../../core/tlog-tiles.js';
import { TreeReader } from '../../log/tree.js';
import type { Handler, Hub } from '../context.js';
import { HubHttpError, sendJson } from '../errors.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

export const checkpoint: Handler = async (hub, x) => {
  const head = await hub.store.logHead();
  x.res.writeHead(200, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'max-age=1',
    'content-length': Buffer.byteLength(head.checkpoint),
  });
  x.res.end(head.checkpoint);
};

export const tile: Handler = async (hub, x) => {
  let name: ReturnType<typeof parseTilePath>;
  try {
    name = parseTilePath(`tile/${x.params.path}`);
  } catch (error) {
    throw new HubHttpError('not-found', (error as Error).message);
  }
  let body: Buffer;
  if (name.level === 'entries') {
    const start = name.index * TILE_WIDTH;
    const entries = await hub.store.entries(start, start + name.width);
    if (entries.length !== name.width)
      throw new HubHttpError('not-found', `the log has no bundle ${x.params.path} yet`);
    body = encodeEntryBundle(entries.map((e) => e.bytes));
  } else {
    const stored = await hub.store.tile(name.level, name.index);
    if (stored.length < name.width * 32)
      throw new HubHttpError('not-found', `the log has no tile ${x.params.path} yet`);
    body = stored.subarray(0, name.width * 32);
  }
  x.res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'cache-control': IMMUTABLE,
    'content-length': body.length,
  });
  x.res.end(body);
};

function count(text: string | null, name: string): number | undefined {
  if (text === null) return undefined;
  if (!/^\d{1,15}$/.test(text))
    throw new HubHttpError('bad-request', `${name} must be a non-negative integer`);
  return Number(text);
}

async function tree(hub: Hub, size?: number): Promise<TreeReader> {
  const head = await hub.store.logHead();
  const at = size ?? head.size;
  if (at > head.size) throw new HubHttpError('not-found', `the log has ${head.size} entries, not ${at}`);
  return new TreeReader((level, index) => hub.store.tile(level, index), at);
}

export const entry: Handler = async (hub, x) => {
  const index = count(x.params.index!, 'index')!;
  const [stored] = await hub.store.entries(index, index + 1);
  if (!stored) throw new HubHttpError('not-found', `no log entry ${index}`);
  sendJson(x.res, 200, {
    index,
    entry: JSON.parse(stored.bytes.toString('utf8')) as unknown,
    bytes: stored.bytes.toString('base64'),
    leaf_hash: leafHash(stored.bytes).toString('base64'),
  });
};

export const inclusionProof: Handler = async (hub, x) => {
  const index = count(x.query.get('index'), 'index');
  if (index === undefined) throw new HubHttpError('bad-request', 'give ?index=');
  const reader = await tree(hub, count(x.query.get('size'), 'size'));
  if (index >= reader.size)
    throw new HubHttpError('not-found', `no entry ${index} in a tree of ${reader.size}`);
  const proof = await reader.inclusionProof(index);
  sendJson(x.res, 200, { index, size: reader.size, proof: proof.map((h) => h.toString('base64')) });
};

export const consistencyProof: Handler = async (hub, x) => {
  const from = count(x.query.get('from'), 'from');
  if (from === undefined) throw new HubHttpError('bad-request', 'give ?from=');
  const reader = await tree(hub, count(x.query.get('to'), 'to'));
  if (from > reader.size) throw new HubHttpError('not-found', `no tree of ${from} before ${reader.size}`);
  const proof = await reader.consistencyProof(from);
  sendJson(x.res, 200, { from, to: reader.size, proof: proof.map((h) => h.toString('base64')) });
};
