/** `tally session start|status|event|close`: the signed record of one agent session. */
import { existsSync, statSync } from 'node:fs';
import { parseJson } from '../../core/canonical.js';
import { type AgentCertificate, verifyCertificate } from '../../evidence/certificate.js';
import { readLogLines } from '../../evidence/log/reader.js';
import type { AgentAttribution } from '../../evidence/record/record.js';
import { defaultTrustedKeys } from '../../session/identity.js';
import { closeSession, recordEvent, startSession } from '../../session/lifecycle.js';
import { projectRootFor } from '../../session/paths.js';
import { currentSession, logPath, resolveSession } from '../../session/store.js';
import {
  type Command,
  type CommandContext,
  FailureError,
  parseFlags,
  printJson,
  UsageError,
} from '../command.js';
import { placesOf, signerOf } from '../session-context.js';
import { certificatePathFor, readCertificateFile } from './agent.js';

const SOURCE = /^[a-z][a-z0-9-]{0,31}$/;

async function start(argv: string[], ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(argv, {
    agent: { type: 'string' },
    model: { type: 'string' },
    provider: { type: 'string' },
    json: { type: 'boolean' },
  });
  const where = placesOf(ctx);
  const open = currentSession(where.state);
  if (open)
    throw new UsageError(`session ${open} is still open here; close it first ('tally session close')`);
  const signer = await signerOf(ctx, where);
  let agent: AgentAttribution | undefined;
  let certificatePath: string | undefined;
  if (values.agent) {
    agent = { name: values.agent };
    try {
      certificatePath = certificatePathFor(ctx, values.agent);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      certificatePath = undefined; // an agent without a certificate is recorded, not judged
    }
    if (certificatePath) {
      // The policy applied live comes from this certificate: it must be one this project issued.
      const envelope = readCertificateFile(certificatePath);
      let certificate: AgentCertificate;
      try {
        certificate = verifyCertificate(
          envelope,
          defaultTrustedKeys(where).map((k) => k.publicKey),
        ).certificate;
      } catch (error) {
        throw new FailureError(
          `the certificate ${certificatePath} does not verify with this project's ship key: ${(error as Error).message}`,
        );
      }
      const now = Date.now();
      if (now < Date.parse(certificate.valid_from) || now > Date.parse(certificate.valid_until)) {
        ctx.stderr(
          `warning: the certificate of ${certificate.agent.name} is valid ${certificate.valid_from} → ${certificate.valid_until}, not now; verification against it will fail within_validity_window\n`,
        );
      }
      agent = { name: certificate.agent.name };
      if (certificate.agent.model) agent.model = certificate.agent.model;
      if (certificate.agent.provider) agent.provider = certificate.agent.provider;
    }
    if (values.model) agent.model = values.model;
    if (values.provider) agent.provider = values.provider;
  }
  const root = where.project ? projectRootFor(where.project) : projectRootFor(ctx.cwd);
  const { info } = await startSession({
    state: where.state,
    root,
    signer,
    ...(agent ? { agent } : {}),
    ...(certificatePath ? { certificatePath } : {}),
  });
  if (values.json)
    printJson(ctx, {
      session: info.id,
      state: info.state,
      root: info.root,
      agent: info.agent ?? null,
      certificate: certificatePath ?? null,
    });
  else {
    ctx.stderr(
      `started session ${info.id}${agent ? ` for agent ${agent.name}` : ''}${certificatePath ? ' (policy from its certificate)' : ''}\n`,
    );
    ctx.stdout(`${info.id}\n`);
  }
  return 0;
}

async function event(argv: string[], ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(argv, {
    source: { type: 'string' },
    agent: { type: 'string' },
    session: { type: 'string' },
    json: { type: 'boolean' },
  });
  const source = values.source ?? 'cli';
  if (!SOURCE.test(source))
    throw new UsageError(
      `--source must be a short lowercase label (hook, ahp, mcp, wrap, git-reconcile, cli…), got '${source}'`,
    );
  const where = placesOf(ctx);
  const session = resolveSession(where.state, values.session);
  const text = (await ctx.stdin()).toString('utf8');
  if (text.trim().length === 0) throw new UsageError('expected one AHP canonical event as JSON on stdin');
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch (error) {
    throw new UsageError(`stdin is not valid JSON: ${(error as Error).message}`);
  }
  const signer = await signerOf(ctx, where);
  // Another agent named here (a subagent, a second tool) does not inherit the session agent's model.
  const agent = values.agent
    ? session.agent?.name === values.agent
      ? session.agent
      : { name: values.agent }
    : undefined;
  const result = await recordEvent({
    state: where.state,
    session,
    signer,
    event: raw,
    source,
    ...(agent ? { agent } : {}),
  });
  if (values.json)
    printJson(ctx, {
      seq: result.seq,
      id: result.event.id,
      type: result.event.type,
      decision: result.decision ?? null,
    });
  else {
    const unknown = result.unknownFields;
    if (unknown.length > 0)
      ctx.stderr(`kept fields this AHP snapshot does not define: ${unknown.join(', ')}\n`);
    ctx.stdout(`${result.seq}\n`);
    if (result.decision)
      ctx.stderr(
        `policy: ${result.decision.decision} (${result.decision.reason}${result.decision.rule ? `: ${result.decision.rule}` : ''})\n`,
      );
  }
  // Recorded either way; a deny is a policy failure, so scripts and hooks can gate on it.
  return result.decision?.decision === 'deny' ? 1 : 0;
}

async function status(argv: string[], ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
  const where = placesOf(ctx);
  const id = values.session ?? currentSession(where.state);
  if (!id) {
    if (values.json) printJson(ctx, { session: null, state: where.state });
    else ctx.stderr(`no open session (state in ${where.state})\n`);
    return 0;
  }
  const info = resolveSession(where.state, id);
  const path = logPath(where.state, info.id);
  let records = 0;
  let torn = false;
  if (existsSync(path)) {
    for await (const l of readLogLines(path)) {
      if (l.torn) torn = true;
      else records += 1;
    }
  }
  const out = {
    session: info.id,
    state: info.state,
    started_at: info.started_at,
    closed_at: info.closed_at ?? null,
    agent: info.agent ?? null,
    records,
    log: path,
    log_bytes: existsSync(path) ? statSync(path).size : 0,
    torn_tail: torn,
    package: info.package ?? null,
  };
  if (values.json) printJson(ctx, out);
  else {
    ctx.stdout(
      `session ${out.session} (${out.state})\n  started  ${out.started_at}\n  records  ${records}${torn ? ' (+ a torn last line, recovered at close)' : ''}\n`,
    );
    if (out.agent) ctx.stdout(`  agent    ${out.agent.name}\n`);
    if (out.package) ctx.stdout(`  package  ${out.package}\n`);
  }
  return 0;
}

async function close(argv: string[], ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(argv, { session: { type: 'string' }, json: { type: 'boolean' } });
  const where = placesOf(ctx);
  const session = resolveSession(where.state, values.session);
  const signer = await signerOf(ctx, where);
  const result = await closeSession({ state: where.state, session, signer });
  if (values.json)
    printJson(ctx, {
      session: session.id,
      package: result.packagePath,
      records: result.records,
      recovered: result.recovered,
    });
  else {
    if (result.recovered)
      ctx.stderr(
        `recovered a torn last line (${result.recovered.bytes} bytes) into ${result.recovered.quarantinePath}\n`,
      );
    ctx.stderr(`closed session ${session.id}: ${result.records} records sealed\n`);
    ctx.stdout(`${result.packagePath}\n`);
  }
  return 0;
}

export const command: Command = {
  summary: 'sessions: start, status, event, close',
  usage: [
    'usage: tally session start [--agent NAME] [--model M] [--provider P] [--json]',
    '       tally session event [--source LABEL] [--agent NAME] [--session ID] [--json]   (one AHP event as JSON on stdin;\n                                   exit 1 when the certificate policy denies it — it is recorded either way)',
    '       tally session status [--session ID] [--json]',
    '       tally session close [--session ID] [--json]     (prints the package path)',
  ].join('\n'),
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    if (sub === 'start') return start(rest, ctx);
    if (sub === 'event') return event(rest, ctx);
    if (sub === 'status') return status(rest, ctx);
    if (sub === 'close') return close(rest, ctx);
    throw new UsageError(
      sub
        ? `unknown subcommand '${sub}' (start, event, status, close)`
        : 'missing subcommand (start, event, status, close)',
    );
  },
};
