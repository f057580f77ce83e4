/**
 * `tally ahp dispatch`: runs one canonical event through every matching backend of a registration
 * (the harness of src/ahp/harness), over the real transports, and prints the settled outcome; with
 * `--record`, through the open session's boundary instead (its certificate and bound registration,
 * recorded). The local OAuth client file (flag, else TALLY_HOME/oauth-clients.json when present)
 * is what lets an HTTP endpoint without an authentication binding be reached after it challenges.
 * Exit 0 dispatched (allow or ask), 1 the boundary was denied, 2 bad input.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { eventIssuesBeforePublication } from '../../../ahp/harness/checks.js';
import type { InterceptCapabilities, InterceptState } from '../../../ahp/harness/compose.js';
import type { DispatchOutcome } from '../../../ahp/harness/dispatcher.js';
import { createHarness, type Harness, HarnessError } from '../../../ahp/harness/harness.js';
import { validateMessage } from '../../../ahp/messages/index.js';
import { parseRegistrationText, RegistrationError } from '../../../ahp/registration/registration.js';
import { OAuthClientsError, parseOAuthClients } from '../../../ahp/transports/oauth-clients.js';
import type { OAuthClientPolicy } from '../../../ahp/transports/options.js';
import type { BoundaryDecision } from '../../../boundary/boundary.js';
import { parseJson } from '../../../core/canonical.js';
import type { CanonicalEvent } from '../../../core/event.js';
import { tallyHome } from '../../../core/home.js';
import { openSession } from '../../../session/lifecycle.js';
import { resolveSession } from '../../../session/store.js';
import { type Command, type CommandContext, parseFlags, printJson, UsageError } from '../../command.js';
import { harnessLogger } from '../../harness-logger.js';
import { placesOf, signerOf } from '../../session-context.js';

const USAGE = [
  'usage: tally ahp dispatch --registration FILE --event FILE [--capabilities FILE] [--state FILE]',
  '                          [--attachment PART_ID=FILE ...] [--oauth-clients FILE] [--json]',
  '       tally ahp dispatch --record --event FILE [--source LABEL] [--oauth-clients FILE] [--json]',
  '',
  'Runs one canonical AHP event through every matching backend: interceptors serially in',
  'registration order, then observers. Backends are reached over their registered transports.',
  '',
  '  --registration FILE  portable registration document',
  '  --event FILE         one canonical event (JSON object); - reads it from stdin, as do',
  '                       --capabilities - and --state -',
  '  --capabilities FILE  capabilities to advertise (default: what Tally can enforce at the event)',
  '  --state FILE         incoming pipeline state {permission, candidate, flow?, instructions?,',
  '                       injections?}',
  "  --attachment ID=FILE bytes of the event's attachment part ID, uploaded to each subscription's",
  '                       upload endpoint before its message is sent (repeatable)',
  '  --oauth-clients FILE local OAuth clients for HTTP endpoints without an authentication binding',
  '                       that challenge (default: TALLY_HOME/oauth-clients.json when it exists)',
  '  --record             through the open session instead: its certificate judge first, then every',
  '                       backend of the registration bound at its start; the event and every answer',
  '                       are recorded (--source labels the record, default ahp)',
  '  --json               print the outcome object on stdout',
  '',
  'exit 0 dispatched (allow or ask), 1 denied (explicitly or fail-closed), 2 bad input',
].join('\n');

async function readJson(ctx: CommandContext, flag: string, file: string): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = file === '-' ? await ctx.stdin() : await readFile(resolve(ctx.cwd, file));
  } catch (error) {
    throw new UsageError(`--${flag}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  try {
    return parseJson(bytes);
  } catch (error) {
    throw new UsageError(`--${flag}: ${file} is not JSON: ${(error as Error).message}`);
  }
}

/**
 * Checks `--capabilities` and `--state` as the parts of an intercept request for `event` they
 * become (the message validator, with the event type's capability bounds); the first issue in
 * either is a usage error naming the flag and the JSON pointer inside its file.
 */
function checkRequestParts(event: CanonicalEvent, capabilities: unknown, state: unknown): void {
  const params: Record<string, unknown> = {
    protocolVersion: 'draft',
    event,
    capabilities: capabilities ?? { effects: ['deny'] },
  };
  if (state !== undefined) params.state = state;
  const request = { jsonrpc: '2.0', id: event.id, method: 'hooks/intercept', params };
  for (const [flag, prefix, given] of [
    ['capabilities', '/params/capabilities', capabilities],
    ['state', '/params/state', state],
  ] as const) {
    if (given === undefined) continue;
    const found = validateMessage(request, 'intercept-request').find(
      (i) => i.pointer === prefix || i.pointer.startsWith(`${prefix}/`),
    );
    if (found) {
      throw new UsageError(
        `--${flag}: ${found.pointer.slice(prefix.length) || '/'}: ${found.message} [${found.rule}]`,
      );
    }
  }
}

/**
 * The local OAuth client policy: `--oauth-clients FILE`, else `TALLY_HOME/oauth-clients.json` if
 * it exists, else none (a challenge from an endpoint without a binding then fails as `auth`). A file
 * that cannot be read or is not valid is a usage error naming the file and the JSON pointer.
 */
async function oauthClients(
  ctx: CommandContext,
  flag: string | undefined,
): Promise<OAuthClientPolicy | undefined> {
  const file = flag === undefined ? join(tallyHome(ctx.env), 'oauth-clients.json') : resolve(ctx.cwd, flag);
  const label = flag === undefined ? `OAuth client file ${file}` : `--oauth-clients: ${flag}`;
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (flag === undefined && code === 'ENOENT') return undefined;
    throw new UsageError(`${label}: cannot read: ${code ?? error}`);
  }
  try {
    return parseOAuthClients(bytes);
  } catch (error) {
    if (error instanceof OAuthClientsError) throw new UsageError(`${label}: ${error.message}`);
    throw error;
  }
}

export const command: Command = {
  summary: 'run one event through every matching AHP backend',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      registration: { type: 'string' },
      event: { type: 'string' },
      capabilities: { type: 'string' },
      state: { type: 'string' },
      attachment: { type: 'string', multiple: true },
      'oauth-clients': { type: 'string' },
      record: { type: 'boolean' },
      source: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (values.event === undefined) throw new UsageError('missing --event FILE');
    const policy = await oauthClients(ctx, values['oauth-clients']);
    if (values.record) return recordThroughSession(ctx, values, policy);
    if (values.registration === undefined) throw new UsageError('missing --registration FILE (or --record)');
    const registration = await readRegistrationFlag(ctx, values.registration);
    const attachments = await readAttachments(ctx, values.attachment ?? []);
    const event = await readJson(ctx, 'event', values.event);
    const issues = eventIssuesBeforePublication(event, new Set(attachments.keys()));
    if (issues.length > 0) {
      const first = issues[0];
      throw new UsageError(`--event: ${first?.pointer || '/'}: ${first?.message} [${first?.rule}]`);
    }
    const capabilities =
      values.capabilities === undefined
        ? undefined
        : await readJson(ctx, 'capabilities', values.capabilities);
    const state = values.state === undefined ? undefined : await readJson(ctx, 'state', values.state);
    checkRequestParts(event as CanonicalEvent, capabilities, state);
    let harness: Harness;
    try {
      harness = createHarness(registration, {
        env: ctx.env,
        logger: harnessLogger(ctx),
        ...(policy ? { oauthClients: policy } : {}),
      });
    } catch (error) {
      if (error instanceof HarnessError) throw new UsageError(`--registration: ${error.message}`);
      throw error;
    }
    for (const note of harness.notes) ctx.stderr(`note: ${note.pointer}: ${note.message} [${note.rule}]\n`);
    let outcome: DispatchOutcome;
    try {
      outcome = await harness.dispatch({
        event: event as CanonicalEvent,
        ...(capabilities !== undefined ? { capabilities: capabilities as InterceptCapabilities } : {}),
        ...(state !== undefined ? { state: state as InterceptState } : {}),
        ...(attachments.size > 0 ? { attachments } : {}),
      });
    } finally {
      await harness.close();
    }
    if (values.json === true) printJson(ctx, outcome);
    else ctx.stderr(describe(outcome));
    return outcome.decision === 'deny' ? 1 : 0;
  },
};

async function readRegistrationFlag(ctx: CommandContext, file: string) {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(resolve(ctx.cwd, file));
  } catch (error) {
    throw new UsageError(`--registration: cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`);
  }
  try {
    return parseRegistrationText(bytes).registration;
  } catch (error) {
    if (error instanceof RegistrationError) throw new UsageError(`--registration: ${error.message}`);
    throw error;
  }
}

async function readAttachments(
  ctx: CommandContext,
  specs: readonly string[],
): Promise<Map<string, Uint8Array>> {
  const attachments = new Map<string, Uint8Array>();
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    if (eq <= 0 || eq === spec.length - 1) throw new UsageError('--attachment: expected PART_ID=FILE');
    const file = spec.slice(eq + 1);
    try {
      attachments.set(spec.slice(0, eq), await readFile(resolve(ctx.cwd, file)));
    } catch (error) {
      throw new UsageError(`--attachment: cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`);
    }
  }
  return attachments;
}

/**
 * `--record`: the event goes through the open session's boundary — its bound certificate and
 * registration, recorded with every answer — exactly as a capture channel would send it.
 */
async function recordThroughSession(
  ctx: CommandContext,
  values: {
    registration?: string;
    event?: string;
    source?: string;
    json?: boolean;
    attachment?: string[];
    capabilities?: string;
    state?: string;
  },
  policy: OAuthClientPolicy | undefined,
): Promise<number> {
  if (values.registration !== undefined)
    throw new UsageError(
      "--record dispatches through the session's own registration (bound at its start); drop --registration",
    );
  for (const flag of ['attachment', 'capabilities', 'state'] as const)
    if (values[flag] !== undefined) throw new UsageError(`--${flag} cannot be combined with --record`);
  const where = placesOf(ctx);
  const session = resolveSession(where.state, undefined);
  const signer = await signerOf(ctx, where);
  const raw = await readJson(ctx, 'event', values.event!);
  const open = await openSession({
    state: where.state,
    session,
    signer,
    harness: { env: ctx.env, logger: harnessLogger(ctx), ...(policy ? { oauthClients: policy } : {}) },
  });
  let decision: BoundaryDecision;
  try {
    decision = await open.boundary.decide(raw, { source: values.source ?? 'ahp' });
  } finally {
    await open.close();
  }
  if (decision.rejected) throw new UsageError('--event: not a valid AHP event (recorded as rejected)');
  if (values.json === true) printJson(ctx, decision);
  else
    ctx.stderr(
      `decision: ${decision.decision}${decision.by ? ` by ${decision.by}` : ''}${decision.reason ? `: ${decision.reason}` : ''}\nrecorded: seq ${decision.recorded.seq}\n${decision.answers.map((a) => `  ${a.backend}: ${a.decision} (${a.status}, ${a.latency_ms} ms)`).join('\n')}\n`,
    );
  return decision.decision === 'deny' ? 1 : 0;
}

function describe(outcome: DispatchOutcome): string {
  const lines: string[] = [];
  const by = outcome.denial
    ? ` by ${outcome.denial.backend}${outcome.denial.synthetic ? ' (fail-closed)' : ''}`
    : '';
  lines.push(`decision: ${outcome.decision}${by}${outcome.denial ? `: ${outcome.denial.reason}` : ''}`);
  lines.push(`executed: ${outcome.executed ? 'yes' : 'no'}${outcome.interrupted ? ' (interrupted)' : ''}`);
  if (outcome.flow) lines.push(`flow: ${outcome.flow}`);
  if ('result' in outcome) lines.push(`result (supplied): ${JSON.stringify(outcome.result)}`);
  if (outcome.input !== undefined) lines.push(`input: ${JSON.stringify(outcome.input)}`);
  for (const text of outcome.messages) lines.push(`message: ${text}`);
  for (const text of outcome.continuationInstructions ?? []) lines.push(`continue: ${text}`);
  if (outcome.injections?.length) lines.push(`injections: ${outcome.injections.length}`);
  if (outcome.subscriptions.length === 0) lines.push('no subscription matched this event');
  for (const s of outcome.subscriptions) {
    const method = s.method === 'hooks/intercept' ? 'intercept' : 'observe';
    lines.push(`  ${s.backend} ${s.subscription} ${method}: ${s.status}${s.reason ? ` (${s.reason})` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
