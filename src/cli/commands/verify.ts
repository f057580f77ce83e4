/** `tally verify PKG`: offline, deterministic verification with an explicit `now`. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isRfc3339DateTime } from '../../ahp/messages/index.js';
import { decodeBase64 } from '../../core/dsse.js';
import { type PublicKeyInput, toPublicKey } from '../../core/keys.js';
import { readPublicKeyFile } from '../../core/keystore.js';
import { parseNoteVerifierKey } from '../../core/signed-note.js';
import { readLogLines } from '../../evidence/log/reader.js';
import { type VerifyResult, verifyPackageLines } from '../../evidence/package/verify.js';
import { recordedHubKey } from '../../hub-client/audit.js';
import { hubChecks } from '../../hub-client/verify-hub.js';
import { certificatePathFor, readCertificateFile } from '../../session/agents.js';
import { defaultTrustedKeys, pinnedApprovers, repositoryKeys } from '../../session/identity.js';
import {
  type Command,
  type CommandContext,
  parseFlags,
  printJson,
  UsageError,
  useColour,
} from '../command.js';
import { placesOf } from '../session-context.js';

/** A pinned key: a Tally key file (public or private), or a raw key as 64 hex / base64 characters. */
export function readTrustedKey(ctx: CommandContext, text: string, flag = '--trust'): PublicKeyInput {
  const path = resolve(ctx.cwd, text);
  if (existsSync(path)) {
    try {
      return readPublicKeyFile(path);
    } catch (error) {
      throw new UsageError(`${flag} ${text}: not a Tally key file (${(error as Error).message})`);
    }
  }
  if (/^[0-9a-f]{64}$/i.test(text)) return toPublicKey(Buffer.from(text, 'hex'));
  try {
    return toPublicKey(decodeBase64(text, flag));
  } catch {
    throw new UsageError(`${flag} ${text}: no such file, and not a 32-byte public key in hex or base64`);
  }
}

function render(ctx: CommandContext, result: VerifyResult, path: string, trustNote: string): void {
  const colour = useColour(ctx);
  const paint = (code: string, text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
  ctx.stdout(
    `verifying ${path}\n  session  ${result.session ?? '?'}\n  now      ${result.now}\n  trusted  ${result.trusted_keys.join(', ') || '(none)'} ${trustNote}\n\n`,
  );
  for (const c of result.checks) {
    const mark = c.ok
      ? paint('32', c.code === 'info' ? 'ℹ' : '✓')
      : paint(c.code === 'skipped' ? '90' : '31', c.code === 'skipped' ? '-' : '✗');
    const detail = typeof c.detail === 'string' ? c.detail : summarize(c.detail);
    ctx.stdout(`  ${mark} ${c.check.padEnd(24)} ${c.code === 'ok' ? '' : `${c.code}: `}${detail}\n`);
  }
  ctx.stdout(`\n${result.ok ? paint('32', 'VERIFIED') : paint('31', 'FAILED')}\n`);
}

function summarize(detail: Record<string, unknown>): string {
  if (typeof detail.message === 'string') {
    const at = [
      ...(detail.seq !== undefined ? [`seq ${detail.seq}`] : []),
      ...(detail.offset !== undefined ? [`byte ${detail.offset}`] : []),
    ];
    const where = at.length > 0 ? ` (${at.join(', ')})` : '';
    return `${detail.message}${where}`;
  }
  return Object.entries(detail)
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(' ');
}

export const command: Command = {
  summary: 'verify a session package offline, optionally against an agent certificate',
  usage: [
    'usage: tally verify PKG [--certificate CERT|NAME] [--trust KEY_OR_FILE…] [--approver KEY_OR_FILE…]',
    '                        [--hub URL [--hub-key KEY]] [--now RFC3339] [--json]',
    '',
    'Checks every record signature, the chain and sequence, that no record is later than --now, that',
    'timestamps never run backwards, that the session ended (session.end), that no call id is used',
    'twice, the Merkle root, the receipt recomputed from the records byte for byte, that it left no',
    'row out (receipt_complete), the receipt signature and that the signer is pinned; calls that never',
    'ended (unfinished_call) and repaired logs (log_repaired) are reported, and that the close',
    'compared the workspace with the start baseline (workspace_reconciled). With --certificate also:',
    'certificate_bound (the certificate is the one the session started under), ship_id_match,',
    'within_validity_window, certificate_at_now (informational), unauthorized_calls, escalations,',
    'never_called. Without --trust, the ship keys of this project and of $TALLY_HOME are pinned.',
    'Packages of format v1 and v2 verify; the format is reported. An escalated call counts as approved',
    'by a signed approval only when a pinned approver key signed it ($TALLY_HOME/trust/approvers/, or',
    '--approver instead). No network, unless --hub: then also hub_inclusion (the package is in the',
    "hub's log, proven against a checkpoint signed by the hub key: --hub-key, else the one tally hub",
    'audit recorded on first use) and witness_consistent (the package extends every head the hub',
    'witnessed while it ran). Exit 0 verified, 1 a check failed, 2 usage error.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      certificate: { type: 'string' },
      trust: { type: 'string', multiple: true },
      approver: { type: 'string', multiple: true },
      hub: { type: 'string' },
      'hub-key': { type: 'string' },
      now: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length !== 1) throw new UsageError('give exactly one package file');
    const path = resolve(ctx.cwd, positionals[0]!);
    if (!existsSync(path)) throw new UsageError(`no such package: ${path}`);
    if (!statSync(path).isFile()) throw new UsageError(`not a file: ${path}`);
    let now = new Date();
    if (values.now !== undefined) {
      now = new Date(values.now);
      if (!isRfc3339DateTime(values.now) || Number.isNaN(now.getTime()))
        throw new UsageError(`--now must be an RFC 3339 date-time, got '${values.now}'`);
    }
    let trusted: PublicKeyInput[];
    let trustNote: string;
    if (values.trust?.length) {
      trusted = values.trust.map((t) => readTrustedKey(ctx, t));
      trustNote = '(from --trust)';
    } else {
      const keys = defaultTrustedKeys(placesOf(ctx));
      trusted = keys.map((k) => k.publicKey);
      trustNote = `(pinned in ${join(placesOf(ctx).home, 'trust')}: ${keys.map((k) => k.keyId).join(', ') || 'nothing: run tally init, tally trust add, or pass --trust'})`;
    }
    const certificate = values.certificate
      ? readCertificateFile(certificatePathFor(placesOf(ctx), ctx.cwd, values.certificate))
      : undefined;
    const result = await verifyPackageLines(readLogLines(path), {
      trusted,
      repositoryKeys: repositoryKeys(placesOf(ctx)).map((k) => k.keyId),
      now,
      ...(certificate !== undefined ? { certificate } : {}),
      // Signed approvals count when a pinned approver key (or one given here) signed them.
      approvers: values.approver?.length
        ? values.approver.map((t) => readTrustedKey(ctx, t, '--approver'))
        : pinnedApprovers(placesOf(ctx).home).map((k) => k.publicKey),
      onProgress: (done, total) => ctx.stderr(`  verified ${done}/${total} records\n`),
    });
    if (values.hub !== undefined) {
      const hubKey = values['hub-key'] ?? recordedHubKey(placesOf(ctx).home, values.hub);
      if (hubKey === null)
        throw new UsageError(
          `--hub ${values.hub}: no hub key is pinned; pass --hub-key KEY (tally hub serve prints it) or run 'tally hub audit ${values.hub}' once to record it`,
        );
      // A key that does not parse is the caller's mistake, said as one — not a hub that did not answer.
      try {
        parseNoteVerifierKey(hubKey);
      } catch (error) {
        throw new UsageError(`--hub-key ${hubKey}: ${(error as Error).message}`);
      }
      const added = await hubChecks(readFileSync(path), { hub: values.hub, hubKey, trusted });
      // Named checks of their own, reported after the package's.
      result.checks.push(...(added as unknown as VerifyResult['checks']));
      result.ok = result.ok && added.every((c) => c.ok);
    }
    if (values.json) {
      const { receipt: _receipt, cross: _cross, ...rest } = result;
      printJson(ctx, { package: path, ...rest, trusted_from: values.trust?.length ? 'flag' : 'default' });
    } else render(ctx, result, path, trustNote);
    return result.ok ? 0 : 1;
  },
};
