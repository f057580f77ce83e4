/**
 * `tally approve [CALL] [--deny] [--reason TEXT] [--session ID] [--json]`: a person's decision on an
 * escalated call, signed with the approver key at a terminal and recorded in the session as a
 * `tally.approval` event. Without CALL it lists the calls still waiting. The approval names the
 * session, the call and the digest of the input shown, so it covers exactly what the person saw.
 * Cross-verification counts it only when a pinned approver key signed it (docs/security.md).
 */

import { trustKeys } from '../../core/dsse.js';
import { tallyHome } from '../../core/home.js';
import { KeyError } from '../../core/keys.js';
import { loadPrivateKey } from '../../core/keystore.js';
import {
  APPROVAL_EVENT_TYPE,
  APPROVAL_EXTENSION,
  approvalEnvelope,
  approvedInputDigest,
  signApproval,
  verifyApproval,
} from '../../evidence/approval.js';
import { checkLine, readLogLines } from '../../evidence/log/reader.js';
import { APPROVER_KEY, defaultTrustedKeys, pinnedApprovers } from '../../session/identity.js';
import { logPath, resolveSession } from '../../session/store.js';
import { type Command, parseFlags, printJson, UsageError } from '../command.js';
import { recordFromCli } from '../record-event.js';
import { askAtTerminal, atTerminal, placesOf } from '../session-context.js';

/** An escalated call as the session's log shows it. */
export interface AskedCall {
  call: string;
  seq: number;
  time: string;
  tool: string;
  input: unknown;
  reason: string | null;
  rule: string | null;
  /** `allow` or `deny` when a pinned approver already decided it. */
  decided: 'allow' | 'deny' | null;
}

export const command: Command = {
  summary: 'approve or deny an escalated call, signed with your approver key at a terminal',
  usage: [
    'usage: tally approve [CALL] [--deny] [--reason TEXT] [--session ID] [--json]',
    '',
    "Without CALL: lists the session's calls that were escalated (answered ask) and who decided them.",
    'With CALL (a call id from that list): shows the call as recorded, asks you to confirm, asks the',
    "approver key's passphrase, and records the signed decision in the session. A person must be at the",
    'terminal: the confirmation and the passphrase are read there and nowhere else. Create the key first',
    'with tally approver init.',
    '',
    '  --deny          record a refusal instead of an approval',
    '  --reason TEXT   why (recorded, redacted like everything else)',
    '  --session ID    another session than the open one',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      deny: { type: 'boolean' },
      reason: { type: 'string' },
      session: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
    const where = placesOf(ctx);
    const home = tallyHome(ctx.env);
    const session = resolveSession(where.state, values.session);
    const asked = await askedCalls(logPath(where.state, session.id), where);
    const callId = positionals[0];
    if (callId === undefined) {
      if (values.json) printJson(ctx, { session: session.id, calls: asked });
      else if (asked.length === 0) ctx.stderr(`no escalated calls in session ${session.id}\n`);
      else for (const c of asked) ctx.stdout(`${line(c)}\n`);
      return 0;
    }
    const call = asked.find((c) => c.call === callId);
    if (!call)
      throw new UsageError(
        `session ${session.id} has no escalated call '${callId}'${asked.length ? `; escalated: ${asked.map((c) => c.call).join(', ')}` : ''}`,
      );
    if (!atTerminal(ctx))
      throw new UsageError(
        'tally approve needs a person at a terminal: the confirmation and the passphrase are read there and nowhere else',
      );
    const decision = values.deny ? 'deny' : 'allow';
    ctx.stderr(
      [
        `session  ${session.id}`,
        `call     ${call.call} (seq ${call.seq}, ${call.time})`,
        `tool     ${shown(call.tool)}`,
        `input    ${shown(JSON.stringify(call.input))}`,
        `asked    ${shown(call.reason ?? '')}${call.rule ? ` (${shown(call.rule)})` : ''}`,
        call.decided ? `already  ${call.decided} by a pinned approver` : '',
        '',
      ]
        .filter((l) => l !== '')
        .join('\n') + '\n',
    );
    const confirm = await askAtTerminal(`${decision === 'allow' ? 'approve' : 'deny'} this call? [y/N] `, {
      echo: true,
    });
    if (!/^y(es)?$/i.test(confirm.trim())) {
      ctx.stderr('not confirmed; nothing recorded\n');
      return 1;
    }
    const secret = await askAtTerminal('passphrase for the approver key: ', { echo: false });
    let privateKey: ReturnType<typeof loadPrivateKey>['privateKey'];
    try {
      ({ privateKey } = loadPrivateKey(home, APPROVER_KEY, secret));
    } catch (error) {
      if (error instanceof KeyError && error.code === 'not-found')
        throw new UsageError('no approver key: create one with tally approver init');
      throw error;
    }
    const { approval, envelope } = signApproval(
      {
        session: session.id,
        call: call.call,
        decision,
        time: new Date().toISOString(),
        input: approvedInputDigest(call.input),
        ...(values.reason ? { reason: values.reason } : {}),
      },
      privateKey,
    );
    const recorded = await recordFromCli(
      ctx,
      where,
      session,
      { type: APPROVAL_EVENT_TYPE, extensions: { [APPROVAL_EXTENSION]: envelope } },
      { source: 'approver' },
    );
    if (values.json) printJson(ctx, { session: session.id, approval, seq: recorded.seq });
    else ctx.stderr(`recorded: ${decision} of ${call.call} by ${approval.approver} (seq ${recorded.seq})\n`);
    return 0;
  },
};

/**
 * Text the agent chose, made safe to show a person: control characters (terminal escapes) and the
 * invisible or direction-changing format characters that could make a command read as another are
 * shown as \u escapes.
 */
export function shown(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function line(c: AskedCall): string {
  const input = shown(JSON.stringify(c.input));
  return `${shown(c.call)}  ${shown(c.tool)}  ${input.length > 80 ? `${input.slice(0, 77)}...` : input}  ${c.decided ?? 'waiting'}`;
}

/**
 * The calls of a session's log that were answered ask, read from records signed by a pinned ship
 * key (a line that does not verify is skipped: it shows nothing a person should approve).
 */
export async function askedCalls(
  path: string,
  where: Parameters<typeof defaultTrustedKeys>[0],
): Promise<AskedCall[]> {
  const trusted = trustKeys(defaultTrustedKeys(where).map((k) => k.publicKey));
  const approvers = pinnedApprovers(where.home).map((k) => k.publicKey);
  const calls: AskedCall[] = [];
  const decided = new Map<string, 'allow' | 'deny'>();
  for await (const { line: bytes, torn } of readLogLines(path)) {
    if (torn) continue;
    const checked = checkLine(bytes, trusted);
    if (!checked.ok) continue;
    const { record } = checked;
    const event = record.event as Record<string, unknown>;
    const envelope = approvalEnvelope(event);
    if (envelope !== undefined) {
      try {
        const approval = verifyApproval(envelope, approvers);
        if (approval.session === record.session) decided.set(approval.call, approval.decision);
      } catch {
        // not signed by a pinned approver: decides nothing
      }
      continue;
    }
    if (event.type !== 'tool.before' || record.decision?.decision !== 'ask') continue;
    const tool = event.tool as { name?: unknown; input?: unknown } | undefined;
    const id = (event.call as { id?: unknown } | undefined)?.id;
    if (typeof id !== 'string' || typeof tool?.name !== 'string') continue;
    calls.push({
      call: id,
      seq: record.seq,
      time: String(event.time),
      tool: tool.name,
      input: tool.input ?? null,
      reason: record.decision.reason ?? null,
      rule: record.decision.rule ?? null,
      decided: null,
    });
  }
  for (const c of calls) c.decided = decided.get(c.call) ?? null;
  return calls;
}
