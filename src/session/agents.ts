/**
 * Where agent certificates live and how a command names one: a file path, or an agent name
 * registered in the project's `agents/` folder.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseJson } from '../core/canonical.js';
import type { Envelope } from '../core/dsse.js';
import { readRegularFileSync } from '../core/regular-file.js';
import { type AgentCertificate, verifyCertificate } from '../evidence/certificate.js';
import { certificateStateAt } from '../evidence/policy/judge.js';
import type { AgentAttribution } from '../evidence/record/record.js';
import { CERTIFICATE_FILE_LIMIT } from './binding.js';
import type { Places } from './paths.js';
import { SessionError } from './store.js';

export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function agentsDir(where: Places): string {
  return join(where.state, 'agents');
}

/** A certificate named by file path (against `cwd`), or by agent name in the project's agents/. */
export function certificatePathFor(where: Places, cwd: string, nameOrPath: string): string {
  const asPath = resolve(cwd, nameOrPath);
  if (existsSync(asPath) && statSync(asPath).isFile()) return asPath;
  const byName = join(agentsDir(where), `${nameOrPath}.agent.json`);
  if (AGENT_NAME.test(nameOrPath) && existsSync(byName)) return byName;
  throw new SessionError(
    'not-found',
    `no certificate file of that name and no registered agent of that name in ${agentsDir(where)}`,
  );
}

/** A certificate envelope read from a file (structure only: verify it before trusting it). */
export function readCertificateFile(path: string): Envelope {
  try {
    return parseJson(readRegularFileSync(path, CERTIFICATE_FILE_LIMIT)) as Envelope;
  } catch (error) {
    throw new SessionError('not-found', `cannot read certificate ${path}: ${(error as Error).message}`);
  }
}

export interface ResolvedAgent {
  agent: AgentAttribution;
  /** The certificate file the session runs under, when the agent has one. */
  certificatePath?: string;
  certificate?: AgentCertificate;
  /** Said to the user when the certificate is not valid now (the live judge will deny). */
  warning?: string;
}

/**
 * The agent a session runs for: its certificate when registered (it must verify with a pinned
 * ship key — the live policy comes from it), else a name recorded and not judged.
 */
export function resolveAgent(
  where: Places,
  cwd: string,
  name: string,
  trusted: readonly KeyObject[],
  now: Date,
): ResolvedAgent {
  let certificatePath: string;
  try {
    certificatePath = certificatePathFor(where, cwd, name);
  } catch (error) {
    if (error instanceof SessionError && error.code === 'not-found') return { agent: { name } };
    throw error;
  }
  let certificate: AgentCertificate;
  try {
    certificate = verifyCertificate(readCertificateFile(certificatePath), trusted).certificate;
  } catch (error) {
    throw new SessionError(
      'corrupt',
      `the certificate ${certificatePath} does not verify with this project's ship key: ${(error as Error).message}`,
    );
  }
  const agent: AgentAttribution = { name: certificate.agent.name };
  if (certificate.agent.model) agent.model = certificate.agent.model;
  if (certificate.agent.provider) agent.provider = certificate.agent.provider;
  const state = certificateStateAt(certificate, now);
  return {
    agent,
    certificatePath,
    certificate,
    ...(state === 'valid'
      ? {}
      : {
          warning: `the certificate of ${certificate.agent.name} is valid ${certificate.valid_from} → ${certificate.valid_until}, not now: every tool call will be denied live, and verification against it fails within_validity_window`,
        }),
  };
}
