/**
 * The session closed last in a root, and the end state its signed package recorded: found through
 * the project pointer in the Tally home (else the project's own closed sessions), verified as
 * `tally verify` verifies it, and read from the very lines that were verified.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Baseline } from '../../capture/reconcile/baseline.js';
import { decodeBase64 } from '../../core/dsse.js';
import { digestParts } from '../../core/hash.js';
import { isJsonObject } from '../../core/json.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { type LogLine, readLogLines } from '../../evidence/log/reader.js';
import { RECORD_CHECKS } from '../../evidence/package/checks.js';
import { verifyPackageLines } from '../../evidence/package/verify.js';
import { isCloseSummary, RECONCILE_SUMMARY_TYPE } from '../../evidence/record/close-passes.js';
import { decodeRecordPayload, parseEnvelopeLine } from '../../evidence/record/codec.js';
import { readSessionInfo, type SessionInfo } from '../store.js';
import { type ProjectPointer, readPointer } from './pointer.js';

/** The checks that say the package's bytes are the signed session's; the others are facts about it. */
const INTEGRITY: ReadonlySet<string> = new Set([
  'package_format',
  'signer_pinned',
  ...RECORD_CHECKS,
  'merkle_root',
  'receipt_signature',
  'receipt_recomputed',
]);

/** Where the previous session was looked for, and what was found. */
export type Previous =
  | { state: 'none' }
  | { state: 'missing' | 'unverified'; session: string; package?: string; reason: string }
  | {
      state: 'verified';
      session: string;
      package: string;
      package_digest: string;
      closed_at?: string;
      /** The end state its close recorded; absent when it recorded none. */
      end?: Baseline;
    };

/** The closed session of `root` with the latest `closed_at` under the project's `sessions/`. */
function latestClosed(state: string, root: string): SessionInfo | null {
  let names: string[];
  try {
    names = readdirSync(join(state, 'sessions')).filter((name) => name.startsWith('ses_'));
  } catch {
    return null;
  }
  let latest: SessionInfo | null = null;
  for (const name of names) {
    let info: SessionInfo;
    try {
      info = readSessionInfo(state, name);
    } catch {
      continue;
    }
    if (info.state !== 'closed' || info.root !== root || info.package === undefined) continue;
    if (latest === null || String(info.closed_at) > String(latest.closed_at)) latest = info;
  }
  return latest;
}

/**
 * The previous session of `root`: the pointer's (the latest close of this root under this Tally
 * home), else the latest closed session the project holds; verified with `trusted`.
 */
export async function previousSession(options: {
  state: string;
  root: string;
  home: string;
  trusted: readonly PublicKeyInput[];
  now: Date;
}): Promise<Previous> {
  const pointer = readPointer(options.home, options.root);
  if (pointer !== null && 'error' in pointer) {
    const local = latestClosed(options.state, options.root);
    return { state: 'unverified', session: local?.id ?? 'unknown', reason: pointer.error };
  }
  const chosen:
    | (Pick<ProjectPointer, 'session' | 'package'> & { package_digest?: string; closed_at?: string })
    | null = pointer ?? toChosen(latestClosed(options.state, options.root));
  if (chosen === null) return { state: 'none' };
  return readPrevious(chosen, options);
}

function toChosen(info: SessionInfo | null) {
  if (info === null || info.package === undefined) return null;
  return {
    session: info.id,
    package: info.package,
    ...(info.closed_at ? { closed_at: info.closed_at } : {}),
  };
}

async function readPrevious(
  chosen: { session: string; package: string; package_digest?: string; closed_at?: string },
  options: { trusted: readonly PublicKeyInput[]; now: Date },
): Promise<Previous> {
  const named = { session: chosen.session, package: chosen.package };
  const hash = digestParts();
  let end: unknown;
  let ended = false;
  // The end state is read from the lines verification reads: one read, no window to swap the file.
  async function* tapped(): AsyncGenerator<LogLine> {
    for await (const line of readLogLines(chosen.package)) {
      hash.update(line.line);
      if (!line.torn) hash.update(NEWLINE);
      if (!ended) {
        const found = endStateOf(line.line);
        if (found !== undefined) {
          end = found;
          ended = true;
        }
      }
      yield line;
    }
  }
  let failed: string | null = null;
  try {
    const result = await verifyPackageLines(tapped(), {
      trusted: options.trusted,
      now: options.now,
      workers: 0,
    });
    const bad = result.checks.find((c) => !c.ok && c.code !== 'skipped' && INTEGRITY.has(c.check));
    if (bad !== undefined) failed = `${chosen.package}: check ${bad.check} failed (${bad.code})`;
    else if (result.session !== chosen.session)
      failed = `${chosen.package} is the package of session ${String(result.session)}, not of ${chosen.session}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return {
        state: 'missing',
        ...named,
        reason: `${chosen.package} is not there: the previous session's package was removed`,
      };
    failed = `${chosen.package} cannot be read: ${(error as Error).message}`;
  }
  if (failed !== null) return { state: 'unverified', ...named, reason: failed };
  const digest = hash.digest();
  if (chosen.package_digest !== undefined && digest !== chosen.package_digest)
    return {
      state: 'unverified',
      ...named,
      reason: `${chosen.package} holds ${digest}, not the package ${chosen.package_digest} the pointer names: it was replaced`,
    };
  return {
    state: 'verified',
    ...named,
    package_digest: digest,
    ...(chosen.closed_at ? { closed_at: chosen.closed_at } : {}),
    ...(isJsonObject(end) && isJsonObject(end.dirty) ? { end: end as unknown as Baseline } : {}),
  };
}

const NEWLINE = Buffer.from('\n');

/** The `end` of the close's own reconcile summary, when `line` is that record; else undefined. */
function endStateOf(line: Buffer): unknown {
  try {
    const record = decodeRecordPayload(decodeBase64(parseEnvelopeLine(line).payload, 'payload'));
    if (!isCloseSummary(record, RECONCILE_SUMMARY_TYPE)) return undefined;
    const extensions = record.event.extensions;
    const summary = isJsonObject(extensions) ? extensions['dev.tally.reconcile'] : undefined;
    return isJsonObject(summary) ? (summary.end ?? null) : null;
  } catch {
    return undefined; // the header, the seal: not records
  }
}
