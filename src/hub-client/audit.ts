/**
 * `tally hub audit URL`: keeps every checkpoint it has seen of a hub under
 * `TALLY_HOME/hub-audit/<host>/`, and proves each new one consistent with the newest kept one
 * (RFC 9162 consistency proof, or equal roots at equal sizes). The hub's verifier key is pinned
 * with `--hub-key` or trusted on first use and recorded; a hub that later signs with another key,
 * shrinks its log or forks it is reported, never silently accepted.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyConsistency } from '../core/merkle.js';
import { fetchCheckpoint, openCheckpoint, type VerifiedCheckpoint } from './checkpoint.js';
import { HubClientError, hubJson, hubUrl } from './http.js';

export interface AuditResult {
  hub: string;
  origin: string;
  verifier_key: string;
  /** How the key was trusted: pinned by flag, recorded earlier, or first use now. */
  trust: 'pinned' | 'recorded' | 'first-use';
  size: number;
  root: string;
  previous: { size: number; root: string } | null;
  consistent: boolean;
  checkpoints_kept: number;
}

interface Recorded {
  url: string;
  verifier_key: string;
  first_seen: string;
}

export function auditDir(home: string, hub: string): string {
  const url = new URL(hub);
  return join(
    home,
    'hub-audit',
    `${url.hostname}_${url.port || (url.protocol === 'https:' ? '443' : '80')}${url.pathname.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, '')}`,
  );
}

/** The hub verifier key `tally hub audit` recorded for this hub on first use, or null. */
export function recordedHubKey(home: string, hub: string): string | null {
  const path = join(auditDir(home, hub), 'hub.json');
  if (!existsSync(path)) return null;
  return (JSON.parse(readFileSync(path, 'utf8')) as Recorded).verifier_key;
}

function kept(dir: string): number[] {
  const folder = join(dir, 'checkpoints');
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((f) => /^\d+\.checkpoint$/.test(f))
    .map((f) => Number.parseInt(f, 10))
    .sort((a, b) => a - b);
}

export async function auditHub(
  hub: string,
  options: { home: string; hubKey?: string; now?: Date },
): Promise<AuditResult> {
  const dir = auditDir(options.home, hub);
  mkdirSync(join(dir, 'checkpoints'), { recursive: true, mode: 0o700 });
  const recordPath = join(dir, 'hub.json');
  const recorded = existsSync(recordPath) ? (JSON.parse(readFileSync(recordPath, 'utf8')) as Recorded) : null;
  let trust: AuditResult['trust'];
  let verifierKey: string;
  if (options.hubKey) {
    verifierKey = options.hubKey;
    trust = 'pinned';
    if (recorded && recorded.verifier_key !== verifierKey)
      throw new HubClientError(
        'hub-key',
        `--hub-key differs from the key recorded for ${hub} on ${recorded.first_seen}`,
        {
          detail: { recorded: recorded.verifier_key },
        },
      );
  } else if (recorded) {
    verifierKey = recorded.verifier_key;
    trust = 'recorded';
  } else {
    verifierKey = (await hubJson<{ verifier_key: string }>(hubUrl(hub, '/v1/hub'))).json.verifier_key;
    trust = 'first-use';
  }
  const current = await fetchCheckpoint(hub, verifierKey);
  if (!recorded)
    writeFileSync(
      recordPath,
      `${JSON.stringify({ url: hub, verifier_key: verifierKey, first_seen: (options.now ?? new Date()).toISOString() }, null, 2)}\n`,
    );
  const sizes = kept(dir);
  const latest = sizes.at(-1);
  let previous: VerifiedCheckpoint | null = null;
  let consistent = true;
  if (latest !== undefined) {
    previous = openCheckpoint(
      readFileSync(join(dir, 'checkpoints', `${latest}.checkpoint`), 'utf8'),
      verifierKey,
    );
    if (current.size < previous.size) consistent = false;
    else if (current.size === previous.size) consistent = current.root.equals(previous.root);
    else {
      const { json } = await hubJson<{ proof: string[] }>(
        hubUrl(hub, `/v1/log/proof/consistency?from=${previous.size}&to=${current.size}`),
      );
      const proof = json.proof.map((p) => Buffer.from(p, 'base64'));
      consistent = verifyConsistency(previous.size, current.size, previous.root, current.root, proof);
    }
  }
  if (consistent) writeFileSync(join(dir, 'checkpoints', `${current.size}.checkpoint`), current.note);
  else writeFileSync(join(dir, `inconsistent-${current.size}.checkpoint`), current.note);
  return {
    hub,
    origin: current.origin,
    verifier_key: verifierKey,
    trust,
    size: current.size,
    root: current.root.toString('base64'),
    previous: previous ? { size: previous.size, root: previous.root.toString('base64') } : null,
    consistent,
    checkpoints_kept: kept(dir).length,
  };
}
