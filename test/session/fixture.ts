/**
 * Test fixture: a temporary git repository and Tally state directory with a real ship key, and
 * helpers to run a whole session (start → events → close) through the library with a fixed clock.
 */

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { trustKeys } from '../../src/core/dsse.js';
import { toPublicKey } from '../../src/core/keys.js';
import { createKey } from '../../src/core/keystore.js';
import { checkLine } from '../../src/evidence/log/reader.js';
import type { Receipt } from '../../src/evidence/receipt/receipt.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { loadShipSigner, type ShipSigner } from '../../src/session/identity.js';
import { type Clock, closeSession, recordEvent, startSession } from '../../src/session/lifecycle.js';
import { readSessionInfo, type SessionInfo } from '../../src/session/store.js';
import { tempDir } from '../temp.js';

export interface Fixture {
  dir: string;
  /** The git working tree the session runs in. */
  root: string;
  /** The Tally state directory (holds keys/, sessions/, packages/). */
  state: string;
  signer: ShipSigner;
}

export function git(root: string, ...args: string[]): string {
  return execFileSync(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/** A git repository with one commit (README.md, src/app.js) and a state dir with a ship key. */
export async function makeFixture(prefix = 'tally-fx-'): Promise<Fixture> {
  const dir = tempDir(prefix);
  const root = join(dir, 'repo');
  const state = join(dir, 'state');
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'README.md'), '# fixture\n');
  writeFileSync(join(root, 'src/app.js'), 'export const v = 1;\n');
  git(root, 'init', '-q');
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'initial');
  mkdirSync(state, { recursive: true });
  createKey(state, 'ship');
  const signer = await loadShipSigner({ home: state, project: state, state }, async () => undefined);
  return { dir, root, state, signer };
}

/** A clock that starts at `start` and advances `stepMs` on every reading. */
export function steppingClock(start: string, stepMs = 1000): Clock {
  let t = Date.parse(start);
  return {
    now: () => {
      const d = new Date(t);
      t += stepMs;
      return d;
    },
  };
}

export function toolBefore(call: string, name: string, input: unknown, kind?: string) {
  return {
    type: 'tool.before',
    call: { id: call },
    path: 'native',
    tool: { origin: 'native', name, input, ...(kind ? { kind } : {}) },
  };
}

export function toolAfter(call: string, name: string, input: unknown, kind?: string) {
  return {
    type: 'tool.after',
    call: { id: call },
    path: 'native',
    tool: { origin: 'native', name, input, ...(kind ? { kind } : {}) },
    outcome: 'ok',
    execution: { status: 'executed' },
    items: [],
    durationMs: 5,
  };
}

export function permissionResolved(call: string, name: string, input: unknown, decision: 'allow' | 'deny') {
  return {
    type: 'tool.permission.resolved',
    call: { id: call },
    path: 'native',
    tool: { origin: 'native', name, input },
    decision,
    decidedBy: 'user',
  };
}

/** A varied set of events: reads, an edit, shell commands, a model call, a file change. */
export function variedEvents(root: string): Record<string, unknown>[] {
  const read = { file_path: join(root, 'README.md') };
  const edit = { file_path: join(root, 'src/app.js'), old_string: '1', new_string: '2' };
  const shell = { command: 'git status --short' };
  return [
    toolBefore('c1', 'Read', read, 'read'),
    toolAfter('c1', 'Read', read, 'read'),
    toolBefore('c2', 'Edit', edit, 'edit'),
    toolAfter('c2', 'Edit', edit, 'edit'),
    toolBefore('c3', 'Bash', shell, 'shell'),
    toolAfter('c3', 'Bash', shell, 'shell'),
    {
      type: 'model.request.before',
      model: { id: 'm-1', provider: 'p-1' },
      attempt: { id: 'a1', number: 1 },
      params: {},
      items: [],
    },
    {
      type: 'file.changed',
      changes: [{ path: join(root, 'src/app.js'), operation: 'update', agentCaused: true }],
    },
  ];
}

export interface SessionRun {
  info: SessionInfo;
  packagePath: string;
  bytes: Buffer;
  seqs: number[];
}

export interface RunOptions {
  clock?: Clock;
  certificatePath?: string;
  agent?: { name: string; model?: string; provider?: string };
  /** Events recorded with a fixed source label ('hook' unless given). */
  source?: string;
  /** The user's home the session records (its control plane's place). */
  home?: string;
}

/** Starts a session, records `events` in order, closes it and reads the package. */
export async function runSession(
  fx: Fixture,
  events: readonly unknown[],
  options: RunOptions = {},
): Promise<SessionRun> {
  const common = options.clock ? { clock: options.clock } : {};
  const { info } = await startSession({
    state: fx.state,
    root: fx.root,
    signer: fx.signer,
    ...common,
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.certificatePath ? { certificatePath: options.certificatePath } : {}),
    ...(options.home ? { home: options.home } : {}),
  });
  const seqs: number[] = [];
  for (const event of events) {
    const session = readSessionInfo(fx.state, info.id);
    const { seq } = await recordEvent({
      state: fx.state,
      session,
      signer: fx.signer,
      event,
      source: options.source ?? 'hook',
      ...common,
    });
    seqs.push(seq);
  }
  const closed = await closeSession({
    state: fx.state,
    session: readSessionInfo(fx.state, info.id),
    signer: fx.signer,
    ...common,
  });
  return {
    info: closed.info,
    packagePath: closed.packagePath,
    bytes: readFileSync(closed.packagePath),
    seqs,
  };
}

/** Closes the session and reads its package. */
export async function closePackage(fx: Fixture, id: string): Promise<Buffer> {
  const closed = await closeSession({
    state: fx.state,
    session: readSessionInfo(fx.state, id),
    signer: fx.signer,
  });
  return readFileSync(closed.packagePath);
}

/**
 * A close killed once its first record is durable, before anything after it: the boundary tells
 * `onRecorded` of a record once it is durable, and a throw there stops the close as a kill would.
 */
export async function killedClose(fx: Fixture, id: string): Promise<void> {
  await assert.rejects(
    closeSession({
      state: fx.state,
      session: readSessionInfo(fx.state, id),
      signer: fx.signer,
      onRecorded: () => {
        throw new Error('killed after its first record');
      },
    }),
    /killed after its first record/,
  );
}

/** Splits package bytes into its lines (without the final newline). */
export function packageLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, start)) {
    out.push(bytes.subarray(start, nl));
    start = nl + 1;
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

export function joinLines(lines: readonly Buffer[]): Buffer {
  return Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
}

/** The records of a package (its header and seal left out), each checked with the fixture's key. */
export function packageRecords(fx: Fixture, pkg: Buffer): EventRecord[] {
  const keys = trustKeys([toPublicKey(fx.signer.privateKey)]);
  return packageLines(pkg)
    .slice(1, -1)
    .map((line) => {
      const checked = checkLine(line, keys);
      assert.ok(checked.ok);
      return checked.record;
    });
}

/** The receipt a package's seal carries. */
export function packageReceipt(pkg: Buffer): Receipt {
  const seal = JSON.parse(packageLines(pkg).at(-1)!.toString('utf8')) as { receipt: { payload: string } };
  return JSON.parse(Buffer.from(seal.receipt.payload, 'base64').toString('utf8')) as Receipt;
}
