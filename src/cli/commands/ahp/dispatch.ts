/**
 * `tally ahp dispatch --registration FILE --event FILE [--capabilities FILE] [--state FILE]
 * [--attachment PART_ID=FILE ...] [--oauth-clients FILE] [--json]`: runs one canonical event through every matching backend of a
 * registration, over the real transports, and prints the settled outcome. The local OAuth client
 * file (flag, else TALLY_HOME/oauth-clients.json when present) is what lets an HTTP endpoint
 * without an authentication binding be reached after it challenges.
 * Exit 0 dispatched (allow or ask), 1 the boundary was denied, 2 bad input.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { InterceptCapabilities, InterceptState } from '../../../ahp/harness/compose.js';
import { Dispatcher, type DispatchOutcome } from '../../../ahp/harness/dispatcher.js';
import { validateEvent, validateMessage } from '../../../ahp/messages/index.js';
import { eventCapabilities } from '../../../ahp/protocol/capabilities.js';
import { admitRegistration } from '../../../ahp/registration/admission.js';
import { parseRegistrationText, RegistrationError } from '../../../ahp/registration/registration.js';
import { createTransport, type OAuthClientPolicy } from '../../../ahp/transports/index.js';
import { OAuthClientsError, parseOAuthClients } from '../../../ahp/transports/oauth-clients.js';
import { fileSecretProvider, tallyHome } from '../../../ahp/transports/secrets.js';
import { Uploader } from '../../../ahp/transports/upload.js';
import { parseJson } from '../../../core/canonical.js';
import type { CanonicalEvent } from '../../../evidence/record/record.js';
import { type Command, type CommandContext, parseFlags, printJson, UsageError } from '../../command.js';

const USAGE = [
  'usage: tally ahp dispatch --registration FILE --event FILE [--capabilities FILE] [--state FILE]',
  '                          [--attachment PART_ID=FILE ...] [--oauth-clients FILE] [--json]',
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
      json: { type: 'boolean' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (values.registration === undefined) throw new UsageError('missing --registration FILE');
    if (values.event === undefined) throw new UsageError('missing --event FILE');

    let registrationBytes: Uint8Array;
    try {
      registrationBytes = await readFile(resolve(ctx.cwd, values.registration));
    } catch (error) {
      throw new UsageError(
        `--registration: cannot read ${values.registration}: ${(error as NodeJS.ErrnoException).code}`,
      );
    }
    let parsed: ReturnType<typeof parseRegistrationText>;
    try {
      parsed = parseRegistrationText(registrationBytes);
    } catch (error) {
      if (error instanceof RegistrationError) throw new UsageError(`--registration: ${error.message}`);
      throw error;
    }
    // A registration this harness cannot honour here is refused whole before anything runs.
    const admission = admitRegistration(parsed.registration, { env: ctx.env });
    if (!admission.accepted) {
      const first = admission.issues[0];
      const more = admission.issues.length > 1 ? ` (and ${admission.issues.length - 1} more)` : '';
      throw new UsageError(`--registration: ${first?.pointer}: ${first?.message} [${first?.rule}]${more}`);
    }
    const event = await readJson(ctx, 'event', values.event);
    const issues = validateEvent(event);
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

    const attachments = new Map<string, Uint8Array>();
    for (const spec of values.attachment ?? []) {
      const eq = spec.indexOf('=');
      if (eq <= 0 || eq === spec.length - 1)
        throw new UsageError(`--attachment: expected PART_ID=FILE, got '${spec}'`);
      const file = spec.slice(eq + 1);
      try {
        attachments.set(spec.slice(0, eq), await readFile(resolve(ctx.cwd, file)));
      } catch (error) {
        throw new UsageError(`--attachment: cannot read ${file}: ${(error as NodeJS.ErrnoException).code}`);
      }
    }
    const policy = await oauthClients(ctx, values['oauth-clients']);
    const canonical = event as CanonicalEvent;
    const dispatcher = new Dispatcher({
      registration: parsed.registration,
      transportFactory: (backend) =>
        createTransport(backend, {
          secrets: fileSecretProvider(ctx.env),
          env: ctx.env,
          oauthClients: policy,
          logger: (level, message, fields) => {
            if (level === 'debug') return;
            // Which backend, and for its stderr the line it wrote (never a credential: transports
            // log none).
            const from = typeof fields?.backend === 'string' ? ` [${fields.backend}]` : '';
            const line = typeof fields?.line === 'string' ? `: ${fields.line}` : '';
            ctx.stderr(`${level}${from}: ${message}${line}\n`);
          },
        }),
      capabilitiesFor: (_type, event) => eventCapabilities(event),
      uploaderFor: (binding, pointer) =>
        new Uploader(binding, {
          secrets: fileSecretProvider(ctx.env),
          env: ctx.env,
          pointer,
          oauthClients: policy,
        }),
    });
    let outcome: DispatchOutcome;
    try {
      outcome = await dispatcher.dispatch({
        event: canonical,
        ...(capabilities !== undefined ? { capabilities: capabilities as InterceptCapabilities } : {}),
        ...(state !== undefined ? { state: state as InterceptState } : {}),
        ...(attachments.size > 0 ? { attachments } : {}),
      });
    } finally {
      await dispatcher.close();
    }
    if (values.json === true) printJson(ctx, outcome);
    else ctx.stderr(describe(outcome));
    return outcome.decision === 'deny' ? 1 : 0;
  },
};

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
