/**
 * A real hub for tests: a fresh SQLite file (or PostgreSQL database) and the server on a real
 * socket on 127.0.0.1; real packages sealed by the session library with a real ship key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digest } from '../../src/core/hash.js';
import { generateKeyPair } from '../../src/core/keys.js';
import { type HubIdentity, hubIdentity } from '../../src/hub/identity.js';
import { DEFAULT_LIMITS, type HubLimits } from '../../src/hub/server/limits.js';
import { createHubServer, listen } from '../../src/hub/server/server.js';
import type { HubStore } from '../../src/hub/store/hub-store.js';
import { openHubStore } from '../../src/hub/store/open.js';
import type { ShipKey } from '../../src/hub-client/http.js';
import type { Clock } from '../../src/session/lifecycle.js';
import { type Fixture, makeFixture, runSession, variedEvents } from '../session/fixture.js';

export interface TestHub {
  url: string;
  identity: HubIdentity;
  store: HubStore;
  dir: string;
  close(): Promise<void>;
}

export async function startTestHub(
  options: { limits?: Partial<HubLimits>; db?: string; now?: () => Date } = {},
): Promise<TestHub> {
  const dir = mkdtempSync(join(tmpdir(), 'tally-hub-'));
  const identity = hubIdentity(generateKeyPair().privateKey, 'hub.test/log');
  const store = await openHubStore(options.db ?? join(dir, 'hub.db'));
  await store.open({ origin: identity.origin, publicKey: identity.publicKey }, identity.signCheckpoint);
  const server: Server = createHubServer(
    {
      store,
      identity,
      limits: { ...DEFAULT_LIMITS, perIp: 100_000, perKey: 100_000, ...options.limits },
      publicUrl: null,
      now: options.now ?? (() => new Date()),
    },
    { onError: (error) => process.stderr.write(`hub error: ${(error as Error).stack}\n`) },
  );
  const address = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    identity,
    store,
    dir,
    async close() {
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ShipUnderTest {
  fx: Fixture;
  key: ShipKey;
}

export async function makeShip(prefix = 'tally-hub-ship-'): Promise<ShipUnderTest> {
  const fx = await makeFixture(prefix);
  return { fx, key: { keyId: fx.signer.keyId, privateKey: fx.signer.privateKey } };
}

/** A sealed package of this ship, with the varied events of the session fixture. */
export async function sealPackage(
  ship: ShipUnderTest,
  options: { certificatePath?: string; agent?: { name: string }; clock?: Clock } = {},
) {
  const run = await runSession(ship.fx, variedEvents(ship.fx.root), options);
  return { session: run.info.id, bytes: run.bytes };
}

export function removeShip(ship: ShipUnderTest): void {
  rmSync(ship.fx.dir, { recursive: true, force: true });
}

/** The digest of each record's payload: what the chain's `prev` and a witnessed head hold. */
export function recordDigests(bytes: Buffer): string[] {
  const lines = bytes.toString('utf8').trimEnd().split('\n').slice(1, -1);
  return lines.map((l) => digest(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64')));
}

/**
 * Runs one write on a SQLite hub's database file behind the hub's back, as someone with database
 * access could; returns the number of rows it changed.
 */
export function writeSqliteStore(hub: TestHub, sql: string, ...values: unknown[]): number {
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (
    file: string,
  ) => { prepare(sql: string): { run(...args: unknown[]): { changes: number } }; close(): void };
  const conn = new Database(join(hub.dir, 'hub.db'));
  try {
    return conn.prepare(sql).run(...values).changes;
  } finally {
    conn.close();
  }
}
