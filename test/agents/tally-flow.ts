/**
 * What the adapter tests share: a project with Tally initialised and one agent registered under a
 * certificate, `tally run` as the runner's wrapper, what the model was told in its tool results
 * (each model API has its own shape), and a sealed package's records and receipt.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonOut, runTally } from '../cli/tally-process.js';
import { asArray, asRecord } from './model/server.js';
import type { AgentRun } from './runner.js';

export const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));

/** The certificate every adapter test runs under: a redirection into protected/ and one path are forbidden. */
export const CERTIFICATE = [
  '--allow',
  'Write(*.txt)',
  '--allow',
  'Edit(*.txt)',
  '--allow',
  'Bash(echo *)',
  '--forbid',
  'Write(protected/**)',
  '--forbid',
  'Write(secret.txt)',
];

export interface TallyProject {
  env: Record<string, string>;
  tally: (args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** CERTIFICATE's rules with `names` allowed too (an agent's own delegation tools, by bare name). */
export function allowing(...names: string[]): string[] {
  return [...CERTIFICATE, ...names.flatMap((name) => ['--allow', name])];
}

/**
 * `tally init` and `tally agent register --name coder …` (the certificate's rules, CERTIFICATE by
 * default) in `dir`, with its own TALLY_HOME in `home`.
 */
export async function tallyProject(
  dir: string,
  home: string,
  certificate: readonly string[] = CERTIFICATE,
): Promise<TallyProject> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    TALLY_HOME: join(home, 'tally'),
    TALLY_RECORDER_IDLE_MS: '4000',
  };
  const tally = (args: string[]) => runTally(args, { cwd: dir, env });
  for (const args of [['init'], ['agent', 'register', '--name', 'coder', ...certificate]]) {
    const ran = await tally(args);
    if (ran.code !== 0) throw new Error(`tally ${args.join(' ')}: ${ran.stderr}`);
  }
  return { env, tally };
}

/** `tally verify PKG --certificate coder --json`, which must pass: its result document. */
export async function verifiedUnderCertificate(
  project: TallyProject,
  pkg: string,
): Promise<Record<string, unknown>> {
  const verify = await project.tally(['verify', pkg, '--certificate', 'coder', '--json']);
  assert.equal(verify.code, 0, verify.stdout);
  return jsonOut(verify);
}

/** The runner's wrapper for `tally run --agent coder --json -- <agent…>`. */
export function underTallyRun(bin: string, argv: string[]): [string, string[]] {
  return [process.execPath, [TALLY, 'run', '--agent', 'coder', '--json', '--', bin, ...argv]];
}

/**
 * `tally run --json`'s summary: the document that starts with its `session` key, last on stdout
 * (the agent prints before it, not always ending its line).
 */
export function runSummary(stdout: string): Record<string, unknown> {
  const at = stdout.lastIndexOf('{\n  "session": ');
  if (at < 0) throw new Error(`no tally run summary on stdout: ${stdout.slice(-400)}`);
  return JSON.parse(stdout.slice(at)) as Record<string, unknown>;
}

function collect(value: unknown, out: string[]): void {
  if (Array.isArray(value)) {
    for (const v of value) collect(v, out);
    return;
  }
  const r = asRecord(value);
  if (r === undefined) return;
  // Anthropic tool_result, OpenAI chat role "tool", Gemini functionResponse, Responses *_output.
  if (
    r.type === 'tool_result' ||
    r.role === 'tool' ||
    r.type === 'function_call_output' ||
    r.type === 'custom_tool_call_output'
  )
    out.push(JSON.stringify(r.content ?? r.output ?? r));
  else if (r.functionResponse !== undefined) out.push(JSON.stringify(asRecord(r.functionResponse)?.response));
  else for (const v of Object.values(r)) collect(v, out);
}

/** Every tool result the agent sent its model, as JSON text, without repeats. */
export function toolResults(run: AgentRun): string[] {
  const out: string[] = [];
  for (const q of run.requests) collect(q.body, out);
  return [...new Set(out)];
}

/** The records of a sealed package (between its header and its seal). */
export function packageRecords(pkg: string): Record<string, unknown>[] {
  const lines = readFileSync(pkg, 'utf8').split('\n').filter(Boolean);
  return lines
    .slice(1, -1)
    .map((l) => JSON.parse(Buffer.from((JSON.parse(l) as { payload: string }).payload, 'base64').toString()));
}

/** The records of a sealed package whose decision is a deny. */
export function deniedRecords(pkg: string): Record<string, unknown>[] {
  return packageRecords(pkg).filter(
    (r) => (r.decision as { decision?: unknown } | undefined)?.decision === 'deny',
  );
}

export async function receiptOf(project: TallyProject, pkg: string): Promise<Record<string, unknown>> {
  const shown = await project.tally(['receipt', 'show', pkg, '--json']);
  if (shown.code !== 0) throw new Error(shown.stderr);
  return jsonOut(shown);
}

export { asArray, asRecord };

/** The tool results in the agent's last model request (the whole conversation), repeats kept. */
export function lastToolResults(run: AgentRun): string[] {
  const out: string[] = [];
  const last = run.requests.filter((q) => JSON.stringify(q.body ?? '').includes('protected')).at(-1);
  collect(last?.body, out);
  return out;
}
