/**
 * The session closed last in a root, and the end state its signed package recorded: found through
 * the project pointer in the Tally home (else the project's own closed sessions), the package's
 * digest checked against the pointer's, and the end state read from the close's own summary record,
 * whose signature is checked with the pinned keys.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Baseline } from '../../capture/reconcile/baseline.js';
import { decodeBase64, verifyEnvelope } from '../../core/dsse.js';
import { digestParts } from '../../core/hash.js';
import { isJsonObject } from '../../core/json.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { readLogLines } from '../../evidence/log/reader.js';
import { isCloseSummary, RECONCILE_SUMMARY_TYPE } from '../../evidence/record/close-passes.js';
import { decodeRecordPayload, parseEnvelopeLine } from '../../evidence/record/codec.js';
import type { EventRecord } from '../../evidence/record/record.js';
import { readSessionInfo, type SessionInfo } from '../store.js';
import { type ProjectPointer, readPointer } from './pointer.js';

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
 * home), else the latest closed session the project holds; its end state checked with `trusted`.
 */
export async function previousSession(options: {
  state: string;
  root: string;
  home: string;
  trusted: readonly PublicKeyInput[];
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

/** How many of a package's last lines are kept while it is read: the close's summary is among them. */
const TAIL_LINES = 16;

async function readPrevious(
  chosen: { session: string; package: string; package_digest?: string; closed_at?: string },
  options: { trusted: readonly PublicKeyInput[] },
): Promise<Previous> {
  const named = { session: chosen.session, package: chosen.package };
  const hash = digestParts();
  // The package is read once: hashed whole (the pointer names its digest), its last lines kept.
  // Only the close's own summary is verified, by its signature: a record the ship key signed for
  // this session, of the type and source only the close writes, is that session's end state
  // whatever the rest of the file holds. Checking every record of a long session would cost each
  // start as much as \`tally verify\` of the whole package.
  const lines: Buffer[] = [];
  try {
    for await (const { line, torn } of readLogLines(chosen.package)) {
      hash.update(line);
      if (!torn) hash.update(NEWLINE);
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return {
        state: 'missing',
        ...named,
        reason: `${chosen.package} is not there: the previous session's package was removed`,
      };
    return {
      state: 'unverified',
      ...named,
      reason: `${chosen.package} cannot be read: ${(error as Error).message}`,
    };
  }
  const digest = hash.digest();
  if (chosen.package_digest !== undefined && digest !== chosen.package_digest)
    return {
      state: 'unverified',
      ...named,
      reason: `${chosen.package} holds ${digest}, not the package ${chosen.package_digest} the pointer names: it was replaced`,
    };
  let found = closeSummaryIn(lines, chosen.session, options.trusted);
  if (found === undefined) {
    // A summary further from the end than the kept lines (never written so by Tally): read it all.
    const all: Buffer[] = [];
    for await (const { line } of readLogLines(chosen.package)) all.push(line);
    found = closeSummaryIn(all, chosen.session, options.trusted);
  }
  if (typeof found === 'string')
    return { state: 'unverified', ...named, reason: `${chosen.package}: ${found}` };
  return {
    state: 'verified',
    ...named,
    package_digest: digest,
    ...(chosen.closed_at ? { closed_at: chosen.closed_at } : {}),
    ...(found !== undefined && isJsonObject(found.end) && isJsonObject(found.end.dirty)
      ? { end: found.end as unknown as Baseline }
      : {}),
  };
}

/**
 * The close's own reconcile summary of `session` among `lines` (the last first), its signature
 * checked with `trusted`: its `dev.tally.reconcile` extension; a reason when the line that claims
 * to be it does not verify or is another session's; undefined when there is none.
 */
function closeSummaryIn(
  lines: readonly Buffer[],
  session: string,
  trusted: readonly PublicKeyInput[],
): Record<string, unknown> | string | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    let envelope: unknown;
    let record: EventRecord;
    try {
      envelope = parseEnvelopeLine(lines[i]!);
      record = decodeRecordPayload(decodeBase64((envelope as { payload: string }).payload, 'payload'));
    } catch {
      continue; // the header, the seal: not records
    }
    if (!isCloseSummary(record, RECONCILE_SUMMARY_TYPE)) continue;
    try {
      verifyEnvelope(envelope, trusted, { strict: true });
    } catch (error) {
      return `its reconcile summary (seq ${record.seq}) does not verify with a pinned key: ${(error as Error).message}`;
    }
    if (record.session !== session)
      return `its reconcile summary is session ${record.session}'s, not ${session}'s`;
    const extensions = record.event.extensions;
    const summary = isJsonObject(extensions) ? extensions['dev.tally.reconcile'] : undefined;
    return isJsonObject(summary) ? summary : {};
  }
  return undefined;
}

const NEWLINE = Buffer.from('\n');
