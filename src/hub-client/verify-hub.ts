/**
 * The checks `tally verify PKG --hub URL` adds: `hub_inclusion` (the package is an entry of the
 * hub's log, proven against a checkpoint signed by the pinned hub key) and `witness_consistent`
 * (the package extends every chain head the hub witnessed while the session ran, each head signed
 * by the package's own signer and itself included in the log). Nothing the hub says is taken on
 * trust: entries are rebuilt from the package, proofs are checked against the signed root.
 */
import { type PublicKeyInput, shipId } from '../core/keys.js';
import { type PackageHeader, packageHeader } from '../evidence/package/grammar.js';
import { fetchCheckpoint, type VerifiedCheckpoint } from './checkpoint.js';
import { HubClientError, hubJson, hubUrl } from './http.js';
import { proveEntry } from './log-proof.js';
import { packageLogEntry } from './wire.js';
import {
  servedHeadsConsistency,
  type WitnessCheck,
  witnessFailed,
  witnessUnchecked,
} from './witness-check.js';

export interface HubInclusionCheck {
  check: 'hub_inclusion';
  ok: boolean;
  code: 'ok' | 'not-on-hub' | 'bad-package' | 'untrusted-checkpoint' | 'not-included' | 'unreachable';
  detail: Record<string, unknown>;
}

export interface HubCheckOptions {
  /** The hub URL (as the user typed it). */
  hub: string;
  /** The pinned hub verifier key, `<origin>+<id>+<base64 key>`. */
  hubKey: string;
}

function fail(
  code: HubInclusionCheck['code'],
  message: string,
  detail: Record<string, unknown> = {},
): HubInclusionCheck {
  return { check: 'hub_inclusion', ok: false, code, detail: { message, ...detail } };
}

/** The hub's inclusion proofs, as its API serves them. */
function proofsOf(hub: string) {
  return async (index: number, size: number): Promise<readonly string[]> =>
    (await hubJson<{ proof: string[] }>(hubUrl(hub, `/v1/log/proof/inclusion?index=${index}&size=${size}`)))
      .json.proof;
}

/** hub_inclusion: the package's log entry, rebuilt from its bytes, is in the signed tree. */
export async function hubInclusion(
  packageBytes: Uint8Array,
  options: HubCheckOptions,
): Promise<HubInclusionCheck> {
  let header: PackageHeader;
  try {
    header = packageHeader(packageBytes);
  } catch (error) {
    return fail('bad-package', (error as Error).message);
  }
  try {
    const checkpoint = await fetchCheckpoint(options.hub, options.hubKey).catch((error: Error) => {
      throw Object.assign(error, {
        untrusted: !(error instanceof HubClientError && error.code === 'network'),
      });
    });
    let meta: { ship_id: string; log_index: number };
    try {
      meta = (
        await hubJson<{ ship_id: string; log_index: number }>(
          hubUrl(options.hub, `/v1/packages/${encodeURIComponent(header.session)}`),
        )
      ).json;
    } catch (error) {
      if (error instanceof HubClientError && error.status === 404)
        return fail('not-on-hub', `the hub has no package ${header.session}`);
      throw error;
    }
    const signers = header.keys.map((k) => shipId(Buffer.from(k.public_key, 'base64')));
    if (!signers.includes(meta.ship_id))
      return fail(
        'not-included',
        `the hub lists ${header.session} under ${meta.ship_id}, which did not sign it`,
        { ship_id: meta.ship_id },
      );
    const entry = packageLogEntry(meta.ship_id, header.session, packageBytes);
    if (!(await proveEntry(entry, meta.log_index, checkpoint, proofsOf(options.hub))))
      return fail(
        'not-included',
        `these bytes are not entry ${meta.log_index} of the log at size ${checkpoint.size}`,
        {
          log_index: meta.log_index,
          tree_size: checkpoint.size,
          digest: entry.digest,
        },
      );
    return {
      check: 'hub_inclusion',
      ok: true,
      code: 'ok',
      detail: {
        log_index: meta.log_index,
        tree_size: checkpoint.size,
        origin: checkpoint.origin,
        root: checkpoint.root.toString('base64'),
      },
    };
  } catch (error) {
    if ((error as { untrusted?: boolean }).untrusted)
      return fail('untrusted-checkpoint', (error as Error).message);
    return fail('unreachable', (error as Error).message);
  }
}

/**
 * witness_consistent against the hub: every head the hub serves for the session must be signed by
 * one of `trusted` (the keys verify pins), be included in the log, and be extended by the package.
 */
export async function hubWitnessConsistency(
  packageBytes: Uint8Array,
  options: HubCheckOptions & { trusted: readonly PublicKeyInput[] },
): Promise<WitnessCheck> {
  let session: string;
  try {
    session = packageHeader(packageBytes).session;
  } catch (error) {
    return witnessFailed((error as Error).message);
  }
  let checkpoint: VerifiedCheckpoint;
  let answer: unknown;
  try {
    checkpoint = await fetchCheckpoint(options.hub, options.hubKey);
    answer = (
      await hubJson<unknown>(hubUrl(options.hub, `/v1/sessions/${encodeURIComponent(session)}/heads`))
    ).json;
  } catch (error) {
    return witnessUnchecked(error);
  }
  return servedHeadsConsistency(packageBytes, answer, {
    session,
    trusted: options.trusted,
    tree: checkpoint,
    fetchProof: proofsOf(options.hub),
  });
}

/** Both checks `tally verify PKG --hub URL` adds, in order: hub_inclusion, witness_consistent. */
export async function hubChecks(
  packageBytes: Uint8Array,
  options: HubCheckOptions & { trusted: readonly PublicKeyInput[] },
): Promise<[HubInclusionCheck, WitnessCheck]> {
  return [await hubInclusion(packageBytes, options), await hubWitnessConsistency(packageBytes, options)];
}
