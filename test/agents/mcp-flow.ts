/**
 * What the tests of real agents calling the filesystem MCP server through the gateway share: a
 * project with a session open under a certificate that allows the server's tools and forbids
 * writing secret/, the script (a write that is allowed, then the forbidden one, each spelled the
 * way the agent names the server's tool), the disk afterwards, and the sealed package: it
 * verifies, the write is witnessed by `mcp`, and the only denial is the gateway's.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonOut } from '../cli/tally-process.js';
import { type Step, text } from './model/script.js';
import { receiptOf, type TallyProject, tallyProject, verifiedUnderCertificate } from './tally-flow.js';

export const MCP_CERTIFICATE = ['--allow', 'mcp__fs__*', '--forbid', 'Write(secret/**)'];

/** The rule the forbidden write breaks, as the gateway's reason quotes it. */
export const FORBIDDEN_RULE = /Write\(secret\/\*\*\)/;

/**
 * `tally init`, the agent registered under MCP_CERTIFICATE, `prepare` (what the project holds
 * before the session starts), and `tally session start` in `dir`.
 */
export async function mcpSession(
  dir: string,
  home: string,
  prepare?: (project: TallyProject) => Promise<void>,
): Promise<TallyProject> {
  const project = await tallyProject(dir, home, MCP_CERTIFICATE);
  await prepare?.(project);
  const started = await project.tally(['session', 'start', '--agent', 'coder']);
  assert.equal(started.code, 0, started.stderr);
  return project;
}

/**
 * The script: write notes.txt (allowed), then secret/key.txt (forbidden), then stop. `write`
 * makes the agent's call of the server's write_file with the given arguments.
 */
export function notesThenKey(dir: string, write: (args: Record<string, unknown>) => Step): Step[] {
  return [
    write({ path: join(dir, 'notes.txt'), content: 'from the agent\n' }),
    write({ path: join(dir, 'secret/key.txt'), content: 'leak\n' }),
    text('Done.'),
  ];
}

/** The allowed write landed and the forbidden one did not. */
export function assertNotesNotKey(dir: string): void {
  assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'from the agent\n');
  assert.equal(existsSync(join(dir, 'secret/key.txt')), false, 'the forbidden write did not happen');
}

/**
 * `tally session close`, then the package verifies under the certificate, notes.txt is written
 * with `mcp` among its witnesses, and the one denial is the forbidden write, by its rule.
 */
export async function assertSealedWithGatewayDenial(project: TallyProject): Promise<void> {
  const closed = jsonOut(await project.tally(['session', 'close', '--json']));
  const pkg = String(closed.package);
  await verifiedUnderCertificate(project, pkg);
  const receipt = await receiptOf(project, pkg);
  const written = (receipt.files_written as { path: string; sources: string[] }[]).find(
    (f) => f.path === 'notes.txt',
  );
  assert.ok(written?.sources.includes('mcp'), JSON.stringify(receipt.files_written));
  assertOnlyDenialIsTheKey(receipt);
}

/** A receipt's one denial is the forbidden write of the filesystem server, by its rule. */
export function assertOnlyDenialIsTheKey(receipt: Record<string, unknown>): void {
  const denied = (receipt.decisions as { decision: string; rule?: string; tool?: string }[]).filter(
    (d) => d.decision === 'deny',
  );
  assert.deepEqual(
    denied.map((d) => [d.tool, d.rule]),
    [['mcp__fs__write_file', 'Write(secret/**)']],
  );
}
