/** `tally agent register|show|list`: agent certificates signed by the ship key. */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isRfc3339DateTime } from '../../ahp/messages/index.js';
import { canonicalize } from '../../core/canonical.js';
import {
  type AgentCertificate,
  CertificateError,
  issueCertificate,
  readCertificateUnverified,
  verifyCertificate,
} from '../../evidence/certificate.js';
import { CONTROL_PLANE_MODES, type ControlPlane } from '../../evidence/policy/control-plane.js';
import { agentsDir as agentsFolder, certificatePathFor, readCertificateFile } from '../../session/agents.js';
import { defaultTrustedKeys } from '../../session/identity.js';
import { writeAtomic } from '../../session/store.js';
import { type Command, type CommandContext, parseFlags, printJson, UsageError } from '../command.js';
import { placesOf, signerOf } from '../session-context.js';

const DAY_MS = 86_400_000;

function agentsDir(ctx: CommandContext): string {
  return agentsFolder(placesOf(ctx));
}

/** An RFC 3339 date-time, or a full date (midnight UTC); days that do not exist are refused. */
function parseTime(text: string, flag: string): Date {
  const date = new Date(text);
  const fullDate = /^\d{4}-\d{2}-\d{2}$/.test(text) && date.toISOString().slice(0, 10) === text;
  if (Number.isNaN(date.getTime()) || !(fullDate || isRfc3339DateTime(text)))
    throw new UsageError(`${flag} must be an RFC 3339 date-time (or YYYY-MM-DD), got '${text}'`);
  return date;
}

function describe(c: AgentCertificate): string {
  const list = (name: string, items: string[]) =>
    `  ${name.padEnd(20)} ${items.length ? items.join(', ') : '(none)'}`;
  return [
    `agent ${c.agent.name}${c.agent.model ? ` (${c.agent.model}${c.agent.provider ? ` via ${c.agent.provider}` : ''})` : ''}`,
    `  ship id              ${c.ship_id}`,
    `  serial               ${c.serial}`,
    `  valid                ${c.valid_from} → ${c.valid_until}`,
    list('bounded actions', c.bounded_actions),
    list('forbidden', c.forbidden),
    list('escalation required', c.escalation_required),
    `  opaque shell         ${c.opaque_shell ?? 'ask'}`,
    `  control plane        ${c.control_plane ?? 'ask'}`,
  ].join('\n');
}

async function register(argv: string[], ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(argv, {
    name: { type: 'string' },
    allow: { type: 'string', multiple: true },
    forbid: { type: 'string', multiple: true },
    escalate: { type: 'string', multiple: true },
    'opaque-shell': { type: 'string' },
    'control-plane': { type: 'string' },
    model: { type: 'string' },
    provider: { type: 'string' },
    'valid-days': { type: 'string' },
    'valid-until': { type: 'string' },
    'valid-from': { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (!values.name) throw new UsageError('--name is required');
  if (!values.allow?.length) throw new UsageError('at least one --allow PATTERN is required');
  if (values['valid-days'] && values['valid-until'])
    throw new UsageError('give --valid-days or --valid-until, not both');
  const validFrom = values['valid-from'] ? parseTime(values['valid-from'], '--valid-from') : new Date();
  let validUntil: Date;
  if (values['valid-until']) validUntil = parseTime(values['valid-until'], '--valid-until');
  else {
    const days = Number(values['valid-days'] ?? '30');
    if (!Number.isFinite(days) || days <= 0)
      throw new UsageError(`--valid-days must be a positive number, got '${values['valid-days']}'`);
    validUntil = new Date(validFrom.getTime() + days * DAY_MS);
  }
  const opaqueShell = values['opaque-shell'];
  if (opaqueShell !== undefined && opaqueShell !== 'ask' && opaqueShell !== 'deny')
    throw new UsageError(`--opaque-shell must be ask or deny, got '${opaqueShell}'`);
  const controlPlane = values['control-plane'];
  if (controlPlane !== undefined && !(CONTROL_PLANE_MODES as readonly string[]).includes(controlPlane))
    throw new UsageError(`--control-plane must be ask, deny or allow, got '${controlPlane}'`);
  const signer = await signerOf(ctx);
  const { certificate, envelope } = issueOrRefuse(
    {
      name: values.name,
      allow: values.allow,
      forbid: values.forbid ?? [],
      escalate: values.escalate ?? [],
      ...(opaqueShell === undefined ? {} : { opaqueShell }),
      ...(controlPlane === undefined ? {} : { controlPlane: controlPlane as ControlPlane }),
      ...(values.model ? { model: values.model } : {}),
      ...(values.provider ? { provider: values.provider } : {}),
      validFrom,
      validUntil,
    },
    signer.privateKey,
  );
  const out = values.out ? resolve(ctx.cwd, values.out) : join(agentsDir(ctx), `${values.name}.agent.json`);
  if (existsSync(out) && !values.force)
    throw new UsageError(`${out} exists; pass --force to replace it or --out to write elsewhere`);
  mkdirSync(resolve(out, '..'), { recursive: true });
  writeAtomic(out, `${canonicalize(envelope)}\n`);
  if (values.json) printJson(ctx, { path: out, certificate });
  else ctx.stderr(`wrote ${out}\n${describe(certificate)}\n`);
  return 0;
}

/** Bad patterns or dates given as flags are a usage error (exit 2), naming the flag's entry. */
function issueOrRefuse(...args: Parameters<typeof issueCertificate>): ReturnType<typeof issueCertificate> {
  try {
    return issueCertificate(...args);
  } catch (error) {
    if (error instanceof CertificateError && error.code !== 'signature') throw new UsageError(error.message);
    throw error;
  }
}

async function show(argv: string[], ctx: CommandContext): Promise<number> {
  const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
  if (positionals.length !== 1) throw new UsageError('usage: tally agent show FILE|NAME [--json]');
  const path = certificatePathFor(placesOf(ctx), ctx.cwd, positionals[0]!);
  const envelope = readCertificateFile(path);
  const certificate = readCertificateUnverified(envelope);
  let signature: string;
  let verified = false;
  try {
    verifyCertificate(
      envelope,
      defaultTrustedKeys(placesOf(ctx)).map((k) => k.publicKey),
    );
    signature = 'valid (signed by a pinned ship key)';
    verified = true;
  } catch (error) {
    signature = `NOT verified: ${(error as Error).message}`;
  }
  if (values.json) printJson(ctx, { path, certificate, signature, verified });
  else ctx.stdout(`${describe(certificate)}\n  signature            ${signature}\n`);
  // A certificate that does not verify is shown (so it can be inspected) and fails.
  return verified ? 0 : 1;
}

async function list(argv: string[], ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(argv, { json: { type: 'boolean' } });
  const dir = agentsDir(ctx);
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.agent.json'))
        .sort()
    : [];
  const agents = files.map((f) => {
    const c = readCertificateUnverified(readCertificateFile(join(dir, f)));
    return { name: c.agent.name, path: join(dir, f), valid_until: c.valid_until, serial: c.serial };
  });
  if (values.json) printJson(ctx, { agents });
  else if (agents.length === 0)
    ctx.stderr(`no agents registered in ${dir} (tally agent register --name NAME --allow PATTERN)\n`);
  else for (const a of agents) ctx.stdout(`${a.name.padEnd(24)} valid until ${a.valid_until}  ${a.path}\n`);
  return 0;
}

export const command: Command = {
  summary: 'agent certificates: register, show, list',
  usage: [
    'usage: tally agent register --name NAME --allow PATTERN… [--forbid PATTERN…] [--escalate PATTERN…]',
    '                            [--opaque-shell ask|deny]   (shell commands known only at run time; default ask)',
    "                            [--control-plane ask|deny|allow]   (writes to the agents' hook settings; default ask)",
    '                            [--model M] [--provider P] [--valid-from T] [--valid-days N | --valid-until T]',
    '                            [--out FILE] [--force] [--json]   (--force replaces an existing certificate file)',
    '       tally agent show FILE|NAME [--json]',
    '       tally agent list [--json]',
    '',
    'Patterns: Read, mcp__github__*, Bash(git status*), Edit(src/**) — see docs/policy.md.',
  ].join('\n'),
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    if (sub === 'register') return register(rest, ctx);
    if (sub === 'show') return show(rest, ctx);
    if (sub === 'list') return list(rest, ctx);
    throw new UsageError(
      sub
        ? `unknown subcommand '${sub}' (register, show, list)`
        : 'missing subcommand (register, show, list)',
    );
  },
};
